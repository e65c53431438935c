// The nft expression grammar: fields (payload, meta, ct, exthdr, raw
// `@base,off,len`), left-hand sides with `& | ^` constants, values, ranges,
// prefixes, concatenations and set elements `{ ... }`. Values are parsed
// with the type of the field they are compared with or assigned to, as
// nft's evaluate step types them. No lowering happens here.
#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {
namespace {

// Splits `word` at `sep` positions until both sides parse (`echo-request`
// contains a '-' and is not a range).
template <typename Fn>
bool SplitWhereBothParse(std::string_view word, char sep, Fn&& try_parts) {
  for (size_t i = 1; i + 1 < word.size(); ++i) {
    if (word[i] != sep) continue;
    if (try_parts(word.substr(0, i), word.substr(i + 1))) return true;
  }
  return false;
}

}  // namespace

bool IsUnsupportedStatement(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      // Statements parsed in statements.cc, but no expressions.
      "queue", "quota", "snat", "dnat", "masquerade", "redirect",
      "dup", "fwd", "tproxy", "synproxy", "flow", "meter", "add", "update",
      "delete", "numgen", "jhash", "symhash", "rt", "osf", "socket",
      "exthdr", "hbh", "frag", "dst", "mh", "srh", "rt0", "rt2", "rt4",
      "arp", "gre", "gretap", "geneve", "vxlan", "ipsec", "tunnel", "last",
      "xt", "set", "map", "vmap", "inner", "cgroupv2", "mpath", "osf",
      "secmark", "objref", "ipip", "ip6ip", "reset", "dscp", "ecn"};
  for (std::string_view k : kWords) {
    if (k == w) return true;
  }
  return false;
}


bool Parser::ParseField(Field* field) {
  const Token& t = Peek();
  ir::SourceLoc loc = t.loc;
  if (t.kind == Tok::kSetRef) return ParseRawPayload(field);
  if (t.kind != Tok::kWord) return ErrorUnexpected("an expression");
  std::string w = Next().text;
  if ((w == "tcp" && AtWord("option")) || (w == "sctp" && AtWord("chunk"))) {
    if (!ParseOptionField(w, field)) return false;
  } else if (w == "exthdr") {
    std::string hdr;
    ir::SourceLoc hloc = Peek().loc;
    if (!ExpectWord(&hdr, "extension header name")) return false;
    std::optional<Field> fd = LookupExthdrPresence(hdr);
    if (!fd) {
      return Error(hloc, absl::StrCat("unknown extension header '", hdr, "'"),
                   ir::DidYouMean(hdr, ExthdrPresenceNames()));
    }
    *field = *fd;
  } else if (w == "srh" && AtWord("sid")) {
    // srh sid[N]
    Next();
    std::string n;
    if (!ExpectPunct("[") || !ExpectWord(&n, "segment number") || !ExpectPunct("]")) return false;
    std::optional<Field> fd = LookupIpv6ExthdrField(w, absl::StrCat("sid[", n, "]"));
    if (!fd) return Error(toks_[pos_ - 2].loc, "segment number must be 1..8");
    *field = *fd;
  } else if (IsIpv6Exthdr(w) && Peek().kind == Tok::kWord &&
             LookupIpv6ExthdrField(w, Peek().text)) {
    *field = *LookupIpv6ExthdrField(w, Next().text);
  } else if (IsPayloadProto(w)) {
    if (!ParsePayloadField(w, field)) return false;
  } else if (w == "meta" || IsUnqualifiedMeta(w)) {
    if (!ParseMetaField(w, loc, field)) return false;
  } else if (w == "ct") {
    if (!ParseCtField(field)) return false;
  } else if (w == "fib") {
    if (!ParseFibField(field)) return false;
  } else if (w == "numgen") {
    if (!ParseNumgenField(field)) return false;
  } else if (w == "rt") {
    if (!ParseRtField(field)) return false;
  } else if (IsUnsupportedStatement(w)) {
    return Error(loc, absl::StrCat("unsupported expression '", w, "'"));
  } else {
    std::vector<std::string_view> c = PayloadProtoNames();
    c.push_back("meta");
    c.push_back("ct");
    return Error(loc, absl::StrCat("unknown expression '", w, "'"), ir::DidYouMean(w, c));
  }
  field->loc = loc;
  return true;
}

