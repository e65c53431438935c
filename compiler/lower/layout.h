// The global numbering of chains and rules that compiled code, counters
// and deciding-rule ids share: chains in table order then chain order;
// rule ids likewise; the policy of chain c has id rule_count + c.
#ifndef RULEJIT_COMPILER_LOWER_LAYOUT_H_
#define RULEJIT_COMPILER_LOWER_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace rulejit::lower {

struct Layout {
  explicit Layout(const ir::Ruleset& ruleset);
  uint32_t ChainIndex(int table, int chain) const { return chain_base[table] + chain; }
  uint32_t RuleId(int table, int chain, int rule) const {
    return rule_base[ChainIndex(table, chain)] + rule;
  }
  uint32_t PolicyId(int table, int chain) const {
    return rule_count + ChainIndex(table, chain);
  }
  std::vector<uint32_t> chain_base;   // per table: first chain index
  std::vector<uint32_t> rule_base;    // per chain index: first rule id
  std::vector<ir::RuleRef> refs;      // per rule id and policy id
  uint32_t rule_count = 0;
  uint32_t chain_count = 0;
};

// fn(table index, chain index, chain) for every chain, in Layout order.
template <typename Fn>
void ForEachChain(const ir::Ruleset& ruleset, Fn fn) {
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    const auto& chains = ruleset.tables[t].chains;
    for (size_t c = 0; c < chains.size(); ++c) {
      fn(static_cast<int>(t), static_cast<int>(c), chains[c]);
    }
  }
}

}  // namespace rulejit::lower

#endif  // RULEJIT_COMPILER_LOWER_LAYOUT_H_
