// ip6tables' extension header matches frag, hbh, dst (ip6t_frag,
// ip6t_hbh) and mh (ip6t_mh), read as nft's exthdr expressions read
// them (the header found by ipv6_find_hdr, as the kernel's matches find
// it; follows match_rt.cc):
//
//   frag (header 44; with no option: exthdr frag exists)
//     --fragid [!] A[:B]   exthdr load 4b @ 44 + 4; cmp|range
//     --fraglen N          nothing: the kernel ignores it (frag_mt6 has
//                          not compared it since 2.6.25); the header
//                          must be there
//     --fragres            exthdr load 1b @ 44 + 1; cmp eq 0 and
//                          exthdr load 2b @ 44 + 2; & 0x0006; cmp eq 0
//                          (reserved bits zero: iptables-translate's
//                          `frag reserved 1` is the opposite)
//     --fragfirst          exthdr load 2b @ 44 + 2; & 0xfff8; cmp eq 0
//     --fragmore           exthdr load 2b @ 44 + 2; & 0x0001; cmp neq 0
//     --fraglast           the same; cmp eq 0
//   hbh (header 0), dst (header 60)
//     --hbh-len [!] L      exthdr load 1b @ 0|60 + 1; cmp eq|neq L/8 - 1
//                          (the length in bytes, ipv6_optlen; a length no
//                          header has never equals; iptables-translate's
//                          `hbh hdrlength L` compares the raw field)
//     (no --hbh-len)       exthdr hbh|dst exists
//   mh (-p mh required: the kernel registers it for protocol 135), the
//   header at the transport offset, non-first fragments never match:
//     payload load 1b @ transport + 0; cmp eq 59 (the header's payload
//     protocol must be "none"; the kernel drops other packets: hotdrop)
//     --mh-type [!] A[:B]  payload load 1b @ transport + 2; cmp|range
//
// Refused (located): --hbh-opts / --dst-opts, the option list the kernel
// walks option by option (no IR expression walks it). Not modelled: a
// header cut short by the packet's end (the kernel's hotdrop, or its
// `skb->len - ptr < hdrlen` test for hbh/dst); mh's hotdrop of a packet
// whose payload protocol is not 59 (rulejit: no match).
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

constexpr uint8_t kHopByHop = 0;
constexpr uint8_t kFragmentHeader = 44;
constexpr uint8_t kDestOptions = 60;

bool RequireIp6tables(LowerCtx& ctx, const MatchUse& m) {
  if (ctx.ipv6()) return true;
  return ctx.Error(m.loc, absl::StrCat("match '", m.name, "' is ip6tables only"),
                   "use it in an ip6tables-save dump");
}

// The fragment header's offset/flags word under `mask`, compared with 0.
void FragOffsetBits(LowerCtx& ctx, uint16_t mask, ir::CmpOp op, ir::SourceLoc loc) {
  Ip6HeaderField(ctx, kFragmentHeader, 2, 2, loc);
  ctx.Mask(BigEndian(mask, 2), loc);
  ctx.Cmp(op, ir::Bytes{0, 0}, loc);
}

bool LowerFragOption(LowerCtx& ctx, const Option& opt, bool* loaded) {
  if (opt.name == "--fragid") {
    uint64_t lo, hi;
    if (!ParseValueRange(opt, 0xffffffff, "fragment id", *ctx.diags, &lo, &hi)) return false;
    if (lo == 0 && hi == 0xffffffff && !opt.invert) return true;
    Ip6HeaderField(ctx, kFragmentHeader, 4, 4, opt.loc);
    EmitValueRange(ctx, lo, hi, 4, opt.invert, opt.loc);
  } else if (opt.name == "--fraglen") {
    if (!ParseNumber(opt.args[0].text, 0xffffffff)) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid length '", opt.args[0].text, "'"),
                       "a 32-bit number (the kernel does not compare it)");
    }
    return true;
  } else if (opt.name == "--fragres") {
    Ip6HeaderField(ctx, kFragmentHeader, 1, 1, opt.loc);
    ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{0}, opt.loc);
    FragOffsetBits(ctx, 0x0006, ir::CmpOp::kEq, opt.loc);
  } else if (opt.name == "--fragfirst") {
    FragOffsetBits(ctx, 0xfff8, ir::CmpOp::kEq, opt.loc);
  } else if (opt.name == "--fragmore") {
    FragOffsetBits(ctx, 0x0001, ir::CmpOp::kNeq, opt.loc);
  } else if (opt.name == "--fraglast") {
    FragOffsetBits(ctx, 0x0001, ir::CmpOp::kEq, opt.loc);
  }
  *loaded = true;
  return true;
}

