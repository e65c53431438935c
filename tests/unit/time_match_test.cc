// The wall-clock matches on fixed clocks: xt_time's time_mt (iptables
// -m time as [ time ... ]) and nft's meta time / day / hour, as
// ir/time_eval.cc computes them, at their edges (a window wrapping past
// midnight, --contiguous, month day 31, leap years, UTC against the kernel
// timezone, inclusive date bounds); the iptables lowering, its refusals
// and the reader round trip; and every backend on the same clocks. The
// kernel's own verdicts on the real clock: tests/kernel/time_kernel_test.cc.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/time_eval.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using frontends::iptables_test::Lower;
using frontends::iptables_test::Refused;

// The clock at Y-M-D h:m:s UTC (plus `ns`), with the kernel timezone
// `tz_west` minutes west of UTC.
PacketMeta At(int y, int mo, int d, int h, int mi, int s, int32_t tz_west = 0, uint64_t ns = 0) {
  using namespace std::chrono;
  const sys_seconds t = sys_days(year_month_day{year{y}, month(mo), day(d)}) + hours(h) +
                        minutes(mi) + seconds(s);
  PacketMeta meta;
  meta.has_clock = true;
  meta.clock_ns = static_cast<uint64_t>(t.time_since_epoch().count()) * 1000000000u + ns;
  meta.has_kernel_tz = true;
  meta.kernel_tz_minuteswest = tz_west;
  return meta;
}

ir::TimeMatch Daytime(uint32_t start, uint32_t stop) {
  ir::TimeMatch e;
  e.daytime_start = start;
  e.daytime_stop = stop;
  return e;
}

constexpr uint32_t kMon = 1u << 1, kTue = 1u << 2, kSat = 1u << 6, kSun = 1u << 7;

TEST(TimeMatch, AWindowPastMidnightWrapsInclusively) {
  const ir::TimeMatch e = Daytime(22 * 3600, 2 * 3600);  // 22:00-02:00
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 12, 5, 23, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 12, 5, 1, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 12, 5, 2, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 12, 5, 22, 0, 0)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2026, 12, 5, 2, 0, 1)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2026, 12, 5, 21, 59, 59)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2026, 12, 5, 12, 0, 0)));
  // A plain window, and start == stop (the kernel's else branch: always).
  EXPECT_TRUE(ir::EvalTimeMatch(Daytime(8 * 3600, 17 * 3600), At(2026, 12, 5, 17, 0, 0, 0, 999999999)));
  EXPECT_FALSE(ir::EvalTimeMatch(Daytime(8 * 3600, 17 * 3600), At(2026, 12, 5, 17, 0, 1)));
  EXPECT_TRUE(ir::EvalTimeMatch(Daytime(3600, 3600), At(2026, 12, 5, 12, 0, 0)));
}

TEST(TimeMatch, ContiguousCountsTheHoursAfterMidnightAsTheDayBefore) {
  ir::TimeMatch e = Daytime(22 * 3600, 2 * 3600);
  e.weekdays = kMon;
  // 2026-03-02 is a Monday, 03-03 a Tuesday.
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 3, 2, 23, 0, 0)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2026, 3, 3, 1, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 3, 2, 1, 0, 0)));
  e.contiguous = true;
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 3, 2, 23, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 3, 3, 1, 0, 0)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2026, 3, 2, 1, 0, 0)));  // Sunday night's
}

TEST(TimeMatch, MonthDaysAndLeapYears) {
  ir::TimeMatch e;
  e.monthdays = 1u << 31;
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 1, 31, 12, 0, 0)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2026, 2, 28, 12, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2026, 3, 31, 0, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2024, 12, 31, 23, 59, 59)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2025, 1, 1, 0, 0, 0)));
  e.monthdays = 1u << 29;
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2024, 2, 29, 12, 0, 0)));
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2023, 3, 1, 12, 0, 0)));  // not a leap year
  e.monthdays = 1u << 1;
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2024, 3, 1, 12, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2023, 3, 1, 12, 0, 0)));
  EXPECT_TRUE(ir::EvalTimeMatch(e, At(2000, 3, 1, 12, 0, 0)));  // 2000 is a leap year
  EXPECT_FALSE(ir::EvalTimeMatch(e, At(2000, 2, 29, 12, 0, 0)));
}

