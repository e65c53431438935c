// Set elements as the linearizer lowers them: ast::Element (values, ranges,
// prefixes, concatenations, map data) → ir::SetElement keys, for named
// sets' `elements = { ... }` and for the anonymous sets of rules
// (`tcp dport { 22, 80 }` → __set0). Also nft's checks and rewrites of
// interval sets: no overlaps, touching intervals merged.
//
// Keys are laid out as the registers hold them after the loads of the
// match: each concatenated field padded to 4 bytes, payload fields in network
// order (bit fields shifted into place), meta/ct values in host order.
// Interval elements are kept as inclusive [key, key_end] pairs; the printer
// turns them into the kernel's start/end-flag form.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"
#include "frontends/nft/lower_util.h"

namespace rulejit::frontends::nft {

bool Linearizer::FillSet(ir::Set& set, const SetType& st,
                         const std::vector<Element>& elems) {
  if (set.elements.empty()) set.elements.reserve(elems.size());  // (later adds grow geometrically)
  for (const Element& e : elems) {
    ir::SetElement out;
    out.loc = e.loc;
    if (!e.key.empty() && !EncodeElementKey(set, st, e, &out)) return false;
    if (e.verdict) out.verdict = e.verdict;
    if (e.data) out.data = EncodeData(st, e);
    if (!e.object.empty()) out.object = e.object;
    set.elements.push_back(std::move(out));
  }
  return true;
}

// An element's data as the lookup leaves it in the registers: one value,
// or each value of a concatenation padded to 4 bytes.
ir::Bytes Linearizer::EncodeData(const SetType& st, const Element& e) {
  if (st.data_interval) return EncodeDataRange(st, e);
  if (st.data_rest.empty()) return Encode(st.data, *e.data, st.data.LoadLen());
  ir::Bytes out;
  for (size_t i = 0; i <= st.data_rest.size() && i <= e.data_rest.size(); ++i) {
    const Field& f = i == 0 ? st.data : st.data_rest[i - 1];
    ir::Bytes b = Encode(f, i == 0 ? *e.data : e.data_rest[i - 1], f.LoadLen());
    b.resize(Pad4(f.LoadLen()), 0);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

// Interval data: every field's low end padded to 4 bytes, then every
// field's high end (a single value is its own range).
ir::Bytes Linearizer::EncodeDataRange(const SetType& st, const Element& e) {
  ir::Bytes low, high;
  const ir::Set plain;  // data is stored in its own byte order
  for (size_t i = 0; i <= st.data_rest.size() && i < e.data_items.size(); ++i) {
    const Field& f = i == 0 ? st.data : st.data_rest[i - 1];
    ir::Bytes lo, hi;
    if (!EncodeKeyItem(plain, f, e.data_items[i], &lo, &hi)) return {};
    lo.resize(Pad4(f.LoadLen()), 0);
    hi.resize(Pad4(f.LoadLen()), 0);
    low.insert(low.end(), lo.begin(), lo.end());
    high.insert(high.end(), hi.begin(), hi.end());
  }
  low.insert(low.end(), high.begin(), high.end());
  return low;
}

// The key (and, in an interval set, the key end) of a non-catch-all element.
bool Linearizer::EncodeElementKey(const ir::Set& set, const SetType& st, const Element& e,
                                  ir::SetElement* out) {
  // Elements parsed before a later `type` line changed the fields.
  if (e.key.size() != st.fields.size()) {
    return Error(e.loc, absl::StrCat("element has ", e.key.size(), " field(s), the set type ",
                                     st.fields.size()));
  }
  ir::Bytes end;
  bool ranged = false;
  for (size_t i = 0; i < st.fields.size(); ++i) {
    ir::Bytes lo, hi;
    if (!EncodeKeyItem(set, st.fields[i], e.key[i], &lo, &hi)) return false;
    ranged |= e.key[i].kind != Item::Kind::kValue;
    if (st.fields.size() > 1) {
      lo.resize(Pad4(st.fields[i].LoadLen()), 0);
      hi.resize(Pad4(st.fields[i].LoadLen()), 0);
    }
    out->key.insert(out->key.end(), lo.begin(), lo.end());
    end.insert(end.end(), hi.begin(), hi.end());
  }
  if (ranged && !set.interval()) {
    return Error(e.loc, absl::StrCat("set '", set.name, "' needs 'flags interval' for ranges"));
  }
  if (set.interval()) out->key_end = end;
  return true;
}

// One field of a key: [lo, hi] of a value, range or prefix.
bool Linearizer::EncodeKeyItem(const ir::Set& set, const Field& f, const Item& it, ir::Bytes* lo,
                               ir::Bytes* hi) {
  const uint32_t len = f.LoadLen();
  switch (it.kind) {
    case Item::Kind::kValue:
      *lo = *hi = Encode(f, it.lo, len);
      break;
    case Item::Kind::kRange:
      if (it.outside) return Error(it.loc, "unsupported range across midnight UTC in a set");
      *lo = EncodeNum(f, it.lo.num, len);
      *hi = EncodeNum(f, it.hi, len);
      break;
    case Item::Kind::kPrefix: {
      U128 m = BitsMask(f.len_bits) & ~BitsMask(f.len_bits - it.prefix);
      *lo = EncodeNum(f, it.lo.num & m, len);
      *hi = EncodeNum(f, (it.lo.num & m) | (BitsMask(f.len_bits) & ~m), len);
      break;
    }
  }
  // Interval keys of host-order values are stored big-endian (the rule
  // byte-swaps the register first).
  if (f.host_order && len > 1 && set.interval()) {
    std::reverse(lo->begin(), lo->end());
    std::reverse(hi->begin(), hi->end());
  }
  return true;
}

// Interval elements of a named set without auto-merge must not overlap
// (nft: "conflicting intervals specified"); anonymous sets are merged first.
bool Linearizer::CheckOverlaps(const ir::Set& set) {
  if (!set.interval()) return true;
  std::vector<const ir::SetElement*> v;
  for (const ir::SetElement& e : set.elements) v.push_back(&e);
  std::sort(v.begin(), v.end(), [](const ir::SetElement* a, const ir::SetElement* b) {
    return std::lexicographical_compare(a->key.begin(), a->key.end(), b->key.begin(), b->key.end());
  });
  for (size_t i = 1; i < v.size(); ++i) {
    const ir::Bytes& prev_end = v[i - 1]->key_end ? *v[i - 1]->key_end : v[i - 1]->key;
    if (set.field_lens.empty() &&
        !std::lexicographical_compare(prev_end.begin(), prev_end.end(), v[i]->key.begin(),
                                      v[i]->key.end())) {
      if (v[i - 1]->key == v[i]->key && v[i - 1]->key_end == v[i]->key_end) continue;
      return Error(v[i]->loc, absl::StrCat("interval overlaps another element of set '",
                                           set.name, "'"));
    }
  }
  return true;
}

namespace {
// a + 1 == b, as big-endian byte strings of equal length.
bool IsSuccessor(const ir::Bytes& a, const ir::Bytes& b) {
  if (a.size() != b.size()) return false;
  ir::Bytes next = a;
  for (size_t i = next.size(); i-- > 0;) {
    if (++next[i] != 0) break;
  }
  return next == b;
}
}  // namespace

// nft merges the intervals of anonymous sets (and of auto-merge sets) that
// touch or overlap: {33-55, 56-88} → 33-88, {240.0.0.0/4,
// 255.255.255.255/32} → 240.0.0.0/4, {1-5, 3-9} → 1-9.
void Linearizer::MergeIntervals(ir::Set& set) {
  std::vector<ir::SetElement>& v = set.elements;
  std::sort(v.begin(), v.end(), [](const ir::SetElement& a, const ir::SetElement& b) {
    return std::lexicographical_compare(a.key.begin(), a.key.end(), b.key.begin(), b.key.end());
  });
  std::vector<ir::SetElement> out;
  for (ir::SetElement& e : v) {
    if (!out.empty() && out.back().key_end && e.key_end && !e.key.empty() &&
        (IsSuccessor(*out.back().key_end, e.key) || !(*out.back().key_end < e.key))) {
      if (*out.back().key_end < *e.key_end) out.back().key_end = e.key_end;
      continue;
    }
    out.push_back(std::move(e));
  }
  v = std::move(out);
}

// "__set<N>" not used yet in the table (rules may be added to a table that
// already holds anonymous sets from another parse).
std::string Linearizer::FreshAnonName(std::string_view prefix) {
  while (true) {
    std::string name = absl::StrCat(std::string(prefix), anon_counter_++);
    bool used = FindTableSet(name) != nullptr;
    for (const ir::Set& p : pending_sets_) used |= p.name == name;
    if (!used) return name;
  }
}

bool Linearizer::AddAnonSet(const SetType& st, const std::vector<Element>& elems,
                            ir::SourceLoc loc, std::string* name) {
  ir::Set set;
  set.name = FreshAnonName(st.obj_type != 0 ? "__objmap" : st.is_map ? "__map" : "__set");
  set.loc = loc;
  set.flags = ir::kSetAnonymous | ir::kSetConstant;
  const bool ranged = HasRanges(elems);
  if (ranged) set.flags |= ir::kSetInterval;
  if (ranged && st.fields.size() > 1) set.flags |= ir::kSetConcat;
  for (const Field& f : st.fields) {
    set.field_lens.push_back(f.LoadLen());
    set.key_len += st.fields.size() > 1 ? Pad4(f.LoadLen()) : f.LoadLen();
  }
  if (st.fields.size() == 1) set.field_lens.clear();
  if (st.obj_type != 0) {
    set.flags |= ir::kSetObject;  // an object map: no data, a name per element
    set.obj_type = st.obj_type;
  } else if (st.is_map) {
    set.flags |= ir::kSetMap;
    set.verdict_map = st.verdict_map;
    set.data_len = st.verdict_map ? 0 : st.DataLen();
  }
  if (!FillSet(set, st, elems)) return false;
  if (set.interval() && !st.is_map && st.fields.size() == 1) MergeIntervals(set);
  if (!CheckOverlaps(set) || !CheckConcatElements(set, 0)) return false;
  *name = set.name;
  pending_sets_.push_back(std::move(set));
  return true;
}

const ir::Set* Linearizer::FindSet(const std::string& name) const {
  for (const ir::Set& x : pending_sets_) {
    if (x.name == name) return &x;
  }
  return FindTableSet(name);
}

}  // namespace rulejit::frontends::nft
