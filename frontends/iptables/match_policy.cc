// -m policy: the IPsec policy a packet was (--dir in: decapsulated, its
// secpath) or will be (--dir out: its route's xfrm bundle) handled by
// (xt_policy). The host model has no IPsec (no xfrm states or policies),
// so no packet has a secpath or an xfrm route: match_policy_in/_out find
// none (-1), and
//
//   --pol none               matches every packet: nothing is emitted
//   --pol ipsec ...          matches none: meta load secpath; cmp eq 1
//                            (`meta secpath exists`, false for every packet
//                            of the model, exact for --dir in, and for
//                            --dir out as long as the model has no IPsec)
//
// The element options (--strict, --reqid, --spi, --proto, --mode,
// --tunnel-src, --tunnel-dst, --next) constrain IPsec packets only; they
// are checked as iptables and policy_mt_check check them. The hooks:
// --dir in is invalid in OUTPUT and POSTROUTING, --dir out in PREROUTING
// and INPUT (the kernel refuses the table; here a located error, through
// user chains as well: hook_limits.cc).
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

bool IsElementOption(const std::string& name) {
  return name == "--reqid" || name == "--spi" || name == "--proto" || name == "--mode" ||
         name == "--tunnel-src" || name == "--tunnel-dst" || name == "--next";
}

// libxt_policy's final check: `--pol none` takes no elements and no
// --strict; several elements (--next) need --strict; tunnel addresses
// need tunnel mode, element by element.
bool CheckElements(LowerCtx& ctx, const MatchUse& m, bool none) {
  const Option* strict = FindOption(m, "--strict");
  int elements = none ? 0 : 1;
  bool tunnel_mode = false;
  const Option* tunnel_address = nullptr;
  auto element_done = [&]() {
    return tunnel_address == nullptr || tunnel_mode ||
           ctx.Error(tunnel_address->loc,
                     "policy match: --tunnel-src/--tunnel-dst is only valid in tunnel mode");
  };
  for (const Option& opt : m.options) {
    if (none && (IsElementOption(opt.name) || &opt == strict)) {
      return ctx.Error(opt.loc, &opt == strict ? "policy match: policy none but --strict given"
                                               : "policy match: policy none but policy given");
    }
    if (opt.name == "--mode") tunnel_mode = opt.args[0].text == "tunnel";
    if (opt.name == "--tunnel-src" || opt.name == "--tunnel-dst") tunnel_address = &opt;
    if (opt.name == "--next") {
      if (!element_done()) return false;
      ++elements;
      tunnel_mode = false;
      tunnel_address = nullptr;
    }
  }
  if (!element_done()) return false;
  if (elements > 1 && strict == nullptr) {
    return ctx.Error(m.loc, "policy match: multiple elements but no --strict");
  }
  return true;
}

bool CheckElementOptions(LowerCtx& ctx, const MatchUse& m) {
  for (const Option& opt : m.options) {
    if (opt.name == "--mode") {
      const std::string& mode = opt.args[0].text;
      if (mode != "transport" && mode != "tunnel") {
        return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid policy mode '", mode, "'"),
                         "transport or tunnel");
      }
    } else if (opt.name == "--proto") {
      const std::string proto = Lower(opt.args[0].text);
      if (proto != "ah" && proto != "esp" && proto != "ipcomp" && proto != "51" &&
          proto != "50" && proto != "108") {
        return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid policy protocol '", proto, "'"),
                         "ah, esp or ipcomp");
      }
    } else if (opt.name == "--reqid" || opt.name == "--spi") {
      if (!ParseNumber(opt.args[0].text, 0xffffffff)) {
        return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid ", opt.name.substr(2), " '",
                                                    opt.args[0].text, "'"),
                         "a 32-bit number");
      }
    } else if (opt.name == "--tunnel-src" || opt.name == "--tunnel-dst") {
      AddrMask addr;
      if (!ParseAddrMask(opt.args[0].text, ctx.ipv6(), opt.ArgLoc(), *ctx.diags, &addr)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::string PolicyHookLimit(const MatchUse& m) {
  const Option* dir = FindOption(m, "--dir");
  if (dir == nullptr) return "";
  return dir->args[0].text == "in" ? "policy --dir in" : "policy --dir out";
}

bool LowerPolicy(LowerCtx& ctx, const MatchUse& m) {
  const Option* dir = FindOption(m, "--dir");
  const Option* pol = FindOption(m, "--pol");
  if (dir == nullptr || pol == nullptr) {
    return ctx.Error(m.loc, "match 'policy' needs --dir in|out and --pol none|ipsec");
  }
  if (dir->args[0].text != "in" && dir->args[0].text != "out") {
    return ctx.Error(dir->ArgLoc(), absl::StrCat("invalid direction '", dir->args[0].text, "'"),
                     "in or out");
  }
  const std::string& policy = pol->args[0].text;
  if (policy != "none" && policy != "ipsec") {
    return ctx.Error(pol->ArgLoc(), absl::StrCat("invalid policy '", policy, "'"),
                     "none or ipsec");
  }
  const std::string limit = PolicyHookLimit(m);
  if (ctx.hook && !RegisteredAt(limit, *ctx.hook)) {
    return ctx.Error(dir->loc, absl::StrCat(limit, " is not valid in chain '", ctx.chain_name, "'"),
                     RegisteredHooksHint(limit));
  }
  if (!CheckElementOptions(ctx, m) || !CheckElements(ctx, m, policy == "none")) return false;
  if (policy == "ipsec") {
    ctx.Meta(ir::MetaKey::kSecPath, pol->loc);
    ctx.Cmp(ir::CmpOp::kEq, ir::Bytes{1}, pol->loc);
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
