// -m statistic (xt_statistic): every Nth packet, or packets drawn at
// random, lowered as iptables-translate writes them:
//
//   --mode nth [!] --every N --packet P
//       numgen reg 1 = inc mod N; cmp eq|neq P
//     The kernel's counter starts at N-1-P (libxt_statistic's count) and
//     a packet matches when it wraps to 0: packets P, P+N, P+2N, ... of
//     those that reach the match, which is numgen's count (0, 1, ...,
//     N-1, 0, ...) equal to P. State across packets, per rule, as the
//     kernel keeps it per rule.
//   --mode random [!] --probability p
//       meta load prandom; & 0x7fffffff; byteorder hton; cmp lt|gte
//       round(p * 2^31)
//     statistic_mt draws get_random_u32() and matches when its low 31
//     bits are below the threshold; the draw is the packet's input
//     PacketMeta::random (shared with `numgen random` in the same rule).
//
// Refused as libxt_statistic refuses them (located): no --mode; options
// of the other mode; nth without both --every and --packet; P >= N;
// a probability outside 0..1.
#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

// strtod as libxt_statistic calls it: the whole text, 0 <= p <= 1.
std::optional<double> ParseProbability(const std::string& text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  char* end = nullptr;
  const double p = std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || !(p >= 0.0 && p <= 1.0)) return std::nullopt;
  return p;
}

bool LowerRandom(LowerCtx& ctx, const Option& opt) {
  std::optional<double> p = ParseProbability(opt.args[0].text);
  if (!p) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid probability '", opt.args[0].text, "'"),
                     "a number from 0 to 1");
  }
  const uint64_t threshold = static_cast<uint64_t>(std::lround(*p * 2147483648.0));
  ctx.Meta(ir::MetaKey::kPRandom, opt.loc);
  ctx.Mask(HostU32(0x7fffffff), opt.loc);
  ctx.Hton(4, 4, opt.loc);
  ctx.Cmp(opt.invert ? ir::CmpOp::kGte : ir::CmpOp::kLt, BigEndian(threshold, 4), opt.loc);
  return true;
}

bool LowerNth(LowerCtx& ctx, const MatchUse& m, const Option* every, const Option* packet) {
  if (every == nullptr || packet == nullptr) {
    return ctx.Error(m.loc, "--mode nth needs --every and --packet",
                     "libxt_statistic refuses it otherwise");
  }
  std::optional<uint64_t> n = ParseNumber(every->args[0].text, 0xffffffff);
  if (!n || *n == 0) {
    return ctx.Error(every->ArgLoc(), absl::StrCat("invalid --every '", every->args[0].text, "'"),
                     "a number from 1 to 4294967295");
  }
  std::optional<uint64_t> p = ParseNumber(packet->args[0].text, 0xffffffff);
  if (!p || *p >= *n) {
    return ctx.Error(packet->ArgLoc(),
                     absl::StrCat("invalid --packet '", packet->args[0].text, "'"),
                     "the --packet p must be 0 <= p <= n-1");
  }
  ir::Numgen gen;
  gen.mod = static_cast<uint32_t>(*n);
  ctx.Add(gen, every->loc);
  ctx.Cmp(every->invert || packet->invert ? ir::CmpOp::kNeq : ir::CmpOp::kEq,
          HostU32(static_cast<uint32_t>(*p)), every->loc);
  return true;
}

}  // namespace

bool LowerStatistic(LowerCtx& ctx, const MatchUse& m) {
  const Option* mode = FindOption(m, "--mode");
  const Option* probability = FindOption(m, "--probability");
  const Option* every = FindOption(m, "--every");
  const Option* packet = FindOption(m, "--packet");
  if (mode == nullptr) {
    return ctx.Error(m.loc, "match 'statistic' needs --mode", "--mode random or --mode nth");
  }
  const std::string name = Lower(mode->args[0].text);
  if (name == "random") {
    if (every != nullptr || packet != nullptr) {
      const Option* o = every != nullptr ? every : packet;
      return ctx.Error(o->loc, absl::StrCat("'", o->name, "' can only be used in nth mode"));
    }
    if (probability == nullptr) {
      return ctx.Error(mode->loc, "--probability must be specified when using random mode");
    }
    return LowerRandom(ctx, *probability);
  }
  if (name == "nth") {
    if (probability != nullptr) {
      return ctx.Error(probability->loc, "'--probability' can only be used in random mode");
    }
    return LowerNth(ctx, m, every, packet);
  }
  return ctx.Error(mode->ArgLoc(), absl::StrCat("invalid mode '", mode->args[0].text, "'"),
                   "random or nth");
}

}  // namespace rulejit::frontends::iptables_internal
