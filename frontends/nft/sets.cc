// nft sets and maps: declarations (`type`/`typeof`, flags, elements),
// anonymous sets built from `{ ... }` in rules, and element encoding.
//
// Keys are laid out as the registers hold them after the loads of the
// match: each concatenated field padded to 4 bytes, payload fields in network
// order (bit fields shifted into place), meta/ct values in host order.
// Interval elements are kept as inclusive [key, key_end] pairs; the printer
// turns them into the kernel's start/end-flag form.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {
namespace {

uint32_t Pad4(uint32_t n) { return (n + 3) / 4 * 4; }

U128 LowBits(uint32_t bits) {
  return bits >= 128 ? ~static_cast<U128>(0) : ((static_cast<U128>(1) << bits) - 1);
}

// A field standing for a `type NAME` key: its size and byte order only.
Field TypeField(DType t) {
  Field f;
  f.kind = Field::Kind::kMeta;
  f.type = t;
  f.len_bits = DTypeBits(t);
  f.host_order = DTypeHostOrder(t);
  return f;
}

}  // namespace

Field BitfieldValue(const Field& f) {
  Field v = TypeField(f.type);
  v.len_bits = f.len_bits;
  v.loc = f.loc;
  return v;
}

std::vector<Field> SetKeyFields(const std::vector<Field>& fields) {
  std::vector<Field> out = fields;
  if (out.size() < 2) return out;
  for (Field& f : out) {
    if (IsShiftedBitfield(f)) f = BitfieldValue(f);
  }
  return out;
}

bool Parser::ParseTypeofExpr(std::vector<Field>* fields) {
  fields->clear();
  Field f;
  if (!ParseField(&f)) return false;
  fields->push_back(f);
  while (AtWord(".")) {
    Next();
    if (!ParseField(&f)) return false;
    fields->push_back(f);
  }
  return true;
}

bool Parser::ParseSetTypeSpec(SetType* st, ir::Set& set, bool is_map) {
  bool is_typeof = Next().text == "typeof";
  st->fields.clear();
  if (is_typeof) {
    if (!ParseTypeofExpr(&st->fields)) return false;
    // nft keys a set by the values of a bitfield (`typeof ip6 dscp`: one
    // byte, 0..63), as `type dscp` does; lookups shift the field down.
    for (Field& f : st->fields) {
      if (IsShiftedBitfield(f)) f = BitfieldValue(f);
    }
  } else {
    do {
      std::string name;
      ir::SourceLoc loc = Peek().loc;
      if (!ExpectWord(&name, "type name")) return false;
      std::optional<DType> t = DTypeFromName(name);
      if (!t) {
        static const std::vector<std::string_view> kNames = {
            "ipv4_addr", "ipv6_addr", "ether_addr", "inet_proto",
            "inet_service", "mark", "ifname", "iface_index", "ct_state",
            "ct_status", "icmp_type", "icmpv6_type", "dscp", "ecn", "tcp_flag",
            "pkt_type", "nf_proto", "ether_type", "iface_type", "time", "day",
            "hour", "uid", "gid", "realm", "devgroup", "ct_dir", "boolean",
            "integer"};
        return Error(loc, absl::StrCat("unknown type '", name, "'"),
                     ir::DidYouMean(name, kNames));
      }
      Field f = TypeField(*t);
      f.loc = loc;
      st->fields.push_back(f);
    } while (AcceptWord("."));
  }
  for (Field& f : st->fields) {
    if (f.type == DType::kInteger && !is_typeof) {
      return Error(f.loc, "unsupported 'integer' set type without a size (use typeof)");
    }
  }
  if (AcceptPunct(":") || AcceptWord(":")) {
    if (!is_map) return Error(toks_[pos_ - 1].loc, "a set has no data type (use map)");
    st->is_map = true;
    if (AtWord("counter") || AtWord("quota") || AtWord("limit") || AtWord("interval") ||
        AtWord("ct") || AtWord("secmark") || AtWord("synproxy")) {
      return Error(Peek().loc, absl::StrCat("unsupported map data '", Peek().text, "'"));
    }
    if (AtWord("verdict")) {
      Next();
      st->verdict_map = true;
    } else if (is_typeof) {
      std::vector<Field> data;
      if (!ParseTypeofExpr(&data)) return false;
      if (data.size() != 1) return Error(set.loc, "unsupported concatenated map data");
      st->data = data[0];
    } else {
      std::string name;
      ir::SourceLoc loc = Peek().loc;
      if (!ExpectWord(&name, "data type")) return false;
      std::optional<DType> t = DTypeFromName(name);
      if (!t) return Error(loc, absl::StrCat("unknown type '", name, "'"));
      st->data = TypeField(*t);
      if (AtWord(".")) return Error(Peek().loc, "unsupported concatenated map data");
    }
  } else if (is_map) {
    return ErrorUnexpected("':' and the map data type");
  }
  // Set geometry.
  set.field_lens.clear();
  set.key_len = 0;
  for (const Field& f : st->fields) {
    set.field_lens.push_back(f.LoadLen());
    set.key_len += st->fields.size() > 1 ? Pad4(f.LoadLen()) : f.LoadLen();
  }
  if (st->fields.size() == 1) set.field_lens.clear();
  if (st->is_map) {
    set.flags |= ir::kSetMap;
    set.verdict_map = st->verdict_map;
    set.data_len = st->verdict_map ? 0 : st->data.LoadLen();
  }
  return true;
}

