// ICMP matches: -m icmp --icmp-type and -m icmp6 --icmpv6-type.
//
//   --icmp-type any            nothing beyond the -p icmp check
//   --icmp-type 8              payload load 1b @ transport + 0; cmp eq 8
//   --icmp-type 3/1            payload load 2b @ transport + 0; cmp eq 3,1
//                              (type and code in one compare, as nft does)
//   --icmp-type T/A:B          type compare, then code: load 1b @ + 1; range
// Names are iptables' (`iptables -p icmp -h`), embedded so the result does
// not depend on the machine.
#include <array>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

struct IcmpName {
  std::string_view name;
  uint8_t type;
  int code;  // -1: any code
};

constexpr std::array<IcmpName, 39> kIcmpNames = {{
    {"echo-reply", 0, -1}, {"pong", 0, -1},
    {"destination-unreachable", 3, -1}, {"network-unreachable", 3, 0},
    {"host-unreachable", 3, 1}, {"protocol-unreachable", 3, 2},
    {"port-unreachable", 3, 3}, {"fragmentation-needed", 3, 4},
    {"source-route-failed", 3, 5}, {"network-unknown", 3, 6},
    {"host-unknown", 3, 7}, {"network-prohibited", 3, 9},
    {"host-prohibited", 3, 10}, {"TOS-network-unreachable", 3, 11},
    {"TOS-host-unreachable", 3, 12}, {"communication-prohibited", 3, 13},
    {"host-precedence-violation", 3, 14}, {"precedence-cutoff", 3, 15},
    {"source-quench", 4, -1}, {"redirect", 5, -1},
    {"network-redirect", 5, 0}, {"host-redirect", 5, 1},
    {"TOS-network-redirect", 5, 2}, {"TOS-host-redirect", 5, 3},
    {"echo-request", 8, -1}, {"ping", 8, -1},
    {"router-advertisement", 9, -1}, {"router-solicitation", 10, -1},
    {"time-exceeded", 11, -1}, {"ttl-exceeded", 11, -1},
    {"ttl-zero-during-transit", 11, 0}, {"ttl-zero-during-reassembly", 11, 1},
    {"parameter-problem", 12, -1}, {"ip-header-bad", 12, 0},
    {"required-option-missing", 12, 1}, {"timestamp-request", 13, -1},
    {"timestamp-reply", 14, -1}, {"address-mask-request", 17, -1},
    {"address-mask-reply", 18, -1},
}};

constexpr std::array<IcmpName, 30> kIcmp6Names = {{
    {"destination-unreachable", 1, -1}, {"no-route", 1, 0},
    {"communication-prohibited", 1, 1}, {"beyond-scope", 1, 2},
    {"address-unreachable", 1, 3}, {"port-unreachable", 1, 4},
    {"failed-policy", 1, 5}, {"reject-route", 1, 6},
    {"packet-too-big", 2, -1}, {"time-exceeded", 3, -1},
    {"ttl-exceeded", 3, -1}, {"ttl-zero-during-transit", 3, 0},
    {"ttl-zero-during-reassembly", 3, 1}, {"parameter-problem", 4, -1},
    {"bad-header", 4, 0}, {"unknown-header-type", 4, 1},
    {"unknown-option", 4, 2}, {"echo-request", 128, -1}, {"ping", 128, -1},
    {"echo-reply", 129, -1}, {"pong", 129, -1},
    {"mld-listener-query", 130, -1}, {"mld-listener-report", 131, -1},
    {"mld-listener-done", 132, -1}, {"mld-listener-reduction", 132, -1},
    {"router-solicitation", 133, -1}, {"router-advertisement", 134, -1},
    {"neighbour-solicitation", 135, -1}, {"neighbour-advertisement", 136, -1},
    {"redirect", 137, -1},
}};

struct IcmpSpec {
  bool any = false;       // every type
  uint8_t type = 0;
  uint8_t code_lo = 0, code_hi = 255;
};

