// Keeps bench/stateful_bench.sh from rotting: its --smoke mode (one round
// of 0.5 s windows, 100 rules, ~30 s) must produce a nonzero figure in
// every column of every row: rulejit `run` and the kernel (iptables-legacy,
// nft) forwarding established UDP, new TCP connections and new UDP flows
// through a stateful ruleset. Asserts nothing about speed. Root only;
// skipped where the benchmarks are not built (ct_traffic missing).
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"

namespace rulejit::xdp_test {
namespace {

constexpr int kRows = 11;  // 5 rulejit, 3 iptables-legacy, 3 nft

TEST(StatefulBenchTest, SmokeMeasuresEveryRow) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  const std::string traffic = std::string(RULEJIT_BINARY_DIR) + "/bench/ct_traffic";
  if (!std::filesystem::exists(traffic)) GTEST_SKIP() << "benchmarks not built: no " << traffic;
  for (const char* tool : {"iptables-legacy-restore", "nft", "conntrack"}) {
    if (RunCmd({"sh", "-c", std::string("command -v ") + tool}).exit_code != 0) {
      GTEST_SKIP() << tool << " is not installed";
    }
  }
  Output out = RunCmd({"bash", std::string(RULEJIT_SOURCE_DIR) + "/bench/stateful_bench.sh",
                       "--smoke", "--rulejit", RULEJIT_TOOL, "--traffic", traffic});
  ASSERT_EQ(out.exit_code, 0) << out.text;

  // The table: "forwarder/ruleset  udp (min-max)  tcp (min-max)  new (min-max)".
  std::istringstream lines(out.text);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("rulejit/", 0) != 0 && line.rfind("iptables-legacy/", 0) != 0 &&
        line.rfind("nft/", 0) != 0) {
      continue;
    }
    if (line.find(" / ") != std::string::npos) continue;  // a ratio line
    std::istringstream fields(line);
    std::string row, range;
    long long median[3] = {};
    fields >> row >> median[0] >> range >> median[1] >> range >> median[2] >> range;
    ASSERT_TRUE(fields) << "unreadable row: " << line;
    for (long long m : median) EXPECT_GT(m, 0) << line;
    ++rows;
  }
  EXPECT_EQ(rows, kRows) << out.text;
}

}  // namespace
}  // namespace rulejit::xdp_test
