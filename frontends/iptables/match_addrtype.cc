// -m addrtype: the route type of the packet's source or destination
// address on this host (xt_addrtype revision 1). iptables' is lowered as
// iptables-translate writes it:
//
//   --src-type LOCAL                  fib saddr type local
//   ! --dst-type ANYCAST,LOCAL        fib daddr type != { local, anycast }
//   --limit-iface-in --dst-type X     fib daddr . iif type X
//
// (xt_addrtype asks inet_dev_addr_type, exactly what nft's fib type does
// for IPv4: ir/fib_eval.cc, on the host model).
//
// ip6tables' means something else than fib (match_type6): every asked
// class among MULTICAST, UNICAST and UNSPEC must hold at once, and of
// LOCAL, ANYCAST and UNREACHABLE (the route's) at least one when any is
// asked. It is lowered as the address's class mask (fib ... addrclass6,
// see ir::FibResult), masked to the asked classes, compared with the
// masks that pass. The kernel refuses BLACKHOLE, BROADCAST and PROHIBIT
// and above for IPv6 (EINVAL), and so does this.
//
// The checks of addrtype_mt_checkentry_v1: a type is needed, the two
// --limit-iface options exclude each other, --limit-iface-in is invalid
// where there is no input device (OUTPUT, POSTROUTING) and
// --limit-iface-out where there is no output device (PREROUTING, INPUT);
// in user chains they are checked at COMMIT (hook_limits.cc).
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

// The RTN_* names xt_addrtype takes (any case), by type number.
constexpr std::string_view kTypeNames[] = {
    "UNSPEC",    "UNICAST",   "LOCAL",       "BROADCAST", "ANYCAST", "MULTICAST",
    "BLACKHOLE", "UNREACHABLE", "PROHIBIT", "THROW",     "NAT",     "XRESOLVE"};

// "LOCAL,ANYCAST": the type numbers, in the order given.
bool ParseTypes(LowerCtx& ctx, const Option& opt, std::vector<uint32_t>* types) {
  for (std::string_view name : Split(opt.args[0].text, ',')) {
    uint32_t type = 0;
    while (type < std::size(kTypeNames) && !EqualsIgnoreCase(kTypeNames[type], name)) ++type;
    if (type == std::size(kTypeNames)) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("unknown address type '", Sv(name), "'"),
                       "UNSPEC, UNICAST, LOCAL, BROADCAST, ANYCAST, MULTICAST, BLACKHOLE, "
                       "UNREACHABLE, PROHIBIT, THROW, NAT or XRESOLVE");
    }
    types->push_back(type);
  }
  return true;
}

// fib ADDR(. DEV) type, then == / != one type, or a lookup in the set of them.
bool LowerTypeOption(LowerCtx& ctx, const Option& opt, uint32_t fib_flags) {
  std::vector<uint32_t> types;
  if (!ParseTypes(ctx, opt, &types)) return false;
  ctx.Add(ir::Fib{fib_flags, ir::FibResult::kAddrType, 1}, opt.loc);
  std::vector<ir::Bytes> keys;
  for (uint32_t type : types) keys.push_back(HostU32(type));
  EmitOneOf(ctx, keys, opt.invert, opt.loc);
  return true;
}

// XT_ADDRTYPE_* bits: 1 << the type's index in kTypeNames (RTN_*).
constexpr uint32_t kUnspec = 1 << 0, kUnicast = 1 << 1, kLocal = 1 << 2, kBroadcast = 1 << 3,
                   kAnycast = 1 << 4, kMulticast = 1 << 5, kBlackhole = 1 << 6,
                   kUnreachable = 1 << 7, kProhibit = 1 << 8;
constexpr uint32_t kAllOf = kUnspec | kUnicast | kMulticast;
constexpr uint32_t kAnyOf = kLocal | kAnycast | kUnreachable;