// "any", NAME, TYPE, TYPE/CODE, TYPE/CODE:CODE.
template <size_t N>
std::optional<IcmpSpec> ParseIcmpType(std::string_view text,
                                      const std::array<IcmpName, N>& names,
                                      bool allow_any) {
  IcmpSpec spec;
  if (allow_any && EqualsIgnoreCase(text, "any")) {
    spec.any = true;
    return spec;
  }
  for (const IcmpName& n : names) {
    if (EqualsIgnoreCase(n.name, text)) {
      spec.type = n.type;
      if (n.code >= 0) spec.code_lo = spec.code_hi = static_cast<uint8_t>(n.code);
      return spec;
    }
  }
  const size_t slash = text.find('/');
  std::optional<uint64_t> type = ParseNumber(text.substr(0, slash), 255);
  if (!type) return std::nullopt;
  spec.type = static_cast<uint8_t>(*type);
  if (slash != std::string_view::npos) {
    std::string_view codes = text.substr(slash + 1);
    const size_t colon = codes.find(':');
    std::optional<uint64_t> lo = ParseNumber(codes.substr(0, colon), 255);
    std::optional<uint64_t> hi =
        colon == std::string_view::npos ? lo
                                        : ParseNumber(codes.substr(colon + 1), 255);
    if (!lo || !hi || *lo > *hi) return std::nullopt;
    spec.code_lo = static_cast<uint8_t>(*lo);
    spec.code_hi = static_cast<uint8_t>(*hi);
  }
  // iptables' own spelling of "any": type 255 with every code.
  if (allow_any && spec.type == 255 && spec.code_lo == 0 && spec.code_hi == 255) {
    spec.any = true;
  }
  return spec;
}

bool EmitIcmp(LowerCtx& ctx, const Option& opt, const IcmpSpec& s) {
  const ir::CmpOp op = opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq;
  if (s.any) {
    if (opt.invert) {
      return ctx.Error(opt.loc, "'! --icmp-type any' would never match");
    }
    return true;
  }
  const bool all_codes = s.code_lo == 0 && s.code_hi == 255;
  if (all_codes) {
    ctx.Payload(ir::PayloadBase::kTransport, 0, 1, opt.loc);
    ctx.Cmp(op, ir::Bytes{s.type}, opt.loc);
    return true;
  }
  if (s.code_lo == s.code_hi) {
    ctx.Payload(ir::PayloadBase::kTransport, 0, 2, opt.loc);
    ctx.Cmp(op, ir::Bytes{s.type, s.code_lo}, opt.loc);
    return true;
  }
  // type == T and code in A..B: one 2-byte range covers both exactly.
  ctx.Payload(ir::PayloadBase::kTransport, 0, 2, opt.loc);
  ctx.Range(opt.invert, ir::Bytes{s.type, s.code_lo},
            ir::Bytes{s.type, s.code_hi}, opt.loc);
  return true;
}

}  // namespace

bool LowerIcmp(LowerCtx& ctx, const MatchUse& m) {
  if (ctx.ipv6()) {
    return ctx.Error(m.loc, "match 'icmp' is only for iptables",
                     "use '-p ipv6-icmp -m icmp6 --icmpv6-type' in ip6tables");
  }
  if (!RequireProtocol(ctx, m, {1}, "icmp")) return false;
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::optional<IcmpSpec> spec = ParseIcmpType(opt.args[0].text, kIcmpNames, true);
  if (!spec) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid ICMP type '", opt.args[0].text, "'"),
                     "a name such as echo-request, or TYPE[/CODE]");
  }
  return EmitIcmp(ctx, opt, *spec);
}

bool LowerIcmp6(LowerCtx& ctx, const MatchUse& m) {
  if (!ctx.ipv6()) {
    return ctx.Error(m.loc, "match 'icmp6' is only for ip6tables",
                     "use '-p icmp -m icmp --icmp-type' in iptables");
  }
  if (!RequireProtocol(ctx, m, {58}, "ipv6-icmp")) return false;
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  std::optional<IcmpSpec> spec =
      ParseIcmpType(opt.args[0].text, kIcmp6Names, false);
  if (!spec) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid ICMPv6 type '", opt.args[0].text, "'"),
                     "a name such as echo-request, or TYPE[/CODE]");
  }
  return EmitIcmp(ctx, opt, *spec);
}

}  // namespace rulejit::frontends::iptables_internal
