// Structural equality and hashing of expressions and rules: two are the
// same when they do the same, whatever text they print as.
//
//   tcp dport { 1, 2 } accept    lookup __set0 ┐ not the same: the printer
//   tcp dport { 3, 4 } accept    lookup __set1 ┘ shows both as `__set%d`
//   tcp dport { 1, 2 } accept    lookup __set2   the same as the first
//
// An expression struct's own `==` (ir.h) compares every field, a lookup by
// its set's name. Here a lookup's set is resolved through its table
// (TableSets): an anonymous set is the same as another anonymous set of the
// same kind (flags, key and data lengths, fields, verdict map) and elements
// (in order, source locations aside); a named set is known by its name.
// Source locations, handles and comments never count.
//
//   ir::TableSets sets(table);
//   absl::flat_hash_set<ir::RuleKey> seen;
//   for (const ir::Rule& rule : chain.rules) seen.insert(ir::RuleKey(sets, chain, rule));
#ifndef RULEJIT_IR_EQUAL_H_
#define RULEJIT_IR_EQUAL_H_

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "ir/ir.h"

namespace rulejit {
// ir::Counter is the public rulejit::Counter: its hash lives where argument-
// dependent lookup finds it.
template <typename H> H AbslHashValue(H h, const Counter& e) {
  return H::combine(std::move(h), e.packets, e.bytes);
}
}  // namespace rulejit

namespace rulejit::ir {

namespace equal_internal {
// This Abseil hashes no std::optional (ABSL_OPTION_USE_STD_OPTIONAL 0).
template <typename T> std::pair<bool, T> Opt(const std::optional<T>& o) {
  return {o.has_value(), o.value_or(T{})};
}
template <typename T> std::pair<bool, T> Opt(const Boxed<T>& o) {
  return {o.has_value(), o.value_or(T{})};
}
}  // namespace equal_internal

// Hashes consistent with the structs' `==` (a lookup hashed by set name).
template <typename H> H AbslHashValue(H h, const Verdict& v) {
  return H::combine(std::move(h), v.code, v.chain);
}
template <typename H> H AbslHashValue(H h, const PayloadLoad& e) {
  return H::combine(std::move(h), e.base, e.offset, e.len, e.dreg);
}
template <typename H> H AbslHashValue(H h, const PayloadWrite& e) {
  return H::combine(std::move(h), e.base, e.offset, e.len, e.sreg, e.csum_type,
                    e.csum_offset, e.csum_flags);
}
template <typename H> H AbslHashValue(H h, const Exthdr& e) {
  return H::combine(std::move(h), e.op, e.type, e.offset, e.len, e.present, e.dreg);
}
template <typename H> H AbslHashValue(H h, const ChecksumFill&) { return h; }
template <typename H> H AbslHashValue(H h, const Recent& e) {
  return H::combine(std::move(h), e.op, e.name, e.invert, e.rdest, e.reap, e.rttl, e.seconds,
                    e.hitcount, std::string(e.mask.begin(), e.mask.end()));
}
template <typename H> H AbslHashValue(H h, const Ipv6HeaderMatch& e) {
  return H::combine(std::move(h), e.flags, e.invert, e.soft);
}
template <typename H> H AbslHashValue(H h, const StringMatch& e) {
  return H::combine(std::move(h), e.algo, e.from, e.to,
                    std::string(e.pattern.begin(), e.pattern.end()), e.icase, e.invert);
}
template <typename H> H AbslHashValue(H h, const Hashlimit& e) {
  return H::combine(std::move(h), e.name, e.mode, e.invert, e.bytes, e.rate_match, e.avg,
                    e.burst, e.interval, e.size, e.max, e.gc_interval, e.expire, e.srcmask,
                    e.dstmask);
}
template <typename H> H AbslHashValue(H h, const Socket& e) {
  return H::combine(std::move(h), e.key, e.level, e.dreg);
}
template <typename H> H AbslHashValue(H h, const Tproxy& e) {
  return H::combine(std::move(h), e.family, equal_internal::Opt(e.addr),
                    equal_internal::Opt(e.port), e.else_drop);
}
template <typename H> H AbslHashValue(H h, const TcpMss& e) {
  return H::combine(std::move(h), e.mss, e.clamp);
}
template <typename H> H AbslHashValue(H h, const Fib& e) {
  return H::combine(std::move(h), e.flags, e.result, e.dreg);
}
template <typename H> H AbslHashValue(H h, const MetaLoad& e) {
  return H::combine(std::move(h), e.key, e.dreg);
}
template <typename H> H AbslHashValue(H h, const MetaSet& e) {
  return H::combine(std::move(h), e.key, e.sreg);
}
template <typename H> H AbslHashValue(H h, const CtLoad& e) {
  return H::combine(std::move(h), e.key, e.dreg, e.dir);
}
template <typename H> H AbslHashValue(H h, const CtSet& e) {
  return H::combine(std::move(h), e.key, e.sreg, e.dir);
}
template <typename H> H AbslHashValue(H h, const Bitwise& e) {
  return H::combine(std::move(h), e.op, e.sreg, e.dreg, e.len, e.mask, e.xor_, e.shift,
                    e.sreg2);
}
template <typename H> H AbslHashValue(H h, const Byteorder& e) {
  return H::combine(std::move(h), e.op, e.sreg, e.dreg, e.len, e.size);
}
template <typename H> H AbslHashValue(H h, const Cmp& e) {
  return H::combine(std::move(h), e.op, e.sreg, e.data);
}
template <typename H> H AbslHashValue(H h, const Range& e) {
  return H::combine(std::move(h), e.negate, e.sreg, e.from, e.to);
}
template <typename H> H AbslHashValue(H h, const Lookup& e) {
  return H::combine(std::move(h), e.sreg, e.set, equal_internal::Opt(e.dreg), e.invert);
}
template <typename H> H AbslHashValue(H h, const Immediate& e) {
  return H::combine(std::move(h), e.dreg, e.data, e.verdict);
}
template <typename H> H AbslHashValue(H h, const Limit& e) {
  return H::combine(std::move(h), e.rate, e.unit_seconds, e.burst, e.bytes, e.over);
}
template <typename H> H AbslHashValue(H h, const Log& e) {
  return H::combine(std::move(h), equal_internal::Opt(e.prefix),
                    equal_internal::Opt(e.level), equal_internal::Opt(e.group), e.flags, e.snaplen,
                    e.qthreshold);
}
template <typename H> H AbslHashValue(H h, const Reject& e) {
  return H::combine(std::move(h), e.type, e.code);
}
template <typename H> H AbslHashValue(H h, const Notrack&) { return h; }
template <typename H> H AbslHashValue(H h, const Queue& e) {
  return H::combine(std::move(h), e.num, e.total, e.flags,
                    equal_internal::Opt(e.sreg_qnum));
}
template <typename H> H AbslHashValue(H h, const Quota& e) {
  return H::combine(std::move(h), e.bytes, e.consumed, e.over);
}
template <typename H> H AbslHashValue(H h, const Nat& e) {
  return H::combine(std::move(h), e.kind, e.family, equal_internal::Opt(e.addr_min),
                    equal_internal::Opt(e.addr_max), equal_internal::Opt(e.proto_min),
                    equal_internal::Opt(e.proto_max), e.flags);
}
template <typename H> H AbslHashValue(H h, const FlowOffload& e) {
  return H::combine(std::move(h), e.flowtable);
}
template <typename H> H AbslHashValue(H h, const Objref& e) {
  return H::combine(std::move(h), e.type, e.name, equal_internal::Opt(e.sreg), e.set);
}
template <typename H> H AbslHashValue(H h, const Numgen& e) {
  return H::combine(std::move(h), e.dreg, e.random, e.mod, e.offset);
}
template <typename H> H AbslHashValue(H h, const Hash& e) {
  return H::combine(std::move(h), e.dreg, e.symmetric, e.sreg, e.len,
                    equal_internal::Opt(e.seed), e.mod, e.offset);
}
template <typename H> H AbslHashValue(H h, const ExthdrWrite& e) {
  return H::combine(std::move(h), e.op, e.type, e.offset, e.len, e.sreg);
}
template <typename H> H AbslHashValue(H h, const Rt& e) {
  return H::combine(std::move(h), e.key, e.dreg);
}
template <typename H> H AbslHashValue(H h, const Synproxy& e) {
  return H::combine(std::move(h), e.mss, e.wscale);
}
template <typename H> H AbslHashValue(H h, const Dynset& e) {
  // The element expressions hash by count only (they are equal or not by ==).
  return H::combine(std::move(h), e.op, e.sreg_key, e.set, equal_internal::Opt(e.sreg_data),
                    e.timeout_ms, e.exprs.size());
}
template <typename H> H AbslHashValue(H h, const TimeMatch& e) {
  return H::combine(std::move(h), e.date_start, e.date_stop, e.daytime_start, e.daytime_stop,
                    e.weekdays, e.monthdays, e.kerneltz, e.contiguous);
}
template <typename H> H AbslHashValue(H h, const FusedCmp& e) {
  return H::combine(std::move(h), e.load, e.mask, e.op, e.data);
}

// Sets as a lookup sees them: anonymous ones by kind and elements, named
// ones by name (see above).
bool SameSet(const Set& a, const Set& b);
size_t HashSet(const Set& set);

// The sets of one table by name, each with its hash, so that comparing and
// hashing a lookup costs no walk over the table (a table may hold one
// anonymous set per rule). Refers to the table: keep it alive.
class TableSets {
 public:
  explicit TableSets(const Table& table);
  const Table& table() const { return *table_; }
  // The set named `name` and its HashSet; {null, 0} when there is none.
  std::pair<const Set*, size_t> Find(std::string_view name) const;

