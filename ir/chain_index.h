// Chains of one table by name, hashed. Table::FindChain scans the chains,
// so a pass that resolves every jump of a table of 10^5 chains (each
// jumping to the next) would take 10^10 string compares; this index makes
// it linear. It follows a table whose chains are only appended to: every
// Find first indexes the chains added since the last one, and starts over
// when the table looks different: fewer chains than it had, or another
// chain where the last indexed one was (chains taken off the end, as a
// failed rule's bound chains are, then others added: names are unique in
// a table, so the last position tells).
#ifndef RULEJIT_IR_CHAIN_INDEX_H_
#define RULEJIT_IR_CHAIN_INDEX_H_

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "ir/ir.h"

namespace rulejit::ir {

class ChainIndex {
 public:
  ChainIndex() = default;
  explicit ChainIndex(const Table& table) { CatchUp(table); }

  // The first chain of `table` named `name` (as Table::FindChain), or null.
  const Chain* Find(const Table& table, std::string_view name) {
    CatchUp(table);
    auto it = by_name_.find(std::string(name));
    if (it == by_name_.end()) return nullptr;
    const Chain& c = table.chains[it->second];
    // A chain renamed in place since it was indexed: not worth trusting.
    return c.name == name ? &c : table.FindChain(name);
  }

 private:
  void CatchUp(const Table& table) {
    if (table.chains.size() < indexed_ ||
        (indexed_ > 0 && table.chains[indexed_ - 1].name != last_)) {
      by_name_.clear();
      indexed_ = 0;
    }
    for (; indexed_ < table.chains.size(); ++indexed_) {
      by_name_.try_emplace(table.chains[indexed_].name, indexed_);
    }
    if (indexed_ > 0) last_ = table.chains[indexed_ - 1].name;
  }

  absl::flat_hash_map<std::string, size_t> by_name_;
  size_t indexed_ = 0;
  std::string last_;  // the name of the last chain indexed
};

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_CHAIN_INDEX_H_
