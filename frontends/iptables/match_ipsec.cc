// -m esp and -m ah: the SPI (and, for ip6tables' ah, the header's length
// and reserved field) of IPsec headers, as the kernel's xt_esp, ipt_ah and
// ip6t_ah read them:
//
//   esp (both families, -p esp required: the kernel registers it for
//   protocol 50), the header at the transport offset; non-first
//   fragments never match (par->fragoff; see RefusesFragments):
//     --espspi [!] A[:B]   payload load 4b @ transport + 0; cmp|range
//   ah, iptables (-p ah required), likewise:
//     --ahspi [!] A[:B]    payload load 4b @ transport + 4; cmp|range
//   ah, ip6tables (any -p: ip6t_ah finds the header with ipv6_find_hdr,
//   as nft's `ah` exthdr expressions do):
//     --ahspi [!] A[:B]    exthdr load 4b @ 51 + 4; cmp|range
//     --ahlen [!] L        exthdr load 1b @ 51 + 1; cmp eq|neq L/4 - 2
//                          (L is the header's length in bytes, as
//                          ipv6_authlen computes it; 0 checks nothing;
//                          a length no header has never equals)
//     --ahres              exthdr load 2b @ 51 + 2; cmp eq 0 (the kernel
//                          matches a zero reserved field: iptables-
//                          translate's `ah reserved 1` is the opposite)
//     (nothing loaded)     exthdr ah exists
//
// The whole range 0:4294967295 checks nothing; inverted, no packet
// matches (a load and `range neq 0 0xffffffff`, as iptables-translate
// writes it). Not modelled: the kernel's hotdrop of a packet whose
// header is cut short (rulejit's load fails: no match).
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

constexpr uint8_t kAhHeader = 51;
constexpr uint64_t kAllSpis = 0xffffffff;

bool ParseSpis(LowerCtx& ctx, const Option& opt, uint64_t* lo, uint64_t* hi) {
  return ParseValueRange(opt, kAllSpis, "SPI", *ctx.diags, lo, hi);
}

// An SPI test on the 4 bytes `load` puts in register 1. Returns whether
// it loaded anything (a whole, non-inverted range loads nothing).
template <typename LoadFn>
bool EmitSpiTest(LowerCtx& ctx, const Option& opt, uint64_t lo, uint64_t hi, LoadFn load) {
  if (lo == 0 && hi == kAllSpis && !opt.invert) return false;
  load();
  EmitValueRange(ctx, lo, hi, 4, opt.invert, opt.loc);
  return true;
}

void AhField(LowerCtx& ctx, uint32_t offset, uint32_t len, ir::SourceLoc loc) {
  Ip6HeaderField(ctx, kAhHeader, offset, len, loc);
}

// ip6t_ah: --ahlen compares the header's length in bytes,
// (hdrlen + 2) * 4, with L.
bool LowerAhLength(LowerCtx& ctx, const Option& opt, bool* loaded) {
  std::optional<uint64_t> len = ParseNumber(opt.args[0].text, 0xffffffff);
  if (!len) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid length '", opt.args[0].text, "'"),
                     "the header's length in bytes, a 32-bit number");
  }
  if (*len == 0) return true;  // `!ahinfo->hdrlen`: no test, even with '!'
  *loaded = true;
  if (*len % 4 != 0 || *len < 8 || *len > 1028) {
    // No header has it: never equal (inverted: whenever the header is there).
    Ip6HeaderPresent(ctx, kAhHeader, opt.loc, /*present=*/opt.invert);
    return true;
  }
  AhField(ctx, 1, 1, opt.loc);
  ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
          ir::Bytes{static_cast<uint8_t>(*len / 4 - 2)}, opt.loc);
  return true;
}

bool LowerAh6(LowerCtx& ctx, const MatchUse& m) {
  bool loaded = false;
  for (const Option& opt : m.options) {
    if (opt.name == "--ahspi") {
      uint64_t lo, hi;
      if (!ParseSpis(ctx, opt, &lo, &hi)) return false;
      loaded |= EmitSpiTest(ctx, opt, lo, hi, [&] { AhField(ctx, 4, 4, opt.loc); });
    } else if (opt.name == "--ahlen") {
      if (!LowerAhLength(ctx, opt, &loaded)) return false;
    } else if (opt.name == "--ahres") {
      AhField(ctx, 2, 2, opt.loc);
      ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{0, 0}, opt.loc);
      loaded = true;
    }
  }
  if (!loaded) Ip6HeaderPresent(ctx, kAhHeader, m.loc);
  return true;
}

}  // namespace

bool LowerEsp(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireProtocol(ctx, m, {50}, "esp")) return false;
  for (const Option& opt : m.options) {
    uint64_t lo, hi;
    if (!ParseSpis(ctx, opt, &lo, &hi)) return false;
    EmitSpiTest(ctx, opt, lo, hi,
                [&] { ctx.Payload(ir::PayloadBase::kTransport, 0, 4, opt.loc); });
  }
  return true;
}

bool LowerAh(LowerCtx& ctx, const MatchUse& m) {
  if (ctx.ipv6()) return LowerAh6(ctx, m);
  if (!RequireProtocol(ctx, m, {51}, "ah")) return false;
  for (const Option& opt : m.options) {
    if (opt.name != "--ahspi") {
      return ctx.Error(opt.loc, absl::StrCat("option '", opt.name, "' is ip6tables only"),
                       "iptables' ah match takes --ahspi only");
    }
    uint64_t lo, hi;
    if (!ParseSpis(ctx, opt, &lo, &hi)) return false;
    EmitSpiTest(ctx, opt, lo, hi,
                [&] { ctx.Payload(ir::PayloadBase::kTransport, 4, 4, opt.loc); });
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
