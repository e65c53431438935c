// -m addrtype: the route type of the packet's source or destination
// address on this host (xt_addrtype revision 1), lowered as iptables-
// translate writes it:
//
//   --src-type LOCAL                  fib saddr type local
//   ! --dst-type ANYCAST,LOCAL        fib daddr type != { local, anycast }
//   --limit-iface-in --dst-type X     fib daddr . iif type X
//
// IPv4 only: xt_addrtype asks inet_dev_addr_type, exactly what nft's fib
// type does for IPv4 (ir/fib_eval.cc, on the host model). Its IPv6 match
// (match_type6: every asked class must hold at once, a route lookup only
// for LOCAL, ANYCAST and UNREACHABLE) means something else than fib, so
// ip6tables' addrtype is refused (located) until the IR has it.
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

}  // namespace

bool LowerAddrtype(LowerCtx& ctx, const MatchUse& m) {
  if (ctx.ipv6()) {
    return ctx.Error(m.loc, "ip6tables' addrtype match is not supported",
                     "its IPv6 meaning (xt_addrtype's match_type6) is not modelled yet");
  }
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
  if (src != nullptr && !LowerTypeOption(ctx, *src, ir::kFibSaddr | dev_flag)) return false;
  return dst == nullptr || LowerTypeOption(ctx, *dst, ir::kFibDaddr | dev_flag);
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
