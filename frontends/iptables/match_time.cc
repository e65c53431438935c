// -m time (xt_time revision 0) as the IR's [ time ... ] (ir/time_eval.cc
// has its meaning, on the clock the caller gives): --datestart/--datestop
// (ISO 8601 YYYY[-MM[-DD[Thh[:mm[:ss]]]]], UTC, years 1970..2038),
// --timestart/--timestop (hh:mm[:ss]), [!] --weekdays (Mon..Sun by their
// first two letters, or 1..7), [!] --monthdays (0..31), --contiguous,
// --kerneltz (and its old name --localtz), --utc (the default).
//
// Not iptables-translate's nft form: nft's `meta day` applies the kernel
// timezone where xt_time without --kerneltz does not, and nft has no month
// days or --contiguous. Refused as libxt_time refuses (located): a
// malformed date or time, a day out of range, --contiguous when the stop
// time is not below the start time, --utc with --kerneltz.
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {
namespace {

constexpr uint32_t kAllWeekdays = 0xfe;        // XT_TIME_ALL_WEEKDAYS
constexpr uint32_t kAllMonthdays = 0xfffffffe;  // XT_TIME_ALL_MONTHDAYS

// Reads the decimal number at `*s` (at least one digit) and the separator
// after it: `sep` or the end. nullopt when either is missing.
std::optional<unsigned> Field(const char** s, char sep) {
  char* end = nullptr;
  if (**s < '0' || **s > '9') return std::nullopt;
  const unsigned long v = std::strtoul(*s, &end, 10);
  if (*end != sep && *end != '\0') return std::nullopt;
  *s = *end == '\0' ? end : end + 1;
  return v > 0xffffffffUL ? std::nullopt : std::optional<unsigned>(v);
}

// time_parse_date: YYYY[-MM[-DD[Thh[:mm[:ss]]]]] in UTC.
std::optional<uint32_t> ParseDate(const std::string& text) {
  static constexpr struct { char sep; unsigned max; } kParts[] = {
      {'-', 2038}, {'-', 12}, {'T', 31}, {':', 23}, {':', 59}, {'\0', 59}};
  unsigned v[6] = {0, 1, 1, 0, 0, 0};
  const char* s = text.c_str();
  for (int i = 0; i < 6 && (i == 0 || *s != '\0'); ++i) {
    std::optional<unsigned> n = Field(&s, kParts[i].sep);
    if (!n || *n > kParts[i].max || (i == 0 && *n < 1970)) return std::nullopt;
    v[i] = *n;
  }
  if (*s != '\0') return std::nullopt;
  struct tm tm = {};
  tm.tm_year = static_cast<int>(v[0]) - 1900;
  tm.tm_mon = static_cast<int>(v[1]) - 1;
  tm.tm_mday = static_cast<int>(v[2]);
  tm.tm_hour = static_cast<int>(v[3]);
  tm.tm_min = static_cast<int>(v[4]);
  tm.tm_sec = static_cast<int>(v[5]);
  const time_t t = timegm(&tm);
  if (t < 0 || t > 0xffffffffL) return std::nullopt;
  return static_cast<uint32_t>(t);
}

// time_parse_minutes: hh:mm[:ss] → seconds since midnight.
std::optional<uint32_t> ParseDaytime(const std::string& text) {
  const char* s = text.c_str();
  std::optional<unsigned> h = Field(&s, ':');
  if (!h || *h > 23 || s == text.c_str() + text.size()) return std::nullopt;
  std::optional<unsigned> m = Field(&s, ':');
  if (!m || *m > 59) return std::nullopt;
  unsigned sec = 0;
  if (*s != '\0') {
    std::optional<unsigned> n = Field(&s, '\0');
    if (!n || *n > 59) return std::nullopt;
    sec = *n;
  }
  return *h * 3600 + *m * 60 + sec;
}

// One comma-separated piece as libxt_time's my_strseg cuts it: at most
// `keep` characters of it.
std::vector<std::string> Pieces(const std::string& text, size_t keep) {
  std::vector<std::string> out;
  for (std::string_view piece : Split(text, ',')) {
    out.emplace_back(piece.substr(0, keep));
  }
  if (!out.empty() && out.back().empty()) out.pop_back();  // "Mon," ends at the comma
  return out;
}

// strtoul(piece, &end, 0) that must take the whole piece.
std::optional<unsigned long> WholeNumber(const std::string& piece) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(piece.c_str(), &end, 0);
  if (*end != '\0') return std::nullopt;
  return v;
}

bool ParseWeekdays(LowerCtx& ctx, const Option& opt, uint32_t* mask) {
  static constexpr const char* kNames[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  *mask = 0;
  for (const std::string& day : Pieces(opt.args[0].text, 3)) {
    if (std::optional<unsigned long> n = WholeNumber(day)) {
      if (*n == 0) return ctx.Error(opt.ArgLoc(), "No, the week does NOT begin with Sunday.");
      if (*n > 7) return ctx.Error(opt.ArgLoc(), absl::StrCat(day, " is not a valid day specifier"));
      *mask |= 1u << *n;
      continue;
    }
    bool valid = false;
    for (unsigned i = 0; i < 7; ++i) {
      if (day.compare(0, 2, kNames[i], 2) == 0) {
        *mask |= 1u << (i + 1);
        valid = true;
      }
    }
    if (!valid) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat(day, " is not a valid day specifier"),
                       "Mon,Tue,Wed,Thu,Fri,Sat,Sun or 1 to 7");
    }
  }
  if (opt.invert) *mask ^= kAllWeekdays;
  return true;
}

