// See time_eval.h. Each function follows its kernel counterpart's integer
// types (u64 division of a signed time, u32 day counts, u8 month days), so
// that the answers agree with the kernel's outside the usual range too.
#include "ir/time_eval.h"

#include <cstring>

namespace rulejit::ir {
namespace {

constexpr uint64_t kNsPerSec = 1000000000;
constexpr int64_t kSecsPerDay = 86400;

// ktime_get_real_seconds(): whole seconds of the clock.
int64_t ClockSeconds(const PacketMeta& meta) {
  return static_cast<int64_t>(meta.clock_ns / kNsPerSec);
}

// nft_meta_weekday: the day since the epoch in the kernel's timezone,
// 0 Sunday (1970-01-01 was a Thursday).
uint8_t NftWeekday(const PacketMeta& meta) {
  const int64_t secs = ClockSeconds(meta) - 60 * int64_t{meta.kernel_tz_minuteswest};
  const auto dse = static_cast<uint32_t>(static_cast<uint64_t>(secs) / kSecsPerDay);
  return static_cast<uint8_t>((4 + dse) % 7);
}

// nft_meta_hour: time64_to_tm(secs, 0) in seconds since midnight UTC.
uint32_t NftHour(const PacketMeta& meta) {
  int64_t v = ClockSeconds(meta) % kSecsPerDay;
  if (v < 0) v += kSecsPerDay;
  return static_cast<uint32_t>(v);
}

// xt_time's days_since_epoch: the first day of each year 2039 .. 1970.
constexpr uint16_t kDaysSinceEpoch[] = {
    25202, 24837, 24472, 24106, 23741, 23376, 23011, 22645, 22280, 21915,  // 2039-2030
    21550, 21184, 20819, 20454, 20089, 19723, 19358, 18993, 18628, 18262,  // 2029-2020
    17897, 17532, 17167, 16801, 16436, 16071, 15706, 15340, 14975, 14610,  // 2019-2010
    14245, 13879, 13514, 13149, 12784, 12418, 12053, 11688, 11323, 10957,  // 2009-2000
    10592, 10227, 9862,  9496,  9131,  8766,  8401,  8035,  7670,  7305,   // 1999-1990
    6940,  6574,  6209,  5844,  5479,  5113,  4748,  4383,  4018,  3652,   // 1989-1980
    3287,  2922,  2557,  2191,  1826,  1461,  1096,  730,   365,   0,      // 1979-1970
};
constexpr uint16_t kDaysSinceYear[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
constexpr uint16_t kDaysSinceLeapYear[] = {0,   31,  60,  91,  121, 152,
                                           182, 213, 244, 274, 305, 335};

bool IsLeap(uint32_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

// localtime_3: the day of the month of day `dse` since the epoch. As in
// the kernel, days past 2039 count on from 2039-12 (a day above 31, whose
// bit the kernel's shift then takes modulo 32 on x86).
uint8_t XtMonthday(uint32_t dse) {
  uint32_t i = 0, year = 2039;
  while (kDaysSinceEpoch[i] > dse) ++i, --year;
  const uint32_t w = dse - kDaysSinceEpoch[i];
  const uint16_t* since = IsLeap(year) ? kDaysSinceLeapYear : kDaysSinceYear;
  uint32_t m = 11;
  while (m > 0 && since[m] > w) --m;
  return static_cast<uint8_t>(w - since[m] + 1);
}

}  // namespace

bool IsClockKey(MetaKey key) {
  return key == MetaKey::kTimeNs || key == MetaKey::kTimeDay || key == MetaKey::kTimeHour;
}

bool NeedsKernelTz(MetaKey key) { return key == MetaKey::kTimeDay; }

bool EvalClockKey(MetaKey key, const PacketMeta& meta, uint8_t* dst) {
  if (!meta.has_clock || (NeedsKernelTz(key) && !meta.has_kernel_tz)) return false;
  switch (key) {
    case MetaKey::kTimeNs: std::memcpy(dst, &meta.clock_ns, 8); return true;
    case MetaKey::kTimeDay: {
      // nft_reg_store8 zeroes the rest of the register word.
      const uint32_t word = NftWeekday(meta);
      std::memcpy(dst, &word, 4);
      return true;
    }
    case MetaKey::kTimeHour: {
      const uint32_t secs = NftHour(meta);
      std::memcpy(dst, &secs, 4);
      return true;
    }
    default: return false;
  }
}

// time_mt, step by step.
bool EvalTimeMatch(const TimeMatch& e, const PacketMeta& meta) {
  if (!meta.has_clock || (e.kerneltz && !meta.has_kernel_tz)) return false;
  int64_t stamp = ClockSeconds(meta);
  if (e.kerneltz) stamp -= 60 * int64_t{meta.kernel_tz_minuteswest};
  if (stamp < int64_t{e.date_start} || stamp > int64_t{e.date_stop}) return false;
  // localtime_1: the second of the day (div_u64_rem of the u64 stamp).
  const auto packet_time = static_cast<uint32_t>(static_cast<uint64_t>(stamp) % kSecsPerDay);
  if (e.daytime_start < e.daytime_stop) {
    if (packet_time < e.daytime_start || packet_time > e.daytime_stop) return false;
  } else {
    if (packet_time < e.daytime_start && packet_time > e.daytime_stop) return false;
    // --contiguous: the hours after midnight belong to the day before.
    if (e.contiguous && packet_time <= e.daytime_stop) stamp -= kSecsPerDay;
  }
  // localtime_2: 1 Monday .. 7 Sunday.
  const auto dse = static_cast<uint32_t>(static_cast<uint64_t>(stamp) / kSecsPerDay);
  const uint32_t weekday = (4 + dse - 1) % 7 + 1;
  if ((e.weekdays & 0xff & (1u << weekday)) == 0) return false;
  if (e.monthdays != 0xfffffffe) {
    const uint8_t monthday = XtMonthday(dse);
    if ((e.monthdays & (1u << (monthday & 31))) == 0) return false;
  }
  return true;
}

}  // namespace rulejit::ir
