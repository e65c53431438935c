// The nat table's targets, lowered as iptables-translate writes them in
// nft (../shared/corpus/iptables-ext/lib*_{SNAT,DNAT,MASQUERADE,REDIRECT}
// .txlate), so both syntaxes give the same IR:
//
//   -j SNAT --to-source A[-B][:P[-Q]]    immediate reg 1 A [reg 2 B]
//   -j DNAT --to-destination ...           [immediate reg n P [reg n+1 Q]]
//                                          nat snat|dnat ip|ip6 addr_min reg 1
//                                            [addr_max ..] [proto_min ..]
//                                            [proto_max ..] flags F
//   -j MASQUERADE [--to-ports P[-Q]]     immediate ports; masq [proto_min ..]
//   -j REDIRECT [--to-ports P[-Q]]       immediate ports; redir [proto_min ..]
//   -j NETMAP --to NET/LEN                immediate reg 1 NET, reg 2 NET|~MASK;
//                                          nat dnat (PREROUTING, OUTPUT) or
//                                          snat (POSTROUTING, INPUT), netmap
//
// F: 0x2 with ports, 0x4 --random, 0x8 --persistent, 0x10 --random-fully
// (NF_NAT_RANGE_*; nft sends no MAP_IPS bit, the kernel infers it). IPv6
// addresses with ports are bracketed: [2001:db8::1]-[2001:db8::2]:80.
// Ports need -p tcp, udp, sctp or dccp (libxt_DNAT: "Need TCP, UDP, SCTP
// or DCCP with port specification"). Each target is registered for the nat
// table and its hooks only (nf_nat's xt targets); a target in a user chain
// is checked against the hooks that reach the chain when the table is
// committed (CheckHookLimitedUses, hook_limits.cc).
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

// An address range and a port range, each optional.
struct NatRange {
  std::optional<ir::Bytes> addr_min, addr_max;
  std::optional<uint16_t> port_min, port_max;
};

// "A" or "A-B" (IPv6: may be bracketed, each address or the range).
bool ParseAddrRange(LowerCtx& ctx, std::string_view text, ir::SourceLoc loc, NatRange* out) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']' &&
      text.find("]-[") == std::string_view::npos) {
    text = text.substr(1, text.size() - 2);
  }
  auto one = [&](std::string_view a) -> std::optional<ir::Bytes> {
    if (a.size() >= 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
    std::optional<ir::Bytes> addr = ParseAddr(a, ctx.ipv6());
    if (!addr) {
      ctx.Error(loc, absl::StrCat("invalid ", ctx.ipv6() ? "IPv6" : "IPv4", " address '",
                                  Sv(a), "'"));
    }
    return addr;
  };
  const size_t dash = text.find('-');
  out->addr_min = one(text.substr(0, dash));
  if (!out->addr_min) return false;
  if (dash == std::string_view::npos) return true;
  out->addr_max = one(text.substr(dash + 1));
  if (!out->addr_max) return false;
  if (*out->addr_max < *out->addr_min) {
    return ctx.Error(loc, absl::StrCat("invalid address range '", Sv(text),
                                       "': start is greater than end"));
  }
  return true;
}

// "P" or "P-Q" (also "P:Q", as iptables-save never writes but accepts).
bool ParsePorts(LowerCtx& ctx, std::string_view text, ir::SourceLoc loc, NatRange* out) {
  PortRange r;
  if (!ParsePortRange(text, loc, *ctx.diags, &r, /*allow_dash=*/true, ServiceProto(ctx))) {
    return false;
  }
  out->port_min = r.from;
  if (r.to != r.from) out->port_max = r.to;
  return true;
}

// `--to-source` / `--to-destination`: [ADDR[-ADDR]][:PORT[-PORT]].
bool ParseNatSpec(LowerCtx& ctx, const Option& o, NatRange* out) {
  std::string_view text = o.args[0].text;
  const ir::SourceLoc loc = o.ArgLoc();
  // The port separator: IPv4's only ':'; IPv6's the ':' after "]".
  size_t colon = std::string_view::npos;
  if (!ctx.ipv6()) {
    colon = text.find(':');
  } else if (const size_t close = text.rfind(']'); close != std::string_view::npos) {
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') {
        return ctx.Error(loc, absl::StrCat("invalid address '", Sv(text), "'"),
                         "write [ADDR]:PORT");
      }
      colon = close + 1;
    }
  }
  std::string_view addrs = text.substr(0, colon);
  if (!addrs.empty() && !ParseAddrRange(ctx, addrs, loc, out)) return false;
  if (colon != std::string_view::npos && !ParsePorts(ctx, text.substr(colon + 1), loc, out)) {
    return false;
  }
  if (!out->addr_min && !out->port_min) {
    return ctx.Error(loc, absl::StrCat("'", o.name, "' needs an address or a port"));
  }
  return true;
}

// Ports only with a protocol that has them.
bool CheckPortProtocol(LowerCtx& ctx, const TargetUse& t, const NatRange& r) {
  if (!r.port_min) return true;
  const std::optional<uint8_t> proto = ctx.l4proto();
  if (proto == 6 || proto == 17 || proto == 132 || proto == 33) return true;
  return ctx.Error(t.loc, absl::StrCat("target '", t.name, "' with ports needs -p tcp, udp, "
                                       "sctp or dccp"));
}