 private:
  const Table* table_;
  absl::flat_hash_map<std::string_view, std::pair<const Set*, size_t>> by_name_;
};

// Expressions, each in its own table. A lookup of a set the table lacks
// (unverified IR) is known by the set's name.
bool SameExpr(const TableSets& sa, const Expr& a, const TableSets& sb, const Expr& b);
size_t HashExpr(const TableSets& sets, const Expr& expr);
// A rule's expressions in order (not its location, handle or comment).
bool SameExprs(const TableSets& sa, const std::vector<Node>& a, const TableSets& sb,
               const std::vector<Node>& b);
size_t HashExprs(const TableSets& sets, const std::vector<Node>& exprs);

// A rule where it stands, as a hash key: equal for rules of the same table
// (family and name) and chain (name) with the same expressions, whatever
// their position, location, handle or comment. Keeps pointers: `sets`
// (made from the rule's table), `chain` and `rule` must outlive it.
class RuleKey {
 public:
  RuleKey(const TableSets& sets, const Chain& chain, const Rule& rule);
  friend bool operator==(const RuleKey& a, const RuleKey& b);
  template <typename H> friend H AbslHashValue(H h, const RuleKey& k) {
    return H::combine(std::move(h), k.hash_);
  }

 private:
  const TableSets* sets_;
  const Chain* chain_;
  const Rule* rule_;
  size_t hash_;
};

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_EQUAL_H_
