// -m rt (ip6tables only): the IPv6 routing header (ip6t_rt), read through
// ipv6_find_hdr as nft's `rt` expressions read it (exthdr 43):
//
//   (any option)             the header must be there: a field load fails
//                            (NFT_BREAK) without it, whatever the `!`
//   --rt-type [!] T          exthdr load 1b @ 43 + 2; cmp eq|neq T
//   --rt-segsleft [!] A[:B]  exthdr load 1b @ 43 + 3; range A..B (negated)
//   --rt-len [!] L           exthdr load 1b @ 43 + 1; cmp eq|neq L/8 - 1
//                            (L is the header's length in bytes, as
//                            ipv6_optlen computes it; a length no header
//                            can have never equals)
//   --rt-0-res               exthdr load 4b @ 43 + 4; cmp eq 0
//   neither                  exthdr present check
//
// Refused (located): --rt-0-addrs and --rt-0-not-strict (type 0's address
// list; RFC 5095 deprecated type 0). Not modelled: a header cut short by
// the packet's end, where rt_mt6 fails while the loads read what is there.
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

constexpr uint8_t kRoutingHeader = 43;

void RoutingField(LowerCtx& ctx, uint32_t offset, uint32_t len, ir::SourceLoc loc) {
  Ip6HeaderField(ctx, kRoutingHeader, offset, len, loc);
}

// `exthdr rt exists` (with `present` false, a test no packet passes).
void RoutingHeaderPresent(LowerCtx& ctx, ir::SourceLoc loc, bool present = true) {
  Ip6HeaderPresent(ctx, kRoutingHeader, loc, present);
}

// "A", "A:B", "A:", ":B" of 32-bit segment counts (XTTYPE_UINT32RC).
bool ParseSegments(LowerCtx& ctx, const Option& opt, uint64_t* lo, uint64_t* hi) {
  const std::string& text = opt.args[0].text;
  const size_t colon = text.find(':');
  const std::string_view a = std::string_view(text).substr(0, colon);
  const std::string_view b =
      colon == std::string::npos ? a : std::string_view(text).substr(colon + 1);
  std::optional<uint64_t> x = a.empty() ? std::optional<uint64_t>(0) : ParseNumber(a, 0xffffffff);
  std::optional<uint64_t> y =
      b.empty() ? std::optional<uint64_t>(0xffffffff) : ParseNumber(b, 0xffffffff);
  if (!x || !y) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid segments left '", text, "'"),
                     "N or MIN:MAX, 32-bit numbers");
  }
  *lo = *x;
  *hi = *y;
  return true;
}

bool LowerSegmentsLeft(LowerCtx& ctx, const Option& opt) {
  uint64_t lo, hi;
  if (!ParseSegments(ctx, opt, &lo, &hi)) return false;
  // The field is one byte: the part of the range it can hold.
  if (hi > 255) hi = 255;
  // No value in range: never true (negated: whenever the header is
  // there); every value: the reverse.
  if (lo > hi || (lo == 0 && hi == 255)) {
    RoutingHeaderPresent(ctx, opt.loc, /*present=*/(lo > hi) == opt.invert);
    return true;
  }
  RoutingField(ctx, 3, 1, opt.loc);
  if (lo == hi) {
    ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, ir::Bytes{static_cast<uint8_t>(lo)},
            opt.loc);
  } else {
    ctx.Range(opt.invert, ir::Bytes{static_cast<uint8_t>(lo)}, ir::Bytes{static_cast<uint8_t>(hi)},
              opt.loc);
  }
  return true;
}

bool LowerLength(LowerCtx& ctx, const Option& opt) {
  std::optional<uint64_t> len = ParseNumber(opt.args[0].text, 0xffffffff);
  if (!len) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid length '", opt.args[0].text, "'"),
                     "the header's length in bytes, a 32-bit number");
  }
  // ipv6_optlen = (hdrlen + 1) * 8: 8..2048 in steps of 8.
  if (*len % 8 != 0 || *len < 8 || *len > 2048) {
    RoutingHeaderPresent(ctx, opt.loc, /*present=*/opt.invert);
    return true;
  }
  RoutingField(ctx, 1, 1, opt.loc);
  ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
          ir::Bytes{static_cast<uint8_t>(*len / 8 - 1)}, opt.loc);
  return true;
}

}  // namespace

bool LowerRt(LowerCtx& ctx, const MatchUse& m) {
  if (!ctx.ipv6()) {
    return ctx.Error(m.loc, "match 'rt' is ip6tables only", "use it in an ip6tables-save dump");
  }
  for (const Option& opt : m.options) {
    if (opt.name == "--rt-0-addrs" || opt.name == "--rt-0-not-strict") {
      return ctx.Error(opt.loc, absl::StrCat("unsupported rt option '", opt.name, "'"),
                       "type 0's address list is not modelled (RFC 5095 deprecated it)");
    }
  }
  bool loaded = false;
  bool type0 = false;  // a `--rt-type 0` so far (libip6t_rt's condition for --rt-0-res)
  for (const Option& opt : m.options) {
    if (opt.name == "--rt-type") {
      std::optional<uint64_t> type = ParseNumber(opt.args[0].text, 255);
      if (!type) {
        return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid type '", opt.args[0].text, "'"),
                         "a number 0-255");
      }
      RoutingField(ctx, 2, 1, opt.loc);
      ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
              ir::Bytes{static_cast<uint8_t>(*type)}, opt.loc);
      type0 = *type == 0 && !opt.invert;
    } else if (opt.name == "--rt-segsleft") {
      if (!LowerSegmentsLeft(ctx, opt)) return false;
    } else if (opt.name == "--rt-len") {
      if (!LowerLength(ctx, opt)) return false;
    } else if (opt.name == "--rt-0-res") {
      if (!type0) {
        return ctx.Error(opt.loc, "`--rt-type 0' required before `--rt-0-res'",
                         "ip6tables checks this too");
      }
      RoutingField(ctx, 4, 4, opt.loc);
      ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{0, 0, 0, 0}, opt.loc);
    } else {
      continue;
    }
    loaded = true;
  }
  if (!loaded) RoutingHeaderPresent(ctx, m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
