// Layout: numbers every chain and rule of a ruleset (see layout.h).
#include "compiler/lower/layout.h"

namespace rulejit::lower {

Layout::Layout(const ir::Ruleset& ruleset) {
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    chain_base.push_back(chain_count);
    const auto& chains = ruleset.tables[t].chains;
    for (size_t c = 0; c < chains.size(); ++c) {
      rule_base.push_back(rule_count);
      for (size_t r = 0; r < chains[c].rules.size(); ++r) {
        refs.push_back({static_cast<int>(t), static_cast<int>(c), static_cast<int>(r)});
      }
      rule_count += chains[c].rules.size();
      ++chain_count;
    }
  }
  ForEachChain(ruleset, [&](int t, int c, const ir::Chain&) { refs.push_back({t, c, -1}); });
}

}  // namespace rulejit::lower
