// -m recent (xt_recent revision 1) as the IR's [ recent ... ]
// (ir/recent_eval.cc has its meaning): --set, --rcheck, --update or
// --remove (one, `!` inverts it), --name (DEFAULT), --rsource / --rdest,
// --seconds, --hitcount, --reap, --rttl, --mask.
//
// The checks of recent_mt_check and libxt_recent: exactly one of the four
// commands; --seconds and --hitcount not with --set or --remove; a hit
// count of at most 20 (the module's ip_pkt_list_tot); --reap needs
// --seconds; --rttl goes with --rcheck or --update; a name of 1..199
// bytes that does not start with '.'.
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "ir/recent_eval.h"

namespace rulejit::frontends::iptables_internal {
namespace {

constexpr size_t kNameMax = 199;  // XT_RECENT_NAME_LEN - 1

std::optional<ir::RecentOp> OpOf(std::string_view option) {
  if (option == "--set") return ir::RecentOp::kSet;
  if (option == "--rcheck") return ir::RecentOp::kCheck;
  if (option == "--update") return ir::RecentOp::kUpdate;
  if (option == "--remove") return ir::RecentOp::kRemove;
  return std::nullopt;
}

bool ParseCount(LowerCtx& ctx, const Option& opt, uint32_t* out) {
  if (!absl::SimpleAtoi(Sv(opt.args[0].text), out)) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid number '", opt.args[0].text, "'"));
  }
  return true;
}

// Every option but the command.
bool ReadOption(LowerCtx& ctx, const Option& opt, ir::Recent& e) {
  if (opt.name == "--name") {
    e.name = opt.args[0].text;
    if (e.name.empty() || e.name.size() > kNameMax || e.name[0] == '.') {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid recent table name '", e.name, "'"));
    }
  } else if (opt.name == "--rdest" || opt.name == "--rsource") {
    e.rdest = opt.name == "--rdest";
  } else if (opt.name == "--seconds") {
    return ParseCount(ctx, opt, &e.seconds);
  } else if (opt.name == "--hitcount") {
    return ParseCount(ctx, opt, &e.hitcount);
  } else if (opt.name == "--reap") {
    e.reap = true;
  } else if (opt.name == "--rttl") {
    e.rttl = true;
  } else if (opt.name == "--mask") {
    std::optional<ir::Bytes> mask = ParseAddr(opt.args[0].text, ctx.ipv6());
    if (!mask) return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid mask '", opt.args[0].text, "'"));
    e.mask = ir::Bytes(16, 0);
    std::copy(mask->begin(), mask->end(), e.mask.begin());
  }
  return true;
}

bool CheckRecent(LowerCtx& ctx, const MatchUse& m, int commands, const ir::Recent& e) {
  const bool set_or_remove = e.op == ir::RecentOp::kSet || e.op == ir::RecentOp::kRemove;
  if (commands != 1) {
    return ctx.Error(m.loc, "recent needs exactly one of --set, --rcheck, --update and --remove");
  }
  if (set_or_remove && (e.seconds != 0 || e.hitcount != 0)) {
    return ctx.Error(m.loc, "--seconds and --hitcount go with --rcheck or --update");
  }
  if (e.hitcount > ir::kRecentStamps) {
    return ctx.Error(m.loc, absl::StrCat("--hitcount ", e.hitcount, " is over the maximum ",
                                         ir::kRecentStamps));
  }
  if (e.reap && e.seconds == 0) return ctx.Error(m.loc, "--reap needs --seconds");
  if (e.rttl && set_or_remove) return ctx.Error(m.loc, "--rttl goes with --rcheck or --update");
  return true;
}

}  // namespace

bool LowerRecent(LowerCtx& ctx, const MatchUse& m) {
  ir::Recent e;
  int commands = 0;
  for (const Option& opt : m.options) {
    if (std::optional<ir::RecentOp> op = OpOf(opt.name)) {
      e.op = *op;
      e.invert = opt.invert;
      ++commands;
    } else if (!ReadOption(ctx, opt, e)) {
      return false;
    }
  }
  if (!CheckRecent(ctx, m, commands, e)) return false;
  ctx.Add(e, m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
