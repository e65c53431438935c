// nft names of meta keys, ct keys and payload fields (see nft_keys.h).
#include "emit/nft_keys.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"

namespace rulejit::emit {
namespace {

Value Make(std::string text, Lit lit, uint32_t len, std::string type, bool bitmask = false) {
  Value v;
  v.text = std::move(text);
  v.lit = lit;
  v.len = len;
  v.type = std::move(type);
  v.bitmask = bitmask;
  return v;
}

// {"meta": {"key": "mark"}}
Value Meta(std::string_view key, Lit lit, uint32_t len, std::string type) {
  Value v = Make("meta " + std::string(key), lit, len, std::move(type));
  v.json = Json{{"meta", {{"key", std::string(key)}}}};
  return v;
}

// {"ct": {"key": "saddr", "family": "ip", "dir": "original"}}
Value Ct(ir::CtDir dir, const std::string& key, Lit lit, uint32_t len, std::string type,
         bool bitmask = false) {
  std::string prefix = dir == ir::CtDir::kOriginal ? "ct original "
                       : dir == ir::CtDir::kReply  ? "ct reply "
                                                   : "ct ";
  Value v = Make(prefix + key, lit, len, std::move(type), bitmask);
  Json ct;
  size_t space = key.find(' ');
  if (space == std::string::npos) {
    ct["key"] = key;
  } else {  // "ip saddr"
    ct["family"] = key.substr(0, space);
    ct["key"] = key.substr(space + 1);
  }
  if (dir != ir::CtDir::kNone) ct["dir"] = dir == ir::CtDir::kOriginal ? "original" : "reply";
  v.json = Json{{"ct", ct}};
  return v;
}

// The nft keyword of a meta key where it is not libnftnl's name.
std::string_view MetaKeyword(ir::MetaKey key) {
  using K = ir::MetaKey;
  switch (key) {
    case K::kBriIifName: return "ibrname";
    case K::kBriOifName: return "obrname";
    case K::kPRandom: return "random";
    case K::kBriIifPvid: return "ibrpvid";
    case K::kBriIifVproto: return "ibrvproto";
    case K::kSecPath: return "ipsec";
    default: return ir::MetaKeyName(key);
  }
}

struct Field {
  ir::PayloadBase base;
  uint32_t offset, len;
  const char* name;
  Lit lit;
  const char* type;
  uint8_t l4;  // transport fields: the protocol nft checks first
};

// Byte-aligned whole fields only: nft loads exactly these bytes for them.
constexpr Field kIpFields[] = {
    {ir::PayloadBase::kNetwork, 2, 2, "ip length", Lit::kBeDec, "", 0},
    {ir::PayloadBase::kNetwork, 4, 2, "ip id", Lit::kBeDec, "", 0},
    {ir::PayloadBase::kNetwork, 8, 1, "ip ttl", Lit::kBeDec, "", 0},
    {ir::PayloadBase::kNetwork, 9, 1, "ip protocol", Lit::kBeDec, "inet_proto", 0},
    {ir::PayloadBase::kNetwork, 12, 4, "ip saddr", Lit::kIpv4, "ipv4_addr", 0},
    {ir::PayloadBase::kNetwork, 16, 4, "ip daddr", Lit::kIpv4, "ipv4_addr", 0},
};
constexpr Field kIp6Fields[] = {
    {ir::PayloadBase::kNetwork, 4, 2, "ip6 length", Lit::kBeDec, "", 0},
    {ir::PayloadBase::kNetwork, 6, 1, "ip6 nexthdr", Lit::kBeDec, "inet_proto", 0},
    {ir::PayloadBase::kNetwork, 7, 1, "ip6 hoplimit", Lit::kBeDec, "", 0},
    {ir::PayloadBase::kNetwork, 8, 16, "ip6 saddr", Lit::kIpv6, "ipv6_addr", 0},
    {ir::PayloadBase::kNetwork, 24, 16, "ip6 daddr", Lit::kIpv6, "ipv6_addr", 0},
};
constexpr Field kTransportFields[] = {
    {ir::PayloadBase::kTransport, 0, 2, "tcp sport", Lit::kBeDec, "inet_service", 6},
    {ir::PayloadBase::kTransport, 2, 2, "tcp dport", Lit::kBeDec, "inet_service", 6},
    {ir::PayloadBase::kTransport, 0, 2, "udp sport", Lit::kBeDec, "inet_service", 17},
    {ir::PayloadBase::kTransport, 2, 2, "udp dport", Lit::kBeDec, "inet_service", 17},
    {ir::PayloadBase::kTransport, 0, 2, "udplite sport", Lit::kBeDec, "inet_service", 136},
    {ir::PayloadBase::kTransport, 2, 2, "udplite dport", Lit::kBeDec, "inet_service", 136},
    {ir::PayloadBase::kTransport, 0, 2, "sctp sport", Lit::kBeDec, "inet_service", 132},
    {ir::PayloadBase::kTransport, 2, 2, "sctp dport", Lit::kBeDec, "inet_service", 132},
    {ir::PayloadBase::kTransport, 0, 2, "dccp sport", Lit::kBeDec, "inet_service", 33},
    {ir::PayloadBase::kTransport, 2, 2, "dccp dport", Lit::kBeDec, "inet_service", 33},
};

const Field* Find(const Field* begin, const Field* end, const ir::PayloadLoad& load,
                  std::optional<uint8_t> l4) {
  for (const Field* f = begin; f != end; ++f) {
    if (f->base == load.base && f->offset == load.offset && f->len == load.len &&
        (f->l4 == 0 || (l4 && *l4 == f->l4))) {
      return f;
    }
  }
  return nullptr;
}

// The named field for `load`, if the protocol nft would check is known.
const Field* NamedField(const ir::PayloadLoad& load, const Facts& facts) {
  const bool inet = facts.family == ir::Family::kInet;
  if (load.base == ir::PayloadBase::kNetwork) {
    if (facts.family == ir::Family::kIp || (inet && facts.nfproto == 2)) {
      return Find(std::begin(kIpFields), std::end(kIpFields), load, std::nullopt);
    }
    if (facts.family == ir::Family::kIp6 || (inet && facts.nfproto == 10)) {
      return Find(std::begin(kIp6Fields), std::end(kIp6Fields), load, std::nullopt);
    }
    return nullptr;
  }
  const bool l3 = facts.family == ir::Family::kIp || facts.family == ir::Family::kIp6 || inet;
  if (load.base == ir::PayloadBase::kTransport && l3 && facts.l4proto) {
    return Find(std::begin(kTransportFields), std::end(kTransportFields), load, facts.l4proto);
  }
  return nullptr;
}

}  // namespace

std::optional<Value> MetaValue(ir::MetaKey key) {
  using K = ir::MetaKey;
  const std::string_view text = MetaKeyword(key);
  const uint32_t len = ir::MetaKeyLen(key);
  switch (key) {
    case K::kIp6tL4Proto:
      return std::nullopt;  // ip6tables' own protocol walk: no nft key
    case K::kIifName: case K::kOifName: case K::kBriIifName: case K::kBriOifName:
    case K::kIifKind: case K::kOifKind: case K::kSdifName:
      return Meta(text, Lit::kIfname, len, "ifname");
    case K::kMark: return Meta(text, Lit::kLeHex, len, "mark");
    case K::kL4Proto: return Meta(text, Lit::kLeDec, len, "inet_proto");
    case K::kProtocol: return Meta(text, Lit::kHex, len, "ether_type");
    case K::kSkUid: return Meta(text, Lit::kLeDec, len, "uid");
    case K::kSkGid: return Meta(text, Lit::kLeDec, len, "gid");
    default: return Meta(text, Lit::kLeDec, len, "");
  }
}

std::optional<Value> CtValue(ir::CtKey key, ir::CtDir dir) {
  using K = ir::CtKey;
  const uint32_t len = ir::CtKeyLen(key);
  switch (key) {
    case K::kState: return Ct(dir, "state", Lit::kLeHex, len, "ct_state", true);
    case K::kStatus: return Ct(dir, "status", Lit::kLeHex, len, "ct_status", true);
    case K::kMark: return Ct(dir, "mark", Lit::kLeHex, len, "mark");
    case K::kDirection: return Ct(dir, "direction", Lit::kLeDec, len, "ct_dir");
    case K::kZone: return Ct(dir, "zone", Lit::kLeDec, len, "");
    case K::kExpiration: return Ct(dir, "expiration", Lit::kLeDec, len, "");
    case K::kL3Protocol: return Ct(dir, "l3proto", Lit::kLeDec, len, "");
    case K::kProtocol: return Ct(dir, "protocol", Lit::kLeDec, len, "inet_proto");
    case K::kProtoSrc: return Ct(dir, "proto-src", Lit::kBeDec, len, "inet_service");
    case K::kProtoDst: return Ct(dir, "proto-dst", Lit::kBeDec, len, "inet_service");
    case K::kSrcIp: return Ct(dir, "ip saddr", Lit::kIpv4, len, "ipv4_addr");
    case K::kDstIp: return Ct(dir, "ip daddr", Lit::kIpv4, len, "ipv4_addr");
    case K::kSrcIp6: return Ct(dir, "ip6 saddr", Lit::kIpv6, len, "ipv6_addr");
    case K::kDstIp6: return Ct(dir, "ip6 daddr", Lit::kIpv6, len, "ipv6_addr");
    case K::kPkts: return Ct(dir, "packets", Lit::kLeDec, len, "");
    case K::kBytes: return Ct(dir, "bytes", Lit::kLeDec, len, "");
    case K::kAvgPkt: return Ct(dir, "avgpkt", Lit::kLeDec, len, "");
    case K::kId: return Ct(dir, "id", Lit::kLeDec, len, "");
    case K::kHelper: return Ct(dir, "helper", Lit::kIfname, len, "");
    default: return std::nullopt;
  }
}

std::optional<Value> PayloadValue(const ir::PayloadLoad& load, const Facts& facts) {
  const char* raw = nullptr;
  switch (load.base) {
    case ir::PayloadBase::kLink: raw = "@ll"; break;
    case ir::PayloadBase::kNetwork: raw = "@nh"; break;
    case ir::PayloadBase::kTransport: raw = "@th"; break;
    case ir::PayloadBase::kInner: raw = "@ih"; break;
    case ir::PayloadBase::kIp6tTransport: return std::nullopt;
  }
  if (load.len == 0 || load.len > 16) return std::nullopt;
  Value v;
  v.len = load.len;
  v.payload = true;
  if (const Field* f = NamedField(load, facts)) {
    v.text = f->name;
    v.lit = f->lit;
    v.type = f->type;
    const std::string name = f->name;  // "ip saddr"
    const size_t space = name.find(' ');
    v.json = Json{{"payload", {{"protocol", name.substr(0, space)}, {"field", name.substr(space + 1)}}}};
    return v;
  }
  v.text = absl::StrCat(raw, ",", load.offset * 8, ",", load.len * 8);
  v.lit = Lit::kHex;
  v.json = Json{{"payload", {{"base", std::string(raw + 1)}, {"offset", load.offset * 8}, {"len", load.len * 8}}}};
  return v;
}

namespace {

const char* TcpOptionName(uint8_t kind) {
  switch (kind) {
    case 2: return "maxseg";
    case 3: return "window";
    case 4: return "sack-perm";
    case 5: return "sack";
    case 8: return "timestamp";
    default: return nullptr;
  }
}

const char* Ip6HeaderName(uint8_t type) {
  switch (type) {
    case 0: return "hbh";
    case 43: return "rt";
    case 44: return "frag";
    case 60: return "dst";
    case 135: return "mh";
    default: return nullptr;
  }
}

struct Ip6Field {
  uint8_t type;
  uint32_t offset, len;
  const char* field;
};
constexpr Ip6Field kIp6Fields6[] = {
    {0, 0, 1, "nexthdr"},  {0, 1, 1, "hdrlength"},  {43, 0, 1, "nexthdr"},
    {43, 1, 1, "hdrlength"}, {43, 2, 1, "type"},    {43, 3, 1, "seg-left"},
    {44, 0, 1, "nexthdr"}, {44, 1, 1, "reserved"},  {44, 4, 4, "id"},
    {60, 0, 1, "nexthdr"}, {60, 1, 1, "hdrlength"}, {135, 0, 1, "nexthdr"},
    {135, 1, 1, "hdrlength"}, {135, 2, 1, "type"},  {135, 3, 1, "reserved"},
    {135, 4, 2, "checksum"},
};

}  // namespace

std::optional<Value> ExthdrValue(const ir::Exthdr& e, const Facts& facts) {
  Value v;
  v.len = e.present ? 1 : e.len;
  v.lit = Lit::kBeDec;
  if (e.op == ir::ExthdrOp::kTcpopt) {
    if (e.present) {
      const char* name = TcpOptionName(e.type);
      if (!name) return std::nullopt;
      v.text = absl::StrCat("tcp option ", name);
      v.json = Json{{"tcp option", {{"name", name}}}};
      return v;
    }
    if (e.len == 0 || e.len > 16) return std::nullopt;
    v.text = absl::StrCat("tcp option @", e.type, ",", e.offset * 8, ",", e.len * 8);
    v.lit = Lit::kHex;
    v.json = Json{{"tcp option", {{"base", e.type}, {"offset", e.offset * 8}, {"len", e.len * 8}}}};
    return v;
  }
  const char* header = e.op == ir::ExthdrOp::kIpv6 ? Ip6HeaderName(e.type) : nullptr;
  // nft checks `meta nfproto ipv6` first in tables of other families.
  if (!header || facts.nfproto != 10) return std::nullopt;
  if (e.present) {
    v.text = absl::StrCat("exthdr ", header);  // `exists` comes with the compare
    v.json = Json{{"exthdr", {{"name", header}}}};
    return v;
  }
  for (const Ip6Field& f : kIp6Fields6) {
    if (f.type == e.type && f.offset == e.offset && f.len == e.len) {
      v.text = absl::StrCat(header, " ", f.field);
      v.json = Json{{"exthdr", {{"name", header}, {"field", f.field}}}};
      return v;
    }
  }
  return std::nullopt;
}

Value FibValue(const ir::Fib& e) {
  static constexpr std::pair<uint32_t, const char*> kFlags[] = {
      {ir::kFibSaddr, "saddr"}, {ir::kFibDaddr, "daddr"}, {ir::kFibMark, "mark"},
      {ir::kFibIif, "iif"},     {ir::kFibOif, "oif"}};
  std::string flags;
  Json flag_list = Json::array();
  for (const auto& [bit, name] : kFlags) {
    if (!(e.flags & bit)) continue;
    absl::StrAppend(&flags, flags.empty() ? "" : " . ", name);
    flag_list.push_back(name);
  }
  const char* result = e.result == ir::FibResult::kOif       ? "oif"
                       : e.result == ir::FibResult::kOifName ? "oifname"
                                                             : "type";
  Value v;
  v.text = absl::StrCat("fib ", flags, " ", result);
  v.json = Json{{"fib", {{"result", result}, {"flags", flag_list}}}};
  v.len = ir::FibResultLen(e);
  v.lit = e.result == ir::FibResult::kOifName && !(e.flags & ir::kFibPresent) ? Lit::kIfname : Lit::kLeDec;
  return v;
}

// `socket transparent|wildcard` (a byte, boolean) and `socket mark`.
Value SocketValue(const ir::Socket& e) {
  const char* key = e.key == ir::SocketKey::kMark       ? "mark"
                    : e.key == ir::SocketKey::kWildcard ? "wildcard"
                                                        : "transparent";
  Value v;
  v.text = absl::StrCat("socket ", key);
  v.json = Json{{"socket", {{"key", key}}}};
  v.len = e.key == ir::SocketKey::kMark ? 4 : 1;
  v.lit = e.key == ir::SocketKey::kMark ? Lit::kLeHex : Lit::kLeDec;
  v.type = e.key == ir::SocketKey::kMark ? "mark" : "boolean";
  return v;
}

Value NumgenValue(const ir::Numgen& e) {
  Value v;
  v.text = absl::StrCat("numgen ", e.random ? "random" : "inc", " mod ", e.mod);
  if (e.offset) absl::StrAppend(&v.text, " offset ", e.offset);
  v.json = Json{{"numgen", {{"mode", e.random ? "random" : "inc"}, {"mod", e.mod}, {"offset", e.offset}}}};
  v.len = 4;
  v.lit = Lit::kLeDec;
  return v;
}

}  // namespace rulejit::emit
