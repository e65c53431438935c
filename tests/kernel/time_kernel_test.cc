// The wall-clock matches against the kernel, which reads its own real
// clock: iptables' -m time (iptables-legacy, xt_time) and nft's meta hour,
// day and time, with windows chosen around the current time (minutes of
// margin on each side) so that each rule's answer is known and stable
// while the test runs: an hour window that holds now and one that does
// not, windows wrapping past midnight either way, today's weekday and
// month day against others, --contiguous moving the hours after midnight
// to the day before, dates in the past and the future, --kerneltz. Each
// rule drops one source address. rulejit evaluates the same frames with
// `--time NOW --kernel-tz ZONE` (the machine's sys_tz as gettimeofday
// reports it) on every tier and must agree with the kernel frame by frame.
// nft and rulejit both convert nft's local times in TZ=UTC here.
//
// Skips within 90 minutes of midnight UTC or of the kernel timezone's
// midnight (a weekday could change during the run). Needs root, `ip
// netns`, iptables-legacy-restore, nft and the rulejit binary.
#include <sys/time.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

constexpr int64_t kDay = 86400;
constexpr int64_t kMargin = 90 * 60;  // from midnight, for day-based rules

struct Now {
  int64_t secs;     // UTC seconds since the epoch
  int32_t tz_west;  // the kernel's sys_tz.tz_minuteswest
  int64_t Local() const { return secs - 60 * int64_t{tz_west}; }
};

Now ReadNow() {
  struct timeval tv;
  struct timezone tz = {};
  gettimeofday(&tv, &tz);
  return {tv.tv_sec, tz.tz_minuteswest};
}

int64_t Sod(int64_t t) { return ((t % kDay) + kDay) % kDay; }

// "HH:MM:SS" of a second of the day (taken modulo a day).
std::string Hms(int64_t sod) {
  sod = Sod(sod);
  return absl::StrFormat("%02d:%02d:%02d", sod / 3600, sod / 60 % 60, sod % 60);
}