bool Parser::ParseSetBlock(ir::Table& table, const std::string& name,
                           bool is_map, ir::SourceLoc loc) {
  // Find or create; `table_` must point at the table for typeof/elements.
  table_ = &table;
  ir::Set* existing = nullptr;
  for (ir::Set& s : table.sets) {
    if (s.name == name) existing = &s;
  }
  ir::Set set;
  if (existing != nullptr) set = *existing;
  set.name = name;
  set.loc = loc;
  SetType st;
  bool have_type = false;
  std::vector<Element> pending;
  while (!failed_) {
    SkipSeparators();
    if (AcceptPunct("}")) break;
    const Token& t = Peek();
    if (t.kind != Tok::kWord) return ErrorUnexpected("set property");
    std::string w = t.text;
    ir::SourceLoc wloc = t.loc;
    if (w == "type" || w == "typeof") {
      if (!ParseSetTypeSpec(&st, set, is_map)) return false;
      have_type = true;
    } else if (w == "flags") {
      Next();
      std::string f;
      do {
        SkipNewlines();
        ir::SourceLoc floc = Peek().loc;
        if (!ExpectWord(&f, "set flag")) return false;
        if (f == "interval") set.flags |= ir::kSetInterval;
        else if (f == "timeout") set.flags |= ir::kSetTimeout;
        else if (f == "constant") set.flags |= ir::kSetConstant;
        else if (f == "dynamic") {
        } else {
          return Error(floc, absl::StrCat("unknown set flag '", f, "'"),
                       ir::DidYouMean(f, {"interval", "timeout", "constant", "dynamic"}));
        }
      } while (AcceptPunct(","));
    } else if (w == "timeout" || w == "gc-interval" || w == "size" ||
               w == "policy") {
      Next();
      std::string v;
      if (!ExpectWord(&v, "value")) return false;
    } else if (w == "auto-merge") {
      Next();
    } else if (w == "counter") {
      Next();
    } else if (w == "comment") {
      Next();
      if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
      Next();
    } else if (w == "elements") {
      Next();
      if (!ExpectPunct("=")) return false;
      if (!have_type) return Error(wloc, "elements before the set type");
      if (!ParseSetElements(st, &pending)) return false;
    } else if (w == "stateful" || w == "expires" || w == "limit" || w == "quota" ||
               w == "ct" || w == "last") {
      return Error(wloc, absl::StrCat("unsupported set property '", w, "'"));
    } else {
      static const std::vector<std::string_view> kProps = {
          "type", "typeof", "flags", "timeout", "gc-interval", "size",
          "policy", "auto-merge", "counter", "comment", "elements"};
      return Error(wloc, absl::StrCat("unknown set property '", w, "'"),
                   ir::DidYouMean(w, kProps));
    }
  }
  if (failed_) return false;
  if (!have_type && existing == nullptr) return Error(loc, "set has no type");
  if (st.fields.size() > 1 && set.interval()) set.flags |= ir::kSetConcat;
  if (!pending.empty() && !FillSet(set, st, pending)) return false;
  if (!CheckOverlaps(set)) return false;
  if (have_type) set_types_[SetKey(table, name)] = st;
  if (existing != nullptr) {
    *existing = std::move(set);
  } else {
    table.sets.push_back(std::move(set));
  }
  return true;
}

