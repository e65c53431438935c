// End to end: `rulejit run` as an AF_XDP bump in the wire between two veths.
//
//   ns <id>-src            ns <id>-fw                         ns <id>-dst
//   s0  <──── veth ────>  fwin  [rulejit run]  fwout  <──── veth ────>  d0
//   (AF_PACKET send                                        (AF_PACKET send
//    and capture)                                           and capture)
//
// No addresses anywhere and IPv6 off in all three namespaces, so the only
// frames on the wire are the test's own. Frames are hand-built Ethernet/IPv4
// UDP and TCP SYN; fw has no IP stack role at all: rulejit moves frames from
// fwin to fwout and back. The test checks which frames arrive, the per-rule
// and policy counters `rulejit run` prints at exit, clear errors for a
// missing interface and a busy queue, and that no XDP program is left
// attached after SIGTERM. Needs root and AF_XDP; skips otherwise.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

// ------------------------------------------------------------ the test

// Line numbers matter: the test reads the counters by FILE:LINE.
constexpr char kRuleset[] =
    "*filter\n"                                                           // 1
    ":INPUT ACCEPT [0:0]\n"                                               // 2
    ":FORWARD DROP [0:0]\n"                                               // 3
    ":OUTPUT ACCEPT [0:0]\n"                                              // 4
    "-A FORWARD -i fwin -o fwout -p udp --dport 5001 -j ACCEPT\n"         // 5
    "-A FORWARD -i fwin -o fwout -p udp --dport 5002 -j DROP\n"           // 6
    "-A FORWARD -i fwin -o fwout -p tcp --syn --dport 80 -j ACCEPT\n"     // 7
    "-A FORWARD -i fwout -o fwin -p udp --sport 5001 -j ACCEPT\n"         // 8
    "-A FORWARD -i fwout -o fwin -p udp --dport 5001 -j DROP\n"           // 9
    "COMMIT\n";

std::string WriteRuleset(const std::string& dir) {
  std::string path = absl::StrCat(dir, "/xdp_e2e_", getpid(), ".ipt");
  std::ofstream(path) << kRuleset;
  return path;
}

// The per-rule counts the flows below produce (`rule`/`policy` lines).
void ExpectRuleCounts(const std::string& text, const std::string& rules) {
  const std::pair<int, int64_t> expected[] = {
      {5, 50}, {6, 30}, {7, 40}, {8, 25}, {9, 15}};
  for (const auto& [line, packets] : expected) {
    EXPECT_EQ(PacketsOf(text, absl::StrCat("rule ", rules, ":", line, " ")),
              packets)
        << "line " << line << "\n" << text;
  }
  EXPECT_EQ(PacketsOf(text, "policy filter/FORWARD "), 30) << text;
}

// The per-interface counts the flows below produce (`WHAT IF ...` lines).
void ExpectInterfaceCounts(const std::string& text, const std::string& what) {
  EXPECT_EQ(LineMismatches(text, what,
                           {{"fwin", "rx_packets", 150}, {"fwin", "dropped", 60},
                            {"fwin", "tx_packets", 25}, {"fwout", "rx_packets", 40},
                            {"fwout", "dropped", 15}, {"fwout", "tx_packets", 90}}),
            "")
      << text;
}