TEST(TimeMatch, UtcUnlessKernelTz) {
  // 2026-12-05 (Saturday) 23:30 UTC is Sunday 01:30 in a kernel at UTC+2
  // (tz_minuteswest -120).
  const PacketMeta meta = At(2026, 12, 5, 23, 30, 0, -120);
  ir::TimeMatch e = Daytime(3600, 2 * 3600);
  e.weekdays = kSun;
  EXPECT_FALSE(ir::EvalTimeMatch(e, meta));
  e.kerneltz = true;
  EXPECT_TRUE(ir::EvalTimeMatch(e, meta));
  e.weekdays = kSat;
  EXPECT_FALSE(ir::EvalTimeMatch(e, meta));
  // Without the kernel's timezone --kerneltz does not match; UTC does.
  PacketMeta no_tz = meta;
  no_tz.has_kernel_tz = false;
  EXPECT_FALSE(ir::EvalTimeMatch(e, no_tz));
  EXPECT_TRUE(ir::EvalTimeMatch(Daytime(23 * 3600, 86399), no_tz));
  // Without a clock nothing matches.
  EXPECT_FALSE(ir::EvalTimeMatch(ir::TimeMatch{}, PacketMeta{}));
}

TEST(TimeMatch, DateBoundsAreInclusiveWholeSeconds) {
  const PacketMeta meta = At(2026, 12, 5, 7, 30, 0, 0, 500000000);
  const uint32_t now = static_cast<uint32_t>(meta.clock_ns / 1000000000u);
  ir::TimeMatch e;
  e.date_start = now;
  EXPECT_TRUE(ir::EvalTimeMatch(e, meta));
  e.date_start = now + 1;
  EXPECT_FALSE(ir::EvalTimeMatch(e, meta));
  e = ir::TimeMatch{};
  e.date_stop = now;
  EXPECT_TRUE(ir::EvalTimeMatch(e, meta));
  e.date_stop = now - 1;
  EXPECT_FALSE(ir::EvalTimeMatch(e, meta));
}

TEST(ClockKeys, NftTimeDayAndHour) {
  uint8_t reg[8] = {};
  // Saturday 2026-12-05 23:30 UTC; the kernel at UTC+2 says Sunday (0).
  const PacketMeta meta = At(2026, 12, 5, 23, 30, 15, -120, 7);
  ASSERT_TRUE(ir::EvalClockKey(ir::MetaKey::kTimeDay, meta, reg));
  EXPECT_EQ(reg[0], 0);
  PacketMeta utc = meta;
  utc.kernel_tz_minuteswest = 0;
  ASSERT_TRUE(ir::EvalClockKey(ir::MetaKey::kTimeDay, utc, reg));
  EXPECT_EQ(reg[0], 6);
  uint32_t hour = 0;
  ASSERT_TRUE(ir::EvalClockKey(ir::MetaKey::kTimeHour, meta, reinterpret_cast<uint8_t*>(&hour)));
  EXPECT_EQ(hour, 23u * 3600 + 30 * 60 + 15);  // UTC whatever the kernel's zone
  uint64_t ns = 0;
  ASSERT_TRUE(ir::EvalClockKey(ir::MetaKey::kTimeNs, meta, reinterpret_cast<uint8_t*>(&ns)));
  EXPECT_EQ(ns, meta.clock_ns);
  PacketMeta no_tz = meta;
  no_tz.has_kernel_tz = false;
  EXPECT_FALSE(ir::EvalClockKey(ir::MetaKey::kTimeDay, no_tz, reg));
  EXPECT_TRUE(ir::EvalClockKey(ir::MetaKey::kTimeHour, no_tz, reg));
  EXPECT_FALSE(ir::EvalClockKey(ir::MetaKey::kTimeHour, PacketMeta{}, reg));
}

TEST(IptablesTime, LowersToTheTimeMatch) {
  EXPECT_EQ(Lower("-m time --timestart 22:00 --timestop 02:00:30 --weekdays Mon,Fr,7 "
                  "--contiguous"),
            "[ time date 0-2147483647 daytime 79200-7230 weekdays 162 monthdays 4294967294 "
            "contiguous ]");
  EXPECT_EQ(Lower("-m time --datestart 2026-12-05T07:30:00 --datestop 2027 ! --monthdays 1,31 "
                  "--kerneltz"),
            "[ time date 1796455800-1798761600 daytime 0-86399 weekdays 254 "
            "monthdays 2147483644 kerneltz ]");
  EXPECT_EQ(Lower("-m time ! --weekdays Sat,Sun --utc"),
            "[ time date 0-2147483647 daytime 0-86399 weekdays 62 monthdays 4294967294 ]");
}

