// -m hashlimit as the IR's [ hashlimit ... ] (ir/hashlimit_eval.cc has its
// meaning), with the values libxt_hashlimit's revision 3 (the one
// iptables 1.8.9 loads on Linux 6.x) puts in the kernel:
//
//   --hashlimit-upto / --hashlimit-above RATE  (--hashlimit, the old name,
//       is upto; `!` swaps them): "N[/second|/minute|/hour|/day]" (any
//       prefix of the unit) gives avg = 1000000 x unit seconds / N; "N[k|m]b/s"
//       a byte rate, avg = 0xffffffff / (bytes / 16 + 1)
//   --hashlimit-burst N[k|m]: default 5, at most 1000000 packets; with a
//       byte rate the burst in bytes, rounded up to whole seconds of the rate
//   --hashlimit-mode srcip,srcport,dstip,dstport (also '|'), default none
//   --hashlimit-srcmask / -dstmask: prefix lengths, default the address's
//   --hashlimit-name: required; --hashlimit-htable-size / -max /
//       -gcinterval (default 1000 ms) / -expire (default: the rate's unit,
//       15 s for a byte rate, 60 s with a byte burst)
//   --hashlimit-rate-match, --hashlimit-rate-interval SECONDS (default the
//       rate's unit, 1 s for a byte rate; avg is then per unit)
//
// And the kernel's refusals (hashlimit_mt_check_common): a zero expiry or
// collection interval, a rate-match rate above 2^32-1, a byte rate the
// kernel rounds to no credit, a burst whose credit overflows; and
// xt_check_proc_name's on the name.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/iptables/internal.h"
#include "ir/hashlimit_eval.h"

namespace rulejit::frontends::iptables_internal {
namespace {

constexpr uint64_t kScale = 1000000;       // XT_HASHLIMIT_SCALE_v2
constexpr uint64_t kBurstMax = 1000000;    // XT_HASHLIMIT_BURST_MAX
constexpr uint32_t kByteExpire = 15;       // XT_HASHLIMIT_BYTE_EXPIRE (s)
constexpr uint32_t kByteExpireBurst = 60;  // XT_HASHLIMIT_BYTE_EXPIRE_BURST (s)
constexpr size_t kNameLen = 255;           // XT_HASHLIMIT_NAME_LEN

// What the options said, before the final checks.
struct Parsed {
  ir::Hashlimit e;
  uint32_t unit = 1;  // the rate's unit in seconds (hashlimit_mt_udata.mult)
  bool have_rate = false, have_burst = false, have_expire = false;
};

// atoll's value of the leading number (0 when there is none).
uint64_t LeadingNumber(const std::string& s) {
  return static_cast<uint64_t>(std::atoll(s.c_str()));
}

// xtables_strtoul (base 0, no sign), leaving the rest at *end.
bool StrToUint(const std::string& s, uint64_t min, uint64_t max, uint64_t* v, size_t* end) {
  size_t i = 0;
  while (i < s.size() && absl::ascii_isspace(static_cast<unsigned char>(s[i]))) ++i;
  if (i < s.size() && s[i] == '-') return false;
  char* e = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(s.c_str(), &e, 0);
  if (e == s.c_str() || errno == ERANGE || x < min || x > max) return false;
  *v = x;
  *end = static_cast<size_t>(e - s.c_str());
  return true;
}

uint64_t Factor(char c) { return c == 'm' ? 1024 * 1024 : c == 'k' ? 1024 : 1; }

// parse_bytes: "N[k|m]b/s".
bool ParseByteRate(const std::string& text, Parsed& p) {
  const size_t at = text.find("b/s");
  if (at == std::string::npos || at == 0) return false;
  const uint64_t r = LeadingNumber(text);
  if (r == 0) return false;
  const uint64_t bytes = r * Factor(text[at - 1]);
  const uint32_t chunks = static_cast<uint32_t>(bytes >> 4);
  p.e.avg = chunks == 0xffffffffu ? 0 : 0xffffffffu / (chunks + 1);
  p.e.bytes = true;
  p.unit = kByteExpire;
  return true;
}

// parse_rate: "N[/unit]".
bool ParsePacketRate(const std::string& text, Parsed& p) {
  p.unit = 1;
  const size_t slash = text.find('/');
  if (slash != std::string::npos) {
    const std::string unit = absl::AsciiStrToLower(text.substr(slash + 1));
    if (unit.empty()) return false;
    auto prefix_of = [&](std::string_view word) { return word.substr(0, unit.size()) == unit; };
    if (prefix_of("second")) {
      p.unit = 1;
    } else if (prefix_of("minute")) {
      p.unit = 60;
    } else if (prefix_of("hour")) {
      p.unit = 3600;
    } else if (prefix_of("day")) {
      p.unit = 86400;
    } else {
      return false;
    }
  }
  const uint64_t r = LeadingNumber(text);
  if (r == 0) return false;
  p.e.avg = kScale * p.unit / r;
  return true;
}

bool ReadRate(LowerCtx& ctx, const Option& opt, bool above, Parsed& p) {
  if (p.have_rate) {
    return ctx.Error(opt.loc, "hashlimit takes one of --hashlimit-upto and --hashlimit-above");
  }
  p.have_rate = true;
  p.e.invert = above != opt.invert;
  const std::string& text = opt.args[0].text;
  if (ParseByteRate(text, p)) {
    if (p.e.avg == 0) return ctx.Error(opt.ArgLoc(), absl::StrCat("rate too high '", text, "'"));
    return true;
  }
  if (!ParsePacketRate(text, p)) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid hashlimit rate '", text, "'"));
  }
  if (p.e.avg == 0) return ctx.Error(opt.ArgLoc(), absl::StrCat("rate too fast '", text, "'"));
  return true;
}

bool ReadUint(LowerCtx& ctx, const Option& opt, uint64_t max, uint64_t* v) {
  size_t end = 0;
  if (!StrToUint(opt.args[0].text, 0, max, v, &end) || end != opt.args[0].text.size()) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid value '", opt.args[0].text, "' for ",
                                                opt.name));
  }
  return true;
}

