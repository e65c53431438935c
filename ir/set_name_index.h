// Sets of one table by name, hashed: the sibling of chain_index.h.
// Table::FindSet scans the sets, so a table of 10^4 anonymous sets (one
// per rule, `ip saddr { a, b }`) whose every lookup is resolved by a scan
// costs 10^8 string compares in the verifier alone, and naming each new
// anonymous set (`__set<N>` not used yet) one scan more per rule. It
// follows a table whose sets are only appended to: every Find first indexes
// the sets added since the last one, and starts over when the table looks
// different (fewer sets, or another set where the last indexed one was).
// A hit is checked against the table; a set renamed in place falls back to
// the scan.
#ifndef RULEJIT_IR_SET_NAME_INDEX_H_
#define RULEJIT_IR_SET_NAME_INDEX_H_

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "ir/ir.h"

namespace rulejit::ir {

class SetNameIndex {
 public:
  SetNameIndex() = default;
  explicit SetNameIndex(const Table& table) : lookups_(kScansFirst) { CatchUp(table); }

  // The first set of `table` named `name` (as Table::FindSet), or null.
  const Set* Find(const Table& table, std::string_view name) {
    if (lookups_ < kScansFirst) {
      ++lookups_;
      return table.FindSet(name);
    }
    CatchUp(table);
    auto it = by_name_.find(std::string(name));
    if (it == by_name_.end()) return nullptr;
    const Set& s = table.sets[it->second];
    return s.name == name ? &s : table.FindSet(name);
  }

 private:
  void CatchUp(const Table& table) {
    if (table.sets.size() < indexed_ || &table != table_ ||
        (indexed_ > 0 && table.sets[indexed_ - 1].name != last_)) {
      by_name_.clear();
      indexed_ = 0;
      table_ = &table;
    }
    for (; indexed_ < table.sets.size(); ++indexed_) {
      by_name_.try_emplace(table.sets[indexed_].name, indexed_);
    }
    if (indexed_ > 0) last_ = table.sets[indexed_ - 1].name;
  }

  // A default-made index scans for its first few lookups: one that lives
  // for a single rule (ParseNftRule) is not worth hashing the table for.
  static constexpr int kScansFirst = 4;

  absl::flat_hash_map<std::string, size_t> by_name_;
  int lookups_ = 0;
  size_t indexed_ = 0;
  const Table* table_ = nullptr;
  std::string last_;  // the name of the last set indexed
};

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_SET_NAME_INDEX_H_
