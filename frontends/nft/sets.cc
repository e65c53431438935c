// The grammar of nft set and map declarations: `type`/`typeof`, flags,
// `elements = { ... }` and `add element`. The elements are lowered to IR
// keys by the linearizer (set_elements.cc), as anonymous sets are.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "frontends/nft/lower_util.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

Field TypeField(DType t) {
  Field f;
  f.kind = Field::Kind::kMeta;
  f.type = t;
  f.len_bits = DTypeBits(t);
  f.host_order = DTypeHostOrder(t);
  return f;
}

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
    // `: interval TYPE`: each element's data is a range (NAT maps).
    st->data_interval = AcceptWord("interval");
    if (AtWord("interval")) {
      return Error(Peek().loc, absl::StrCat("unsupported map data '", Peek().text, "'"));
    }
    // `ct helper|timeout|expectation` data names objects; `typeof ... : ct
    // zone` is a field.
    const std::string& after_ct = PeekAt(1).text;
    const bool ct_object = AtWord("ct") && (after_ct == "helper" || after_ct == "timeout" ||
                                            after_ct == "expectation");
    if (AtWord("counter") || AtWord("quota") || AtWord("limit") || AtWord("secmark") ||
        AtWord("synproxy") || ct_object) {
      st->obj_type = ParseObjectKind();  // an object map
    } else if (AtWord("verdict")) {
      Next();
      st->verdict_map = true;
    } else if (is_typeof) {
      std::vector<Field> data;
      if (!ParseTypeofExpr(&data)) return false;
      st->data = data[0];
      st->data_rest.assign(data.begin() + 1, data.end());
    } else {
      std::string name;
      ir::SourceLoc loc = Peek().loc;
      if (!ExpectWord(&name, "data type")) return false;
      std::optional<DType> t = DTypeFromName(name);
      if (!t) return Error(loc, absl::StrCat("unknown type '", name, "'"));
      st->data = TypeField(*t);
      while (AcceptWord(".")) {
        loc = Peek().loc;
        if (!ExpectWord(&name, "data type")) return false;
        t = DTypeFromName(name);
        if (!t) return Error(loc, absl::StrCat("unknown type '", name, "'"));
        st->data_rest.push_back(TypeField(*t));
      }
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
  if (st->obj_type != 0) {
    set.flags |= ir::kSetObject;
    set.obj_type = st->obj_type;
  } else if (st->is_map) {
    set.flags |= ir::kSetMap;
    set.verdict_map = st->verdict_map;
    set.data_len = st->verdict_map ? 0 : st->DataLen();
  }
  return true;
}

