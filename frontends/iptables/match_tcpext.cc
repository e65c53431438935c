// -m ecn (xt_ecn) and -m tcpmss (xt_tcpmss): ECN bits of the IP and TCP
// headers, and the TCP MSS option.
//
//   ecn (--ecn-tcp-* need -p tcp, as the kernel's ecn_mt_check)
//     --ecn-ip-ect [!] N   ip:  payload load 1b @ network + 1; & 0x03;
//                               cmp eq|neq N
//                          ip6: payload load 1b @ network + 1; & 0x30;
//                               cmp eq|neq N << 4 (the traffic class's
//                               low bits)
//     --ecn-tcp-ece [!]    payload load 1b @ transport + 13; & 0x40;
//                          cmp neq|eq 0
//     --ecn-tcp-cwr [!]    the same with 0x80
//   tcpmss (-p tcp required)
//     --mss A[:B]          exthdr load tcpopt 2b @ 2 + 2; cmp|range
//                          (a packet without the option does not match)
//
// Refused (located): `! --mss`, which the kernel matches on packets
// without an MSS option too (tcpmss_mt returns info->invert there); no IR
// expression reads "absent or outside the range" in one rule
// (iptables-translate's `tcp option maxseg size != N` misses those
// packets). Not modelled: the kernel's hotdrop of a TCP header shorter
// than 20 bytes or with options cut short, and xt_tcpmss's skipping of
// an MSS option whose length byte is not 4 (nft's option walk, which
// rulejit's exthdr follows, stops at the first option of kind 2).
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

constexpr uint8_t kTcp = 6;
constexpr uint8_t kMssOption = 2;

bool HasTcpOptions(const MatchUse& m) {
  for (const Option& opt : m.options) {
    if (opt.name != "--ecn-ip-ect") return true;
  }
  return false;
}

bool LowerEct(LowerCtx& ctx, const Option& opt) {
  std::optional<uint64_t> ect = ParseNumber(opt.args[0].text, 3);
  if (!ect) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid ECT codepoint '", opt.args[0].text, "'"),
                     "a number from 0 to 3");
  }
  const bool v6 = ctx.ipv6();
  ctx.Payload(ir::PayloadBase::kNetwork, 1, 1, opt.loc);
  ctx.Mask(ir::Bytes{static_cast<uint8_t>(v6 ? 0x30 : 0x03)}, opt.loc);
  ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
          ir::Bytes{static_cast<uint8_t>(v6 ? *ect << 4 : *ect)}, opt.loc);
  return true;
}

void LowerTcpFlag(LowerCtx& ctx, const Option& opt, uint8_t flag) {
  ctx.Payload(ir::PayloadBase::kTransport, 13, 1, opt.loc);
  ctx.Mask(ir::Bytes{flag}, opt.loc);
  ctx.Cmp(opt.invert ? ir::CmpOp::kEq : ir::CmpOp::kNeq, ir::Bytes{0}, opt.loc);
}

}  // namespace

bool LowerEcn(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  if (HasTcpOptions(m) && !RequireProtocol(ctx, m, {kTcp}, "tcp")) return false;
  // ecn_mt4/6 test the IP field before the TCP flags.
  for (const Option& opt : m.options) {
    if (opt.name == "--ecn-ip-ect" && !LowerEct(ctx, opt)) return false;
  }
  for (const Option& opt : m.options) {
    if (opt.name == "--ecn-tcp-ece") LowerTcpFlag(ctx, opt, 0x40);
    if (opt.name == "--ecn-tcp-cwr") LowerTcpFlag(ctx, opt, 0x80);
  }
  return true;
}

bool LowerTcpmssMatch(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  if (!RequireProtocol(ctx, m, {kTcp}, "tcp")) return false;
  const Option& opt = m.options[0];
  uint64_t lo, hi;
  if (!ParseValueRange(opt, 0xffff, "MSS", *ctx.diags, &lo, &hi)) return false;
  if (opt.invert) {
    return ctx.Error(opt.loc, "'! --mss' is not supported",
                     "the kernel also matches packets without an MSS option, which rulejit "
                     "cannot express in one rule");
  }
  ctx.Add(ir::Exthdr{ir::ExthdrOp::kTcpopt, kMssOption, 2, 2, false, 1}, opt.loc);
  EmitValueRange(ctx, lo, hi, 2, false, opt.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