// Elements added later (`add element`, `?set` lines) need the key layout;
// it is rebuilt from the set's geometry.
std::string Parser::SetKey(const ir::Table& table, std::string_view set) const {
  return absl::StrCat(ir::FamilyName(table.family), "/", table.name, "/", std::string(set));
}

bool Parser::ParseElementBlock(ir::Table& table, ir::Set& set) {
  table_ = &table;
  auto known = set_types_.find(SetKey(table, set.name));
  if (known != set_types_.end()) {
    std::vector<Element> elems;
    if (!ParseSetElements(known->second, &elems)) return false;
    ir::Set updated = set;  // all or nothing
    if (!FillSet(updated, known->second, elems) || !CheckOverlaps(updated)) return false;
    set = std::move(updated);
    return true;
  }
  SetType st;
  // A set declared through another entry point (ParseNftSetDecl): its key
  // types are not kept in the IR, so guess them from the key length.
  std::vector<uint32_t> lens = set.field_lens;
  if (lens.empty()) lens.push_back(set.key_len);
  for (uint32_t len : lens) {
    Field f;
    f.kind = Field::Kind::kMeta;
    f.len_bits = len * 8;
    f.type = len == 4 ? DType::kIpv4 : len == 16 ? DType::kIpv6
             : len == 6 ? DType::kEther : len == 2 ? DType::kInetService
             : DType::kInteger;
    st.fields.push_back(f);
  }
  st.is_map = set.flags & ir::kSetMap;
  st.verdict_map = set.verdict_map;
  if (st.is_map && !st.verdict_map) {
    st.data.kind = Field::Kind::kMeta;
    st.data.len_bits = set.data_len * 8;
    st.data.type = DType::kInteger;
    st.data.host_order = true;
  }
  std::vector<Element> elems;
  if (!ParseSetElements(st, &elems)) return false;
  ir::Set updated = set;  // all or nothing
  if (!FillSet(updated, st, elems) || !CheckOverlaps(updated)) return false;
  set = std::move(updated);
  return true;
}

bool Parser::FillSet(ir::Set& set, const SetType& st,
                     const std::vector<Element>& elems) {
  bool concat = st.fields.size() > 1;
  for (const Element& e : elems) {
    ir::SetElement out;
    out.loc = e.loc;
    if (e.key.empty()) {  // catch-all `*`
      if (e.verdict) out.verdict = e.verdict;
      if (e.data) out.data = Encode(st.data, *e.data, st.data.LoadLen());
      set.elements.push_back(std::move(out));
      continue;
    }
    // Elements parsed before a later `type` line changed the fields.
    if (e.key.size() != st.fields.size()) {
      return Error(e.loc, absl::StrCat("element has ", e.key.size(), " field(s), the set type ",
                                       st.fields.size()));
    }
    ir::Bytes end;
    bool ranged = false;
    for (size_t i = 0; i < st.fields.size(); ++i) {
      const Field& f = st.fields[i];
      const Item& it = e.key[i];
      uint32_t len = f.LoadLen();
      ir::Bytes lo, hi;
      switch (it.kind) {
        case Item::Kind::kValue:
          lo = hi = Encode(f, it.lo, len);
          break;
        case Item::Kind::kRange:
          if (it.outside) {
            return Error(it.loc, "unsupported range across midnight UTC in a set");
          }
          lo = EncodeNum(f, it.lo.num, len);
          hi = EncodeNum(f, it.hi, len);
          ranged = true;
          break;
        case Item::Kind::kPrefix: {
          U128 m = LowBits(f.len_bits) & ~LowBits(f.len_bits - it.prefix);
          lo = EncodeNum(f, it.lo.num & m, len);
          hi = EncodeNum(f, (it.lo.num & m) | (LowBits(f.len_bits) & ~m), len);
          ranged = true;
          break;
        }
      }
      // Interval keys of host-order values are stored big-endian (the rule
      // byte-swaps the register first).
      if (f.host_order && len > 1 && set.interval()) {
        std::reverse(lo.begin(), lo.end());
        std::reverse(hi.begin(), hi.end());
      }
      if (concat) {
        lo.resize(Pad4(len), 0);
        hi.resize(Pad4(len), 0);
      }
      out.key.insert(out.key.end(), lo.begin(), lo.end());
      end.insert(end.end(), hi.begin(), hi.end());
    }
    if (ranged && !set.interval()) {
      return Error(e.loc, absl::StrCat("set '", set.name, "' needs 'flags interval' for ranges"));
    }
    if (set.interval()) out.key_end = end;
    if (e.verdict) out.verdict = e.verdict;
    if (e.data) out.data = Encode(st.data, *e.data, st.data.LoadLen());
    set.elements.push_back(std::move(out));
  }
  return true;
}

