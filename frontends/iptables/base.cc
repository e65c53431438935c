// Lowering of iptables' base options, as iptables-nft emits them:
//
//   -i eth0      meta load iifname; cmp eq "eth0\0"        (name + NUL)
//   -i eth+      meta load iifname; cmp eq "eth"           (prefix only)
//   -i +         nothing (matches every name)
//   ! -i +       meta load iifname; cmp eq "INVAL/D\0"     (never matches)
//   -p tcp       meta load l4proto; cmp eq 6               (-p all: nothing)
//                (ip6tables, legacy flavour: meta load ip6t_l4proto, and the
//                matches' transport loads read @ ip6t-transport; see
//                LowerCtx::ip6t_legacy)
//   -s A/M       payload load @ network + 12 (ip6: + 8), trimmed to the
//                bytes the mask touches: /8 → 1 byte, no bitwise; a mask that
//                is not whole bytes of ones → bitwise & M; /0 → nothing
//   -f           payload load 2b @ network + 6; bitwise & 0x1fff; cmp neq 0
//   (legacy flavour) before a rule's first tcp/udp/icmp/multiport match:
//                the same test with cmp eq 0 (see IptablesFlavor)
//   (ip6tables, legacy) after a tcp/udp/icmp6/multiport match that read
//                nothing (`--sport :`, `--icmpv6-type any`), if the rule has
//                no ip6t-transport load yet: payload load 1b @ ip6t-transport
//                header + 0; cmp gte 0 (the header is there: not a non-first
//                fragment)
// `!` turns cmp eq into cmp neq.
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

constexpr size_t kMaxIfaceLen = 15;  // IFNAMSIZ - 1

ir::CmpOp EqOp(bool invert) { return invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq; }

bool LowerIface(LowerCtx& ctx, const Option& opt, ir::MetaKey key) {
  const std::string& name = opt.args[0].text;
  if (name.empty()) return ctx.Error(opt.ArgLoc(), "empty interface name");
  if (name.size() > kMaxIfaceLen) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("interface name '", name, "' is longer than ",
                                  kMaxIfaceLen, " characters"));
  }
  ir::Bytes data;
  ir::CmpOp op = EqOp(opt.invert);
  if (name == "+") {
    if (!opt.invert) return true;  // every interface
    // Never matches: '/' cannot occur in an interface name.
    const std::string_view never = "INVAL/D";
    data.assign(never.begin(), never.end());
    data.push_back(0);
    op = ir::CmpOp::kEq;
  } else if (name.back() == '+') {
    data.assign(name.begin(), name.end() - 1);  // prefix match
  } else {
    data.assign(name.begin(), name.end());
    data.push_back(0);
  }
  ctx.Meta(key, opt.loc);
  ctx.Cmp(op, std::move(data), opt.loc);
  return true;
}

bool LowerProtocol(LowerCtx& ctx, const Option& opt) {
  std::optional<uint8_t> proto = ParseProtocol(opt.args[0].text);
  if (!proto) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("unknown protocol '", opt.args[0].text, "'"),
                     "use a name such as tcp, udp, icmp or a number 0..255");
  }
  if (*proto == 0) {
    if (opt.invert) {
      return ctx.Error(opt.loc, "'! -p all' would never match",
                       "rule matching no protocol is rejected by iptables");
    }
    return true;
  }
  ctx.Meta(ctx.ip6t_legacy ? ir::MetaKey::kIp6tL4Proto : ir::MetaKey::kL4Proto, opt.loc);
  ctx.Cmp(EqOp(opt.invert), ir::Bytes{*proto}, opt.loc);
  return true;
}