// `numgen random|inc mod M [offset O]` (the `numgen` word read): a 32-bit
// host-order number (ir::Numgen).
bool Parser::ParseNumgenField(Field* field) {
  Field f;
  f.kind = Field::Kind::kNumgen;
  f.type = DType::kInteger;
  f.len_bits = 32;
  f.host_order = true;
  std::string mode;
  const ir::SourceLoc mloc = Peek().loc;
  if (!ExpectWord(&mode, "'random' or 'inc'")) return false;
  if (mode != "random" && mode != "inc") {
    return Error(mloc, absl::StrCat("unknown numgen mode '", mode, "'"),
                 ir::DidYouMean(mode, {"random", "inc"}));
  }
  f.numgen.random = mode == "random";
  for (const char* what : {"mod", "offset"}) {
    if (!AcceptWord(what)) {
      if (std::string_view(what) == "mod") return ErrorUnexpected("'mod'");
      continue;
    }
    std::string n;
    const ir::SourceLoc nloc = Peek().loc;
    if (!ExpectWord(&n, "number")) return false;
    std::optional<U128> v = ParseNumber(n);
    if (!v || *v > 0xffffffffu) return Error(nloc, absl::StrCat("bad numgen ", what, " '", n, "'"));
    (std::string_view(what) == "mod" ? f.numgen.mod : f.numgen.offset) = static_cast<uint32_t>(*v);
  }
  if (f.numgen.mod == 0) return Error(mloc, "numgen modulus must not be 0");
  if (f.numgen.offset + f.numgen.mod - 1 < f.numgen.offset) {
    return Error(mloc, "numgen offset + modulus overflows 32 bits");
  }
  *field = f;
  return true;
}

// `PROTO FIELD` (`tcp dport`, `ip saddr`).
bool Parser::ParsePayloadField(const std::string& w, Field* field) {
  const Token& f = Peek();
  if (f.kind != Tok::kWord) return ErrorUnexpected(absl::StrCat(w, " header field"));
  std::string name = f.text;
  std::optional<Field> fd = LookupPayloadField(w, name);
  if (!fd) {
    static constexpr std::string_view kExt[] = {
        "option", "hbh", "rt", "frag", "dst", "mh", "srh", "sackperm", "chunk",
        "taddr", "daddr", "saddr",
        "exthdr", "timestamp", "mss", "window", "sack", "sack0", "maxseg"};
    for (std::string_view e : kExt) {
      if (e == name) return Error(f.loc, absl::StrCat("unsupported expression '", w, " ", name, "'"));
    }
    return Error(f.loc, absl::StrCat("unknown ", w, " field '", name, "'"),
                 ir::DidYouMean(name, PayloadFieldNames(w)));
  }
  Next();
  *field = *fd;
  return true;
}

// `meta KEY` or an unqualified meta key (`mark`, `iifname`).
bool Parser::ParseMetaField(const std::string& w, ir::SourceLoc loc, Field* field) {
  std::string key = w;
  ir::SourceLoc kloc = loc;
  if (w == "meta") {
    kloc = Peek().loc;
    if (!ExpectWord(&key, "meta key")) return false;
  }
  std::optional<Field> fd = LookupMetaField(key);
  if (fd && (key == "ibrname" || key == "obrname" || key == "ibrpvid" ||
             key == "ibrvproto" || key == "broute") &&
      table_->family != ir::Family::kBridge) {
    return Error(kloc, absl::StrCat("meta ", key, " is only valid in bridge tables"));
  }
  if (!fd) {
    return Error(kloc, absl::StrCat("unknown meta key '", key, "'"),
                 ir::DidYouMean(key, MetaKeyNames()));
  }
  *field = *fd;
  return true;
}