// hbh and dst: one length option, and the refused option list.
bool LowerOptionsHeader(LowerCtx& ctx, const MatchUse& m, uint8_t type) {
  if (!RequireIp6tables(ctx, m)) return false;
  bool loaded = false;
  for (const Option& opt : m.options) {
    if (opt.name.ends_with("-opts")) {
      return ctx.Error(opt.loc, absl::StrCat("unsupported ", m.name, " option '", opt.name, "'"),
                       "the kernel's walk over the header's options is not modelled");
    }
    std::optional<uint64_t> len = ParseNumber(opt.args[0].text, 0xffffffff);
    if (!len) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid length '", opt.args[0].text, "'"),
                       "the header's length in bytes, a 32-bit number");
    }
    loaded = true;
    // ipv6_optlen = (hdrlen + 1) * 8: 8..2048 in steps of 8.
    if (*len % 8 != 0 || *len < 8 || *len > 2048) {
      Ip6HeaderPresent(ctx, type, opt.loc, /*present=*/opt.invert);
      continue;
    }
    Ip6HeaderField(ctx, type, 1, 1, opt.loc);
    ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
            ir::Bytes{static_cast<uint8_t>(*len / 8 - 1)}, opt.loc);
  }
  if (!loaded) Ip6HeaderPresent(ctx, type, m.loc);
  return true;
}

// libip6t_mh's type names.
std::optional<uint64_t> MhTypeName(std::string_view name) {
  struct Named { std::string_view name; uint8_t type; };
  static constexpr std::array<Named, 16> kNames = {{
      {"binding-refresh-request", 0}, {"brr", 0}, {"home-test-init", 1}, {"hoti", 1},
      {"careof-test-init", 2}, {"coti", 2}, {"home-test", 3}, {"hot", 3},
      {"careof-test", 4}, {"cot", 4}, {"binding-update", 5}, {"bu", 5},
      {"binding-acknowledgement", 6}, {"ba", 6}, {"binding-error", 7}, {"be", 7},
  }};
  for (const Named& n : kNames) {
    if (n.name == name) return n.type;
  }
  return std::nullopt;
}

// "TYPE[:TYPE]" of numbers 0-255 or names.
bool ParseMhTypes(LowerCtx& ctx, const Option& opt, uint64_t* lo, uint64_t* hi) {
  const std::string& text = opt.args[0].text;
  const size_t colon = text.find(':');
  const std::string_view a = std::string_view(text).substr(0, colon);
  const std::string_view b =
      colon == std::string::npos ? a : std::string_view(text).substr(colon + 1);
  auto one = [](std::string_view t, uint64_t empty) -> std::optional<uint64_t> {
    if (t.empty()) return empty;
    if (std::optional<uint64_t> n = ParseNumber(t, 255)) return n;
    return MhTypeName(Lower(t));
  };
  std::optional<uint64_t> x = one(a, 0), y = one(b, 255);
  if (!x || !y || (colon == std::string::npos && a.empty())) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid mh type '", text, "'"),
                     "a number 0-255 or a name such as binding-update, or MIN:MAX");
  }
  if (*x > *y) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid mh type range '", text,
                                                "': start is greater than end"));
  }
  *lo = *x;
  *hi = *y;
  return true;
}

}  // namespace

void Ip6HeaderField(LowerCtx& ctx, uint8_t type, uint32_t offset, uint32_t len,
                    ir::SourceLoc loc) {
  ctx.Add(ir::Exthdr{ir::ExthdrOp::kIpv6, type, offset, len, false, 1}, loc);
}

void Ip6HeaderPresent(LowerCtx& ctx, uint8_t type, ir::SourceLoc loc, bool present) {
  ctx.Add(ir::Exthdr{ir::ExthdrOp::kIpv6, type, 0, 1, true, 1}, loc);
  ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{static_cast<uint8_t>(present ? 1 : 2)}, loc);
}

bool LowerFrag(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireIp6tables(ctx, m)) return false;
  bool loaded = false, more = false, last = false;
  for (const Option& opt : m.options) {
    more |= opt.name == "--fragmore";
    last |= opt.name == "--fraglast";
    if (more && last) {
      return ctx.Error(opt.loc, "'--fragmore' and '--fraglast' cannot be combined");
    }
    if (!LowerFragOption(ctx, opt, &loaded)) return false;
  }
  if (!loaded) Ip6HeaderPresent(ctx, kFragmentHeader, m.loc);
  return true;
}

bool LowerHbh(LowerCtx& ctx, const MatchUse& m) { return LowerOptionsHeader(ctx, m, kHopByHop); }
bool LowerDst(LowerCtx& ctx, const MatchUse& m) {
  return LowerOptionsHeader(ctx, m, kDestOptions);
}

bool LowerMh(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireIp6tables(ctx, m)) return false;
  if (!RequireProtocol(ctx, m, {135}, "mh")) return false;
  // ip6mh_proto must be IPPROTO_NONE (the kernel drops the packet otherwise).
  ctx.Payload(ir::PayloadBase::kTransport, 0, 1, m.loc);
  ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{59}, m.loc);
  for (const Option& opt : m.options) {
    uint64_t lo, hi;
    if (!ParseMhTypes(ctx, opt, &lo, &hi)) return false;
    if (lo == 0 && hi == 255 && !opt.invert) continue;
    ctx.Payload(ir::PayloadBase::kTransport, 2, 1, opt.loc);
    EmitValueRange(ctx, lo, hi, 1, opt.invert, opt.loc);
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
