// The mangle targets that rewrite an IP header field, lowered as nft writes
// the same fields (load, bitwise, payload write with the IPv4 header
// checksum fixed), and the two that only set metadata or a verdict:
//
//   -j DSCP --set-dscp N | --set-dscp-class C   (xt_DSCP dscp_tg: the six
//        DSCP bits, ECN kept)  `ip dscp set N` / `ip6 dscp set N`
//   -j TOS --set-tos V[/M] | --and-tos B | --or-tos B | --xor-tos B
//        (tos_tg: tos = (tos & ~M) ^ V; a symbolic name's mask is 0x3f,
//        a number's 0xff; and = 0/~B, or = B/B, xor = B/0)
//   -j TTL --ttl-set N | --ttl-inc N | --ttl-dec N   (ttl_tg) and
//   -j HL --hl-set N | --hl-inc N | --hl-dec N       (hl_tg6): set as
//        `ip ttl set N`; inc/dec saturate at 255 and 0, as a constant
//        map from the old value to the new one (256 entries)
//   -j CLASSIFY --set-class MAJOR:MINOR   `meta priority set MAJOR:MINOR`
//   -j NFQUEUE [--queue-num N | --queue-balance A:B] [--queue-bypass]
//        [--queue-cpu-fanout]   `queue num N[-B] [bypass] [fanout]`
//
// DSCP, TOS, TTL and HL are the mangle table's only (the kernel refuses
// them elsewhere); TTL is iptables', HL ip6tables'. CLASSIFY runs at
// FORWARD, OUTPUT and POSTROUTING only (hook_limits.cc).
#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

bool RequireMangle(LowerCtx& ctx, const TargetUse& t) {
  return ctx.table_name == "mangle" ||
         ctx.Error(t.loc, absl::StrCat("the ", t.name, " target is only valid in the mangle table"));
}

// The DS field (IPv4 TOS, IPv6 traffic class) becomes (ds & keep) ^ value,
// as ipv4_change_dsfield / ipv6_change_dsfield write it.
void WriteDsField(LowerCtx& ctx, uint8_t keep, uint8_t value, ir::SourceLoc loc) {
  // The 16-bit word at the network header: IPv4 version/IHL + TOS, IPv6
  // version + traffic class + the flow label's first nibble.
  const uint16_t mask = ctx.ipv6() ? 0xf00f | keep << 4 : 0xff00 | keep;
  const uint16_t xor_value = ctx.ipv6() ? value << 4 : value;
  ctx.Payload(ir::PayloadBase::kNetwork, 0, 2, loc);
  ctx.Add(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 2, BigEndian(mask, 2),
                      BigEndian(xor_value, 2), 0},
          loc);
  ir::PayloadWrite write{ir::PayloadBase::kNetwork, 0, 2, 1};
  if (!ctx.ipv6()) {
    write.csum_type = ir::kCsumInet;
    write.csum_offset = 10;
  }
  ctx.Add(write, loc);
}

