// Match modules: the registry (name → options, lowering function) and the
// small modules, each lowered to the expressions nft uses for the
// iptables-translate form of the match (see corpus/iptables-ext/*.txlate):
//
//   -m mark --mark V/M      meta load mark; [bitwise & M]; cmp eq V
//   -m length --length A:B  meta load len; byteorder hton; range eq A B
//                           (single value: cmp eq, host order)
//   -m ttl --ttl-lt N       payload load 1b @ network + 8; cmp lt N
//   -m hl --hl-eq N         payload load 1b @ network + 7; cmp eq N
//   -m dscp --dscp D        ip: load 1b @ network + 1; & 0xfc; cmp eq D<<2
//                           ip6: load 2b @ network + 0; & 0xc00f; cmp eq ...
//   -m tos --tos V/M        as dscp, on the whole TOS/traffic-class byte
//   -m pkttype              meta load pkttype; cmp eq
//   -m mac --mac-source A   meta load iiftype; cmp eq 1 (ethernet);
//                           payload load 6b @ link + 6; cmp eq A
//   -m iprange              payload load @ network + 12/16; range eq A B
//   -m limit                limit rate R/UNIT burst B
//   -m comment              no expression: Rule::comment
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

// ---------------------------------------------------------------------------
// Shared helpers

const Option* FindOption(const MatchUse& m, std::string_view name) {
  for (const Option& o : m.options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

bool RequireProtocol(LowerCtx& ctx, const MatchUse& m,
                     std::initializer_list<uint8_t> protos,
                     std::string_view proto_names) {
  std::optional<uint8_t> p = ctx.l4proto();
  if (p) {
    for (uint8_t ok : protos) {
      if (*p == ok) return true;
    }
  }
  return ctx.Error(m.loc,
                   absl::StrCat("match '", m.name, "' requires '-p ",
                                Sv(proto_names), "'"),
                   "the kernel only allows it for that protocol");
}

bool RequireOptions(LowerCtx& ctx, const MatchUse& m) {
  if (!m.options.empty()) return true;
  std::string names;
  if (const std::vector<OptionSpec>* specs = MatchOptions(m.name)) {
    for (const OptionSpec& s : *specs) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", Sv(s.name));
    }
  }
  return ctx.Error(m.loc, absl::StrCat("match '", m.name, "' needs an option"),
                   absl::StrCat("one of: ", names));
}

void EmitPortRange(LowerCtx& ctx, uint32_t offset, PortRange r, bool invert,
                   ir::SourceLoc loc) {
  if (r.from == 0 && r.to == 0xffff && !invert) return;  // every port
  ctx.Payload(ir::PayloadBase::kTransport, offset, 2, loc);
  if (r.from == r.to) {
    ctx.Cmp(invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, BigEndian(r.from, 2),
            loc);
  } else {
    ctx.Range(invert, BigEndian(r.from, 2), BigEndian(r.to, 2), loc);
  }
}

void EmitValueRange(LowerCtx& ctx, uint64_t lo, uint64_t hi, int len, bool invert,
                    ir::SourceLoc loc) {
  if (lo == hi) {
    ctx.Cmp(invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, BigEndian(lo, len), loc);
  } else {
    ctx.Range(invert, BigEndian(lo, len), BigEndian(hi, len), loc);
  }
}

void EmitOneOf(LowerCtx& ctx, const std::vector<ir::Bytes>& keys, bool invert,
               ir::SourceLoc loc) {
  if (keys.size() == 1) {
    ctx.Cmp(invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, keys[0], loc);
    return;
  }
  ir::Set set;
  set.flags = ir::kSetAnonymous | ir::kSetConstant;
  set.key_len = static_cast<uint32_t>(keys[0].size());
  set.loc = loc;
  for (const ir::Bytes& key : keys) {
    ir::SetElement e;
    e.key = key;
    e.loc = loc;
    set.elements.push_back(std::move(e));
  }
  std::string name = ctx.AddSet(std::move(set));
  ctx.Add(ir::Lookup{1, name, std::nullopt, invert}, loc);
}

bool ParseMarkMask(LowerCtx& ctx, const Option& opt, uint32_t* value,
                   uint32_t* mask) {
  const std::string& text = opt.args[0].text;
  const size_t slash = text.find('/');
  std::optional<uint64_t> v =
      ParseNumber(std::string_view(text).substr(0, slash), 0xffffffff);
  std::optional<uint64_t> m =
      slash == std::string::npos
          ? std::optional<uint64_t>(0xffffffff)
          : ParseNumber(std::string_view(text).substr(slash + 1), 0xffffffff);
  if (!v || !m) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid mark '", text, "'"),
                     "a mark is VALUE[/MASK], 32-bit numbers");
  }
  *value = static_cast<uint32_t>(*v);
  *mask = static_cast<uint32_t>(*m);
  return true;
}