// Interval elements must not overlap (nft rejects `{ 1-5, 3-7 }`).
bool Parser::CheckOverlaps(const ir::Set& set) {
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

// nft merges touching intervals of anonymous sets: {33-55, 56-88} → 33-88.
void Parser::MergeAdjacent(ir::Set& set) {
  std::vector<ir::SetElement>& v = set.elements;
  std::sort(v.begin(), v.end(), [](const ir::SetElement& a, const ir::SetElement& b) {
    return std::lexicographical_compare(a.key.begin(), a.key.end(), b.key.begin(), b.key.end());
  });
  std::vector<ir::SetElement> out;
  for (ir::SetElement& e : v) {
    if (!out.empty() && out.back().key_end && e.key_end && !e.key.empty() &&
        IsSuccessor(*out.back().key_end, e.key)) {
      out.back().key_end = e.key_end;
      continue;
    }
    out.push_back(std::move(e));
  }
  v = std::move(out);
}

// "__set<N>" not used yet in the table (rules may be added to a table that
// already holds anonymous sets from another parse).
std::string Parser::FreshAnonName(std::string_view prefix) {
  while (true) {
    std::string name = absl::StrCat(std::string(prefix), anon_counter_++);
    bool used = table_->FindSet(name) != nullptr;
    for (const ir::Set& p : pending_sets_) used |= p.name == name;
    if (!used) return name;
  }
}

bool Parser::AddAnonSet(ir::Rule& rule, const SetType& st,
                        const std::vector<Element>& elems, ir::SourceLoc loc,
                        std::string* name) {
  ir::Set set;
  set.name = FreshAnonName(st.is_map ? "__map" : "__set");
  set.loc = loc;
  set.flags = ir::kSetAnonymous | ir::kSetConstant;
  bool ranged = false;
  for (const Element& e : elems) {
    for (const Item& it : e.key) ranged |= it.kind != Item::Kind::kValue;
  }
  if (ranged) set.flags |= ir::kSetInterval;
  if (ranged && st.fields.size() > 1) set.flags |= ir::kSetConcat;
  for (const Field& f : st.fields) {
    set.field_lens.push_back(f.LoadLen());
    set.key_len += st.fields.size() > 1 ? Pad4(f.LoadLen()) : f.LoadLen();
  }
  if (st.fields.size() == 1) set.field_lens.clear();
  if (st.is_map) {
    set.flags |= ir::kSetMap;
    set.verdict_map = st.verdict_map;
    set.data_len = st.verdict_map ? 0 : st.data.LoadLen();
  }
  if (!FillSet(set, st, elems)) return false;
  if (!CheckOverlaps(set)) return false;
  if (set.interval() && !st.is_map && st.fields.size() == 1) MergeAdjacent(set);
  *name = set.name;
  pending_sets_.push_back(std::move(set));
  (void)rule;
  return true;
}

}  // namespace rulejit::frontends::nft