// `ct [original|reply] KEY`, `ct original ip saddr`. `ct saddr` without
// `ip`/`ip6` takes its size from the table or the rule's protocol context
// (the linearizer's, as it stands before this statement).
bool Parser::ParseCtField(Field* field) {
  ir::CtDir dir = ir::CtDir::kNone;
  if (AcceptWord("original")) dir = ir::CtDir::kOriginal;
  else if (AcceptWord("reply")) dir = ir::CtDir::kReply;
  std::string key;
  ir::SourceLoc kloc = Peek().loc;
  if (!ExpectWord(&key, "ct key")) return false;
  static constexpr std::string_view kNoDir[] = {
      "state", "direction", "status", "mark", "secmark", "expiration",
      "event", "id", "label"};
  for (std::string_view k : kNoDir) {
    if (dir != ir::CtDir::kNone && k == key) {
      return Error(kloc, absl::StrCat("ct ", key, " takes no direction"));
    }
  }
  int net = 0;
  bool plain = key == "saddr" || key == "daddr";
  if ((key == "ip" || key == "ip6" || plain) && dir == ir::CtDir::kNone) {
    return Error(kloc, absl::StrCat("ct ", key, " needs a direction (original or reply)"));
  }
  if (key == "ip" || key == "ip6") {
    net = key == "ip" ? 4 : 6;
    if (lin_.ctx().net != 0 && lin_.ctx().net != net) {
      return Error(kloc, "conflicting network protocols in one rule");
    }
    if (!AtWord("saddr") && !AtWord("daddr")) return ErrorUnexpected("'saddr' or 'daddr'");
    key = Next().text;
  } else if (plain) {
    net = table_->family == ir::Family::kIp    ? 4
          : table_->family == ir::Family::kIp6 ? 6
                                               : lin_.ctx().net;
    if (net == 0) {
      return Error(kloc, absl::StrCat("ct ", key, " needs a protocol context "
                                      "(use 'ct original ip ", key, "')"));
    }
  }
  std::optional<Field> fd = LookupCtField(key, dir, net);
  if (fd && plain) {
    // Without `ip`/`ip6` nft loads the family-sized NFT_CT_SRC/DST.
    fd->ct_plain_addr = true;
    fd->ct = key == "saddr" ? ir::CtKey::kSrc : ir::CtKey::kDst;
  }
  if (!fd) {
    static constexpr std::string_view kUnsup[] = {
        "count", "helper", "timeout", "expectation", "l3proto"};
    for (std::string_view u : kUnsup) {
      if (u == key) return Error(kloc, absl::StrCat("unsupported ct key '", key, "'"));
    }
    return Error(kloc, absl::StrCat("unknown ct key '", key, "'"),
                 ir::DidYouMean(key, CtKeyNames()));
  }
  *field = *fd;
  return true;
}

namespace {

// nft_fib_validate as Linux 6.18 applies it (measured with nft -f in a
// namespace, every form at every hook): the oif and oifname results at
// prerouting, input and forward; type with iif there too, type with oif
// at forward, output and postrouting, type alone anywhere. Netdev ingress
// goes with prerouting, egress with output.
bool FibValidAt(const Field& f, ir::Hook hook) {
  using ir::Hook;
  if (hook == Hook::kIngress) hook = Hook::kPrerouting;
  if (hook == Hook::kEgress) hook = Hook::kOutput;
  const bool in_side = hook == Hook::kPrerouting || hook == Hook::kInput || hook == Hook::kForward;
  if (f.fib_result != ir::FibResult::kAddrType || (f.fib_flags & ir::kFibIif)) return in_side;
  if (f.fib_flags & ir::kFibOif) {
    return hook == Hook::kForward || hook == Hook::kOutput || hook == Hook::kPostrouting;
  }
  return true;
}

}  // namespace