namespace {

ir::CmpOp EqOp(bool invert) { return invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq; }

// Exactly one of the module's options (ttl, hl, dscp, multiport, ...).
bool RequireExactlyOne(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  if (m.options.size() > 1) {
    return ctx.Error(m.options[1].loc,
                     absl::StrCat("option '", m.options[1].name,
                                  "' cannot be combined with '",
                                  m.options[0].name, "'"));
  }
  return true;
}

// ---------------------------------------------------------------------------
// Modules

bool LowerMark(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  uint32_t value, mask;
  if (!ParseMarkMask(ctx, opt, &value, &mask)) return false;
  ctx.Meta(ir::MetaKey::kMark, opt.loc);
  if (mask != 0xffffffff) ctx.Mask(HostU32(mask), opt.loc);
  ctx.Cmp(EqOp(opt.invert), HostU32(value), opt.loc);
  return true;
}

// xt_devgroup: `[!] --src-group G[/M]`, `[!] --dst-group G[/M]`, the input
// and output devices' groups (meta iifgroup / oifgroup): the device's
// group and M equal to G and M. A group is a number or "default" (0); the
// other names of /etc/iproute2/group are the host's, not resolved here.
bool LowerDevgroup(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  for (const Option& opt : m.options) {
    const bool src = opt.name == "--src-group";
    const std::string limit = src ? "devgroup --src-group" : "devgroup --dst-group";
    if (ctx.hook && !RegisteredAt(limit, *ctx.hook)) {
      return ctx.Error(opt.loc, absl::StrCat(limit, " is not valid in chain '", ctx.chain_name, "'"),
                       RegisteredHooksHint(limit));
    }
    const std::string& text = opt.args[0].text;
    const size_t slash = text.find('/');
    std::optional<uint64_t> group =
        text == "default" ? 0 : ParseNumber(std::string_view(text).substr(0, slash), 0xffffffff);
    std::optional<uint64_t> mask =
        slash == std::string::npos
            ? 0xffffffff
            : ParseNumber(std::string_view(text).substr(slash + 1), 0xffffffff);
    if (!group || !mask) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid device group '", text, "'"),
                       "GROUP[/MASK], 32-bit numbers, or default (names of /etc/iproute2/group "
                       "are the host's: give the number)");
    }
    ctx.Meta(src ? ir::MetaKey::kIifGroup : ir::MetaKey::kOifGroup, opt.loc);
    const uint32_t m32 = static_cast<uint32_t>(*mask);
    if (m32 != 0xffffffff) ctx.Mask(HostU32(m32), opt.loc);
    ctx.Cmp(EqOp(opt.invert), HostU32(static_cast<uint32_t>(*group) & m32), opt.loc);
  }
  return true;
}

// xt_cpu: `[!] --cpu N`, the CPU the kernel processes the packet on
// (meta cpu; an input of the evaluation, PacketMeta::cpu).
bool LowerCpu(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::optional<uint64_t> cpu = ParseNumber(opt.args[0].text, 0xffffffff);
  if (!cpu) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid CPU number '", opt.args[0].text, "'"));
  }
  ctx.Meta(ir::MetaKey::kCpu, opt.loc);
  ctx.Cmp(EqOp(opt.invert), HostU32(static_cast<uint32_t>(*cpu)), opt.loc);
  return true;
}

bool LowerComment(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  const std::string& text = opt.args[0].text;
  if (text.size() > 255) {
    return ctx.Error(opt.ArgLoc(), "comment is longer than 255 characters");
  }
  if (!ctx.rule->comment.empty()) ctx.rule->comment += " ";
  ctx.rule->comment += text;
  return true;
}

