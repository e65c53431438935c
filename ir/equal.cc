// Structural equality and hashing (see equal.h).
#include "ir/equal.h"

#include <variant>

namespace rulejit::ir {
namespace {

bool SameElement(const SetElement& a, const SetElement& b) {
  return a.key == b.key && a.key_end == b.key_end && a.data == b.data &&
         a.verdict == b.verdict;
}

bool SameKind(const Set& a, const Set& b) {
  return a.flags == b.flags && a.key_len == b.key_len && a.data_len == b.data_len &&
         a.verdict_map == b.verdict_map && a.field_lens == b.field_lens;
}

// A lookup's set: resolved when the table has it, else its name alone.
bool SameLookedUp(const TableSets& sa, std::string_view a, const TableSets& sb,
                  std::string_view b) {
  const Set* set_a = sa.Find(a).first;
  const Set* set_b = sb.Find(b).first;
  if (set_a == nullptr || set_b == nullptr) return set_a == set_b && a == b;
  return SameSet(*set_a, *set_b);
}

}  // namespace

bool SameSet(const Set& a, const Set& b) {
  if (a.anonymous() != b.anonymous()) return false;
  if (!a.anonymous()) return a.name == b.name;
  if (!SameKind(a, b) || a.elements.size() != b.elements.size()) return false;
  for (size_t i = 0; i < a.elements.size(); ++i) {
    if (!SameElement(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

size_t HashSet(const Set& set) {
  if (!set.anonymous()) return absl::HashOf(false, set.name);
  size_t h = absl::HashOf(true, set.flags, set.key_len, set.data_len, set.verdict_map,
                          set.field_lens, set.elements.size());
  for (const SetElement& e : set.elements) {
    h = absl::HashOf(h, e.key, equal_internal::Opt(e.key_end), e.data,
                     equal_internal::Opt(e.verdict));
  }
  return h;
}

TableSets::TableSets(const Table& table) : table_(&table) {
  by_name_.reserve(table.sets.size());
  for (const Set& set : table.sets) by_name_.try_emplace(set.name, &set, HashSet(set));
}

std::pair<const Set*, size_t> TableSets::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return {nullptr, 0};
  return it->second;
}

bool SameExpr(const TableSets& sa, const Expr& a, const TableSets& sb, const Expr& b) {
  const auto* la = std::get_if<Lookup>(&a);
  const auto* lb = std::get_if<Lookup>(&b);
  if (la == nullptr || lb == nullptr) return a == b;
  return la->sreg == lb->sreg && la->dreg == lb->dreg && la->invert == lb->invert &&
         SameLookedUp(sa, la->set, sb, lb->set);
}

size_t HashExpr(const TableSets& sets, const Expr& expr) {
  const auto* lookup = std::get_if<Lookup>(&expr);
  if (lookup == nullptr) {  // (this Abseil hashes absl::variant, not std::variant)
    return std::visit([&](const auto& e) { return absl::HashOf(expr.index(), e); }, expr);
  }
  auto [set, set_hash] = sets.Find(lookup->set);
  if (set == nullptr) set_hash = absl::HashOf(lookup->set);
  return absl::HashOf(expr.index(), lookup->sreg, equal_internal::Opt(lookup->dreg),
                      lookup->invert, set_hash);
}

bool SameExprs(const TableSets& sa, const std::vector<Node>& a, const TableSets& sb,
               const std::vector<Node>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameExpr(sa, a[i].expr, sb, b[i].expr)) return false;
  }
  return true;
}

size_t HashExprs(const TableSets& sets, const std::vector<Node>& exprs) {
  size_t h = absl::HashOf(exprs.size());
  for (const Node& node : exprs) h = absl::HashOf(h, HashExpr(sets, node.expr));
  return h;
}

RuleKey::RuleKey(const TableSets& sets, const Chain& chain, const Rule& rule)
    : sets_(&sets),
      chain_(&chain),
      rule_(&rule),
      hash_(absl::HashOf(sets.table().family, sets.table().name, chain.name,
                         HashExprs(sets, rule.exprs))) {}

bool operator==(const RuleKey& a, const RuleKey& b) {
  if (a.hash_ != b.hash_) return false;
  const Table& ta = a.sets_->table();
  const Table& tb = b.sets_->table();
  return ta.family == tb.family && ta.name == tb.name && a.chain_->name == b.chain_->name &&
         SameExprs(*a.sets_, a.rule_->exprs, *b.sets_, b.rule_->exprs);
}

}  // namespace rulejit::ir