// match_type6 on the classes `c` of an address, for the asked `mask`.
bool MatchType6(uint32_t mask, uint32_t c) {
  const uint32_t all = mask & kAllOf;
  const uint32_t any = mask & kAnyOf;
  return (c & all) == all && (any == 0 || (c & any) != 0);
}

// fib ADDR(. DEV) addrclass6 & asked, then one of the masks that pass.
bool LowerTypeOption6(LowerCtx& ctx, const Option& opt, uint32_t fib_flags) {
  std::vector<uint32_t> types;
  if (!ParseTypes(ctx, opt, &types)) return false;
  uint32_t mask = 0;
  for (uint32_t type : types) mask |= uint32_t{1} << type;
  // KERNEL: addrtype_mt_checkentry_v1's IPv6 refusals, in its order.
  if (mask & kBlackhole) {
    return ctx.Error(opt.ArgLoc(), "ipv6 BLACKHOLE matching not supported");
  }
  if (mask >= kProhibit) {
    return ctx.Error(opt.ArgLoc(), "ipv6 PROHIBIT (THROW, NAT ..) matching not supported");
  }
  if (mask & kBroadcast) {
    return ctx.Error(opt.ArgLoc(), "ipv6 does not support BROADCAST matching");
  }
  ctx.Add(ir::Fib{fib_flags, ir::FibResult::kXtAddrClass6, 1}, opt.loc);
  ctx.Mask(HostU32(mask), opt.loc);
  // The mask itself always passes, so there is at least one. (UNSPEC with
  // UNICAST passes as 0x3, which no address's classes are.)
  std::vector<ir::Bytes> passing;
  for (uint32_t c = 0; c <= mask; ++c) {
    if ((c & ~mask) == 0 && MatchType6(mask, c)) passing.push_back(HostU32(c));
  }
  EmitOneOf(ctx, passing, opt.invert, opt.loc);
  return true;
}

}  // namespace

bool LowerAddrtype(LowerCtx& ctx, const MatchUse& m) {
  const auto lower_type = ctx.ipv6() ? LowerTypeOption6 : LowerTypeOption;
  const Option* src = nullptr;
  const Option* dst = nullptr;
  uint32_t dev_flag = 0;
  for (const Option& opt : m.options) {
    if (opt.name == "--src-type") src = &opt;
    if (opt.name == "--dst-type") dst = &opt;
    if (opt.name == "--limit-iface-in" || opt.name == "--limit-iface-out") {
      const uint32_t flag = opt.name == "--limit-iface-in" ? ir::kFibIif : ir::kFibOif;
      if (dev_flag != 0 && dev_flag != flag) {
        return ctx.Error(opt.loc, "--limit-iface-in and --limit-iface-out exclude each other");
      }
      dev_flag = flag;
    }
  }
  if (src == nullptr && dst == nullptr) {
    return ctx.Error(m.loc, "addrtype needs --src-type or --dst-type");
  }
  const char* limit = dev_flag == ir::kFibIif   ? "addrtype --limit-iface-in"
                      : dev_flag == ir::kFibOif ? "addrtype --limit-iface-out"
                                                : nullptr;
  if (limit != nullptr && ctx.hook && !RegisteredAt(limit, *ctx.hook)) {
    return ctx.Error(m.loc, absl::StrCat(limit, " is not valid in chain '", ctx.chain_name, "'"),
                     RegisteredHooksHint(limit));
  }
  if (src != nullptr && !lower_type(ctx, *src, ir::kFibSaddr | dev_flag)) return false;
  return dst == nullptr || lower_type(ctx, *dst, ir::kFibDaddr | dev_flag);
}

// The hook-limited name of an addrtype use, for user chains checked at
// COMMIT; empty when the use runs at every hook.
std::string AddrtypeHookLimit(const MatchUse& m) {
  for (const Option& opt : m.options) {
    if (opt.name == "--limit-iface-in") return "addrtype --limit-iface-in";
    if (opt.name == "--limit-iface-out") return "addrtype --limit-iface-out";
  }
  return "";
}

}  // namespace rulejit::frontends::iptables_internal