bool LowerLength(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  PortRange r;  // same syntax and limits as a port range
  if (!ParsePortRange(opt.args[0].text, opt.ArgLoc(), *ctx.diags, &r)) {
    return false;
  }
  ctx.Meta(ir::MetaKey::kLen, opt.loc);
  if (r.from == r.to) {
    ctx.Cmp(EqOp(opt.invert), HostU32(r.from), opt.loc);
  } else {
    ctx.Hton(4, 4, opt.loc);
    ctx.Range(opt.invert, BigEndian(r.from, 4), BigEndian(r.to, 4), opt.loc);
  }
  return true;
}

// --ttl-eq/-lt/-gt and --hl-eq/-lt/-gt: one byte of the network header.
bool LowerHopField(LowerCtx& ctx, const MatchUse& m, bool ipv6_field) {
  if (ctx.ipv6() != ipv6_field) {
    return ctx.Error(m.loc, absl::StrCat("match '", m.name, "' is only for ",
                                         ipv6_field ? "ip6tables" : "iptables"),
                     ipv6_field ? "use '-m ttl' for IPv4" : "use '-m hl' for IPv6");
  }
  if (!RequireExactlyOne(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::optional<uint64_t> v = ParseNumber(opt.args[0].text, 255);
  if (!v) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid value '", opt.args[0].text, "'"),
                     "a number from 0 to 255");
  }
  ir::CmpOp op = EqOp(opt.invert);
  if (std::string_view(opt.name).ends_with("-lt")) op = ir::CmpOp::kLt;
  if (std::string_view(opt.name).ends_with("-gt")) op = ir::CmpOp::kGt;
  ctx.Payload(ir::PayloadBase::kNetwork, ipv6_field ? 7 : 8, 1, opt.loc);
  ctx.Cmp(op, ir::Bytes{static_cast<uint8_t>(*v)}, opt.loc);
  return true;
}
bool LowerTtl(LowerCtx& ctx, const MatchUse& m) { return LowerHopField(ctx, m, false); }
bool LowerHl(LowerCtx& ctx, const MatchUse& m) { return LowerHopField(ctx, m, true); }

// Compares `value` under `mask` in the TOS byte (ip) or the traffic class,
// which straddles bytes 0 and 1 of the IPv6 header.
void EmitTrafficClass(LowerCtx& ctx, uint8_t value, uint8_t mask, bool invert,
                      ir::SourceLoc loc) {
  if (ctx.ipv6()) {
    ctx.Payload(ir::PayloadBase::kNetwork, 0, 2, loc);
    ctx.Mask(ir::Bytes{static_cast<uint8_t>(mask >> 4),
                       static_cast<uint8_t>((mask << 4) & 0xff)},
             loc);
    ctx.Cmp(EqOp(invert),
            ir::Bytes{static_cast<uint8_t>((value & mask) >> 4),
                      static_cast<uint8_t>(((value & mask) << 4) & 0xff)},
            loc);
    return;
  }
  ctx.Payload(ir::PayloadBase::kNetwork, 1, 1, loc);
  if (mask != 0xff) ctx.Mask(ir::Bytes{mask}, loc);
  ctx.Cmp(EqOp(invert), ir::Bytes{static_cast<uint8_t>(value & mask)}, loc);
}

std::optional<uint8_t> DscpClass(std::string_view name) {
  std::string n = Upper(name);
  if (n == "BE") return 0;
  if (n == "EF") return 46;
  if (n.size() == 3 && n.substr(0, 2) == "CS" && n[2] >= '0' && n[2] <= '7') {
    return static_cast<uint8_t>((n[2] - '0') * 8);
  }
  if (n.size() == 4 && n.substr(0, 2) == "AF" && n[2] >= '1' && n[2] <= '4' &&
      n[3] >= '1' && n[3] <= '3') {
    return static_cast<uint8_t>((n[2] - '0') * 8 + (n[3] - '0') * 2);
  }
  return std::nullopt;
}

bool LowerDscp(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireExactlyOne(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::optional<uint64_t> dscp;
  if (opt.name == "--dscp") {
    dscp = ParseNumber(opt.args[0].text, 63);
  } else if (std::optional<uint8_t> c = DscpClass(opt.args[0].text)) {
    dscp = *c;
  }
  if (!dscp) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid DSCP '", opt.args[0].text, "'"),
                     opt.name == "--dscp" ? "a number from 0 to 0x3f"
                                          : "a class such as CS1, AF21, EF, BE");
  }
  EmitTrafficClass(ctx, static_cast<uint8_t>(*dscp << 2), 0xfc, opt.invert,
                   opt.loc);
  return true;
}