// `fib FLAG [. FLAG]... RESULT`: flags saddr, daddr, mark, iif, oif;
// result oif, oifname, type, or `check` (whether there is an oif). An oif
// or oifname compared with `exists` / `missing` is a check too (nft sets
// NFTA_FIB_F_PRESENT). The rules nft_fib_init enforces are errors here.
bool Parser::ParseFibField(Field* field) {
  static constexpr std::pair<std::string_view, uint32_t> kFlags[] = {
      {"saddr", ir::kFibSaddr}, {"daddr", ir::kFibDaddr}, {"mark", ir::kFibMark},
      {"iif", ir::kFibIif},     {"oif", ir::kFibOif}};
  Field f;
  f.kind = Field::Kind::kFib;
  ir::SourceLoc loc = Peek().loc;
  while (true) {
    std::string w;
    ir::SourceLoc wloc = Peek().loc;
    if (!ExpectWord(&w, "fib flag (saddr, daddr, mark, iif, oif)")) return false;
    auto it = std::find_if(std::begin(kFlags), std::end(kFlags),
                           [&](const auto& kv) { return kv.first == w; });
    if (it == std::end(kFlags)) {
      return Error(wloc, absl::StrCat("unknown fib flag '", w, "'"),
                   ir::DidYouMean(w, {"saddr", "daddr", "mark", "iif", "oif"}));
    }
    f.fib_flags |= it->second;
    if (!AtWord(".")) break;
    Next();
  }
  std::string result;
  ir::SourceLoc rloc = Peek().loc;
  if (!ExpectWord(&result, "fib result (oif, oifname, type, check)")) return false;
  if (result == "type") {
    f.fib_result = ir::FibResult::kAddrType;
    f.type = DType::kFibAddrType;
    f.len_bits = 32;
    f.host_order = true;
  } else if (result == "oif" || result == "oifname" || result == "check") {
    f.fib_result = result == "oifname" ? ir::FibResult::kOifName : ir::FibResult::kOif;
    const bool check = result == "check" || AtWord("exists") || AtWord("missing");
    if (check) {
      f.fib_flags |= ir::kFibPresent;
      f.type = DType::kBoolean;
      f.len_bits = 8;
    } else {
      f.type = result == "oif" ? DType::kIface : DType::kString;
      f.len_bits = result == "oif" ? 32 : 128;
      f.host_order = result == "oif";
    }
  } else {
    return Error(rloc, absl::StrCat("unknown fib result '", result, "'"),
                 ir::DidYouMean(result, {"oif", "oifname", "type", "check"}));
  }
  const uint32_t addrs = f.fib_flags & (ir::kFibSaddr | ir::kFibDaddr);
  if (addrs != ir::kFibSaddr && addrs != ir::kFibDaddr) {
    return Error(loc, "fib: give exactly one of saddr and daddr");
  }
  if ((f.fib_flags & ir::kFibIif) && (f.fib_flags & ir::kFibOif)) {
    return Error(loc, "fib: iif and oif cannot be combined");
  }
  if ((f.fib_flags & ir::kFibOif) && f.fib_result != ir::FibResult::kAddrType) {
    return Error(loc, "fib: the oif flag is only valid with the type result");
  }
  if (chain_ != nullptr && chain_->base && !FibValidAt(f, chain_->base->hook)) {
    return Error(loc, absl::StrCat("fib: this form is not valid at hook ",
                                   ir::HookName(chain_->base->hook)),
                 "oif, oifname and type with iif: prerouting, input, forward (and netdev "
                 "ingress); type with oif: forward, output, postrouting (and netdev egress)");
  }
  *field = f;
  return true;
}

// `rt mtu` (the `rt` word read): nft_rt's tcpmss, a 16-bit host-order
// MSS from the route's MTU (ir::Rt), which the kernel allows at forward,
// output and postrouting only. The other keys (classid, nexthop, ipsec)
// are not modelled.
bool Parser::ParseRtField(Field* field) {
  std::string key;
  const ir::SourceLoc kloc = Peek().loc;
  if (!ExpectWord(&key, "rt key")) return false;
  if (key == "classid" || key == "nexthop" || key == "ipsec" || key == "ip" || key == "ip6") {
    return Error(kloc, absl::StrCat("unsupported expression 'rt ", key, "' (only rt mtu)"));
  }
  if (key != "mtu") {
    return Error(kloc, absl::StrCat("unknown rt key '", key, "'"),
                 ir::DidYouMean(key, {"mtu", "classid", "nexthop", "ipsec"}));
  }
  if (chain_ != nullptr && chain_->base) {
    const ir::Hook hook = chain_->base->hook;
    if (hook != ir::Hook::kForward && hook != ir::Hook::kOutput &&
        hook != ir::Hook::kPostrouting) {
      return Error(kloc, absl::StrCat("rt mtu is not valid at hook ", ir::HookName(hook),
                                      " (the kernel's EOPNOTSUPP)"),
                   "rt mtu: forward, output and postrouting only");
    }
  }
  Field f;
  f.kind = Field::Kind::kRt;
  f.type = DType::kInteger;
  f.len_bits = 16;
  f.host_order = true;
  *field = f;
  return true;
}

// `,OFFSET,LENGTH` after `@BASE` (bits, each at most `max`).
bool Parser::ParseOffsetLength(uint32_t max, std::string_view what, uint32_t nums[2]) {
  for (int i = 0; i < 2; ++i) {
    if (!ExpectPunct(",")) return false;
    std::string w;
    if (!ExpectWord(&w, "number")) return false;
    auto v = ParseNumber(w);
    if (!v || *v > max) {
      return Error(toks_[pos_ - 1].loc, absl::StrCat("bad ", std::string(what), " offset/length"));
    }
    nums[i] = static_cast<uint32_t>(*v);
  }
  return true;
}