bool ReadMode(LowerCtx& ctx, const Option& opt, Parsed& p) {
  for (absl::string_view word : absl::StrSplit(opt.args[0].text, absl::ByAnyChar(",|"),
                                               absl::SkipEmpty())) {
    if (word == "srcip") p.e.mode |= ir::kHashlimitSrcIp;
    else if (word == "srcport") p.e.mode |= ir::kHashlimitSrcPort;
    else if (word == "dstip") p.e.mode |= ir::kHashlimitDstIp;
    else if (word == "dstport") p.e.mode |= ir::kHashlimitDstPort;
    else return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid hashlimit mode '",
                                                     opt.args[0].text, "'"));
  }
  return true;
}

bool ReadName(LowerCtx& ctx, const Option& opt, Parsed& p) {
  const std::string& n = opt.args[0].text;
  if (n.empty() || n.size() >= kNameLen || n == "." || n == ".." ||
      n.find('/') != std::string::npos) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid hashlimit name '", n, "'"));
  }
  p.e.name = n;
  return true;
}

bool ReadOption(LowerCtx& ctx, const Option& opt, Parsed& p) {
  const std::string& o = opt.name;
  uint64_t v = 0;
  if (o == "--hashlimit-upto" || o == "--hashlimit") return ReadRate(ctx, opt, false, p);
  if (o == "--hashlimit-above") return ReadRate(ctx, opt, true, p);
  if (o == "--hashlimit-mode") return ReadMode(ctx, opt, p);
  if (o == "--hashlimit-name") return ReadName(ctx, opt, p);
  if (o == "--hashlimit-rate-match") {
    p.e.rate_match = true;
    return true;
  }
  if (o == "--hashlimit-srcmask" || o == "--hashlimit-dstmask") {
    if (!ReadUint(ctx, opt, ctx.ipv6() ? 128 : 32, &v)) return false;
    (o == "--hashlimit-srcmask" ? p.e.srcmask : p.e.dstmask) = static_cast<uint8_t>(v);
    return true;
  }
  if (o == "--hashlimit-burst") {
    size_t end = 0;
    const std::string& t = opt.args[0].text;
    if (!StrToUint(t, 1, ~uint64_t{0}, &v, &end) || (end == t.size() && v > kBurstMax)) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat("invalid hashlimit burst '", t,
                                                  "' (1-", kBurstMax, ")"));
    }
    p.e.burst = v * Factor(end < t.size() ? t[end] : '\0');
    p.have_burst = true;
    return true;
  }
  if (o == "--hashlimit-rate-interval") {
    const int r = std::atoi(opt.args[0].text.c_str());
    if (r <= 0) return ctx.Error(opt.ArgLoc(), "invalid --hashlimit-rate-interval");
    p.e.interval = static_cast<uint32_t>(r);
    return true;
  }
  if (!ReadUint(ctx, opt, 0xffffffff, &v)) return false;
  const uint32_t u = static_cast<uint32_t>(v);
  if (o == "--hashlimit-htable-size") p.e.size = u;
  if (o == "--hashlimit-htable-max") p.e.max = u;
  if (o == "--hashlimit-htable-gcinterval") p.e.gc_interval = u;
  if (o == "--hashlimit-htable-expire") {
    p.e.expire = u;
    p.have_expire = true;
  }
  return true;
}