// The whole scenario, with the XDP program in native mode (veth has it) or
// forced to generic mode.
void ForwardsCountsAndDetaches(bool generic) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  RemoveStaleNamespaces();
  Topology topo;
  if (std::string err = topo.Create(); !err.empty()) {
    GTEST_SKIP() << "cannot build the namespaces: " << err;
  }
  const std::string rules = WriteRuleset(::testing::TempDir());
  const std::string ctl = absl::StrCat(::testing::TempDir(), "/xdp_e2e_",
                                       getpid(), generic ? "_g" : "_n", ".sock");
  std::vector<std::string> run_argv = {
      "ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run", rules,
      "--in", "fwin", "--out", "fwout", "--stats-interval", "0.5",
      "--ctl", ctl};
  if (generic) run_argv.push_back("--generic");

  Child fw(run_argv);
  ASSERT_TRUE(fw.WaitForLine("ready ", 10000))
      << "rulejit run did not get ready:\n" << fw.text();
  const char* mode = generic ? "generic" : "native";
  EXPECT_TRUE(absl::StrContains(fw.text(), absl::StrCat("in=fwin/", mode)))
      << fw.text();

  // A second engine on the same queues must fail cleanly: busy.
  Output busy = RunCmd({"ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run",
                     rules, "--in", "fwin", "--out", "fwout", "--duration", "1"});
  EXPECT_EQ(busy.exit_code, 3) << busy.text;
  EXPECT_TRUE(absl::StrContains(busy.text, "busy")) << busy.text;
  // A missing interface is a usage error naming it.
  Output missing = RunCmd({"ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run",
                        rules, "--in", "nosuch0", "--out", "fwout"});
  EXPECT_EQ(missing.exit_code, 2) << missing.text;
  EXPECT_TRUE(absl::StrContains(missing.text, "'nosuch0' does not exist"))
      << missing.text;

  // Without privileges: a clear permission error, not a crash.
  Output unprivileged = RunCmd(
      {"ip", "netns", "exec", topo.fw(), "setpriv", "--reuid=65534",
       "--regid=65534", "--clear-groups", "--inh-caps=-all", RULEJIT_TOOL,
       "run", rules, "--in", "fwin", "--out", "fwout", "--ctl", "none"});
  if (unprivileged.exit_code != 127 &&
      !absl::StrContains(unprivileged.text, "Permission denied")) {
    EXPECT_EQ(unprivileged.exit_code, 3) << unprivileged.text;
    EXPECT_TRUE(absl::StrContains(unprivileged.text, "permission denied"))
        << unprivileged.text;
  }

  const std::vector<Flow> flows = {
      {true, IPPROTO_UDP, 4000, 5001, 50, true},    // rule 5
      {true, IPPROTO_UDP, 4000, 5002, 30, false},   // rule 6
      {true, IPPROTO_UDP, 4000, 5003, 20, false},   // policy
      {true, IPPROTO_TCP, 4001, 80, 40, true},      // rule 7
      {true, IPPROTO_TCP, 4001, 22, 10, false},     // policy
      {false, IPPROTO_UDP, 5001, 4000, 25, true},   // rule 8 (reply)
      {false, IPPROTO_UDP, 4002, 5001, 15, false},  // rule 9
  };
  Arrivals at_dst, at_src;
  ASSERT_EQ(SendFlows(topo, flows, at_dst, at_src), "");
  EXPECT_EQ(FlowMismatches(flows, at_dst, at_src), "");

  // The control socket reports the same counts while the engine runs as
  // `run` prints when it stops.
  Output stats = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl, "stats"});
  EXPECT_EQ(stats.exit_code, 0) << stats.text;
  ExpectInterfaceCounts(stats.text, "iface");
  Output counters = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl, "counters"});
  EXPECT_EQ(counters.exit_code, 0) << counters.text;
  ExpectRuleCounts(counters.text, rules);

  EXPECT_EQ(fw.Stop(SIGTERM), 0) << fw.text();
  EXPECT_NE(access(ctl.c_str(), F_OK), 0) << "the control socket outlived run";
  const std::string& out = fw.text();
  EXPECT_TRUE(absl::StrContains(out, "stats t=")) << out;
  ExpectRuleCounts(out, rules);
  ExpectInterfaceCounts(out, "final");

  // SIGTERM detached the XDP program from both interfaces.
  Output links = RunCmd({"ip", "-n", topo.fw(), "link", "show"});
  EXPECT_EQ(links.exit_code, 0) << links.text;
  EXPECT_FALSE(absl::StrContains(links.text, "xdp")) << links.text;
  unlink(rules.c_str());
}

TEST(XdpE2e, NativeModeForwardsAllowedFlowsCountsRulesAndDetaches) {
  ForwardsCountsAndDetaches(/*generic=*/false);
}

TEST(XdpE2e, GenericModeForwardsAllowedFlowsCountsRulesAndDetaches) {
  ForwardsCountsAndDetaches(/*generic=*/true);
}

// Command-line mistakes fail before any socket is opened (no root needed).
TEST(XdpRunCli, UsageErrorsAreReportedWithoutOpeningSockets) {
  const std::string rules = WriteRuleset(::testing::TempDir());
  Output no_out = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "lo"});
  EXPECT_EQ(no_out.exit_code, 2) << no_out.text;
  EXPECT_TRUE(absl::StrContains(no_out.text, "--out IF")) << no_out.text;

  Output bad_seconds = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "a0",
                               "--out", "b0", "--duration", "soon"});
  EXPECT_EQ(bad_seconds.exit_code, 2) << bad_seconds.text;
  EXPECT_TRUE(absl::StrContains(bad_seconds.text, "--duration")) << bad_seconds.text;

  Output same = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "lo", "--out", "lo"});
  EXPECT_EQ(same.exit_code, 2) << same.text;
  EXPECT_TRUE(absl::StrContains(same.text, "two different interfaces")) << same.text;

  Output missing = RunCmd({RULEJIT_TOOL, "run", rules, "--in", "rjxnosuch0",
                           "--out", "lo"});
  EXPECT_EQ(missing.exit_code, 2) << missing.text;
  EXPECT_TRUE(absl::StrContains(missing.text, "'rjxnosuch0' does not exist"))
      << missing.text;

  Output bad_request = RunCmd({RULEJIT_TOOL, "ctl", "--socket", "/nonexistent.sock", "flush"});
  EXPECT_EQ(bad_request.exit_code, 2) << bad_request.text;
  EXPECT_TRUE(absl::StrContains(bad_request.text, "unknown request 'flush'"))
      << bad_request.text;
  Output no_server = RunCmd({RULEJIT_TOOL, "ctl", "--socket",
                             "/nonexistent/rjx.sock", "stats"});
  EXPECT_EQ(no_server.exit_code, 3) << no_server.text;
  EXPECT_TRUE(absl::StrContains(no_server.text, "cannot connect"))
      << no_server.text;

  Output bad_rules = RunCmd({RULEJIT_TOOL, "run", "/nonexistent/rules.ipt",
                             "--in", "lo", "--out", "rjxnosuch0"});
  EXPECT_EQ(bad_rules.exit_code, 1) << bad_rules.text;
  unlink(rules.c_str());
}

}  // namespace
