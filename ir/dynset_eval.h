// nft's dynamic sets (nft_dynset of Linux 6.18): the elements that `add`,
// `update` and `delete` statements and meters put into a set while packets
// pass, kept by the caller across packets, and lookups that see them.
#ifndef RULEJIT_IR_DYNSET_EVAL_H_
#define RULEJIT_IR_DYNSET_EVAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/expr_eval.h"
#include "ir/ir.h"

namespace rulejit::ir {

// KERNEL: nft_dynset_init gives a set that a dynset statement fills and
// that declares no size this many elements at most.
inline constexpr uint32_t kDynsetDefaultSize = 0xffff;

// The element expressions' state of one element: one slot per expression.
struct DynElementExpr {
  Counter counter;
  LimitBucket bucket;
  QuotaCount quota;
};

struct DynElement {
  Bytes data;               // map data (data_len bytes)
  uint64_t expires_ns = 0;  // 0: never expires
  std::vector<DynElementExpr> exprs;
};

// What the packet path changed in one set: the elements it added (static
// elements that a statement touched are moved here too) and the static
// elements it removed or moved.
struct DynamicSet {
  absl::flat_hash_map<std::string, DynElement> elements;  // by key bytes
  std::vector<bool> static_gone;  // by index into Set::elements
};

// Every set's changes, by (table index, set index).
struct DynamicSets {
  std::map<std::pair<int, int>, DynamicSet> sets;
};

// nft_dynset_init's refusals of `e` on `set`: a set it can change (a hash
// set, not an interval, constant, verdict or object set), data from a
// register for maps and for nothing else, a timeout only in a set with
// timeouts. nullptr when the kernel accepts it. Whether the set is marked
// dynamic is the caller's to check (the nft frontend marks it).
const char* DynsetRefusal(const Set& set, const Dynset& e);

// The set's element for `key` (key_len bytes) at `now_ns`, whether static
// or added by packets: false when there is none (expired ones are gone).
// `data` receives the map data, when not null.
bool FindDynamic(const Set& set, const SetIndex& index, const DynamicSet* dyn, const uint8_t* key,
                 uint64_t now_ns, const Bytes** data);

// Runs `e` on `set` with the key (and data) in `regs`: whether the rule
// goes on (nft_dynset_eval). `skb_len`: what counters, limits and quotas
// of the element count.
bool EvalDynset(const Dynset& e, const Set& set, const SetIndex& index, uint8_t* regs,
                uint32_t skb_len, uint64_t now_ns, DynamicSet& dyn);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_DYNSET_EVAL_H_