// `tcp option NAME [FIELD]`, `tcp option NUM`, `tcp option @KIND,OFF,LEN`,
// `sctp chunk NAME [FIELD]`; without a field, the presence of the option
// (the value that follows is `exists` / `missing`).
bool Parser::ParseOptionField(std::string_view proto, Field* field) {
  const bool tcp = proto == "tcp";
  Next();  // option / chunk
  const Token& t = Peek();
  ir::SourceLoc loc = t.loc;
  if (tcp && t.kind == Tok::kSetRef) {
    Token kind_tok = Next();
    auto kind = ParseNumber(kind_tok.text);
    if (!kind || *kind > 255) return Error(loc, "bad tcp option kind");
    uint32_t nums[2];
    if (!ParseOffsetLength(255 * 8, "tcp option", nums)) return false;
    if (nums[1] == 0 || nums[1] > 32 || nums[0] % 8 != 0) {
      return Error(loc, "unsupported tcp option offset/length");
    }
    Field f;
    f.kind = Field::Kind::kExthdr;
    f.exthdr_op = ir::ExthdrOp::kTcpopt;
    f.exthdr_type = static_cast<uint8_t>(*kind);
    f.off_bits = nums[0];
    f.len_bits = nums[1];
    *field = f;
    return true;
  }
  if (t.kind != Tok::kWord) return ErrorUnexpected(tcp ? "tcp option name" : "sctp chunk name");
  std::string name = Next().text;
  std::string sub;
  if (Peek().kind == Tok::kWord) {
    std::vector<std::string_view> fields =
        tcp ? TcpOptionFieldNames(name) : SctpChunkFieldNames(name);
    if (std::find(fields.begin(), fields.end(), Peek().text) != fields.end()) sub = Next().text;
  }
  std::optional<Field> fd = tcp ? LookupTcpOption(name, sub) : LookupSctpChunk(name, sub);
  if (!fd) {
    return Error(loc, absl::StrCat("unknown ", tcp ? "tcp option '" : "sctp chunk '", name, "'"),
                 ir::DidYouMean(name, tcp ? TcpOptionNames() : SctpChunkNames()));
  }
  *field = *fd;
  return true;
}

bool Parser::ParseRawPayload(Field* field) {
  Token t = Next();
  Field f;
  f.kind = Field::Kind::kPayload;
  f.type = DType::kInteger;
  f.loc = t.loc;
  if (t.text == "ll") f.base = ir::PayloadBase::kLink;
  else if (t.text == "nh") f.base = ir::PayloadBase::kNetwork;
  else if (t.text == "th") f.base = ir::PayloadBase::kTransport;
  else if (t.text == "ih") f.base = ir::PayloadBase::kInner;
  else return Error(t.loc, absl::StrCat("unknown payload base '@", t.text, "'"),
                    ir::DidYouMean(t.text, {"ll", "nh", "th", "ih"}));
  uint32_t nums[2];
  if (!ParseOffsetLength(0xffffff, "raw payload", nums)) return false;
  f.off_bits = nums[0];
  f.len_bits = nums[1];
  if (f.len_bits == 0 || f.LoadLen() > 16) {
    return Error(t.loc, "unsupported raw payload length");
  }
  if (t.text == "th") f.dep = Dep::kNone;
  *field = f;
  return true;
}

bool Parser::ParseLhs(Lhs* lhs) {
  lhs->loc = Peek().loc;
  Field f;
  if (!ParseField(&f)) return false;
  lhs->fields.push_back(f);
  while (AtWord(".")) {
    Next();
    if (!ParseField(&f)) return false;
    lhs->fields.push_back(f);
  }
  if (lhs->fields.size() > 1 || AtWord("map")) {
    for (const Field& x : lhs->fields) {
      // Without `ip`/`ip6` the address size is only known from the family,
      // which nft refuses inside concatenations and map keys.
      if (x.ct_plain_addr) {
        return Error(x.loc, "ct saddr/daddr of unknown size in a concatenation or map "
                            "(use 'ct original ip saddr')");
      }
    }
  }
  return ParseBinops(lhs);
}

// `& MASK`, `| X`, `^ X` (or `and`, `or`, `xor`) after a single field,
// folded into one mask and xor.
bool Parser::ParseBinops(Lhs* lhs) {
  while (!sink_.failed) {
    const Token& t = Peek();
    std::string op = t.text;
    bool is_and = (t.kind == Tok::kPunct && op == "&") || (t.kind == Tok::kWord && op == "and");
    bool is_or = (t.kind == Tok::kPunct && op == "|") || (t.kind == Tok::kWord && op == "or");
    bool is_xor = (t.kind == Tok::kPunct && op == "^") || (t.kind == Tok::kWord && op == "xor");
    bool is_shift = (t.kind == Tok::kPunct && (op == "<<" || op == ">>")) ||
                    (t.kind == Tok::kWord && (op == "lshift" || op == "rshift"));
    if (is_shift) return Error(t.loc, "unsupported shift in a match");
    if (!is_and && !is_or && !is_xor) break;
    if (lhs->fields.size() != 1) return Error(t.loc, "unsupported binary operation on a concatenation");
    Next();
    U128 v = 0;
    if (!ParseBinopOperand(lhs->fields[0], &v)) return false;
    lhs->has_binop = true;
    if (is_and) {
      lhs->and_mask &= v;
      lhs->xor_val &= v;
    } else if (is_or) {
      lhs->and_mask &= ~v;
      lhs->xor_val |= v;
    } else {
      lhs->xor_val ^= v;
    }
  }
  return !sink_.failed;
}

