// See clock_option.h.
#include "tools/clock_option.h"

#include <sys/time.h>

#include <cctype>
#include <chrono>
#include <variant>

#include "absl/strings/str_cat.h"
#include "ir/time_eval.h"
#include "ir/util.h"
#include "ir/walk.h"

namespace rulejit::tools {
namespace {

using ir::DecimalField;

// "Z", "+HH:MM" or "-HH:MM" at `pos` (to the end): seconds east of UTC.
std::optional<int64_t> ZoneOffset(const std::string& text, size_t pos) {
  if (text.size() == pos + 1 && (text[pos] == 'Z' || text[pos] == 'z')) return 0;
  if (text.size() != pos + 6 || (text[pos] != '+' && text[pos] != '-') || text[pos + 3] != ':') {
    return std::nullopt;
  }
  const int h = DecimalField(text, pos + 1, 2), m = DecimalField(text, pos + 4, 2);
  if (h < 0 || h > 23 || m < 0 || m > 59) return std::nullopt;
  const int64_t secs = h * 3600 + m * 60;
  return text[pos] == '-' ? -secs : secs;
}

// The nanoseconds of ".fraction" at `*pos` (none: 0), advancing `*pos`.
std::optional<uint64_t> Fraction(const std::string& text, size_t* pos) {
  if (*pos >= text.size() || text[*pos] != '.') return 0;
  uint64_t ns = 0, scale = 100000000;
  size_t i = *pos + 1;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (i - *pos > 9) return std::nullopt;  // finer than a nanosecond
    ns += static_cast<uint64_t>(text[i] - '0') * scale;
    scale /= 10;
  }
  if (i == *pos + 1) return std::nullopt;
  *pos = i;
  return ns;
}

bool IsClockRead(const ir::Expr& e) {
  if (const auto* load = std::get_if<ir::MetaLoad>(&e)) return ir::IsClockKey(load->key);
  return std::holds_alternative<ir::TimeMatch>(e);
}

bool IsKernelTzRead(const ir::Expr& e) {
  if (const auto* load = std::get_if<ir::MetaLoad>(&e)) return ir::NeedsKernelTz(load->key);
  const auto* time = std::get_if<ir::TimeMatch>(&e);
  return time != nullptr && time->kerneltz;
}

// sys_tz of this machine's kernel.
int32_t LocalKernelTz() {
  struct timeval tv;
  struct timezone tz = {};
  gettimeofday(&tv, &tz);
  return tz.tz_minuteswest;
}

}  // namespace

std::optional<uint64_t> ParseRfc3339(const std::string& text) {
  // YYYY-MM-DDTHH:MM:SS
  const int y = DecimalField(text, 0, 4), mo = DecimalField(text, 5, 2);
  const int d = DecimalField(text, 8, 2), h = DecimalField(text, 11, 2);
  const int mi = DecimalField(text, 14, 2), s = DecimalField(text, 17, 2);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
      mi > 59 || s < 0 || s > 59 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  size_t pos = 19;
  std::optional<uint64_t> fraction = Fraction(text, &pos);
  std::optional<int64_t> offset = fraction ? ZoneOffset(text, pos) : std::nullopt;
  if (!offset) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year{y}, std::chrono::month(mo),
                                          std::chrono::day(d)};
  if (!date.ok()) return std::nullopt;  // 2026-02-30
  const int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  const int64_t secs = days * 86400 + h * 3600 + mi * 60 + s - *offset;
  if (secs < 0) return std::nullopt;
  return static_cast<uint64_t>(secs) * 1000000000u + *fraction;
}

std::optional<int32_t> ParseKernelTz(const std::string& text) {
  if (text == "UTC" || text == "Z") return 0;
  std::optional<int64_t> east = ZoneOffset(text, 0);
  if (!east) return std::nullopt;
  return static_cast<int32_t>(-*east / 60);
}

absl::StatusOr<ClockOptions> ReadClockOptions(const Args& args) {
  ClockOptions options;
  if (std::optional<std::string> time = args.value("time")) {
    if (*time == "pcap") {
      options.from_frames = true;
    } else if (std::optional<uint64_t> ns = ParseRfc3339(*time)) {
      options.fixed_ns = *ns;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--time '", *time, "': expected pcap or an RFC 3339 time such as "
          "2026-12-05T07:30:00Z"));
    }
  }
  if (std::optional<std::string> tz = args.value("kernel-tz")) {
    if (*tz == "local") {
      options.kernel_tz_minuteswest = LocalKernelTz();
    } else if (std::optional<int32_t> west = ParseKernelTz(*tz)) {
      options.kernel_tz_minuteswest = *west;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--kernel-tz '", *tz, "': expected +HH:MM or -HH:MM (east of UTC), UTC or local"));
    }
  }
  return options;
}

const ir::Node* FirstClockRead(const ir::Ruleset& ruleset) {
  return ir::FirstNode(ruleset, IsClockRead);
}

const ir::Node* FirstKernelTzRead(const ir::Ruleset& ruleset) {
  return ir::FirstNode(ruleset, IsKernelTzRead);
}

bool CheckClockInputs(const ir::Ruleset& ruleset, const ClockOptions& options, bool frames,
                      std::ostream& err) {
  const bool clock = options.fixed_ns.has_value() || (options.from_frames && frames);
  if (const ir::Node* read = FirstClockRead(ruleset); read && !clock) {
    err << ruleset.Where(read->loc)
        << ": error: this rule reads the wall clock: give --time 2026-12-05T07:30:00Z (RFC 3339)"
        << (frames ? " or --time pcap (each frame's capture time)" : "") << "\n";
    return false;
  }
  if (const ir::Node* read = FirstKernelTzRead(ruleset);
      read && !options.kernel_tz_minuteswest) {
    err << ruleset.Where(read->loc)
        << ": error: this rule reads the kernel's timezone (sys_tz): give --kernel-tz +HH:MM, "
           "UTC or local\n";
    return false;
  }
  return true;
}

void ApplyClock(const ClockOptions& options, uint64_t frame_ns, PacketMeta* meta) {
  if (options.fixed_ns || options.from_frames) {
    meta->has_clock = true;
    meta->clock_ns = options.fixed_ns ? *options.fixed_ns : frame_ns;
  }
  if (options.kernel_tz_minuteswest) {
    meta->has_kernel_tz = true;
    meta->kernel_tz_minuteswest = *options.kernel_tz_minuteswest;
  }
}

}  // namespace rulejit::tools
