// `rulejit diff --against-kernel FILE` (tools/against_kernel.h) against
// the kernel: where it reports a difference between rulejit's reading and
// the kernel's bytecode, the kernel must really treat packets otherwise
// than rulejit (checked by sending them through fw, kernel_oracle.h); on
// the real-world corpus it reports no difference, only the rules it cannot
// reason about exactly (state across packets, unmodelled fields).
//
// Needs root, `ip netns`, nft and the rulejit binary; skips with the
// reason otherwise. About 30 seconds.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

// A rule whose meaning nft 1.0.6 changes: it merges the two port
// compares into one 32-bit compare ("not both" instead of "neither").
constexpr char kMergedPorts[] = R"(table inet t {
  chain forward_c { type filter hook forward priority 0; policy accept;
    tcp sport != 22 tcp dport != 80 drop
  }
}
)";

TEST(AgainstKernel, ADifferenceItReportsIsOneTheKernelMakes) {
  if (absl::Status s = OracleAvailable(OracleSyntax::kNft); !s.ok()) GTEST_SKIP() << s.message();
  const ScratchDir dir("rulejit-against-kernel");
  const std::string file = dir.path + "/merged.nft";
  std::ofstream(file) << kMergedPorts;
  ToolOutput diff = RunTool(absl::StrCat("diff --against-kernel ", file, " --hook forward"));
  ASSERT_TRUE(diff.exit_code == 0 || diff.exit_code == 1) << diff.out;

  // Ports where "neither" and "not both" part: (22, 1000) and (1000, 80).
  Frames frames;
  const std::vector<std::pair<uint16_t, uint16_t>> ports = {
      {22, 1000}, {1000, 80}, {1000, 1000}, {22, 80}};
  for (const auto& [sport, dport] : ports) {
    frames.push_back(BuildFrame(FrameSpec{.src = "10.0.0.1", .dst = "10.9.0.1", .sport = sport,
                                          .dport = dport, .payload = {0, 0, 0, 0}}));
  }
  absl::StatusOr<std::vector<bool>> kernel =
      KernelVerdicts({.syntax = OracleSyntax::kNft, .text = kMergedPorts}, frames);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const std::vector<bool> rule_text = {true, true, false, true};  // what the rule says
  if (diff.exit_code == 1) {
    // The reported difference is real: the kernel drops what the rule's
    // text accepts, and the witnesses are those port pairs.
    EXPECT_EQ(*kernel, (std::vector<bool>{false, false, false, true}));
    EXPECT_TRUE(absl::StrContains(diff.out, "tcp sport 22 tcp dport { 0-79, 81-65535 }"))
        << diff.out;
  } else {
    EXPECT_EQ(*kernel, rule_text) << "the diff said equivalent:\n" << diff.out;
  }
}

TEST(AgainstKernel, RealWorldRulesetsShowNoDifference) {
  if (absl::Status s = OracleAvailable(OracleSyntax::kNft); !s.ok()) GTEST_SKIP() << s.message();
  const fs::path corpus = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "realworld";
  if (!fs::exists(corpus)) GTEST_SKIP() << "no corpus at " << corpus;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    if (entry.path().extension() == ".nft") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int equivalent = 0, inexact = 0, kernel_refuses = 0;
  for (const fs::path& f : files) {
    if (RunTool("check " + f.string()).exit_code != 0) continue;
    ToolOutput diff = RunTool("diff --against-kernel " + f.string());
    if (diff.exit_code == 0) {
      ++equivalent;
      continue;
    }
    EXPECT_EQ(diff.exit_code, 2) << f << ": a difference on a ruleset nft compiles right?\n"
                                 << diff.out;
    if (absl::StrContains(diff.out, "loading into the kernel failed")) {
      ++kernel_refuses;
      continue;
    }
    // Every error names a rule it cannot reason about, nothing else.
    for (absl::string_view line : absl::StrSplit(diff.out, '\n', absl::SkipEmpty())) {
      if (!absl::StrContains(line, "error:")) continue;
      EXPECT_TRUE(absl::StrContains(line, "not reasoned about exactly"))
          << f << ": " << line;
    }
    ++inexact;
  }
  std::cout << "against-kernel on " << corpus << ": " << equivalent << " equivalent, " << inexact
            << " with rules not reasoned about exactly, " << kernel_refuses
            << " the kernel refuses\n";
  EXPECT_GE(equivalent, 6);
}

}  // namespace
}  // namespace rulejit::testing