bool Parser::ParseBinopOperand(const Field& f, U128* out) {
  if (AcceptPunct("(")) {
    if (!ParseConstExpr(f, out)) return false;
    return ExpectPunct(")");
  }
  Item item;
  if (!ParseItem(f, &item)) return false;
  if (item.kind != Item::Kind::kValue || item.lo.is_str) {
    return Error(item.loc, "expected a constant");
  }
  *out = item.lo.num;
  return true;
}

// value ( SEP value )*, or-ed: flag combinations such as `syn | ack`
// (SEP '|'), and flag lists `syn,ack` (SEP ',').
bool Parser::ParseConstExpr(const Field& f, U128* out, std::string_view sep) {
  *out = 0;
  do {
    U128 v = 0;
    if (!ParseBinopOperand(f, &v)) return false;
    *out |= v;
  } while (AcceptPunct(sep));
  return true;
}

bool Parser::ParseItem(const Field& f, Item* item) {
  const Token& t = Peek();
  item->loc = t.loc;
  if (t.kind == Tok::kPunct && t.text == "(") {
    Next();
    U128 v = 0;
    if (!ParseConstExpr(f, &v)) return false;
    if (!ExpectPunct(")")) return false;
    item->kind = Item::Kind::kValue;
    item->lo.num = v;
    return true;
  }
  if (t.kind == Tok::kString) return ParseQuotedItem(f, item);
  if (t.kind != Tok::kWord) return ErrorUnexpected("a value");
  return ParseWordItem(f, item);
}

// A quoted value: a string, or a quoted symbol ("ssh") or range of them
// (`meta hour "21:00"-"02:00"`) of a non-string type.
bool Parser::ParseQuotedItem(const Field& f, Item* item) {
  const Token& t = Peek();
  if (f.type != DType::kString) {
    // Quoted symbols ("ssh") are fine for non-string types too.
    std::optional<Value> v = ParseValue(f.type, t.text, f.len_bits);
    if (!v) return Error(t.loc, absl::StrCat("invalid value \"", t.text, "\""));
    Next();
    item->lo = *v;
    // "A"-"B": a range of quoted values (`meta hour "21:00"-"02:00"`).
    if (AtWord("-") && PeekAt(1).kind == Tok::kString) {
      Next();
      const Token& e = Peek();
      std::optional<Value> hi = ParseValue(f.type, e.text, f.len_bits);
      if (!hi) return Error(e.loc, absl::StrCat("invalid value \"", e.text, "\""));
      Next();
      item->kind = Item::Kind::kRange;
      item->hi = hi->num;
      if (item->hi < item->lo.num) {
        // Local hours map to UTC with a wrap at midnight: nft swaps the
        // ends and matches outside them.
        if (f.type != DType::kHour) return Error(item->loc, "range end is below its start");
        std::swap(item->lo.num, item->hi);
        item->outside = true;
      }
    }
    return true;
  }
  if (t.text.size() > 15 && t.text.find('*') == std::string::npos) {
    return Error(t.loc, "interface name too long");
  }
  if (t.text.empty()) return Error(t.loc, "empty string");
  item->lo.is_str = true;
  item->lo.str = Next().text;
  return true;
}

