// The front door of header-space lifting: one lifter type, parameterised by
// the packet model whose projection it lifts into (README.md's table).
//
//   Lifter<PacketModel::kAllPackets5Tuple> boxes(table, chain);
//   absl::StatusOr<LiftedBox> b = boxes.Lift(t, rule);     // box.h
//   Lifter<PacketModel::kUnfragmented16> cubes(ruleset, space, hook);
//   LiftedRule c = cubes.Lift(t, rule);                     // cube.h
//
// One lifter stands behind it: RuleWalk (lift_walk.h), the walk over a
// rule's expressions with symbolic registers, run with one policy per
// projection; both policies read header bytes through one field table
// (fields.h). The box policy (lift_box.h) solves prefix-masked compares in
// closed form and is exact for every packet (fragments, options, truncated
// frames: a field that can't be read is "absent"); the cube policy
// (lift_cube.h) probes the kernel's expression code on the model's packets
// (packet_model.h) and is exact for those only. Why the two compare
// solvers stay apart (merging them would change results): README.md, "One
// lifter, two policies". Code that works in either projection (the
// shadowed-rule prover, shadowed.h) takes the model as its parameter.
#ifndef RULEJIT_COMPILER_HEADERSPACE_LIFT_H_
#define RULEJIT_COMPILER_HEADERSPACE_LIFT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "compiler/headerspace/box.h"
#include "compiler/headerspace/lift_box.h"
#include "compiler/headerspace/cube.h"
#include "compiler/headerspace/lift_cube.h"
#include "ir/ir.h"

namespace rulejit::headerspace {

enum class PacketModel : uint8_t {
  // Every packet; projection Box (5 fields, "absent" included).
  kAllPackets5Tuple,
  // IPv4 without options or fragments, IPv6 without extension headers, a
  // 20-byte transport region; projection Cube (16 dimensions).
  kUnfragmented16,
};

template <PacketModel M>
class Lifter;

// Lifts the rules of one chain into boxes (its BoxContextForChain).
template <>
class Lifter<PacketModel::kAllPackets5Tuple> {
 public:
  using Region = Box;
  using Lifted = absl::StatusOr<LiftedBox>;
  explicit Lifter(const BoxContext& context = {}) : context_(context) {}
  Lifter(const ir::Table& table, const ir::Chain& chain)
      : context_(BoxContextForChain(table, chain)) {}
  // `table` is the rule's table index (the context is fixed per chain).
  Lifted Lift(int /*table*/, const ir::Rule& rule) const { return LiftToBox(rule, context_); }
  const BoxContext& context() const { return context_; }

 private:
  BoxContext context_;
};

// Lifts the rules of a ruleset at a hook into cubes of `space`.
template <>
class Lifter<PacketModel::kUnfragmented16> : public CubeLifter {
 public:
  using Region = Cube;
  using Lifted = LiftedRule;
  using CubeLifter::CubeLifter;
};

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_LIFT_H_
