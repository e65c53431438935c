// Conntrack matches: conntrack, state, connmark, lowered as nft's `ct`
// expressions (see corpus/iptables-ext/libxt_conntrack.txlate):
//
//   --ctstate NEW,ESTABLISHED  ct load state; bitwise & 0xa; cmp neq 0
//                              (`!`: cmp eq 0, i.e. none of the bits)
//   --ctstate SNAT,DNAT        ct load status; bitwise & 0x30; cmp neq 0
//   --ctstatus ASSURED         ct load status; bitwise & 0x4; cmp neq 0
//   --ctdir REPLY              ct load direction; cmp eq 1
//   --ctproto tcp              ct load protocol, original; cmp eq 6
//   --ctorigsrc A/M            ct load src_ip (ip6: src_ip6), original;
//                              [bitwise & M]; cmp eq A
//   --ctorigsrcport A:B        ct load proto_src, original; cmp / range
//   --ctexpire A:B (seconds)   ct load expiration (milliseconds, host order);
//                              byteorder hton; range eq A*1000 B*1000+999
//   -m connmark --mark V/M     ct load mark; [bitwise & M]; cmp eq V
#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

constexpr uint32_t kStatusSrcNat = 0x10;  // IPS_SRC_NAT
constexpr uint32_t kStatusDstNat = 0x20;  // IPS_DST_NAT

// Bits of `key` named in a comma list; false on an unknown name.
struct StateBits {
  uint32_t state = 0;   // ct state bits
  uint32_t status = 0;  // ct status bits (SNAT/DNAT pseudo-states)
};

bool ParseStates(std::string_view text, bool allow_nat, StateBits* out) {
  for (std::string_view word : Split(text, ',')) {
    std::string w = Upper(word);
    if (w == "INVALID") out->state |= ir::kCtStateInvalid;
    else if (w == "ESTABLISHED") out->state |= ir::kCtStateEstablished;
    else if (w == "RELATED") out->state |= ir::kCtStateRelated;
    else if (w == "NEW") out->state |= ir::kCtStateNew;
    else if (w == "UNTRACKED") out->state |= ir::kCtStateUntracked;
    else if (allow_nat && w == "SNAT") out->status |= kStatusSrcNat;
    else if (allow_nat && w == "DNAT") out->status |= kStatusDstNat;
    else return false;
  }
  return true;
}

// ct load KEY; bitwise & bits; cmp neq 0 (any bit set) or eq 0 (`!`).
void EmitAnyBit(LowerCtx& ctx, ir::CtKey key, uint32_t bits, bool invert,
                ir::SourceLoc loc) {
  ctx.Ct(key, loc);
  ctx.Mask(HostU32(bits), loc);
  ctx.Cmp(invert ? ir::CmpOp::kEq : ir::CmpOp::kNeq, HostU32(0), loc);
}

bool LowerStateOption(LowerCtx& ctx, const Option& opt, bool allow_nat) {
  StateBits bits;
  if (!ParseStates(opt.args[0].text, allow_nat, &bits)) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid state '", opt.args[0].text, "'"),
                     allow_nat ? "a comma list of INVALID ESTABLISHED RELATED "
                                 "NEW UNTRACKED SNAT DNAT"
                               : "a comma list of INVALID ESTABLISHED RELATED "
                                 "NEW UNTRACKED");
  }
  if (bits.state != 0 && bits.status != 0) {
    // "state has one of A or status has one of B" is a disjunction of two
    // loads, which one nf_tables rule cannot express.
    return ctx.Error(opt.ArgLoc(),
                     "mixing SNAT/DNAT with connection states is not supported",
                     "split the rule into one for the states and one for "
                     "SNAT/DNAT");
  }
  if (bits.status != 0) {
    EmitAnyBit(ctx, ir::CtKey::kStatus, bits.status, opt.invert, opt.loc);
  } else {
    EmitAnyBit(ctx, ir::CtKey::kState, bits.state, opt.invert, opt.loc);
  }
  return true;
}

bool LowerStatusOption(LowerCtx& ctx, const Option& opt) {
  uint32_t bits = 0;
  for (std::string_view word : Split(opt.args[0].text, ',')) {
    std::string w = Upper(word);
    if (w == "NONE") continue;
    else if (w == "EXPECTED") bits |= 0x1;
    else if (w == "SEEN_REPLY") bits |= 0x2;
    else if (w == "ASSURED") bits |= 0x4;
    else if (w == "CONFIRMED") bits |= 0x8;
    else {
      return ctx.Error(opt.ArgLoc(),
                       absl::StrCat("invalid status '", opt.args[0].text, "'"),
                       "a comma list of NONE EXPECTED SEEN_REPLY ASSURED "
                       "CONFIRMED");
    }
  }
  EmitAnyBit(ctx, ir::CtKey::kStatus, bits, opt.invert, opt.loc);
  return true;
}

bool LowerDirOption(LowerCtx& ctx, const Option& opt) {
  std::string w = Upper(opt.args[0].text);
  if (w != "ORIGINAL" && w != "REPLY") {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid direction '", opt.args[0].text, "'"),
                     "ORIGINAL or REPLY");
  }
  ctx.Ct(ir::CtKey::kDirection, opt.loc);
  ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{static_cast<uint8_t>(w == "REPLY")},
          opt.loc);
  return true;
}