uint32_t SetType::DataLen() const {
  if (data_rest.empty() && !data_interval) return data.LoadLen();
  uint32_t len = Pad4(data.LoadLen());
  for (const Field& f : data_rest) len += Pad4(f.LoadLen());
  return data_interval ? 2 * len : len;
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
  bool auto_merge = false;
  PushScope();  // a define in a set block is the block's own
  // nft's grammar ends `elements = { ... }` and `auto-merge` without a
  // separator: the block may close right after them.
  bool closes_bare = false;
  while (!sink_.failed) {
    SkipSeparators();
    if (AtBlockClose()) {
      if (!CloseBlock(!closes_bare)) return false;
      break;
    }
    const Token& t = Peek();
    if (t.kind != Tok::kWord) return ErrorUnexpected("set property");
    std::string w = t.text;
    ir::SourceLoc wloc = t.loc;
    closes_bare = w == "elements" || w == "auto-merge";
    if (w == "define" || w == "redefine") {
      if (!ParseDefine()) return false;
    } else if (w == "undefine") {
      if (!ParseUndefine()) return false;
    } else if (w == "type" || w == "typeof") {
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
        else if (f == "dynamic") set.flags |= ir::kSetEval;
        else {
          return Error(floc, absl::StrCat("unknown set flag '", f, "'"),
                       ir::DidYouMean(f, {"interval", "timeout", "constant", "dynamic"}));
        }
      } while (AcceptPunct(","));
    } else if (w == "timeout" || w == "size") {
      if (!ParseSetSizeOrTimeout(set)) return false;
    } else if (w == "gc-interval" || w == "policy") {
      Next();
      std::string v;
      if (!ExpectWord(&v, "value")) return false;
    } else if (w == "auto-merge") {
      Next();
      auto_merge = true;
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
      if (!ParseDeclaredElements(set, st, &pending)) return false;
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
  if (sink_.failed) return false;
  PopScope();
  if (!have_type && existing == nullptr) return Error(loc, "set has no type");
  if (st.fields.size() > 1 && set.interval()) set.flags |= ir::kSetConcat;
  if (!pending.empty() && !lin_.FillSet(set, st, pending)) return false;
  if (auto_merge && set.interval() && !st.is_map && st.fields.size() == 1) {
    lin_.MergeIntervals(set);
  }
  if (!lin_.CheckOverlaps(set) || !lin_.CheckConcatElements(set, 0)) return false;
  if (have_type) set_types_[SetKey(table, name)] = st;
  interval_index_.erase(SetKey(table, name));
  if (existing != nullptr) {
    *existing = std::move(set);
  } else {
    table.sets.push_back(std::move(set));
  }
  return true;
}

// `timeout T` (a set with it has timeouts, as nft makes it) or `size N`.
bool Parser::ParseSetSizeOrTimeout(ir::Set& set) {
  const bool timeout = Next().text == "timeout";
  std::string w;
  if (!ExpectWord(&w, timeout ? "timeout" : "size")) return false;
  const ir::SourceLoc loc = toks_[pos_ - 1].loc;
  if (timeout) {
    auto ms = ParseValue(DType::kTime, w, 64);
    if (!ms || ms->num > UINT64_MAX / 1000000) {
      return Error(loc, absl::StrCat("bad timeout '", w, "'"));
    }
    set.timeout_ms = static_cast<uint64_t>(ms->num);
    if (set.timeout_ms != 0) set.flags |= ir::kSetTimeout;
    return true;
  }
  auto n = ParseNumber(w);
  if (!n || *n > UINT32_MAX) return Error(loc, absl::StrCat("bad set size '", w, "'"));
  set.size = static_cast<uint32_t>(*n);
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
  if (known != set_types_.end()) return ParseAddedElements(set, known->second);
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
  return ParseAddedElements(set, st);
}

// `elements = { ... }` in a set block. When nothing after the list can
// change how keys are encoded (no later `type`, `typeof` or `flags`: the
// usual order), the elements are encoded into the set a chunk at a time as
// they are parsed instead of being kept as syntax until the block closes,
// so that a list of a million elements costs its IR form only (and the IR
// vector is sized once, from the list's commas).
bool Parser::ParseDeclaredElements(ir::Set& set, const SetType& st,
                                   std::vector<Element>* pending) {
  size_t count = 0;
  if (!pending->empty() || !KeysFixedAfterElements(&count)) {
    return ParseSetElements(st, pending);  // encoded when the block closes
  }
  set.elements.reserve(set.elements.size() + count);
  const size_t floor = pos_ + 1;  // past the list's '{'
  auto flush = [&](std::vector<Element>& chunk) {
    ReleaseConsumed(floor);
    return EncodeChunk(set, st, chunk);
  };
  ElementStream stream{flush};
  std::vector<Element> chunk;
  return ParseSetElements(st, &chunk, &stream) && flush(chunk);
}

// Encodes `chunk` into `set` (appended) and empties it.
bool Parser::EncodeChunk(ir::Set& set, const SetType& st, std::vector<Element>& chunk) {
  const bool ok = lin_.FillSet(set, st, chunk);
  chunk.clear();
  return ok;
}

// Whether the set block goes on, after the element list at the cursor,
// with no `type`, `typeof`, `flags` or $variable of its own; `count` gets
// the list's top-level commas plus one (a size to reserve, not a bound).
bool Parser::KeysFixedAfterElements(size_t* count) {
  if (pos_ >= toks_.size() || toks_[pos_].kind != Tok::kPunct || toks_[pos_].text != "{") {
    return false;
  }
  int depth = 0;
  size_t commas = 0;
  bool fixed = true;
  toks_.Scan(pos_, [&](const Token& t) {
    if (t.kind == Tok::kPunct) {
      if (t.text == "{") {
        ++depth;
      } else if (t.text == "}") {
        if (--depth < 0) return false;  // the set block closes
      } else if (t.text == "," && depth == 1) {
        ++commas;
      }
    } else if (depth == 0 && (t.kind == Tok::kVar ||
                              (t.kind == Tok::kWord && (t.text == "type" || t.text == "typeof" ||
                                                        t.text == "flags")))) {
      fixed = false;
      return false;
    }
    return true;
  });
  *count = commas + 1;
  return fixed;
}

// `add element` / `elements` of an existing set: parsed and encoded a chunk
// at a time, all or nothing.
bool Parser::ParseAddedElements(ir::Set& set, const SetType& st) {
  const size_t before = set.elements.size();
  const size_t floor = pos_ + 1;  // past the list's '{'
  auto flush = [&](std::vector<Element>& chunk) {
    ReleaseConsumed(floor);
    return EncodeChunk(set, st, chunk);
  };
  ElementStream stream{flush};
  std::vector<Element> elems;
  if (!ParseSetElements(st, &elems, &stream)) {
    set.elements.resize(before);
    return false;
  }
  return FillSetAtomically(set, st, elems, before);
}

// All or nothing: the elements added (those from `before` on, and `elems`),
// or none of them. (Not a copy of the set: one `add element` line per
// element would copy it once per line.)
bool Parser::FillSetAtomically(ir::Set& set, const SetType& st, const std::vector<Element>& elems,
                               size_t before) {
  // CheckOverlaps finds nothing in other sets (concatenations included).
  const bool checked_interval = set.interval() && set.field_lens.empty();
  if (before == 0 || !checked_interval) interval_index_.erase(SetKey(*table_, set.name));
  if (lin_.FillSet(set, st, elems) &&
      (!checked_interval || (before > 0 ? CheckAddedIntervals(*table_, set, before)
                                        : lin_.CheckOverlaps(set))) &&
      lin_.CheckConcatElements(set, before)) {
    return true;
  }
  set.elements.resize(before);
  return false;
}

// Linearizer::CheckOverlaps for elements [before, end) added to an interval
// set whose elements before them passed it, without sorting the whole set
// again (a set built by 10^5 `add element` lines would sort 10^5 times):
// sorted, the old elements do not overlap their neighbours, so only the
// pairs the new ones form with theirs can, and the first of those in key
// order is the one CheckOverlaps reports.
bool Parser::CheckAddedIntervals(const ir::Table& table, const ir::Set& set, size_t before) {
  IntervalIndex& index = interval_index_[SetKey(table, set.name)];
  if (index.size() != before) {
    index.clear();
    for (size_t i = 0; i < before; ++i) index.emplace(set.elements[i].key, i);
  }
  std::vector<IntervalIndex::iterator> added;
  for (size_t i = before; i < set.elements.size(); ++i) {
    added.push_back(index.emplace(set.elements[i].key, i));
  }
  auto overlap = [&](IntervalIndex::iterator a, IntervalIndex::iterator b) {
    const ir::SetElement& x = set.elements[a->second];
    const ir::SetElement& y = set.elements[b->second];
    const ir::Bytes& x_end = x.key_end ? *x.key_end : x.key;
    if (x_end < y.key) return false;
    return !(x.key == y.key && x.key_end == y.key_end);  // the same element twice
  };
  std::optional<std::pair<IntervalIndex::iterator, IntervalIndex::iterator>> first;
  auto consider = [&](IntervalIndex::iterator a, IntervalIndex::iterator b) {
    if (overlap(a, b) && (!first || a->first < first->first->first)) first.emplace(a, b);
  };
  for (IntervalIndex::iterator it : added) {
    if (it != index.begin()) consider(std::prev(it), it);
    if (std::next(it) != index.end()) consider(it, std::next(it));
  }
  if (!first) return true;
  const ir::SetElement& bad = set.elements[first->second->second];
  for (IntervalIndex::iterator it : added) index.erase(it);
  return Error(bad.loc, absl::StrCat("interval overlaps another element of set '", set.name, "'"));
}

}  // namespace rulejit::frontends::nft
