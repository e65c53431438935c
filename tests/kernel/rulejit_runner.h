// Running `rulejit eval` the way the kernel tests compare it with the
// kernel: the tool binary (RULEJIT_TOOL) on a pcap of the injected frames at
// fw's FORWARD hook, verdict lists parsed back, scratch directories. Shared
// by kernel_diff_test.cc (generated rulesets) and kernel_txlate_test.cc
// (the iptables-translate corpus).
#ifndef RULEJIT_TESTS_KERNEL_RULEJIT_RUNNER_H_
#define RULEJIT_TESTS_KERNEL_RULEJIT_RUNNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/frames.h"

namespace rulejit::testing {

using Frames = std::vector<std::vector<uint8_t>>;

// The eval flags that put rulejit where the harness's ruleset runs: fw's
// FORWARD hook, and the netdev modes (ingress on fwin, egress on fwout).
inline constexpr char kHookArgs[] = "--hook forward --iif fwin --oif fwout";
inline constexpr char kIngressHookArgs[] = "--hook ingress --iif fwin";
inline constexpr char kEgressHookArgs[] = "--hook egress --oif fwout";

struct ToolOutput {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};
// `rulejit ARGS`.
ToolOutput RunTool(const std::string& args);

// Frame i is stamped `times_ns[i]` (default: 1 s + i µs).
bool WritePcap(const std::string& path, const Frames& frames,
               const std::vector<uint64_t>& times_ns = {});
// Frames of a pcap (to replay a kept directory).
absl::StatusOr<Frames> ReadPcap(const std::string& path);

// "<index> <verdict>" lines into accept / not accept per index; every index
// below `count` must be there.
absl::StatusOr<std::vector<bool>> ParseEval(const std::string& out, size_t count);
// The inverse, for kept directories.
std::string VerdictLines(const std::vector<bool>& accept);

// `rulejit eval FILE PCAP HOOK_ARGS --backend TIER EXTRA_ARGS` as a verdict list.
absl::StatusOr<std::vector<bool>> RulejitVerdicts(const std::string& file,
                                                  const std::string& pcap,
                                                  const std::string& tier, size_t count,
                                                  const std::string& extra_args = "",
                                                  const std::string& hook_args = kHookArgs);

// `eval --path` output ("<index> accept delivered|forwarded|sent" or
// "<index> drop") as one fate per index: delivered, forwarded, sent, drop,
// or missing.
std::vector<std::string> ParsePathFates(const std::string& out, size_t count);
// Which lines end in " random-port" (a NAT drew the port at random).
std::vector<bool> ParseRandomPorts(const std::string& out, size_t count);
// The kernel's fate of a frame in the same words.
std::string KernelFate(const PathOutcome& outcome);

// A packet of a connection through fw: from a client behind fwin, or
// (from_server) from a server behind fwout (kernel_oracle.h, both ways).
struct PathPacket {
  bool from_server;
  FrameSpec spec;
};
struct PathTraffic {
  Frames frames;                  // as built (KernelPathOutcomes prepares them)
  std::vector<bool> from_server;  // per frame
};
// Builds the packets and writes them to `pcap` as the oracle injects them.
absl::StatusOr<PathTraffic> WritePathTraffic(const std::vector<PathPacket>& packets,
                                             const std::string& pcap,
                                             const std::vector<uint64_t>& times_ns = {});

// The IP packet of an Ethernet frame, as its header's length says (a
// capture may pad short frames).
std::vector<uint8_t> IpPacket(const std::vector<uint8_t>& frame);

// What `rulejit eval --path forward` did with each frame on one tier.
struct PathRun {
  std::string tier;
  std::vector<std::string> fates;  // as ParsePathFates
  Frames written;                  // per frame: what rulejit sent on (empty: nothing)
};

// Runs `rulejit eval FILE PCAP --path PATH ARGS` on every tier and
// expects the kernel's fate for every frame, and for every frame both
// forwarded the IP packet the other side captured, but for the ports and
// L4 checksum where rulejit says it drew a port at random (gtest failures
// under `what`). On the output path rulejit's `sent` is the kernel's
// `forwarded` (the packet left fw). Returns the forwarded frames compared
// on the last tier; `runs`, when given, receives each tier's run.
size_t ExpectKernelPath(const std::string& what, const std::string& file, const std::string& pcap,
                        const std::string& args, const std::vector<PathOutcome>& kernel,
                        const std::vector<std::string>& tiers, const std::string& dir,
                        std::vector<PathRun>* runs = nullptr, const char* path = "forward");

// The frames where rulejit's verdicts differ from the kernel's, each
// reported as a test failure under `what` ("CASE tier T").
int ReportDisagreements(const std::string& what, const std::vector<bool>& kernel,
                        const std::vector<bool>& ours);
// A test failure unless the kernel both accepted and dropped some frame
// (a case that does not separate its frames tests nothing).
void ExpectSeparates(const std::string& what, const std::vector<bool>& kernel);

// A fresh /tmp/STEM-XXXXXX directory ("" on failure).
std::string MakeTempDir(const char* stem);

// Removes a scratch directory however the test ends (replay files are kept
// in directories of their own).
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const char* stem) : path(MakeTempDir(stem)) {}
  ~ScratchDir();
};

// The tiers `rulejit eval --backend B` accepts, probed on a one-rule ruleset
// written into `dir`.
std::vector<std::string> SupportedTiers(const std::string& dir);

// Ethernet + IPv4 with a non-zero fragment offset, or Ethernet + IPv6 whose
// fragment header (after hop-by-hop / routing / destination options / AH
// headers) has a non-zero offset.
bool NonFirstFragment(const std::vector<uint8_t>& frame);
// Ethernet + IPv6 with an AH header (before any non-first fragment header).
bool HasIpv6Ah(const std::vector<uint8_t>& frame);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_RULEJIT_RUNNER_H_