bool LowerAddress(LowerCtx& ctx, const Option& opt, uint32_t offset) {
  AddrMask am;
  if (!ParseAddrMask(opt.args[0].text, ctx.ipv6(), opt.ArgLoc(), *ctx.diags,
                     &am)) {
    return false;
  }
  const size_t len = am.mask.size();
  // The first byte that is not all ones; a bitwise is needed only when the
  // mask has bits set from there on (partial byte or non-contiguous mask).
  size_t first = 0;
  while (first < len && am.mask[first] == 0xff) ++first;
  bool bitwise = false;
  for (size_t i = first; i < len; ++i) bitwise |= am.mask[i] != 0;
  const size_t cmp_len = bitwise ? len : first;
  if (cmp_len == 0) {
    if (!opt.invert) return true;  // /0 matches every address
    // `! -s 0/0` never matches: load, mask to zero, compare unequal to zero.
    ctx.Payload(ir::PayloadBase::kNetwork, offset, static_cast<uint32_t>(len),
                opt.loc);
    ctx.Mask(ir::Bytes(len, 0), opt.loc);
    ctx.Cmp(ir::CmpOp::kNeq, ir::Bytes(len, 0), opt.loc);
    return true;
  }
  ctx.Payload(ir::PayloadBase::kNetwork, offset,
              static_cast<uint32_t>(cmp_len), opt.loc);
  if (bitwise) ctx.Mask(am.mask, opt.loc);
  ctx.Cmp(EqOp(opt.invert),
          ir::Bytes(am.addr.begin(), am.addr.begin() + cmp_len), opt.loc);
  return true;
}

// Fragment offset (13 bits) != 0 (a non-first fragment), or == 0 when
// `first` (a first fragment or no fragment).
void EmitFragmentOffsetTest(LowerCtx& ctx, bool first, ir::SourceLoc loc) {
  ctx.Payload(ir::PayloadBase::kNetwork, 6, 2, loc);
  ctx.Mask(ir::Bytes{0x1f, 0xff}, loc);
  ctx.Cmp(first ? ir::CmpOp::kEq : ir::CmpOp::kNeq, ir::Bytes{0, 0}, loc);
}

bool LowerFragment(LowerCtx& ctx, const Option& opt) {
  if (ctx.ipv6()) {
    return ctx.Error(opt.loc, "'-f' is not available in ip6tables",
                     "use '-m frag' for IPv6 fragments");
  }
  EmitFragmentOffsetTest(ctx, opt.invert, opt.loc);
  return true;
}

}  // namespace

bool RefusesFragments(std::string_view module, bool ipv6) {
  // esp_mt, ah_mt (IPv4's ah only: ip6t_ah finds its header itself) and
  // mh_mt6 check par->fragoff too.
  return module == "tcp" || module == "udp" || module == "icmp" ||
         module == "icmp6" || module == "multiport" || module == "esp" ||
         (module == "ah" && !ipv6) || module == "mh";
}

void LowerNotFragment(LowerCtx& ctx, ir::SourceLoc loc) {
  EmitFragmentOffsetTest(ctx, /*first=*/true, loc);
}

void LowerIp6tHeaderPresent(LowerCtx& ctx, ir::SourceLoc loc) {
  for (const ir::Node& n : ctx.rule->exprs) {
    const auto* load = std::get_if<ir::PayloadLoad>(&n.expr);
    if (load != nullptr && load->base == ir::PayloadBase::kIp6tTransport) return;
  }
  ctx.Payload(ir::PayloadBase::kIp6tTransport, 0, 1, loc);
  ctx.Cmp(ir::CmpOp::kGte, ir::Bytes{0}, loc);
}

bool LowerBase(LowerCtx& ctx) {
  const RuleSpec& s = *ctx.spec;
  bool ok = true;
  if (s.in_iface) ok &= LowerIface(ctx, *s.in_iface, ir::MetaKey::kIifName);
  if (s.out_iface) ok &= LowerIface(ctx, *s.out_iface, ir::MetaKey::kOifName);
  if (s.protocol) ok &= LowerProtocol(ctx, *s.protocol);
  if (s.source) ok &= LowerAddress(ctx, *s.source, ctx.ipv6() ? 8 : 12);
  if (s.destination) {
    ok &= LowerAddress(ctx, *s.destination, ctx.ipv6() ? 24 : 16);
  }
  if (s.fragment) ok &= LowerFragment(ctx, *s.fragment);
  return ok;
}

}  // namespace rulejit::frontends::iptables_internal
