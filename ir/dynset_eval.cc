// nft_dynset_eval over the hash set the kernel picks for dynamic sets
// (nft_rhash_update / nft_rhash_delete):
//
//   delete           remove the element; the rule always goes on
//   add / update     find the element, or insert a new one (its data from
//                    sreg_data, its timeout the statement's or the set's,
//                    fresh copies of the statement's expressions); an
//                    insert into a full set fails and the rule stops
//                    update also restarts a found element's timeout
//   then             the element's expressions run in order: a counter
//                    counts, a limit or quota that does not pass stops
//                    the rule
//
// An expired element is gone for lookups and statements alike. Static
// elements (from the ruleset) never expire here, and the kernel's garbage
// collection is not modelled: near a full set, an expired element that the
// kernel has not yet collected may still take room there.
#include "ir/dynset_eval.h"

#include <cstring>

namespace rulejit::ir {
namespace {

constexpr uint64_t kNsPerMs = 1000000;

std::string KeyOf(const Set& set, const uint8_t* key) {
  return std::string(reinterpret_cast<const char*>(key), set.key_len);
}

bool Expired(const DynElement& el, uint64_t now_ns) {
  return el.expires_ns != 0 && now_ns >= el.expires_ns;
}

bool StaticGone(const DynamicSet* dyn, int element) {
  return dyn != nullptr && static_cast<size_t>(element) < dyn->static_gone.size() &&
         dyn->static_gone[element];
}

void MarkStaticGone(const Set& set, DynamicSet& dyn, int element) {
  dyn.static_gone.resize(set.elements.size(), false);
  dyn.static_gone[element] = true;
}

// Elements the set holds now: static ones left plus live added ones.
size_t CountElements(const Set& set, DynamicSet& dyn, uint64_t now_ns) {
  size_t n = 0;
  for (size_t i = 0; i < set.elements.size(); ++i) n += StaticGone(&dyn, static_cast<int>(i)) ? 0 : 1;
  for (const auto& [key, el] : dyn.elements) n += Expired(el, now_ns) ? 0 : 1;
  return n;
}

uint64_t TimeoutMs(const Dynset& e, const Set& set) {
  if (!(set.flags & kSetTimeout)) return 0;
  return e.timeout_ms != 0 ? e.timeout_ms : set.timeout_ms;
}

// The live element for `key`: an added one, or a static one moved over
// (so that its expressions get state); null when the set has none.
DynElement* Find(const Set& set, const SetIndex& index, DynamicSet& dyn, const std::string& key,
                 uint64_t now_ns) {
  auto it = dyn.elements.find(key);
  if (it != dyn.elements.end()) {
    if (!Expired(it->second, now_ns)) return &it->second;
    dyn.elements.erase(it);
  }
  const int found = index.Find(reinterpret_cast<const uint8_t*>(key.data()));
  if (found < 0 || StaticGone(&dyn, found)) return nullptr;
  MarkStaticGone(set, dyn, found);
  DynElement& el = dyn.elements[key];
  el.data = set.elements[found].data;
  return &el;
}

DynElement* Insert(const Dynset& e, const Set& set, DynamicSet& dyn, const std::string& key,
                   uint8_t* regs, uint64_t now_ns) {
  const uint32_t size = set.size != 0 ? set.size : kDynsetDefaultSize;
  if (CountElements(set, dyn, now_ns) >= size) return nullptr;
  DynElement el;
  if (e.sreg_data) {
    const uint8_t* data = RegBytes(regs, *e.sreg_data, set.data_len);
    if (data == nullptr) return nullptr;
    el.data.assign(data, data + set.data_len);
  }
  const uint64_t timeout_ms = TimeoutMs(e, set);
  if (timeout_ms != 0) el.expires_ns = now_ns + timeout_ms * kNsPerMs;
  return &(dyn.elements[key] = std::move(el));
}

// nft_set_elem_update_expr: the element's expressions, in order, until one
// does not pass.
bool RunElementExprs(const Dynset& e, DynElement& el, uint32_t skb_len, uint64_t now_ns) {
  el.exprs.resize(e.exprs.size());
  for (size_t i = 0; i < e.exprs.size(); ++i) {
    DynElementExpr& state = el.exprs[i];
    bool passes = true;
    if (std::holds_alternative<Counter>(e.exprs[i])) {
      state.counter.packets += 1;
      state.counter.bytes += skb_len;
    } else if (const auto* limit = std::get_if<Limit>(&e.exprs[i])) {
      passes = WithinLimit(*limit, skb_len, now_ns, state.bucket) != limit->over;
    } else if (const auto* quota = std::get_if<Quota>(&e.exprs[i])) {
      passes = QuotaPasses(*quota, skb_len, state.quota);
    }
    if (!passes) return false;
  }
  return true;
}

}  // namespace

const char* DynsetRefusal(const Set& set, const Dynset& e) {
  const bool is_map = (set.flags & kSetMap) != 0 || set.data_len > 0;
  if (set.flags & (kSetInterval | kSetConstant)) {
    return "an interval or constant set cannot be changed from a rule";
  }
  if (set.verdict_map || set.obj_type != 0 || (set.flags & kSetObject)) {
    return "verdict and object maps cannot be changed from a rule";
  }
  if (is_map != e.sreg_data.has_value()) {
    return e.sreg_data ? "data given for a set that is not a map" : "a map needs data (KEY : DATA)";
  }
  if (e.timeout_ms != 0 && !(set.flags & kSetTimeout)) {
    return "a timeout needs a set with timeouts (flags timeout)";
  }
  return nullptr;
}

bool FindDynamic(const Set& set, const SetIndex& index, const DynamicSet* dyn, const uint8_t* key,
                 uint64_t now_ns, const Bytes** data) {
  if (dyn != nullptr) {
    auto it = dyn->elements.find(KeyOf(set, key));
    if (it != dyn->elements.end() && !Expired(it->second, now_ns)) {
      if (data != nullptr) *data = &it->second.data;
      return true;
    }
  }
  const int found = index.Find(key);
  if (found < 0 || StaticGone(dyn, found)) return false;
  if (data != nullptr) *data = &set.elements[found].data;
  return true;
}

bool EvalDynset(const Dynset& e, const Set& set, const SetIndex& index, uint8_t* regs,
                uint32_t skb_len, uint64_t now_ns, DynamicSet& dyn) {
  const uint8_t* key_bytes = RegBytes(regs, e.sreg_key, set.key_len);
  if (key_bytes == nullptr) return false;
  const std::string key = KeyOf(set, key_bytes);
  if (e.op == DynsetOp::kDelete) {
    dyn.elements.erase(key);
    const int found = index.Find(key_bytes);
    if (found >= 0) MarkStaticGone(set, dyn, found);
    return true;
  }
  DynElement* el = Find(set, index, dyn, key, now_ns);
  if (el == nullptr) {
    el = Insert(e, set, dyn, key, regs, now_ns);
    if (el == nullptr) return false;
  } else if (e.op == DynsetOp::kUpdate && el->expires_ns != 0) {
    el->expires_ns = now_ns + TimeoutMs(e, set) * kNsPerMs;
  }
  return RunElementExprs(e, *el, skb_len, now_ns);
}

}  // namespace rulejit::ir