// UTC calendar fields of `t`.
struct tm Utc(int64_t t) {
  const time_t tt = static_cast<time_t>(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  return tm;
}

// xt_time's --datestart form, and nft's "YYYY-MM-DD HH:MM:SS" (TZ=UTC).
std::string IsoT(int64_t t) {
  const struct tm tm = Utc(t);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}
std::string NftDate(int64_t t) {
  std::string s = IsoT(t);
  s[10] = ' ';
  return s;
}

// libxt_time's weekday names, 1 Monday .. 7 Sunday, of day `t`.
const char* XtWeekday(int64_t t) {
  static constexpr const char* kNames[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  return kNames[Utc(t).tm_wday];
}

// "+HH:MM" east of UTC for --kernel-tz.
std::string KernelTzFlag(int32_t tz_west) {
  const int east = -tz_west;
  return absl::StrFormat("%c%02d:%02d", east < 0 ? '-' : '+', std::abs(east) / 60,
                         std::abs(east) % 60);
}

struct Rule {
  std::string match;  // iptables match options or nft expressions
  bool drops;         // what the kernel is expected to do at `now`
};

// iptables rules, each for one source 192.0.2.(i+1); times in UTC unless
// --kerneltz.
std::vector<Rule> IptablesRules(const Now& now) {
  const int64_t sod = Sod(now.secs), min = 60;
  const int64_t lsod = Sod(now.Local());
  return {
      {absl::StrCat("--timestart ", Hms(sod - 20 * min), " --timestop ", Hms(sod + 20 * min)), true},
      {absl::StrCat("--timestart ", Hms(sod + 20 * min), " --timestop ", Hms(sod + 60 * min)), false},
      // Wrapping past midnight: outside (stop, start).
      {absl::StrCat("--timestart ", Hms(sod + 20 * min), " --timestop ", Hms(sod - 20 * min)), false},
      {absl::StrCat("--timestart ", Hms(sod - 20 * min), " --timestop ", Hms(sod - 40 * min)), true},
      {absl::StrCat("--weekdays ", XtWeekday(now.secs)), true},
      {absl::StrCat("--weekdays ", XtWeekday(now.secs + kDay)), false},
      {absl::StrCat("--monthdays ", Utc(now.secs).tm_mday), true},
      {absl::StrCat("! --monthdays ", Utc(now.secs).tm_mday), false},
      {absl::StrCat("--datestart ", IsoT(now.secs - kDay)), true},
      {absl::StrCat("--datestart ", IsoT(now.secs + kDay)), false},
      {absl::StrCat("--datestop ", IsoT(now.secs + kDay)), true},
      {absl::StrCat("--datestop ", IsoT(now.secs - kDay)), false},
      // Now lies before the stop of a wrapping window: with --contiguous
      // it belongs to yesterday's night.
      {absl::StrCat("--timestart ", Hms(sod + 20 * min), " --timestop ", Hms(sod + 10 * min),
                    " --weekdays ", XtWeekday(now.secs - kDay), " --contiguous"), true},
      {absl::StrCat("--timestart ", Hms(sod + 20 * min), " --timestop ", Hms(sod + 10 * min),
                    " --weekdays ", XtWeekday(now.secs), " --contiguous"), false},
      {absl::StrCat("--timestart ", Hms(sod + 20 * min), " --timestop ", Hms(sod + 10 * min),
                    " --weekdays ", XtWeekday(now.secs - kDay)), false},
      // The kernel's timezone.
      {absl::StrCat("--timestart ", Hms(lsod - 20 * min), " --timestop ", Hms(lsod + 20 * min),
                    " --weekdays ", XtWeekday(now.Local()), " --kerneltz"), true},
      {absl::StrCat("--weekdays ", XtWeekday(now.Local() + kDay), " --kerneltz"), false},
  };
}

// nft rules (TZ=UTC: nft's local times are UTC), one source each.
std::vector<Rule> NftRules(const Now& now) {
  const int64_t sod = Sod(now.secs), min = 60;
  const int local_day = Utc(now.Local()).tm_wday;  // meta day: the kernel's zone, 0 Sunday
  return {
      {absl::StrCat("meta hour \"", Hms(sod - 20 * min), "\"-\"", Hms(sod + 20 * min), "\""), true},
      {absl::StrCat("meta hour \"", Hms(sod + 20 * min), "\"-\"", Hms(sod + 60 * min), "\""), false},
      {absl::StrCat("meta hour != \"", Hms(sod - 20 * min), "\"-\"", Hms(sod + 20 * min), "\""), false},
      {absl::StrCat("meta hour < \"", Hms(sod + 20 * min), "\""), true},
      {absl::StrCat("meta day ", local_day), true},
      {absl::StrCat("meta day ", (local_day + 1) % 7), false},
      {absl::StrCat("meta day != ", (local_day + 1) % 7), true},
      {absl::StrCat("meta time > \"", NftDate(now.secs - kDay), "\""), true},
      {absl::StrCat("meta time > \"", NftDate(now.secs + kDay), "\""), false},
      {absl::StrCat("meta time \"", NftDate(now.secs - 600), "\"-\"", NftDate(now.secs + 600),
                    "\""), true},
      {absl::StrCat("meta time < ", now.secs - 600), false},
  };
}

std::string Source(size_t i) { return absl::StrCat("192.0.2.", i + 1); }

std::string IptablesDump(const std::vector<Rule>& rules) {
  std::string out = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n";
  for (size_t i = 0; i < rules.size(); ++i) {
    absl::StrAppend(&out, "-A FORWARD -s ", Source(i), "/32 -m time ", rules[i].match,
                    " -j DROP\n");
  }
  return out + "COMMIT\n";
}

std::string NftRuleset(const std::vector<Rule>& rules) {
  std::string out =
      "table ip filter {\n  chain forward {\n    type filter hook forward priority 0; policy accept;\n";
  for (size_t i = 0; i < rules.size(); ++i) {
    absl::StrAppend(&out, "    ip saddr ", Source(i), " ", rules[i].match, " drop\n");
  }
  return out + "  }\n}\n";
}

Frames FramesFor(size_t count) {
  Frames frames;
  for (size_t i = 0; i < count; ++i) {
    frames.push_back(BuildFrame(FrameSpec{.src = Source(i), .dst = "198.51.100.1", .proto = 17,
                                          .sport = static_cast<uint16_t>(3000 + i), .dport = 53,
                                          .payload = {0, 0, 0, 0}}));
  }
  return frames;
}

std::vector<bool> Expected(const std::vector<Rule>& rules) {
  std::vector<bool> accept;
  for (const Rule& r : rules) accept.push_back(!r.drops);
  return accept;
}

// The kernel and every tier on one ruleset; returns the disagreements.
int Compare(const std::string& name, OracleSyntax syntax, const std::string& text,
            const std::vector<Rule>& rules, const Now& now, const std::string& dir,
            const std::vector<std::string>& tiers) {
  absl::StatusOr<Frames> frames = PrepareOracleFrames(FramesFor(rules.size()));
  EXPECT_TRUE(frames.ok()) << frames.status();
  if (!frames.ok()) return 1;
  const std::string pcap = absl::StrCat(dir, "/", name, ".pcap");
  const std::string file = absl::StrCat(dir, "/", name, syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
  EXPECT_TRUE(WritePcap(pcap, *frames));
  std::ofstream(file) << text;
  absl::StatusOr<std::vector<bool>> kernel = KernelVerdicts({.syntax = syntax, .text = text}, *frames);
  EXPECT_TRUE(kernel.ok()) << name << ": " << kernel.status();
  if (!kernel.ok()) return 1;
  EXPECT_EQ(*kernel, Expected(rules)) << name << ": the kernel's answers are not the windows' "
                                      << "(rules:\n" << text << ")";
  const std::string clock =
      absl::StrCat("--time ", IsoT(now.secs), "Z --kernel-tz ", KernelTzFlag(now.tz_west));
  int disagreements = 0;
  for (const std::string& tier : tiers) {
    absl::StatusOr<std::vector<bool>> ours = RulejitVerdicts(file, pcap, tier, frames->size(), clock);
    EXPECT_TRUE(ours.ok()) << name << " " << tier << ": " << ours.status();
    if (!ours.ok()) return disagreements + 1;
    disagreements += ReportDisagreements(absl::StrCat(name, " tier ", tier), *kernel, *ours);
  }
  return disagreements;
}

TEST(TimeKernel, EveryTierAgreesWithTheKernelAroundNow) {
  for (OracleSyntax s : {OracleSyntax::kIptablesSave, OracleSyntax::kNft}) {
    if (absl::Status a = OracleAvailable(s); !a.ok()) GTEST_SKIP() << a.message();
  }
  const Now now = ReadNow();
  for (int64_t sod : {Sod(now.secs), Sod(now.Local())}) {
    if (sod < kMargin || sod > kDay - kMargin) {
      GTEST_SKIP() << "within 90 minutes of midnight (" << Hms(sod) << "): a day could change";
    }
  }
  setenv("TZ", "UTC", 1);  // for nft's and rulejit's parse of local times
  tzset();
  ScratchDir dir("rulejit-time");
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  const std::vector<Rule> ipt = IptablesRules(now), nft = NftRules(now);
  int disagreements = Compare("xt_time", OracleSyntax::kIptablesSave, IptablesDump(ipt), ipt, now,
                              dir.path, tiers);
  disagreements += Compare("nft_meta", OracleSyntax::kNft, NftRuleset(nft), nft, now, dir.path,
                           tiers);
  EXPECT_EQ(disagreements, 0);
  std::cout << "time: " << ipt.size() << " iptables and " << nft.size()
            << " nft rules at " << IsoT(now.secs) << "Z (kernel tz " << KernelTzFlag(now.tz_west)
            << ") x " << tiers.size() << " tiers, " << disagreements
            << " disagreements with the kernel\n";
}

// Without --time rulejit refuses the ruleset with the rule's location.
TEST(TimeKernel, EvalWithoutAClockIsALocatedError) {
  if (access(RULEJIT_TOOL, X_OK) != 0) GTEST_SKIP() << "no rulejit binary";
  ScratchDir dir("rulejit-time-noclock");
  const std::string file = dir.path + "/t.ipt", pcap = dir.path + "/f.pcap";
  std::ofstream(file) << IptablesDump({{"--weekdays Mon", true}});
  ASSERT_TRUE(WritePcap(pcap, FramesFor(1)));
  ToolOutput out = RunTool(absl::StrCat("eval ", file, " ", pcap, " ", kHookArgs));
  EXPECT_NE(out.exit_code, 0);
  EXPECT_THAT(out.out, ::testing::HasSubstr("t.ipt:5:"));
  EXPECT_THAT(out.out, ::testing::HasSubstr("reads the wall clock: give --time"));
}

}  // namespace
}  // namespace rulejit::testing