// DSCP class names (libxt_dscp's table).
std::optional<uint8_t> DscpClass(std::string_view name) {
  static constexpr std::pair<std::string_view, uint8_t> kClasses[] = {
      {"CS0", 0},     {"CS1", 0x08},  {"CS2", 0x10},  {"CS3", 0x18},  {"CS4", 0x20},
      {"CS5", 0x28},  {"CS6", 0x30},  {"CS7", 0x38},  {"BE", 0},      {"AF11", 0x0a},
      {"AF12", 0x0c}, {"AF13", 0x0e}, {"AF21", 0x12}, {"AF22", 0x14}, {"AF23", 0x16},
      {"AF31", 0x1a}, {"AF32", 0x1c}, {"AF33", 0x1e}, {"AF41", 0x22}, {"AF42", 0x24},
      {"AF43", 0x26}, {"EF", 0x2e}};
  for (auto [n, v] : kClasses) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

bool LowerDscp(LowerCtx& ctx, const TargetUse& t) {
  if (!RequireMangle(ctx, t)) return false;
  const Option* number = FindTargetOption(t, "--set-dscp");
  const Option* cls = FindTargetOption(t, "--set-dscp-class");
  if ((number == nullptr) == (cls == nullptr)) {
    return ctx.Error(t.loc, "DSCP needs one of --set-dscp and --set-dscp-class");
  }
  std::optional<uint64_t> dscp;
  if (number != nullptr) {
    dscp = ParseNumber(number->args[0].text, 63);
  } else if (std::optional<uint8_t> c = DscpClass(cls->args[0].text)) {
    dscp = *c;
  }
  if (!dscp) {
    const Option* o = number ? number : cls;
    return ctx.Error(o->ArgLoc(), absl::StrCat("invalid DSCP '", o->args[0].text, "'"),
                     number ? "a number 0-63" : "a class: CS0-CS7, BE, AF11-AF43, EF");
  }
  WriteDsField(ctx, 0x03, static_cast<uint8_t>(*dscp << 2), t.loc);
  return true;
}

// TOS names of the old TOS field (libxt's tos_values).
std::optional<uint8_t> TosName(std::string_view name) {
  static constexpr std::pair<std::string_view, uint8_t> kNames[] = {
      {"Minimize-Delay", 0x10}, {"Maximize-Throughput", 0x08}, {"Maximize-Reliability", 0x04},
      {"Minimize-Cost", 0x02},  {"Normal-Service", 0x00}};
  for (auto [n, v] : kNames) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

bool LowerTos(LowerCtx& ctx, const TargetUse& t) {
  if (!RequireMangle(ctx, t)) return false;
  if (t.options.size() != 1) {
    return ctx.Error(t.loc, "TOS needs one of --set-tos, --and-tos, --or-tos and --xor-tos");
  }
  const Option& o = t.options[0];
  const std::string& text = o.args[0].text;
  uint64_t value = 0, mask = 0xff;
  if (std::optional<uint8_t> named = TosName(text); named && o.name == "--set-tos") {
    value = *named;
    mask = 0x3f;
  } else {
    const size_t slash = text.find('/');
    std::optional<uint64_t> v = ParseNumber(std::string_view(text).substr(0, slash), 255);
    std::optional<uint64_t> m = slash == std::string::npos
                                    ? std::optional<uint64_t>(0xff)
                                    : ParseNumber(std::string_view(text).substr(slash + 1), 255);
    if (!v || !m || (slash != std::string::npos && o.name != "--set-tos")) {
      return ctx.Error(o.ArgLoc(), absl::StrCat("invalid TOS value '", text, "'"),
                       o.name == "--set-tos" ? "VALUE[/MASK] (0-255) or a TOS name" : "0-255");
    }
    value = *v;
    mask = *m;
  }
  if (o.name == "--and-tos") {
    mask = ~value & 0xff;
    value = 0;
  } else if (o.name == "--or-tos") {
    mask = value;
  } else if (o.name == "--xor-tos") {
    mask = 0;
  }
  WriteDsField(ctx, static_cast<uint8_t>(~mask & 0xff), static_cast<uint8_t>(value), t.loc);
  return true;
}

// TTL / HL: set, or a saturating add or subtract through a constant map.
bool LowerHopLimit(LowerCtx& ctx, const TargetUse& t) {
  if (!RequireMangle(ctx, t)) return false;
  const bool hl = t.name == "HL";
  if (hl != ctx.ipv6()) {
    return ctx.Error(t.loc, hl ? "the HL target is ip6tables only (TTL is iptables')"
                               : "the TTL target is iptables only (HL is ip6tables')");
  }
  if (t.options.size() != 1) {
    return ctx.Error(t.loc, absl::StrCat(t.name, " needs one of --", hl ? "hl" : "ttl", "-set, -inc, -dec"));
  }
  const Option& o = t.options[0];
  std::optional<uint64_t> n = ParseNumber(o.args[0].text, 255);
  if (!n) {
    return ctx.Error(o.ArgLoc(), absl::StrCat("invalid value '", o.args[0].text, "'"), "0-255");
  }
  const bool set = absl::EndsWith(o.name, "-set");
  const bool inc = absl::EndsWith(o.name, "-inc");
  if (!set && *n == 0) {
    return ctx.Error(o.ArgLoc(), absl::StrCat("bad value for option \"", o.name, "\""),
                     "1-255: iptables refuses 0");
  }
  const uint32_t offset = hl ? 7 : 8;
  ir::PayloadWrite write{ir::PayloadBase::kNetwork, offset, 1, 1};
  if (!hl) {
    write.csum_type = ir::kCsumInet;
    write.csum_offset = 10;
  }
  if (set) {
    ctx.Add(ir::Immediate{1, ir::Bytes{static_cast<uint8_t>(*n)}, {}}, o.loc);
  } else {
    ir::Set map;
    map.flags = ir::kSetAnonymous | ir::kSetConstant | ir::kSetMap;
    map.key_len = 1;
    map.data_len = 1;
    for (int old = 0; old < 256; ++old) {
      const int now = inc ? std::min<int>(255, old + static_cast<int>(*n))
                          : std::max<int>(0, old - static_cast<int>(*n));
      ir::SetElement e;
      e.key = {static_cast<uint8_t>(old)};
      e.data = {static_cast<uint8_t>(now)};
      map.elements.push_back(std::move(e));
    }
    ctx.Payload(ir::PayloadBase::kNetwork, offset, 1, o.loc);
    ctx.Add(ir::Lookup{1, ctx.AddSet(std::move(map)), ir::Reg{1}, false}, o.loc);
  }
  ctx.Add(write, o.loc);
  return true;
}

// CLASSIFY --set-class MAJOR:MINOR (hex, as tc writes them).
bool LowerClassify(LowerCtx& ctx, const TargetUse& t) {
  const Option* o = FindTargetOption(t, "--set-class");
  if (o == nullptr) return ctx.Error(t.loc, "CLASSIFY needs --set-class MAJOR:MINOR");
  if (ctx.hook && !RegisteredAt("CLASSIFY", *ctx.hook)) {
    return ctx.Error(t.loc, absl::StrCat("CLASSIFY is not valid in chain '", ctx.chain_name, "'"),
                     RegisteredHooksHint("CLASSIFY"));
  }
  const std::string& text = o->args[0].text;
  const size_t colon = text.find(':');
  uint32_t major = 0, minor = 0;
  if (colon == std::string::npos || !absl::SimpleHexAtoi(text.substr(0, colon), &major) ||
      !absl::SimpleHexAtoi(text.substr(colon + 1), &minor) || major > 0xffff || minor > 0xffff) {
    return ctx.Error(o->ArgLoc(), absl::StrCat("invalid class '", text, "'"),
                     "MAJOR:MINOR, hexadecimal 16-bit numbers");
  }
  ctx.Add(ir::Immediate{1, HostU32(major << 16 | minor), {}}, o->loc);
  ctx.Add(ir::MetaSet{ir::MetaKey::kPriority, 1}, o->loc);
  return true;
}

bool LowerNfqueue(LowerCtx& ctx, const TargetUse& t) {
  const Option* num = FindTargetOption(t, "--queue-num");
  const Option* balance = FindTargetOption(t, "--queue-balance");
  if (num != nullptr && balance != nullptr) {
    return ctx.Error(balance->loc, "--queue-num and --queue-balance exclude each other");
  }
  ir::Queue q;
  if (num != nullptr) {
    std::optional<uint64_t> n = ParseNumber(num->args[0].text, 65535);
    if (!n) return ctx.Error(num->ArgLoc(), "invalid queue number", "0-65535");
    q.num = static_cast<uint16_t>(*n);
  } else if (balance != nullptr) {
    const std::string& text = balance->args[0].text;
    const size_t colon = text.find(':');
    std::optional<uint64_t> a = ParseNumber(std::string_view(text).substr(0, colon), 65535);
    std::optional<uint64_t> b = colon == std::string::npos
                                    ? std::nullopt
                                    : ParseNumber(std::string_view(text).substr(colon + 1), 65535);
    if (!a || !b || *a >= *b) {
      return ctx.Error(balance->ArgLoc(), absl::StrCat("invalid queue range '", text, "'"),
                       "FIRST:LAST with FIRST < LAST");
    }
    q.num = static_cast<uint16_t>(*a);
    q.total = static_cast<uint16_t>(*b - *a + 1);
  }
  if (FindTargetOption(t, "--queue-bypass")) q.flags |= ir::kQueueBypass;
  if (FindTargetOption(t, "--queue-cpu-fanout")) {
    if (balance == nullptr) {
      return ctx.Error(t.loc, "--queue-cpu-fanout needs --queue-balance");
    }
    q.flags |= ir::kQueueFanout;
  }
  ctx.Add(q, t.loc);
  return true;
}

}  // namespace

bool IsHeaderTarget(std::string_view name) {
  return name == "DSCP" || name == "TOS" || name == "TTL" || name == "HL" ||
         name == "CLASSIFY" || name == "NFQUEUE";
}

bool LowerHeaderTarget(LowerCtx& ctx, const TargetUse& t) {
  if (t.name == "DSCP") return LowerDscp(ctx, t);
  if (t.name == "TOS") return LowerTos(ctx, t);
  if (t.name == "CLASSIFY") return LowerClassify(ctx, t);
  if (t.name == "NFQUEUE") return LowerNfqueue(ctx, t);
  return LowerHopLimit(ctx, t);
}

}  // namespace rulejit::frontends::iptables_internal
