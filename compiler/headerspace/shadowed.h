// The shadowed-rule prover, in either projection of header space: which
// rules of a chain are covered by the union of the earlier rules of the
// chain that end it, so that no packet reaching them can match them.
//
//   Lifter<PacketModel::kAllPackets5Tuple> lifter(table, chain);
//   for (const ShadowedRule& s : ShadowedRules(lifter, t, chain)) ... s.rule
//
//   -A FORWARD -s 10.0.0.0/8 -j DROP              rule j
//   -A FORWARD -s 10.1.0.0/16 -p tcp -j ACCEPT    rule k: covered by j
//   -A FORWARD -p udp --dport 53 -j ACCEPT        rule k': partly outside
//
// Why it is exact: a packet that reaches rule k passed every earlier rule
// of the chain; had it been in a covering rule's region it would have
// matched there and left the chain. So no packet reaching k matches k. A
// rule whose region is empty (unsatisfiable) is covered by nothing at all.
// Rules that don't lift (exactly) are ignored as covers: fewer covers only
// prove less. The covers start over after a rule that may change what
// later rules see or jumps (ir/rule_shape.h), since earlier regions would
// no longer describe the packets that reach later rules.
//
// What a proof holds for is the model's (README.md): boxes
// (kAllPackets5Tuple) for every packet, so remove-shadowed-rules may empty
// the rules; cubes (kUnfragmented16) for the model's packets only, so they
// may only be reported.
//
// Cost: each rule is tested against at most `max_covers` covers, with at
// most `piece_budget` pieces of its region still uncovered ("not covered"
// beyond it), so a 10000-rule chain stays within the compile budget.
#ifndef RULEJIT_COMPILER_HEADERSPACE_SHADOWED_H_
#define RULEJIT_COMPILER_HEADERSPACE_SHADOWED_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "compiler/headerspace/lift.h"
#include "ir/ir.h"
#include "ir/rule_shape.h"

namespace rulejit::headerspace {

struct ShadowBudget {
  size_t max_covers = 1024;  // covers kept per chain segment
  size_t piece_budget = 64;  // pieces of a rule's region still uncovered
};

struct ShadowedRule {
  size_t rule = 0;  // index in the chain
};

// A lifted rule's region as disjoint pieces of its projection, or nullopt
// when it did not lift (exactly).
inline std::optional<std::vector<Box>> RegionOf(const absl::StatusOr<LiftedBox>& lifted) {
  if (!lifted.ok()) return std::nullopt;
  return std::vector<Box>{lifted->box};
}
inline std::optional<std::vector<Cube>> RegionOf(const LiftedRule& lifted) {
  if (!lifted.exact) return std::nullopt;
  std::vector<Cube> region;
  for (const LiftedBranch& b : lifted.branches) region.push_back(b.match);
  return region;
}

// Whether the union of `covers` contains all of `region`.
inline bool Covered(const Lifter<PacketModel::kAllPackets5Tuple>&,
                    const std::vector<Box>& region, const std::vector<Box>& covers,
                    size_t piece_budget) {
  return CoveredByUnion(region.front(), covers, piece_budget);
}
inline bool Covered(const Lifter<PacketModel::kUnfragmented16>& lifter,
                    const std::vector<Cube>& region, const std::vector<Cube>& covers,
                    size_t piece_budget) {
  return CoveredByUnion(region, covers, lifter.space(), piece_budget);
}

// The rules of `chain` (of table `table`) that the earlier rules ending
// the chain cover, in chain order. Rules without expressions are skipped.
template <PacketModel M>
std::vector<ShadowedRule> ShadowedRules(const Lifter<M>& lifter, int table,
                                        const ir::Chain& chain,
                                        const ShadowBudget& budget = {}) {
  using Region = typename Lifter<M>::Region;
  std::vector<ShadowedRule> out;
  std::vector<Region> covers;
  for (size_t i = 0; i < chain.rules.size(); ++i) {
    const ir::Rule& rule = chain.rules[i];
    if (rule.exprs.empty()) continue;
    if (ir::ChangesStateOrJumps(rule)) {
      covers.clear();
      continue;
    }
    std::optional<std::vector<Region>> region = RegionOf(lifter.Lift(table, rule));
    if (!region) continue;
    if (Covered(lifter, *region, covers, budget.piece_budget)) {
      out.push_back({i});
    } else if (ir::EndsChain(rule) && covers.size() < budget.max_covers) {
      covers.insert(covers.end(), region->begin(), region->end());
    }
  }
  return out;
}

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_SHADOWED_H_