// A word: a string, a symbol or number (`syn | ack` combined), `lo-hi`,
// `value/len`.
bool Parser::ParseWordItem(const Field& f, Item* item) {
  const Token& t = Peek();
  std::string w = t.text;
  if (f.type == DType::kString) {
    item->lo.is_str = true;
    item->lo.str = Next().text;
    return true;
  }
  uint32_t bits = f.len_bits;
  if (std::optional<Value> v = ParseValue(f.type, w, bits)) {
    if (f.type == DType::kDay && v->num > 6) {
      return Error(item->loc, "day must be 0..6 (Sunday..Saturday)");
    }
    Next();
    item->lo = *v;
    // `syn | ack`: flag values combine into one constant.
    while (AtPunct("|")) {
      Next();
      U128 more = 0;
      if (!ParseBinopOperand(f, &more)) return false;
      item->lo.num |= more;
    }
    return true;
  }
  if (IsPayloadProto(w) || w == "meta" || w == "ct" || IsUnqualifiedMeta(w) ||
      IsUnsupportedStatement(w) || w == "osf") {
    return Error(item->loc, "unsupported non-constant operand");
  }
  if (w == "*") return Error(item->loc, "unsupported catch-all element '*'");
  bool matched = false;
  if (!ParseRangeOrPrefix(f, w, item, &matched)) return false;
  if (matched) return true;
  std::vector<std::string_view> names = SymbolNames(f.type);
  if (ParseNumber(w)) {
    return Error(item->loc, absl::StrCat("value '", w, "' exceeds the ", bits, "-bit field"));
  }
  if (f.type == DType::kUid || f.type == DType::kGid) {
    const char* kind = f.type == DType::kUid ? "user" : "group";
    return Error(item->loc, absl::StrCat("unknown ", kind, " '", w, "'"),
                 absl::StrCat("names resolve through this machine's ", kind,
                              " database, as nft resolves them; or give the number"));
  }
  return Error(item->loc, absl::StrCat("invalid value '", w, "'"),
               names.empty() ? "" : ir::DidYouMean(w, names));
}

// `lo-hi` or `value/len` in one word; `*matched` says whether `w` was one.
bool Parser::ParseRangeOrPrefix(const Field& f, const std::string& w, Item* item,
                                bool* matched) {
  const uint32_t bits = f.len_bits;
  // lo-hi
  Value lo;
  U128 hi = 0;
  if (SplitWhereBothParse(w, '-', [&](std::string_view a, std::string_view b) {
        auto va = ParseValue(f.type, a, bits);
        auto vb = ParseValue(f.type, b, bits);
        if (!va || !vb) return false;
        lo = *va;
        hi = vb->num;
        return true;
      })) {
    Next();
    if (hi < lo.num) return Error(item->loc, "range end is below its start");
    item->kind = Item::Kind::kRange;
    item->lo = lo;
    item->hi = hi;
    *matched = true;
    return true;
  }
  // value/len
  size_t slash = w.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    auto va = ParseValue(f.type, w.substr(0, slash), bits);
    auto plen = ParseNumber(w.substr(slash + 1));
    if (va && plen) {
      if (*plen > bits) return Error(item->loc, "prefix length too large");
      Next();
      item->kind = Item::Kind::kPrefix;
      item->lo = *va;
      item->prefix = static_cast<uint32_t>(*plen);
      *matched = true;
      return true;
    }
  }
  return true;
}

bool Parser::ParseConcatItem(const std::vector<Field>& fields,
                             std::vector<Item>* items) {
  items->clear();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) {
      if (!AtWord(".")) return ErrorUnexpected("'.' in a concatenation");
      Next();
    }
    Item it;
    if (!ParseItem(fields[i], &it)) return false;
    items->push_back(it);
  }
  return true;
}

// The lexer keeps `25:accept` (and `::1:accept`) as one word; in a map
// element split it at the last ':' unless the whole word is a value of the
// key's first field.
void Parser::SplitMapWord(const SetType& st) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord || st.fields.empty()) return;
  size_t colon = t.text.rfind(':');
  if (colon == std::string::npos || colon == 0 || t.text.size() == 1) return;
  std::string left_text = t.text.substr(0, colon);
  std::string right_text = t.text.substr(colon + 1);
  bool alpha = !right_text.empty() && std::isalpha(static_cast<unsigned char>(right_text[0]));
  if (st.verdict_map && !alpha && !right_text.empty()) return;
  // The word is the key's first field (`2001:db8::1 . 80 : ...` keeps it).
  const Field& first = st.fields.front();
  if (ParseValue(first.type, t.text, first.len_bits)) return;
  if (st.fields.size() == 1 && !alpha && t.text.find('/') != std::string::npos) return;
  Token left = t, sep = t, right = t;
  left.text = left_text;
  sep.kind = Tok::kPunct;
  sep.text = ":";
  sep.loc.col += colon;
  right.text = right_text;
  right.loc.col += colon + 1;
  right.space_before = false;
  std::vector<Token> repl = {left, sep};
  if (!right.text.empty()) repl.push_back(right);
  toks_.erase(toks_.begin() + pos_);
  toks_.insert(toks_.begin() + pos_, repl.begin(), repl.end());
}