bool LowerProtoOption(LowerCtx& ctx, const Option& opt) {
  std::optional<uint8_t> p = ParseProtocol(opt.args[0].text);
  if (!p || *p == 0) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid protocol '", opt.args[0].text, "'"),
                     "a protocol name or number 1..255");
  }
  ctx.Ct(ir::CtKey::kProtocol, opt.loc, ir::CtDir::kOriginal);
  ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, ir::Bytes{*p},
          opt.loc);
  return true;
}

bool LowerAddrOption(LowerCtx& ctx, const Option& opt) {
  AddrMask am;
  if (!ParseAddrMask(opt.args[0].text, ctx.ipv6(), opt.ArgLoc(), *ctx.diags,
                     &am)) {
    return false;
  }
  const bool src = std::string_view(opt.name).ends_with("src");
  const ir::CtDir dir = std::string_view(opt.name).starts_with("--ctorig")
                            ? ir::CtDir::kOriginal
                            : ir::CtDir::kReply;
  const ir::CtKey key = ctx.ipv6() ? (src ? ir::CtKey::kSrcIp6 : ir::CtKey::kDstIp6)
                                   : (src ? ir::CtKey::kSrcIp : ir::CtKey::kDstIp);
  ctx.Ct(key, opt.loc, dir);
  const bool full = std::all_of(am.mask.begin(), am.mask.end(),
                                [](uint8_t b) { return b == 0xff; });
  if (!full) ctx.Mask(am.mask, opt.loc);
  ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, am.addr, opt.loc);
  return true;
}

bool LowerPortOption(LowerCtx& ctx, const Option& opt) {
  PortRange r;
  if (!ParsePortRange(opt.args[0].text, opt.ArgLoc(), *ctx.diags, &r)) {
    return false;
  }
  const bool src = std::string_view(opt.name).ends_with("srcport");
  const ir::CtDir dir = std::string_view(opt.name).starts_with("--ctorig")
                            ? ir::CtDir::kOriginal
                            : ir::CtDir::kReply;
  // Unlike -p tcp --sport, 0:65535 is still emitted: xt_conntrack requires
  // the connection to have ports at all.
  ctx.Ct(src ? ir::CtKey::kProtoSrc : ir::CtKey::kProtoDst, opt.loc, dir);
  if (r.from == r.to) {
    ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
            BigEndian(r.from, 2), opt.loc);
  } else {
    ctx.Range(opt.invert, BigEndian(r.from, 2), BigEndian(r.to, 2), opt.loc);
  }
  return true;
}

bool LowerExpireOption(LowerCtx& ctx, const Option& opt) {
  const std::string& text = opt.args[0].text;
  const size_t colon = text.find(':');
  std::optional<uint64_t> lo =
      ParseNumber(std::string_view(text).substr(0, colon), 0xffffffff);
  std::optional<uint64_t> hi =
      colon == std::string::npos
          ? lo
          : ParseNumber(std::string_view(text).substr(colon + 1), 0xffffffff);
  if (!lo || !hi || *lo > *hi) {
    return ctx.Error(opt.ArgLoc(),
                     absl::StrCat("invalid expiry range '", text, "'"),
                     "SECONDS or MIN:MAX, 32-bit numbers, MIN <= MAX");
  }
  // xt_conntrack compares whole seconds left; nft's expiration is in ms.
  const uint64_t lo_ms = std::min<uint64_t>(*lo * 1000, 0xffffffff);
  const uint64_t hi_ms = std::min<uint64_t>(*hi * 1000 + 999, 0xffffffff);
  ctx.Ct(ir::CtKey::kExpiration, opt.loc);
  ctx.Hton(4, 4, opt.loc);
  ctx.Range(opt.invert, BigEndian(lo_ms, 4), BigEndian(hi_ms, 4), opt.loc);
  return true;
}

bool LowerMarkLike(LowerCtx& ctx, const MatchUse& m, ir::CtKey key) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  uint32_t value, mask;
  if (!ParseMarkMask(ctx, opt, &value, &mask)) return false;
  ctx.Ct(key, opt.loc);
  if (mask != 0xffffffff) ctx.Mask(HostU32(mask), opt.loc);
  ctx.Cmp(opt.invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq, HostU32(value),
          opt.loc);
  return true;
}

}  // namespace

bool LowerConntrack(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  for (const Option& opt : m.options) {
    bool ok;
    const std::string& n = opt.name;
    if (n == "--ctstate") ok = LowerStateOption(ctx, opt, true);
    else if (n == "--ctstatus") ok = LowerStatusOption(ctx, opt);
    else if (n == "--ctdir") ok = LowerDirOption(ctx, opt);
    else if (n == "--ctproto") ok = LowerProtoOption(ctx, opt);
    else if (n == "--ctexpire") ok = LowerExpireOption(ctx, opt);
    else if (std::string_view(n).ends_with("port")) ok = LowerPortOption(ctx, opt);
    else ok = LowerAddrOption(ctx, opt);
    if (!ok) return false;
  }
  return true;
}

bool LowerState(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  return LowerStateOption(ctx, m.options[0], false);
}

bool LowerConnmark(LowerCtx& ctx, const MatchUse& m) {
  return LowerMarkLike(ctx, m, ir::CtKey::kMark);
}

}  // namespace rulejit::frontends::iptables_internal