bool CheckNatTable(LowerCtx& ctx, const TargetUse& t) {
  if (ctx.table_name != "nat") {
    return ctx.Error(t.loc, absl::StrCat("target '", t.name, "' is only valid in the nat table"));
  }
  if (ctx.hook && !RegisteredAt(t.name, *ctx.hook)) {
    return ctx.Error(t.loc, absl::StrCat("target '", t.name, "' is not valid in chain '",
                                         ctx.chain_name, "'"),
                     RegisteredHooksHint(t.name));
  }
  return true;
}

uint32_t FlagsOf(const TargetUse& t, const NatRange& r) {
  uint32_t flags = r.port_min ? ir::kNatProtoSpecified : 0;
  if (FindTargetOption(t, "--random")) flags |= ir::kNatRandom;
  if (FindTargetOption(t, "--persistent")) flags |= ir::kNatPersistent;
  if (FindTargetOption(t, "--random-fully")) flags |= ir::kNatRandomFully;
  return flags;
}

// The immediates of `r` in registers 1, 2, ... and the nat expression
// reading them.
void EmitNat(LowerCtx& ctx, ir::NatKind kind, const NatRange& r, uint32_t flags,
             ir::SourceLoc loc) {
  ir::Nat nat;
  nat.kind = kind;
  nat.family = ctx.family;
  nat.flags = flags;
  ir::Reg next = 1;
  auto put = [&](const ir::Bytes& data) {
    ir::Immediate imm;
    imm.dreg = next;
    imm.data = data;
    ctx.Add(std::move(imm), loc);
    return next++;
  };
  if (r.addr_min) nat.addr_min = put(*r.addr_min);
  if (r.addr_max) nat.addr_max = put(*r.addr_max);
  if (r.port_min) nat.proto_min = put(BigEndian(*r.port_min, 2));
  if (r.port_max) nat.proto_max = put(BigEndian(*r.port_max, 2));
  ctx.Add(std::move(nat), loc);
}

bool LowerSnatDnat(LowerCtx& ctx, const TargetUse& t) {
  const bool snat = t.name == "SNAT";
  const Option* to = FindTargetOption(t, snat ? "--to-source" : "--to-destination");
  if (to == nullptr) {
    return ctx.Error(t.loc, absl::StrCat("target '", t.name, "' needs ",
                                         snat ? "--to-source" : "--to-destination"));
  }
  NatRange r;
  if (!ParseNatSpec(ctx, *to, &r) || !CheckPortProtocol(ctx, t, r)) return false;
  EmitNat(ctx, snat ? ir::NatKind::kSnat : ir::NatKind::kDnat, r, FlagsOf(t, r), t.loc);
  return true;
}

bool LowerMasqRedirect(LowerCtx& ctx, const TargetUse& t) {
  NatRange r;
  if (const Option* ports = FindTargetOption(t, "--to-ports")) {
    if (!ParsePorts(ctx, ports->args[0].text, ports->ArgLoc(), &r)) return false;
  }
  if (!CheckPortProtocol(ctx, t, r)) return false;
  EmitNat(ctx, t.name == "MASQUERADE" ? ir::NatKind::kMasq : ir::NatKind::kRedir, r,
          FlagsOf(t, r), t.loc);
  return true;
}

// NETMAP rewrites the prefix and keeps the host part: the range is the
// network's first and last address.
bool LowerNetmap(LowerCtx& ctx, const TargetUse& t) {
  const Option* to = FindTargetOption(t, "--to");
  if (to == nullptr) return ctx.Error(t.loc, "target 'NETMAP' needs --to");
  AddrMask net;
  if (!ParseAddrMask(to->args[0].text, ctx.ipv6(), to->ArgLoc(), *ctx.diags, &net)) {
    return false;
  }
  NatRange r;
  r.addr_min = net.addr;
  r.addr_max = net.addr;
  for (size_t i = 0; i < net.mask.size(); ++i) (*r.addr_max)[i] |= ~net.mask[i];
  if (!ctx.hook) {
    return ctx.Error(t.loc, "target 'NETMAP' in a user chain is not supported",
                     "rulejit lowers NETMAP per hook: use it in PREROUTING, OUTPUT, "
                     "POSTROUTING or INPUT");
  }
  // The kernel picks by hook (nf_nat_netmap): PREROUTING and OUTPUT
  // rewrite the destination, POSTROUTING and INPUT the source.
  const bool dnat = *ctx.hook == ir::Hook::kPrerouting || *ctx.hook == ir::Hook::kOutput;
  EmitNat(ctx, dnat ? ir::NatKind::kDnat : ir::NatKind::kSnat, r,
          ir::kNatNetmap, t.loc);
  return true;
}

}  // namespace

bool IsNatTarget(std::string_view target) {
  return target == "SNAT" || target == "DNAT" || target == "MASQUERADE" ||
         target == "REDIRECT" || target == "NETMAP";
}

bool LowerNatTarget(LowerCtx& ctx, const TargetUse& t) {
  if (!CheckNatTable(ctx, t)) return false;
  if (t.name == "SNAT" || t.name == "DNAT") return LowerSnatDnat(ctx, t);
  if (t.name == "NETMAP") return LowerNetmap(ctx, t);
  return LowerMasqRedirect(ctx, t);
}

}  // namespace rulejit::frontends::iptables_internal