bool LowerTos(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  struct Named { std::string_view name; uint8_t value; };
  static constexpr std::array<Named, 5> kNames = {{
      {"minimize-delay", 0x10}, {"maximize-throughput", 0x08},
      {"maximize-reliability", 0x04}, {"minimize-cost", 0x02},
      {"normal-service", 0x00},
  }};
  const std::string& text = opt.args[0].text;
  std::string lower = Lower(text);
  std::optional<uint64_t> value, mask;
  for (const Named& n : kNames) {
    if (n.name == lower) {
      value = n.value;
      mask = 0x3f;  // names compare the TOS bits only, as iptables does
    }
  }
  if (!value) {
    const size_t slash = text.find('/');
    value = ParseNumber(std::string_view(text).substr(0, slash), 255);
    mask = slash == std::string::npos
               ? std::optional<uint64_t>(0xff)
               : ParseNumber(std::string_view(text).substr(slash + 1), 255);
  }
  if (!value || !mask) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid TOS '", text, "'"),
                     "VALUE[/MASK] (8-bit numbers) or a name such as "
                     "Minimize-Delay");
  }
  EmitTrafficClass(ctx, static_cast<uint8_t>(*value),
                   static_cast<uint8_t>(*mask), opt.invert, opt.loc);
  return true;
}

bool LowerPkttype(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::string name = Lower(opt.args[0].text);
  std::optional<uint8_t> type;
  if (name == "unicast" || name == "host") type = 0;
  if (name == "broadcast") type = 1;
  if (name == "multicast") type = 2;
  if (name == "otherhost") type = 3;
  if (!type) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid packet type '", opt.args[0].text, "'"),
                     "one of unicast, broadcast, multicast, otherhost");
  }
  ctx.Meta(ir::MetaKey::kPktType, opt.loc);
  ctx.Cmp(EqOp(opt.invert), ir::Bytes{*type}, opt.loc);
  return true;
}

bool LowerMac(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  if (ctx.hook && *ctx.hook != ir::Hook::kPrerouting &&
      *ctx.hook != ir::Hook::kInput && *ctx.hook != ir::Hook::kForward) {
    return ctx.Error(m.loc, "match 'mac' is only valid in PREROUTING, INPUT "
                            "and FORWARD");
  }
  std::vector<std::string_view> parts = Split(opt.args[0].text, ':');
  ir::Bytes mac;
  for (std::string_view p : parts) {
    std::optional<uint64_t> byte =
        p.size() > 2 ? std::nullopt : ParseNumber(absl::StrCat("0x", Sv(p)), 255);
    if (!byte) break;
    mac.push_back(static_cast<uint8_t>(*byte));
  }
  if (parts.size() != 6 || mac.size() != 6) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid MAC address '", opt.args[0].text, "'"),
                     "six hex bytes separated by ':'");
  }
  // iptables-nft checks the link layer is ethernet before reading it.
  ctx.Meta(ir::MetaKey::kIifType, opt.loc);
  ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{1, 0}, opt.loc);  // ARPHRD_ETHER
  ctx.Payload(ir::PayloadBase::kLink, 6, 6, opt.loc);
  ctx.Cmp(EqOp(opt.invert), std::move(mac), opt.loc);
  return true;
}

bool LowerIprange(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  for (const Option& opt : m.options) {
    const std::string& text = opt.args[0].text;
    const size_t dash = text.find('-');
    std::optional<ir::Bytes> from, to;
    if (dash != std::string::npos) {
      from = ParseAddr(std::string_view(text).substr(0, dash), ctx.ipv6());
      to = ParseAddr(std::string_view(text).substr(dash + 1), ctx.ipv6());
    }
    if (!from || !to) {
      return ctx.Error(opt.ArgLoc(),
                       absl::StrCat("invalid address range '", text, "'"),
                       "FROM-TO, two addresses of the table's family");
    }
    if (*from > *to) {
      return ctx.Error(opt.ArgLoc(),
                       absl::StrCat("invalid address range '", text,
                                    "': start is greater than end"));
    }
    const bool src = opt.name == "--src-range";
    const uint32_t offset = ctx.ipv6() ? (src ? 8 : 24) : (src ? 12 : 16);
    ctx.Payload(ir::PayloadBase::kNetwork, offset,
                static_cast<uint32_t>(from->size()), opt.loc);
    ctx.Range(opt.invert, std::move(*from), std::move(*to), opt.loc);
  }
  return true;
}

