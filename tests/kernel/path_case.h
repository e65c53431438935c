// One hand-written ruleset of a path test, checked the way every path
// test checks it: its frames through fw (kernel_oracle.h, path mode, with
// fw's host model read back) and through `rulejit eval --path forward
// --iif fwin --host` (or `--path output --host`) on that model on every
// tier (ExpectKernelPath).
// Shared by path_kernel_test.cc, path_addresses_kernel_test.cc and
// path_netmap_kernel_test.cc and path_output_kernel_test.cc.
#ifndef RULEJIT_TESTS_KERNEL_PATH_CASE_H_
#define RULEJIT_TESTS_KERNEL_PATH_CASE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"

namespace rulejit::testing {

struct PathCase {
  std::string name;
  OracleSyntax syntax;
  std::string text;
  // Run in fw before its host model is read (OracleOptions::fw_ready).
  std::function<absl::Status(const std::string& fw_netns)> fw_ready = nullptr;
};

// nft and iptables-legacy in the oracle, or why a path test skips.
absl::Status PathOracleAvailable();

// A path test's frames, written once as the oracle injects them into a
// scratch directory, and the tiers to run; `status` says whether it is
// ready. `output`: the frames start on fw's output path (sent by fw's
// own raw sockets, `eval --path output`) instead of arriving on fwin.
struct PathBench {
  PathBench(const char* stem, Frames frames, bool output = false);

  // Runs case `c` in the kernel and on every tier in rulejit; rulejit's
  // disagreements are gtest failures under c.name. The kernel's outcomes
  // (or why it could not run); `compared`: the forwarded frames compared.
  absl::StatusOr<std::vector<PathOutcome>> Check(const PathCase& c,
                                                 size_t* compared = nullptr) const;

  ScratchDir dir;
  Frames frames;
  std::string pcap;
  std::vector<std::string> tiers;
  bool output = false;
  absl::Status status;
};

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_PATH_CASE_H_