TEST(IptablesTime, RefusedAsLibxtTimeRefuses) {
  EXPECT_TRUE(Refused(Lower("-m time --timestart 08:00 --timestop 17:00 --contiguous"),
                      "--contiguous only makes sense"));
  EXPECT_TRUE(Refused(Lower("-m time --weekdays 0"), "does NOT begin with Sunday"));
  EXPECT_TRUE(Refused(Lower("-m time --weekdays Xy"), "not a valid day specifier"));
  EXPECT_TRUE(Refused(Lower("-m time --monthdays 32"), "not a valid day for --monthdays"));
  EXPECT_TRUE(Refused(Lower("-m time --datestart 2039-01-01"), "Invalid date"));
  EXPECT_TRUE(Refused(Lower("-m time --datestart 2026-13"), "Invalid date"));
  EXPECT_TRUE(Refused(Lower("-m time --timestart 24:00"), "invalid time"));
  EXPECT_TRUE(Refused(Lower("-m time --timestart 8"), "invalid time"));
  EXPECT_TRUE(Refused(Lower("-m time --utc --kerneltz"), "exclude each other"));
}

TEST(IptablesTime, ReadsBack) {
  nft_test::ExpectReadsBack(
      {"[ time date 0-2147483647 daytime 79200-7200 weekdays 2 monthdays 4294967294 "
       "contiguous ]",
       "[ time date 5-6 daytime 0-86399 weekdays 254 monthdays 2 kerneltz ]"});
}

// The same clocks on every backend: iptables' time and nft's meta keys.
TEST(TimeMatch, EveryBackendReadsTheGivenClock) {
  const std::string ipt =
      "*filter\n:INPUT ACCEPT [0:0]\n"
      "-A INPUT -p tcp --dport 1 -m time --timestart 22:00 --timestop 02:00 --weekdays Mon "
      "--contiguous -j DROP\n"
      "-A INPUT -p tcp --dport 2 -m time --monthdays 31 --kerneltz -j DROP\n"
      "COMMIT\n";
  const std::string nft =
      "table ip t {\n chain c {\n  type filter hook input priority 0;\n"
      "  tcp dport 3 meta day 0 drop\n"
      "  tcp dport 4 meta hour \"23:00\"-\"23:59\" drop\n"
      "  tcp dport 5 meta time < 1764919800 drop\n"
      " }\n}\n";
  struct Probe { int dport; PacketMeta meta; Verdict want; };
  const std::vector<Probe> probes = {
      {1, At(2026, 3, 3, 1, 0, 0), Verdict::kDrop},     // Tuesday 01:00: Monday's night
      {1, At(2026, 3, 2, 1, 0, 0), Verdict::kAccept},   // Monday 01:00: Sunday's
      {2, At(2026, 3, 31, 22, 30, 0, -120), Verdict::kAccept},  // April 1st in the kernel's zone
      {2, At(2026, 3, 30, 22, 30, 0, -120), Verdict::kDrop},
      {3, At(2026, 12, 5, 23, 30, 0, -120), Verdict::kDrop},  // Sunday at UTC+2
      {3, At(2026, 12, 5, 23, 30, 0, 0), Verdict::kAccept},
      {4, At(2026, 12, 5, 23, 30, 0, -120), Verdict::kDrop},
      {4, At(2026, 12, 5, 22, 30, 0, 0), Verdict::kAccept},
      {5, At(2025, 12, 5, 0, 0, 0), Verdict::kDrop},
      {5, At(2026, 12, 5, 7, 30, 0), Verdict::kAccept},
      {1, PacketMeta{}, Verdict::kAccept},  // no clock: the match fails
  };
  setenv("TZ", "UTC", 1);
  tzset();
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    absl::StatusOr<Ruleset> ipt_rs = ParseRuleset(ipt, "t.ipt");
    ASSERT_TRUE(ipt_rs.ok()) << ipt_rs.status();
    CompileOptions options;
    options.backend = backend;
    absl::StatusOr<std::unique_ptr<const Program>> ipt_program =
        Program::Compile(*std::move(ipt_rs), options);
    ASSERT_TRUE(ipt_program.ok()) << ipt_program.status();
    std::unique_ptr<const Program> nft_program = nft_test::CompileFor(nft, backend);
    ASSERT_NE(nft_program, nullptr);
    for (size_t i = 0; i < probes.size(); ++i) {
      const Program& program = probes[i].dport <= 2 ? **ipt_program : *nft_program;
      const std::vector<uint8_t> frame =
          testing::BuildFrame(testing::FrameSpec{.dport = static_cast<uint16_t>(probes[i].dport)});
      EXPECT_EQ(nft_test::VerdictOf(program, Hook::kInput, frame, probes[i].meta), probes[i].want)
          << BackendName(backend) << " probe " << i;
    }
  }
}

}  // namespace
}  // namespace rulejit
