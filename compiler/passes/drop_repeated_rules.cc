// drop-repeated-rules: a rule that repeats an earlier rule of its chain
// whose verdict ends the chain can never match, so it is emptied.
//
//   -A FORWARD ! -s 10.0.0.0/10 -j DROP       rule j: runs
//   -A FORWARD ! -s 10.0.0.0/10 -j DROP       rule k: emptied (no code)
//   ... (the seed chain: 10000 copies become one rule's worth of code)
//
// Why it is exact for every packet: evaluation is deterministic given the
// packet and the metadata; registers carry nothing between rules (the
// verifier demands that a rule writes what it reads), so a packet that
// reaches k reached j with the same state and did not match there (or j's
// verdict would have ended the chain); k does the same and does not match.
// Its counter never counts and it decides nothing, so an empty rule (which
// runs no expression and has no verdict) is observably the same, and the
// rule keeps its index: deciding-rule ids and counters are unchanged.
//
// Assumes: a verified ruleset. Only when
//   - j's verdict ends the chain for a matching packet: accept, drop,
//     return, goto (an immediate) or a reject statement;
//   - neither rule has state of its own that differs between copies
//     (limit: each copy has its own token bucket);
//   - no rule between them, nor j or k, changes state a later rule may
//     read (meta/ct mark set), or jumps (the called chain might).
#include "absl/container/flat_hash_set.h"
#include "compiler/passes/passes.h"
#include "ir/equal.h"
#include "ir/rule_shape.h"

namespace rulejit::passes {
namespace {

void DropInChain(const ir::TableSets& sets, ir::Chain& chain) {
  absl::flat_hash_set<ir::RuleKey> seen;  // rules that ended the chain
  for (ir::Rule& rule : chain.rules) {
    if (rule.exprs.empty()) continue;
    if (ir::ChangesStateOrJumps(rule)) {
      seen.clear();
      continue;
    }
    ir::RuleKey key(sets, chain, rule);
    if (seen.contains(key)) {
      rule.exprs.clear();
    } else if (ir::EndsChain(rule)) {
      seen.insert(key);
    }
  }
}

}  // namespace

void DropRepeatedRules(ir::Ruleset& ruleset) {
  for (ir::Table& table : ruleset.tables) {
    const ir::TableSets sets(table);
    for (ir::Chain& chain : table.chains) DropInChain(sets, chain);
  }
}

}  // namespace rulejit::passes
