// -m socket (xt_socket revisions 0..3) as socket loads (ir::Socket, the
// nft socket expression), and -j TPROXY (xt_TPROXY revision 1) as
// tproxy `else drop`:
//
//   -m socket                    → [ socket load wildcard => reg 1 ] [ cmp eq reg 1 0x00 ]
//   --transparent                  + [ socket load transparent => reg 1 ] [ cmp eq reg 1 0x01 ]
//   --nowildcard                   (no wildcard test: sockets bound to the any address count)
//   --restore-skmark               + [ socket load mark => reg 1 ] [ meta set mark with reg 1 ]
//   -j TPROXY --on-port P [--on-ip A] [--tproxy-mark V[/M]]
//                                → [ immediate reg 1 A ] [ immediate reg 2 P ]
//                                  [ tproxy ip addr reg 1 port reg 2 else drop ]
//                                  (mark = (mark & ~M) ^ V) [ immediate reg 0 accept ]
//
// socket_match finds the packet's socket, ignores it when it is bound to
// the any address (unless --nowildcard) or, with --transparent, when it is
// not transparent, and restores the mark exactly when it then matches;
// the loads above break the rule on the same conditions. Without
// --nowildcard and --transparent the wildcard test alone asks that a
// socket exists. xt_socket registers at PREROUTING and INPUT; xt_TPROXY in
// the mangle table's PREROUTING only, for -p tcp or -p udp.
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

bool LowerSocket(LowerCtx& ctx, const MatchUse& m) {
  bool transparent = false, nowildcard = false, restore = false;
  for (const Option& o : m.options) {
    transparent |= o.name == "--transparent";
    nowildcard |= o.name == "--nowildcard";
    restore |= o.name == "--restore-skmark";
  }
  if (ctx.hook && *ctx.hook != ir::Hook::kPrerouting && *ctx.hook != ir::Hook::kInput) {
    return ctx.Error(m.loc, absl::StrCat("socket is not valid in chain '", ctx.chain_name, "'"),
                     RegisteredHooksHint("socket"));
  }
  const ir::SourceLoc loc = m.loc;
  if (!nowildcard || !transparent) {
    ctx.Add(ir::Socket{ir::SocketKey::kWildcard, 0, 1}, loc);
    if (!nowildcard) ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{0}, loc);
  }
  if (transparent) {
    ctx.Add(ir::Socket{ir::SocketKey::kTransparent, 0, 1}, loc);
    ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{1}, loc);
  }
  if (restore) {
    ctx.Add(ir::Socket{ir::SocketKey::kMark, 0, 1}, loc);
    ctx.Add(ir::MetaSet{ir::MetaKey::kMark, 1}, loc);
  }
  return true;
}

namespace {

const Option* Find(const TargetUse& t, std::string_view name) {
  for (const Option& o : t.options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

// The (value, mask) of --tproxy-mark; mask 0 (no change) without it.
bool TproxyMark(LowerCtx& ctx, const TargetUse& t, uint32_t* value, uint32_t* mask) {
  *value = *mask = 0;
  const Option* o = Find(t, "--tproxy-mark");
  return o == nullptr || ParseMarkMask(ctx, *o, value, mask);
}

bool TproxyChecks(LowerCtx& ctx, const TargetUse& t) {
  if (ctx.table_name != "mangle") {
    return ctx.Error(t.loc, "the TPROXY target is only valid in the mangle table");
  }
  if (ctx.hook && *ctx.hook != ir::Hook::kPrerouting) {
    return ctx.Error(t.loc, absl::StrCat("TPROXY is not valid in chain '", ctx.chain_name, "'"),
                     RegisteredHooksHint("TPROXY"));
  }
  const std::optional<uint8_t> proto = ctx.l4proto();
  if (!proto || (*proto != 6 && *proto != 17)) {
    return ctx.Error(t.loc, "TPROXY can be used only with -p tcp or -p udp (the kernel's "
                            "tproxy_tg_check)");
  }
  return true;
}

}  // namespace

bool LowerTproxyTarget(LowerCtx& ctx, const TargetUse& t) {
  if (!TproxyChecks(ctx, t)) return false;
  const Option* port = Find(t, "--on-port");
  if (port == nullptr) return ctx.Error(t.loc, "TPROXY needs --on-port");
  const std::optional<uint16_t> p = ParsePort(port->args[0].text);
  if (!p) return ctx.Error(port->ArgLoc(), absl::StrCat("invalid port '", port->args[0].text, "'"));
  ir::Tproxy e;
  e.family = ctx.ipv6() ? ir::Family::kIp6 : ir::Family::kIp;
  e.else_drop = true;
  if (const Option* ip = Find(t, "--on-ip")) {
    std::optional<ir::Bytes> a = ParseAddr(ip->args[0].text, ctx.ipv6());
    if (!a) return ctx.Error(ip->ArgLoc(), absl::StrCat("invalid address '", ip->args[0].text, "'"));
    ctx.Add(ir::Immediate{1, *a, {}}, t.loc);
    e.addr = 1;
  }
  uint32_t value = 0, mask = 0;
  if (!TproxyMark(ctx, t, &value, &mask)) return false;
  ctx.Add(ir::Immediate{2, BigEndian(*p, 2), {}}, t.loc);
  e.port = 2;
  ctx.Add(e, t.loc);
  if (mask != 0 || value != 0) {
    EmitMarkUpdate(ctx, ir::MetaLoad{ir::MetaKey::kMark, 1}, ir::MetaSet{ir::MetaKey::kMark, 1},
                   value, mask, t.loc);
  }
  ir::Immediate accept;
  accept.verdict.code = ir::VerdictCode::kAccept;
  ctx.Add(accept, t.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
