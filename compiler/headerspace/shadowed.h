// Shadowed rules of one chain, in either projection of header space: the
// prover (shadow_prover.h) walked along the chain on its own, for rules
// covered by the union of the earlier rules of the chain that end it, so
// that no packet reaching them can match them. remove-shadowed-rules uses
// it with all packets entering (boxes); lint asks the same prover from its
// walk of each hook (compiler/analysis/flatten.cc), which follows jumps.
//
//   Lifter<PacketModel::kAllPackets5Tuple> lifter(table, chain);
//   for (const ShadowedRule& s : ShadowedRules(lifter, t, chain)) ... s.rule
//   ShadowedRules(cubes, t, chain, entry)   // only `entry` enters (cubes)
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
// Cost (all packets entering): each rule is tested against at most
// `max_covers` covers, with at most `piece_budget` pieces of its region
// still uncovered ("not covered" beyond it), so a 10000-rule chain stays
// within the compile budget. With an entry region the cost is the walk's.
#ifndef RULEJIT_COMPILER_HEADERSPACE_SHADOWED_H_
#define RULEJIT_COMPILER_HEADERSPACE_SHADOWED_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "compiler/headerspace/lift.h"
#include "compiler/headerspace/shadow_prover.h"
#include "ir/ir.h"
#include "ir/rule_shape.h"

namespace rulejit::headerspace {

struct ShadowedRule {
  size_t rule = 0;  // index in the chain
};

// The prover's walk of `chain`: `fresh()` makes a prover with nothing
// taken yet (at the start and after a rule that restarts the covers).
template <PacketModel M, class Fresh>
std::vector<ShadowedRule> ShadowedRulesWith(const Lifter<M>& lifter, int table,
                                            const ir::Chain& chain, Fresh fresh) {
  std::vector<ShadowedRule> out;
  ShadowProver<M> prover = fresh();
  for (size_t i = 0; i < chain.rules.size(); ++i) {
    const ir::Rule& rule = chain.rules[i];
    if (rule.exprs.empty()) continue;
    if (ir::ChangesStateOrJumps(rule)) {
      prover = fresh();
      continue;
    }
    std::optional<std::vector<typename Lifter<M>::Region>> region =
        RegionOf(lifter.Lift(table, rule));
    if (!region) continue;
    if (prover.Covered(*region)) {
      out.push_back({i});
    } else if (ir::EndsChain(rule)) {
      prover.Cover(i, *region);
    }
  }
  return out;
}

// The rules of `chain` (of table `table`) that the earlier rules ending
// the chain cover, in chain order, all packets entering the chain. Rules
// without expressions are skipped.
template <PacketModel M>
std::vector<ShadowedRule> ShadowedRules(const Lifter<M>& lifter, int table,
                                        const ir::Chain& chain,
                                        const ShadowBudget& budget = {}) {
  return ShadowedRulesWith(lifter, table, chain,
                           [&] { return ShadowProver<M>(lifter, budget); });
}

// The same with the packets of `entry` entering the chain (cubes; exact,
// no budget): a rule is reported when no packet of `entry` that gets past
// the earlier rules matches it.
inline std::vector<ShadowedRule> ShadowedRules(
    const Lifter<PacketModel::kUnfragmented16>& lifter, int table, const ir::Chain& chain,
    const std::vector<Cube>& entry) {
  using Prover = ShadowProver<PacketModel::kUnfragmented16>;
  return ShadowedRulesWith(lifter, table, chain, [&] { return Prover(lifter, entry); });
}

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_SHADOWED_H_
