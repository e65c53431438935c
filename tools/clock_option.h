// `--time T|pcap` and `--kernel-tz OFFSET|local` of the subcommands that
// run packets: the wall clock `meta time/day/hour` and iptables' time
// match read (PacketMeta::clock_ns), and the kernel's timezone
// (PacketMeta::kernel_tz_minuteswest) that `meta day` and
// `-m time --kerneltz` apply. Never a silent default: a ruleset that reads
// the clock (or the kernel timezone) needs the flag, else a located error.
//
//   --time 2026-12-05T07:30:00Z       every frame at this instant (RFC 3339:
//   --time 2026-12-05T08:30:00.5+01:00   seconds, optional fraction, Z or
//                                        an offset)
//   --time pcap                       each frame at its capture timestamp
//   --kernel-tz +01:00                sys_tz of a kernel one hour east of UTC
//   --kernel-tz UTC | local           zero | this machine's (gettimeofday)
#ifndef RULEJIT_TOOLS_CLOCK_OPTION_H_
#define RULEJIT_TOOLS_CLOCK_OPTION_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "rulejit/packet.h"
#include "tools/args.h"

namespace rulejit::tools {

struct ClockOptions {
  std::optional<uint64_t> fixed_ns;  // --time T
  bool from_frames = false;          // --time pcap
  std::optional<int32_t> kernel_tz_minuteswest;  // --kernel-tz
};

// Reads --time and --kernel-tz; absent flags stay unset.
absl::StatusOr<ClockOptions> ReadClockOptions(const Args& args);

// RFC 3339 date-time → ns since the epoch; nullopt when malformed.
std::optional<uint64_t> ParseRfc3339(const std::string& text);
// "+HH:MM" / "-HH:MM" east of UTC, "UTC" → minutes WEST (sys_tz's sign).
std::optional<int32_t> ParseKernelTz(const std::string& text);

// The first expression that reads the clock, and the first that reads the
// kernel timezone; null when none.
const ir::Node* FirstClockRead(const ir::Ruleset& ruleset);
const ir::Node* FirstKernelTzRead(const ir::Ruleset& ruleset);

// A located error on `err` when the ruleset reads an input the options do
// not give; false then. `frames` says whether the packets come with their
// own timestamps (a pcap), so that `--time pcap` means something.
bool CheckClockInputs(const ir::Ruleset& ruleset, const ClockOptions& options, bool frames,
                      std::ostream& err);

// Sets the clock inputs of `meta` for a frame captured at `frame_ns`.
void ApplyClock(const ClockOptions& options, uint64_t frame_ns, PacketMeta* meta);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_CLOCK_OPTION_H_
