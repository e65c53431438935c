// Lifting rules into header space: each rule becomes disjoint cubes (the
// packets it matches), each with the verdict it gives them (several for a
// verdict map), or the reason it can't be reasoned about exactly.
//
//   Space space = BuildSpace({&old_rs, &new_rs}, {.hook = ir::Hook::kInput});
//   CubeLifter lifter(ruleset, space, hook);  // or Lifter<PacketModel::kUnfragmented16> (lift.h)
//   LiftedRule r = lifter.Lift(table_index, rule);
//   if (!r.exact) report(r.reason);
//   for (const LiftedBranch& b : r.branches) ... b.match, b.verdict
//
// A rule of an inet table is lifted once per family of the space (its
// payload offsets mean different fields for IPv4 and IPv6).
//
// How: the cube policy of the one rule walk (lift_walk.h), which tracks
// registers symbolically within a rule (here: which dimension a register
// holds, through which loads, masks, byte-order changes). Each
// consumer (cmp, range, set lookup, fused compare) is then turned into an
// interval set of its dimension by running the kernel's own expression
// code (ir/expr_eval.h) on probe packets built from dimension values:
//   - when the value reaches the compare monotonically (a load of the
//     field's leading bytes, masks of leading ones), a binary search finds
//     the interval ends exactly;
//   - otherwise, for dimensions of at most 2^16 values, every value is
//     probed;
//   - interface names are compared only for (in)equality and exact-key
//     lookups, over a domain that holds one value per class of names those
//     comparisons can tell apart (see BuildSpace).
// A load over adjacent fields (nft merges `th sport 1 th dport 2` into one
// 4-byte load) compared by equality is the product of its fields' values.
// Set lookups with concatenated keys (`ip saddr . tcp dport { ... }`) are a
// union of cubes, one per element (the product of its fields' intervals);
// verdict maps give one branch per element. ct status is a 16-bit
// dimension probed value by value; meta iif / oif read the interface-name
// dimension and are exact only compared by equality with lo's index 1
// (every kernel's loopback index). An IPv6 extension header lookup finds
// none (the model's packets have none). Anything else (other header
// bytes, TCP options, lengths, limits, meta mark set and ct mark set when
// the ruleset reads ct mark, unless recorded as Effects, data maps,
// registers carried over from an earlier rule) is not exact. A lifter made with Effects::kMarks records meta mark and ct
// mark set (to a constant or from a mark) as Effects for the walk to carry.
#ifndef RULEJIT_COMPILER_HEADERSPACE_LIFT_CUBE_H_
#define RULEJIT_COMPILER_HEADERSPACE_LIFT_CUBE_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/headerspace/cube.h"
#include "ir/ir.h"

namespace rulejit::headerspace {

struct SpaceOptions {
  ir::Hook hook = ir::Hook::kInput;
  std::optional<std::string> iif;  // fixes the input device name
  std::optional<std::string> oif;
  // Device names the domains must hold exactly (a host model's devices,
  // which a path's routing decision makes the output device).
  std::vector<std::string> device_names;
  // The host fib asks (Space::host); null: fib rules are not exact.
  const HostModel* host = nullptr;
};

// The domains for comparing `rulesets` at a hook: interface-name classes
// from every name the rulesets compare against.
Space BuildSpace(const std::vector<const ir::Ruleset*>& rulesets,
                 const SpaceOptions& options);

// A side effect that later hooks of a packet's path read, recorded only by
// a lifter made for paths (CubeLifter's `path_effects`): a meta mark or ct
// mark set to a constant (`value`: the dimension's coordinate), notrack,
// a DNAT or SNAT to one address (`value`, as the address dimension) and at
// most one port, and masquerade / redirect (to the device's address, which
// the path walk resolves on its host model) with at most one port.
// Anything else that writes state fails the rule ("not exact") as before.
struct Effect {
  enum class Kind : uint8_t { kSetMark, kSetCtMark, kNotrack, kDnat, kSnat, kMasq, kRedir };
  Kind kind = Kind::kSetMark;
  Value value = 0;
  bool has_addr = false;  // NAT: an address is given
  bool has_port = false;  // NAT: a port is given
  uint16_t port = 0;
  // A mark set from a mark (CONNMARK --save-mark / --restore-mark, MARK
  // --set-xmark with a mask): (`from`'s value & mask) ^ xor, in the
  // dimension's coordinates; `value` is unused then.
  std::optional<Dim> from;
  Value mask = 0xffffffff, xor_ = 0;
};

// Matching packets that get one verdict.
struct LiftedBranch {
  Cube match;
  std::vector<Effect> effects;  // in rule order, before the verdict
  // kContinue when the rule has no verdict (e.g. a counter only).
  ir::VerdictCode verdict = ir::VerdictCode::kContinue;
  std::string target;  // jump/goto
};

struct LiftedRule {
  bool exact = true;
  std::string reason;  // why not, when !exact
  std::vector<LiftedBranch> branches;  // disjoint; empty: never matches
  // The match when it is one cube with one verdict (as `branches[0]`);
  // nullopt when the rule never matches or needs several cubes.
  std::optional<Cube> match;
  ir::VerdictCode verdict = ir::VerdictCode::kContinue;  // of `match`
  std::string target;
  // Path mode, !exact: the rule's matches were exact and only a statement
  // was not (a limit, a NAT to a range, ...): the packets that reach that
  // statement. Packets outside it pass the rule untouched.
  std::optional<std::vector<Cube>> unknown_on;
};

// Which side effects a lifter records as Effects instead of failing on.
enum class Effects : uint8_t {
  kNone,
  // meta mark / ct mark set only: a one-hook walk (compiler/analysis
  // flatten.h) carries them to the later rules that read the marks.
  kMarks,
  // all of Effect's kinds: a path walk applies them.
  kPath,
};

class CubeLifter {
 public:
  // `ruleset` and `space` must outlive the lifter.
  CubeLifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook,
             Effects effects = Effects::kNone);
  const Space& space() const { return space_; }
  LiftedRule Lift(int table, const ir::Rule& rule) const;

 private:
  const ir::Ruleset& ruleset_;
  const Space& space_;
  ir::Hook hook_;
  bool reads_ct_mark_;
  Effects effects_;
};

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_LIFT_CUBE_H_