// hashlimit_mt_check of libxt_hashlimit: defaults that depend on the rate.
bool Finish(LowerCtx& ctx, const MatchUse& m, Parsed& p) {
  ir::Hashlimit& e = p.e;
  if (!p.have_rate) return ctx.Error(m.loc, "hashlimit needs --hashlimit-upto or -above");
  if (e.name.empty()) return ctx.Error(m.loc, "hashlimit needs --hashlimit-name");
  if (!p.have_expire) e.expire = p.unit * 1000;
  if (e.bytes) {
    uint64_t burst = 0;
    if (p.have_burst) {
      const uint64_t r = 0xffffffffu / e.avg;
      const uint64_t per_second = (r - 1) << 4;  // cost_to_bytes
      if (per_second == 0) {
        return ctx.Error(m.loc, "a byte rate under 16 bytes per second with a burst (iptables "
                                "divides by zero)");
      }
      if (e.burst < per_second) {
        return ctx.Error(m.loc, absl::StrCat("burst cannot be smaller than ", per_second, "b"));
      }
      burst = static_cast<uint32_t>(e.burst / per_second + (e.burst % per_second != 0));
      if (!p.have_expire) e.expire = kByteExpireBurst * 1000;
    }
    e.burst = burst;
  } else if (e.burst > kBurstMax) {
    return ctx.Error(m.loc, absl::StrCat("hashlimit burst over ", kBurstMax));
  }
  if (e.rate_match) {
    if (!e.bytes) e.avg /= p.unit;
    if (e.interval == 0) e.interval = e.bytes ? 1 : p.unit;
  } else {
    e.interval = 0;
  }
  return true;
}

// hashlimit_mt_check_common's refusals (the kernel's, at load).
bool KernelChecks(LowerCtx& ctx, const MatchUse& m, const ir::Hashlimit& e) {
  if (e.gc_interval == 0 || e.expire == 0) {
    return ctx.Error(m.loc, "the kernel refuses a zero hashlimit expiry or collection interval");
  }
  if (e.rate_match) {
    if (e.avg == 0 || e.avg > 0xffffffffu) {
      return ctx.Error(m.loc, "the kernel refuses this hashlimit rate with --hashlimit-rate-match");
    }
  } else if (e.bytes) {
    if (ir::HashlimitUserToCreditsByte(e.avg) == 0) {
      return ctx.Error(m.loc, "the kernel refuses this byte rate (too high)");
    }
  } else if (e.burst == 0 ||
             ir::HashlimitUserToCredits(e.avg * e.burst) < ir::HashlimitUserToCredits(e.avg)) {
    return ctx.Error(m.loc, "the kernel refuses this hashlimit rate and burst (overflow)");
  }
  return true;
}

}  // namespace

bool LowerHashlimit(LowerCtx& ctx, const MatchUse& m) {
  Parsed p;
  p.e.burst = 5;  // XT_HASHLIMIT_BURST
  p.e.srcmask = p.e.dstmask = ctx.ipv6() ? 128 : 32;
  for (const Option& opt : m.options) {
    if (!ReadOption(ctx, opt, p)) return false;
  }
  if (!Finish(ctx, m, p) || !KernelChecks(ctx, m, p.e)) return false;
  ctx.Add(p.e, m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
