// remove-shadowed-rules: a rule whose every matching packet is taken by
// earlier rules of its chain that end the chain can never match, so it is
// emptied (as drop-repeated-rules does: no code, same rule index).
//
//   -A FORWARD -s 10.0.0.0/8 -j DROP              rule j
//   -A FORWARD -s 10.1.0.0/16 -p tcp -j ACCEPT    rule k: inside j's box, emptied
//   -A FORWARD -p udp --dport 53 -j ACCEPT        rule k': partly outside, kept
//
// The proof is the shadowed-rule prover of compiler/headerspace/shadowed.h
// in the box projection (box.h, the one the classifier uses): a rule that
// lifts is exactly a box over five fields, "absent" included, for every
// packet (fragments, options, truncated frames too), so what it proves
// covered can never match and emptying it is exact. `rulejit check --lint`
// asks the same prover over cubes (compiler/analysis/flatten.cc), with
// each chain's entry region, exact for the packet model only; this pass
// asks it with all packets entering and removes only what it proves for
// all packets.
//
// Assumes: a verified ruleset. Cost and the rules that restart the covers:
// shadowed.h.
#include "compiler/headerspace/lift.h"
#include "compiler/headerspace/shadowed.h"
#include "compiler/passes/passes.h"

namespace rulejit::passes {

void RemoveShadowedRules(ir::Ruleset& ruleset) {
  using Boxes = headerspace::Lifter<headerspace::PacketModel::kAllPackets5Tuple>;
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    ir::Table& table = ruleset.tables[t];
    for (ir::Chain& chain : table.chains) {
      const Boxes lifter(table, chain);
      for (const headerspace::ShadowedRule& s :
           headerspace::ShadowedRules(lifter, static_cast<int>(t), chain)) {
        chain.rules[s.rule].exprs.clear();
      }
    }
  }
}

}  // namespace rulejit::passes