bool ParseMonthdays(LowerCtx& ctx, const Option& opt, uint32_t* mask) {
  *mask = 0;
  for (const std::string& day : Pieces(opt.args[0].text, 2)) {
    std::optional<unsigned long> n = WholeNumber(day);
    if (!n || *n > 31) {
      return ctx.Error(opt.ArgLoc(), absl::StrCat(day, " is not a valid day for --monthdays"));
    }
    *mask |= 1u << *n;
  }
  if (opt.invert) *mask ^= kAllMonthdays;
  return true;
}

// --datestart/--datestop/--timestart/--timestop into `e`.
bool ParseBounds(LowerCtx& ctx, const MatchUse& m, ir::TimeMatch* e) {
  struct Bound { const char* name; bool date; uint32_t* out; };
  const Bound kBounds[] = {{"--datestart", true, &e->date_start},
                           {"--datestop", true, &e->date_stop},
                           {"--timestart", false, &e->daytime_start},
                           {"--timestop", false, &e->daytime_stop}};
  for (const Bound& b : kBounds) {
    const Option* opt = FindOption(m, b.name);
    if (opt == nullptr) continue;
    const std::string& text = opt->args[0].text;
    std::optional<uint32_t> v = b.date ? ParseDate(text) : ParseDaytime(text);
    if (!v && b.date) {
      return ctx.Error(opt->ArgLoc(), absl::StrCat("Invalid date \"", text, "\" specified"),
                       "YYYY[-MM[-DD[Thh[:mm[:ss]]]]], years 1970 to 2038");
    }
    if (!v) {
      return ctx.Error(opt->ArgLoc(), absl::StrCat("invalid time \"", text, "\" specified"),
                       "hh:mm[:ss], from 00:00:00 to 23:59:59");
    }
    *b.out = *v;
  }
  return true;
}

}  // namespace

bool LowerTime(LowerCtx& ctx, const MatchUse& m) {
  ir::TimeMatch e;
  if (!ParseBounds(ctx, m, &e)) return false;
  if (const Option* o = FindOption(m, "--weekdays"); o && !ParseWeekdays(ctx, *o, &e.weekdays)) {
    return false;
  }
  if (const Option* o = FindOption(m, "--monthdays"); o && !ParseMonthdays(ctx, *o, &e.monthdays)) {
    return false;
  }
  const Option* utc = FindOption(m, "--utc");
  const Option* kerneltz = FindOption(m, "--kerneltz");
  if (kerneltz == nullptr) kerneltz = FindOption(m, "--localtz");
  if (utc != nullptr && kerneltz != nullptr) {
    return ctx.Error(utc->loc, "--utc and --kerneltz exclude each other");
  }
  e.kerneltz = kerneltz != nullptr;
  if (const Option* o = FindOption(m, "--contiguous")) {
    if (e.daytime_start < e.daytime_stop) {
      return ctx.Error(o->loc, "time: --contiguous only makes sense when stoptime is smaller "
                               "than starttime");
    }
    e.contiguous = true;
  }
  ctx.Add(e, m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