// Interval map data: an item, or `LO - HI` written with spaces.
bool Parser::ParseDataItem(const SetType& st, const Field& f, Item* it) {
  if (!ParseItem(f, it)) return false;
  if (st.data_interval && it->kind == Item::Kind::kValue && !it->lo.is_str && AtWord("-") &&
      PeekAt(1).kind == Tok::kWord) {
    if (std::optional<Value> hi = ParseValue(f.type, PeekAt(1).text, f.len_bits)) {
      pos_ += 2;
      if (hi->num < it->lo.num) return Error(it->loc, "range end is below its start");
      it->kind = Item::Kind::kRange;
      it->hi = hi->num;
    }
  }
  if (it->kind != Item::Kind::kValue && !st.data_interval) {
    return Error(it->loc, "unsupported range as map data");
  }
  return true;
}

bool Parser::ParseMapValue(const SetType& st, Element* e) {
  if (st.obj_type != 0) return ExpectName(&e->object, "object name");
  if (st.verdict_map) {
    ir::Verdict v;
    if (!ParseVerdict(&v)) return false;
    e->verdict = v;
    return true;
  }
  Item it;
  if (!ParseDataItem(st, st.data, &it)) return false;
  e->data = it.lo;
  e->data_items.push_back(it);
  for (const Field& f : st.data_rest) {
    if (!AcceptWord(".")) return ErrorUnexpected("'.' and the next field of the map data");
    it = Item{};
    if (!ParseDataItem(st, f, &it)) return false;
    e->data_rest.push_back(it.lo);
    e->data_items.push_back(it);
  }
  // nft 1.0.6 sends the data of an element with no range in it unpaired
  // (half the map's data length): the kernel refuses it (EINVAL).
  if (st.data_interval &&
      std::none_of(e->data_items.begin(), e->data_items.end(),
                   [](const Item& i) { return i.kind != Item::Kind::kValue; })) {
    return Error(e->data_items.front().loc,
                 "map data without a range in an interval map: nft sends it short and the "
                 "kernel refuses it (EINVAL)",
                 "write the single address as a range, ADDR-ADDR");
  }
  return true;
}

// Element options nft prints back (timeout, expires, comment, counter):
// skipped; element statements are not supported.
bool Parser::ParseElementOptions() {
  if (AtWord("limit") || AtWord("quota") || AtWord("ct") || AtWord("last")) {
    return Error(Peek().loc, absl::StrCat("unsupported element statement '", Peek().text, "'"));
  }
  while (AtWord("timeout") || AtWord("expires") || AtWord("comment") ||
         AtWord("counter")) {
    std::string opt = Next().text;
    if (opt == "counter") {
      if (AcceptWord("packets")) {
        Next();
        if (!AcceptWord("bytes")) return ErrorUnexpected("'bytes'");
        Next();
      }
      continue;
    }
    Next();
  }
  return true;
}

// `{ a, b-c, d/24, e . f, k : v }` with newlines allowed; nested sets and
// $variables that hold sets are flattened.
bool Parser::ParseSetElements(const SetType& st, std::vector<Element>* elems) {
  if (!ExpectPunct("{")) return false;
  while (!sink_.failed) {
    SkipNewlines();
    if (AcceptPunct("}")) return true;
    if (AtPunct("{")) {
      if (!ParseSetElements(st, elems)) return false;
    } else {
      Element e;
      e.loc = Peek().loc;
      if (st.is_map) SplitMapWord(st);
      if (AtWord("*")) {
        Next();  // catch-all: an element with an empty key
      } else if (!ParseConcatItem(st.fields, &e.key)) {
        return false;
      }
      if (!ParseElementOptions()) return false;
      if (st.is_map) {
        if (!AcceptPunct(":")) {
          // The lexer keeps `22:accept` as one word; handled in ParseItem
          // only for non-colon types, so accept a stand-alone ':' word.
          if (!AtWord(":")) return ErrorUnexpected("':' and a map value");
          Next();
        }
        if (!ParseMapValue(st, &e)) return false;
      }
      elems->push_back(std::move(e));
    }
    SkipNewlines();
    if (AcceptPunct(",")) continue;
    SkipNewlines();
    if (AcceptPunct("}")) return true;
    return ErrorUnexpected("',' or '}'");
  }
  return false;
}

}  // namespace rulejit::frontends::nft
