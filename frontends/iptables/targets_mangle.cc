// The mangle targets that rewrite packet bytes without a verdict, each an
// IR construct of its own (their meaning is in ir/):
//
// -j CHECKSUM --checksum-fill (xt_CHECKSUM, mangle table only): [ checksum
// fill ], completing a checksum left partial (ir::EvalChecksumFill).
//
// -j TCPMSS: --set-mss N or --clamp-mss-to-pmtu (xt_TCPMSS), lowered as
// the IR's own [ tcpmss set N ] / [ tcpmss clamp ] (ir/tcpmss_eval.cc has
// its meaning). No verdict: the rule goes on to the next one, as the
// target's XT_CONTINUE does.
//
// The checks of tcpmss_tg4_check: exactly one of the two options; the
// rule is for `-p tcp` (the target's protocol); it matches SYN packets
// (a tcp match whose --tcp-flags comparison, or --syn, has SYN set and is
// not inverted); clamping only where the packet has a route (FORWARD,
// OUTPUT, POSTROUTING; user chains are checked at COMMIT).
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

// find_syn_match over the rule's matches.
bool MatchesSyn(const RuleSpec& spec) {
  for (const MatchUse& m : spec.matches) {
    if (m.name != "tcp") continue;
    for (const Option& o : m.options) {
      if (o.invert) continue;
      if (o.name == "--syn") return true;
      if (o.name == "--tcp-flags" && o.args.size() == 2) {
        std::optional<uint8_t> comp = ParseTcpFlags(o.args[1].text);
        if (comp && (*comp & 0x02)) return true;
      }
    }
  }
  return false;
}

}  // namespace

bool LowerTcpMss(LowerCtx& ctx, const TargetUse& t) {
  const Option* set = FindTargetOption(t, "--set-mss");
  const Option* clamp = FindTargetOption(t, "--clamp-mss-to-pmtu");
  if ((set == nullptr) == (clamp == nullptr)) {
    return ctx.Error(t.loc, "TCPMSS needs exactly one of --set-mss and --clamp-mss-to-pmtu");
  }
  if (ctx.l4proto() != 6) {
    return ctx.Error(t.loc, "TCPMSS is only valid for '-p tcp'");
  }
  if (!MatchesSyn(*ctx.spec)) {
    return ctx.Error(t.loc, "TCPMSS only works on TCP SYN packets",
                     "add '-m tcp --tcp-flags SYN,RST SYN' (or --syn)");
  }
  constexpr const char* kClamp = "TCPMSS --clamp-mss-to-pmtu";
  if (clamp != nullptr && ctx.hook && !RegisteredAt(kClamp, *ctx.hook)) {
    return ctx.Error(t.loc, absl::StrCat("--clamp-mss-to-pmtu is not valid in chain '",
                                         ctx.chain_name, "'"),
                     RegisteredHooksHint(kClamp));
  }
  ir::TcpMss e;
  e.clamp = clamp != nullptr;
  if (set != nullptr) {
    std::optional<uint64_t> mss = ParseNumber(set->args[0].text, 65535);
    if (!mss) {
      return ctx.Error(set->ArgLoc(), absl::StrCat("invalid MSS '", set->args[0].text, "'"),
                       "a number 0..65535");
    }
    e.mss = static_cast<uint16_t>(*mss);
  }
  ctx.Add(e, t.loc);
  return true;
}

bool LowerChecksum(LowerCtx& ctx, const TargetUse& t) {
  if (ctx.table_name != "mangle") {
    return ctx.Error(t.loc, "the CHECKSUM target is only valid in the mangle table");
  }
  if (FindTargetOption(t, "--checksum-fill") == nullptr) {
    return ctx.Error(t.loc, "CHECKSUM needs --checksum-fill");
  }
  ctx.Add(ir::ChecksumFill{}, t.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
