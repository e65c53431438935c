// remove-shadowed-rules: a rule whose every matching packet is taken by
// earlier rules of its chain that end the chain can never match, so it is
// emptied (as drop-repeated-rules does: no code, same rule index).
//
//   -A FORWARD -s 10.0.0.0/8 -j DROP              rule j
//   -A FORWARD -s 10.1.0.0/16 -p tcp -j ACCEPT    rule k: inside j's box, emptied
//   -A FORWARD -p udp --dport 53 -j ACCEPT        rule k': partly outside, kept
//
// The proof is in the box projection of header space
// (compiler/headerspace/box.h, the one the classifier uses):
// a rule that lifts is exactly a box over five fields, "absent" included,
// for every packet (fragments, options, truncated frames too). Rule k is
// emptied when its box lies inside the union of the boxes of the earlier
// lifted rules that end the chain (CoveredByUnion), or is empty itself (it
// is unsatisfiable). `rulejit check --lint` reports shadowed rules with the
// rules that block them from the exact IPv4 analysis of compiler/analysis;
// this pass removes only what it proves for all packets.
//
// Why emptying is exact: a packet that reaches k passed every earlier rule
// of the chain; had it been in a covering rule's box it would have matched
// there and left the chain. So no packet reaching k matches k: its counter
// never counts and it decides nothing, like an empty rule. Rules that
// don't lift are ignored as covers (fewer covers only proves less).
//
// Assumes: a verified ruleset. The covers start over after a rule that may
// change what later rules see or jumps (ir/rule_shape.h): a called chain or
// a statement may rewrite the packet, so earlier boxes would no longer
// describe the packets that reach later rules.
// Cost: each rule is tested against at most kMaxCovers covers, so a
// 10000-rule chain stays within the compile budget.
#include <vector>

#include "compiler/headerspace/box.h"
#include "compiler/headerspace/lift_box.h"
#include "compiler/passes/passes.h"
#include "ir/rule_shape.h"

namespace rulejit::passes {
namespace {

constexpr size_t kMaxCovers = 1024;  // covers kept per chain segment
constexpr size_t kPieceBudget = 64;  // pieces of a rule's box still uncovered

void RemoveInChain(ir::Chain& chain, const headerspace::BoxContext& context) {
  std::vector<headerspace::Box> covers;
  for (ir::Rule& rule : chain.rules) {
    if (rule.exprs.empty()) continue;
    if (ir::ChangesStateOrJumps(rule)) {
      covers.clear();
      continue;
    }
    absl::StatusOr<headerspace::LiftedBox> lifted = headerspace::LiftToBox(rule, context);
    if (!lifted.ok()) continue;
    if (headerspace::CoveredByUnion(lifted->box, covers, kPieceBudget)) {
      rule.exprs.clear();
    } else if (ir::EndsChain(rule) && covers.size() < kMaxCovers) {
      covers.push_back(lifted->box);
    }
  }
}

}  // namespace

void RemoveShadowedRules(ir::Ruleset& ruleset) {
  for (ir::Table& table : ruleset.tables) {
    for (ir::Chain& chain : table.chains) {
      RemoveInChain(chain, headerspace::BoxContextForChain(table, chain));
    }
  }
}

}  // namespace rulejit::passes