// "N/UNIT" (UNIT may be abbreviated: s, sec, m, min, h, d) or "N" per second.
bool ParseRate(std::string_view text, uint64_t* rate, uint64_t* unit) {
  const size_t slash = text.find('/');
  std::optional<uint64_t> n = ParseNumber(text.substr(0, slash), 0xffffffff);
  if (!n || *n == 0) return false;
  *rate = *n;
  *unit = 1;
  if (slash == std::string_view::npos) return true;
  std::string u = Lower(text.substr(slash + 1));
  struct Unit { std::string_view name; uint64_t seconds; };
  static constexpr std::array<Unit, 4> kUnits = {{
      {"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400}}};
  for (const Unit& k : kUnits) {
    if (!u.empty() && k.name.substr(0, u.size()) == u) {
      *unit = k.seconds;
      return true;
    }
  }
  // iptables also accepts "sec" and "min" which are prefixes above.
  return false;
}

bool LowerLimit(LowerCtx& ctx, const MatchUse& m) {
  ir::Limit limit;
  limit.rate = 3;  // iptables' default: 3/hour, burst 5
  limit.unit_seconds = 3600;
  limit.burst = 5;
  for (const Option& opt : m.options) {
    if (opt.name == "--limit") {
      if (!ParseRate(opt.args[0].text, &limit.rate, &limit.unit_seconds)) {
        return ctx.Error(opt.ArgLoc(),
                         absl::StrCat("invalid rate '", opt.args[0].text, "'"),
                         "N/second, N/minute, N/hour or N/day");
      }
    } else {
      std::optional<uint64_t> b = ParseNumber(opt.args[0].text, 10000);
      if (!b) {
        return ctx.Error(opt.ArgLoc(),
                         absl::StrCat("invalid burst '", opt.args[0].text, "'"),
                         "a number from 0 to 10000");
      }
      limit.burst = static_cast<uint32_t>(*b);
    }
  }
  ctx.Add(limit, m.loc);
  return true;
}

// -m quota [!] --quota B (xt_quota): the rule's packets match while
// their lengths, added up, stay within B bytes (a packet that does not
// fit ends the quota for good); inverted, the others. nft's quota
// (ir::Quota, state per rule across packets) counts the same way in the
// kernels tested (consumed > B is over; ext_match_kernel_test checks
// both), so `quota B bytes` as iptables-translate writes it; interpreter
// tier, as quota statements.
bool LowerQuota(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::optional<uint64_t> bytes = ParseNumber(opt.args[0].text, UINT64_MAX);
  if (!bytes) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid quota '", opt.args[0].text, "'"),
                     "a number of bytes, 0 to 18446744073709551615");
  }
  ctx.Add(ir::Quota{*bytes, 0, opt.invert}, opt.loc);
  return true;
}

// ---------------------------------------------------------------------------
// Registry

using LowerFn = bool (*)(LowerCtx&, const MatchUse&);

struct Module {
  std::string_view name;
  std::vector<OptionSpec> options;
  LowerFn lower;
};

const std::vector<Module>& Modules() {
  static const std::vector<Module>* const kModules = new std::vector<Module>{
      {"tcp",
       {{"--sport"}, {"--source-port"}, {"--dport"}, {"--destination-port"},
        {"--tcp-flags", 2}, {"--syn", 0}},
       LowerTcp},
      {"udp",
       {{"--sport"}, {"--source-port"}, {"--dport"}, {"--destination-port"}},
       LowerUdp},
      {"sctp",
       {{"--sport"}, {"--source-port"}, {"--dport"}, {"--destination-port"},
        {"--chunk-types", 2}},
       LowerSctp},
      {"dccp",
       {{"--sport"}, {"--source-port"}, {"--dport"}, {"--destination-port"},
        {"--dccp-types"}, {"--dccp-option"}},
       LowerDccp},
      {"icmp", {{"--icmp-type"}}, LowerIcmp},
      {"icmp6", {{"--icmpv6-type"}}, LowerIcmp6},
      {"multiport",
       {{"--sports"}, {"--source-ports"}, {"--dports"},
        {"--destination-ports"}, {"--ports"}},
       LowerMultiport},
      {"iprange", {{"--src-range"}, {"--dst-range"}}, LowerIprange},
      {"conntrack",
       {{"--ctstate"}, {"--ctstatus"}, {"--ctdir", 1, false}, {"--ctproto"},
        {"--ctorigsrc"}, {"--ctorigdst"}, {"--ctreplsrc"}, {"--ctrepldst"},
        {"--ctorigsrcport"}, {"--ctorigdstport"}, {"--ctreplsrcport"},
        {"--ctrepldstport"}, {"--ctexpire"}},
       LowerConntrack},
      {"state", {{"--state"}}, LowerState},
      {"mark", {{"--mark"}}, LowerMark},
      {"devgroup", {{"--src-group"}, {"--dst-group"}}, LowerDevgroup},
      {"cpu", {{"--cpu"}}, LowerCpu},
      {"connmark", {{"--mark"}}, LowerConnmark},
      {"helper", {{"--helper"}}, LowerHelper},
      {"connbytes",
       {{"--connbytes"}, {"--connbytes-dir", 1, false}, {"--connbytes-mode", 1, false}},
       LowerConnbytes},
      {"comment", {{"--comment", 1, false}}, LowerComment},
      {"length", {{"--length"}}, LowerLength},
      {"ttl", {{"--ttl-eq"}, {"--ttl-lt", 1, false}, {"--ttl-gt", 1, false}},
       LowerTtl},
      {"hl", {{"--hl-eq"}, {"--hl-lt", 1, false}, {"--hl-gt", 1, false}},
       LowerHl},
      {"dscp", {{"--dscp"}, {"--dscp-class"}}, LowerDscp},
      {"tos", {{"--tos"}}, LowerTos},
      {"pkttype", {{"--pkt-type"}}, LowerPkttype},
      {"mac", {{"--mac-source"}}, LowerMac},
      {"limit", {{"--limit", 1, false}, {"--limit-burst", 1, false}},
       LowerLimit},
      {"owner",
       {{"--uid-owner"}, {"--gid-owner"}, {"--socket-exists", 0}, {"--suppl-groups", 0, false}},
       LowerOwner},
      {"recent",
       {{"--set", 0}, {"--rcheck", 0}, {"--update", 0}, {"--remove", 0},
        {"--name", 1, false}, {"--rsource", 0, false}, {"--rdest", 0, false},
        {"--seconds", 1, false}, {"--hitcount", 1, false}, {"--reap", 0, false},
        {"--rttl", 0, false}, {"--mask", 1, false}},
       LowerRecent},
      {"hashlimit",
       {{"--hashlimit-upto"}, {"--hashlimit-above"}, {"--hashlimit"},
        {"--hashlimit-srcmask", 1, false}, {"--hashlimit-dstmask", 1, false},
        {"--hashlimit-burst", 1, false}, {"--hashlimit-htable-size", 1, false},
        {"--hashlimit-htable-max", 1, false}, {"--hashlimit-htable-gcinterval", 1, false},
        {"--hashlimit-htable-expire", 1, false}, {"--hashlimit-mode", 1, false},
        {"--hashlimit-name", 1, false}, {"--hashlimit-rate-match", 0, false},
        {"--hashlimit-rate-interval", 1, false}},
       LowerHashlimit},
      {"string",
       {{"--algo", 1, false}, {"--from", 1, false}, {"--to", 1, false}, {"--string"},
        {"--hex-string"}, {"--icase", 0, false}},
       LowerString},
      {"ipv6header", {{"--header"}, {"--soft", 0, false}}, LowerIpv6Header},
      {"addrtype",
       {{"--src-type"}, {"--dst-type"}, {"--limit-iface-in", 0, false},
        {"--limit-iface-out", 0, false}},
       LowerAddrtype},
      {"rpfilter",
       {{"--loose", 0, false}, {"--validmark", 0, false}, {"--accept-local", 0, false},
        {"--invert", 0, false}},
       LowerRpfilter},
      {"rt",
       {{"--rt-type"}, {"--rt-segsleft"}, {"--rt-len"}, {"--rt-0-res", 0, false},
        {"--rt-0-addrs", 1, false}, {"--rt-0-not-strict", 0, false}},
       LowerRt},
      {"policy",
       {{"--dir", 1, false}, {"--pol", 1, false}, {"--strict", 0, false}, {"--reqid"},
        {"--spi"}, {"--proto"}, {"--mode"}, {"--tunnel-src"}, {"--tunnel-dst"},
        {"--next", 0, false}},
       LowerPolicy},
      {"esp", {{"--espspi"}}, LowerEsp},
      {"ah", {{"--ahspi"}, {"--ahlen"}, {"--ahres", 0, false}}, LowerAh},
      {"frag",
       {{"--fragid"}, {"--fraglen"}, {"--fragres", 0, false}, {"--fragfirst", 0, false},
        {"--fragmore", 0, false}, {"--fraglast", 0, false}},
       LowerFrag},
      {"hbh", {{"--hbh-len"}, {"--hbh-opts", 1, false}}, LowerHbh},
      {"dst", {{"--dst-len"}, {"--dst-opts", 1, false}}, LowerDst},
      {"mh", {{"--mh-type"}}, LowerMh},
      {"ecn", {{"--ecn-tcp-cwr", 0}, {"--ecn-tcp-ece", 0}, {"--ecn-ip-ect"}}, LowerEcn},
      {"tcpmss", {{"--mss"}}, LowerTcpmssMatch},
      {"statistic",
       {{"--mode", 1, false}, {"--probability"}, {"--every"}, {"--packet", 1, false}},
       LowerStatistic},
      {"u32", {{"--u32"}}, LowerU32},
      {"quota", {{"--quota"}}, LowerQuota},
      {"time",
       {{"--datestart", 1, false}, {"--datestop", 1, false}, {"--timestart", 1, false},
        {"--timestop", 1, false}, {"--weekdays"}, {"--monthdays"}, {"--contiguous", 0, false},
        {"--kerneltz", 0, false}, {"--localtz", 0, false}, {"--utc", 0, false}},
       LowerTime},
      {"socket",
       {{"--transparent", 0, false}, {"--nowildcard", 0, false},
        {"--restore-skmark", 0, false}},
       LowerSocket},
      {"set",
       {{"--match-set", 2}, {"--set", 2}, {"--return-nomatch", 0, false},
        {"--update-counters", 0}, {"--update-subcounters", 0}, {"--packets-eq"},
        {"--packets-lt", 1, false}, {"--packets-gt", 1, false}, {"--bytes-eq"},
        {"--bytes-lt", 1, false}, {"--bytes-gt", 1, false}},
       LowerSet},
  };
  return *kModules;
}

const Module* FindModule(std::string_view name) {
  for (const Module& m : Modules()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace

const std::vector<OptionSpec>* MatchOptions(std::string_view module) {
  const Module* m = FindModule(module);
  return m == nullptr ? nullptr : &m->options;
}

std::vector<std::string_view> SupportedMatchNames() {
  std::vector<std::string_view> names;
  for (const Module& m : Modules()) names.push_back(m.name);
  return names;
}

std::string_view UnsupportedMatchReason(std::string_view module) {
  struct Why { std::string_view name, reason; };
  static constexpr std::array<Why, 4> kReasons = {{
      {"connlimit", "it counts the connections of a masked address in nf_conncount's own list, "
                    "which keeps each connection (seen at this rule) until conntrack forgets it "
                    "or its TCP state closes; the interpreter sees one packet's ct state, not the "
                    "conntrack table, so the count cannot be exact"},
      {"helper", "the helper of a connection's master is not an input of the conntrack model"},
      {"realm", "route realms are not in the host model"},
      {"physdev", "bridge ports are not in the host model (rulejit has no bridge path)"},
  }};
  for (const Why& w : kReasons) {
    if (w.name == module) return w.reason;
  }
  return "";
}

std::string_view ImplicitMatchFor(std::string_view protocol) {
  std::optional<uint8_t> p = ParseProtocol(protocol);
  if (!p) return "";
  switch (*p) {
    case 6: return "tcp";
    case 17: return "udp";
    case 132: return "sctp";
    case 33: return "dccp";
    case 1: return "icmp";
    case 58: return "icmp6";
    case 50: return "esp";
    case 51: return "ah";
    case 135: return "mh";
    default: return "";
  }
}

bool LowerMatch(LowerCtx& ctx, const MatchUse& match) {
  const Module* m = FindModule(match.name);
  if (m == nullptr) {
    return ctx.Error(match.loc,
                     absl::StrCat("unsupported match '", match.name, "'"));
  }
  return m->lower(ctx, match);
}

}  // namespace rulejit::frontends::iptables_internal
