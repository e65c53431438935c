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

bool WritePcap(const std::string& path, const Frames& frames);
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
// The kernel's fate of a frame in the same words.
std::string KernelFate(const PathOutcome& outcome);

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
