// The nft expression grammar: fields (payload, meta, ct, numgen, fib, rt,
// exthdr, raw `@base,off,len`). Left-hand sides with `& | ^` constants,
// values, ranges, prefixes and concatenations are in expr_items.cc, set
// elements `{ ... }` in expr_elements.cc. Values are parsed with the type of
// the field they are compared with or assigned to, as nft's evaluate step
// types them. No lowering happens here.
#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/nft/parser.h"
#include "ir/util.h"

namespace rulejit::frontends::nft {

bool IsUnsupportedStatement(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      // Statements parsed in statements.cc, but no expressions.
      "queue", "quota", "snat", "dnat", "masquerade", "redirect",
      "dup", "fwd", "synproxy", "flow", "meter", "add", "update",
      "delete", "numgen", "rt", "osf",
      "exthdr", "hbh", "frag", "dst", "mh", "srh", "rt0", "rt2", "rt4",
      "arp", "gre", "gretap", "geneve", "vxlan", "ipsec", "tunnel", "last",
      "xt", "set", "map", "vmap", "inner", "cgroupv2", "mpath", "osf",
      "secmark", "objref", "ipip", "ip6ip", "reset", "dscp", "ecn"};
  for (std::string_view k : kWords) {
    if (k == w) return true;
  }
  return false;
}

// Why rulejit cannot give the kernel's meaning to what nft's `w` reads,
// for those whose answer lies outside the packet and rulejit's inputs
// ("" for the others, merely not written yet).
std::string UnsupportedWhy(std::string_view w) {
  if (w == "osf") {
    return "osf compares the SYN with the OS fingerprints loaded into the kernel (nfnl_osf, "
           "pf.os), which rulejit has no input for";
  }
  if (w == "ipsec") {
    return "ipsec reads the IPsec state (secpath) the host's xfrm decapsulation left on the "
           "packet, which rulejit's packets do not carry";
  }
  return "";
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
  } else if (w == "jhash" || w == "symhash") {
    if (!ParseHashField(w == "symhash", loc, field)) return false;
  } else if (w == "rt") {
    if (!ParseRtField(field)) return false;
  } else if (w == "socket") {
    if (!ParseSocketField(field)) return false;
  } else if (IsUnsupportedStatement(w)) {
    return Error(loc, absl::StrCat("unsupported expression '", w, "'"), UnsupportedWhy(w));
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
  std::optional<uint32_t> mod, offset;
  if (!ParseModulus("numgen", mloc, &mod, nullptr, &offset)) return false;
  f.numgen.mod = *mod;
  f.numgen.offset = offset.value_or(0);
  *field = f;
  return true;
}

// `mod M [seed S] [offset O]` after numgen's mode or a hash's key (nft's
// grammar takes them in this order; `seed` only where `seed` is given).
bool Parser::ParseModulus(std::string_view what, ir::SourceLoc loc, std::optional<uint32_t>* mod,
                          std::optional<uint32_t>* seed, std::optional<uint32_t>* offset) {
  for (std::string_view word : {"mod", "seed", "offset"}) {
    std::optional<uint32_t>* out = word == "mod" ? mod : word == "seed" ? seed : offset;
    if (out == nullptr) continue;
    if (!AcceptWord(word)) {
      if (word == "mod") return ErrorUnexpected("'mod'");
      continue;
    }
    std::string n;
    const ir::SourceLoc nloc = Peek().loc;
    if (!ExpectWord(&n, "number")) return false;
    std::optional<U128> v = ParseNumber(n);
    if (!v || *v > 0xffffffffu) {
      return Error(nloc, absl::StrCat("bad ", std::string(what), " ", std::string(word), " '", n, "'"));
    }
    *out = static_cast<uint32_t>(*v);
  }
  const std::string name(what);
  if (**mod == 0) return Error(loc, name + " modulus must not be 0");
  const uint32_t off = offset->value_or(0);
  if (off + **mod - 1 < off) return Error(loc, name + " offset + modulus overflows 32 bits");
  return true;
}

// `jhash KEY mod M [seed S] [offset O]` / `symhash mod M [offset O]` (the
// word read): a 32-bit host-order number (ir::Hash). KEY is a field or a
// concatenation of fields; the hash reads its bytes as a set key holds
// them: one field's bytes, or each field padded to whole words.
bool Parser::ParseHashField(bool symmetric, ir::SourceLoc loc, Field* field) {
  Field f;
  f.kind = Field::Kind::kHash;
  f.type = DType::kInteger;
  f.len_bits = 32;
  f.host_order = true;
  f.hash.symmetric = symmetric;
  if (!symmetric) {
    Nesting nesting(*this, loc);
    if (!nesting.ok()) return false;
    Field part;
    if (!ParseField(&part)) return false;
    f.hash_key.push_back(std::move(part));
    while (AtWord(".")) {
      Next();
      if (!ParseField(&part)) return false;
      f.hash_key.push_back(std::move(part));
    }
    uint32_t len = f.hash_key.size() == 1 ? f.hash_key[0].LoadLen() : 0;
    if (f.hash_key.size() > 1) {
      for (const Field& k : f.hash_key) len += ir::Pad4(k.LoadLen());
    }
    if (len > ir::kRegBytes) return Error(loc, "jhash key longer than the registers (64 bytes)");
    f.hash.len = static_cast<uint8_t>(len);
  }
  std::optional<uint32_t> mod, seed, offset;
  if (!ParseModulus(symmetric ? "symhash" : "jhash", loc, &mod, symmetric ? nullptr : &seed,
                    &offset)) {
    return false;
  }
  f.hash.mod = *mod;
  f.hash.seed = seed;
  f.hash.offset = offset.value_or(0);
  *field = std::move(f);
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
  if (fd && (key == "proto-src" || key == "proto-dst")) {
    fd->untyped_ports = lin_.ctx().l4 < 0 && !lin_.ctx().ct_l4;
  }
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
    return Error(kloc, absl::StrCat("unsupported expression 'rt ", key, "' (only rt mtu)"),
                 UnsupportedWhy(key));
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


}  // namespace rulejit::frontends::nft
