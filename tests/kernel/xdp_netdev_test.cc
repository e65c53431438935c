// End to end: `rulejit run` with nft netdev ingress/egress chains around the
// forward hook (see xdp_harness.h for the namespaces).
//
// Frames from fwin pass `ingress device fwin`, then the forward chain (iif
// fwin, oif fwout), then `egress device fwout`; frames from fwout pass
// `ingress device fwout`, forward, and no egress chain (none is bound to
// fwin). Each chain drops its own UDP port, so a frame of that port is lost
// only in the direction whose path holds the chain. A mark set at ingress is
// seen by the forward chain. Every chain ends in a bare `counter`, so the
// counters show exactly which frames each hook saw: none after a drop.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

// Line numbers matter: the test reads the counters by FILE:LINE.
constexpr char kRuleset[] =
    "table netdev t {\n"                                                     // 1
    "  chain in_a {\n"                                                       // 2
    "    type filter hook ingress device \"fwin\" priority 0; policy accept;\n"  // 3
    "    udp dport 6001 counter drop\n"                                      // 4
    "    udp dport 6006 meta mark set 7\n"                                   // 5
    "    counter\n"                                                          // 6
    "  }\n"                                                                  // 7
    "  chain in_b {\n"                                                       // 8
    "    type filter hook ingress device \"fwout\" priority 0; policy accept;\n"  // 9
    "    udp dport 6005 counter drop\n"                                      // 10
    "    counter\n"                                                          // 11
    "  }\n"                                                                  // 12
    "  chain out_b {\n"                                                      // 13
    "    type filter hook egress device \"fwout\" priority 0; policy accept;\n"  // 14
    "    udp dport 6003 counter drop\n"                                      // 15
    "    counter\n"                                                          // 16
    "  }\n"                                                                  // 17
    "}\n"                                                                    // 18
    "table inet f {\n"                                                       // 19
    "  chain forwarding {\n"                                                        // 20
    "    type filter hook forward priority 0; policy accept;\n"              // 21
    "    meta mark 7 counter drop\n"                                         // 22
    "    udp dport 6002 counter drop\n"                                      // 23
    "    iifname \"fwin\" udp dport 6001 counter accept\n"                   // 24
    "    counter\n"                                                          // 25
    "  }\n"                                                                  // 26
    "}\n";

// Which hook drops what, by direction: 6001 at fwin's ingress, 6002 at
// forward, 6003 at fwout's egress, 6005 at fwout's ingress, 6006 at forward
// by the mark fwin's ingress set.
const std::vector<Flow>& Flows() {
  static const std::vector<Flow> flows = {
      {true, IPPROTO_UDP, 4000, 6001, 10, false},
      {true, IPPROTO_UDP, 4000, 6002, 12, false},
      {true, IPPROTO_UDP, 4000, 6003, 14, false},
      {true, IPPROTO_UDP, 4000, 6004, 16, true},
      {true, IPPROTO_UDP, 4000, 6005, 8, true},
      {true, IPPROTO_UDP, 4000, 6006, 6, false},
      {false, IPPROTO_UDP, 4000, 6001, 9, true},
      {false, IPPROTO_UDP, 4000, 6003, 7, true},
      {false, IPPROTO_UDP, 4000, 6005, 5, false},
  };
  return flows;
}

void ExpectCounts(const std::string& text, const std::string& rules,
                  const std::string& what) {
  const std::pair<int, int64_t> per_line[] = {
      {4, 10},                 // fwin ingress drops 6001
      {6, 12 + 14 + 16 + 8 + 6},  // what passed fwin's ingress
      {10, 5},                 // fwout ingress drops 6005 (reverse only)
      {11, 9 + 7},             // what passed fwout's ingress
      {15, 14},                // fwout egress drops 6003 (forward only)
      {16, 16 + 8},            // what left by fwout
      {22, 6},                 // forward drops the marked frames
      {23, 12},                // forward drops 6002
      {24, 0},                 // 6001 from fwin never reaches forward
      {25, 14 + 16 + 8 + 9 + 7},  // what passed forward, both ways
  };
  for (const auto& [line, packets] : per_line) {
    EXPECT_EQ(PacketsOf(text, absl::StrCat("rule ", rules, ":", line, " ")),
              packets)
        << "line " << line << "\n" << text;
  }
  EXPECT_EQ(PacketsOf(text, "policy t/in_a "), 56) << text;
  EXPECT_EQ(PacketsOf(text, "policy t/in_b "), 16) << text;
  EXPECT_EQ(PacketsOf(text, "policy t/out_b "), 24) << text;
  EXPECT_EQ(PacketsOf(text, "policy f/forwarding "), 54) << text;
  EXPECT_EQ(LineMismatches(text, what,
                           {{"fwin", "rx_packets", 66}, {"fwin", "dropped", 42},
                            {"fwin", "tx_packets", 16}, {"fwout", "rx_packets", 21},
                            {"fwout", "dropped", 5}, {"fwout", "tx_packets", 24}}),
            "")
      << text;
}

TEST(XdpNetdev, IngressForwardEgressEachDropInTheirDirection) {
  if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  RemoveStaleNamespaces();
  Topology topo;
  if (std::string err = topo.Create(); !err.empty()) {
    GTEST_SKIP() << "cannot build the namespaces: " << err;
  }
  const std::string rules =
      absl::StrCat(::testing::TempDir(), "/xdp_netdev_", getpid(), ".nft");
  std::ofstream(rules) << kRuleset;
  const std::string ctl =
      absl::StrCat(::testing::TempDir(), "/xdp_netdev_", getpid(), ".sock");
  Child fw({"ip", "netns", "exec", topo.fw(), RULEJIT_TOOL, "run", rules,
            "--in", "fwin", "--out", "fwout", "--ctl", ctl});
  ASSERT_TRUE(fw.WaitForLine("ready ", 10000))
      << "rulejit run did not get ready:\n" << fw.text();
  // veth has native XDP but no zero-copy: the sockets fell back to copy.
  EXPECT_TRUE(absl::StrContains(fw.text(), "in=fwin/native/copy ")) << fw.text();
  EXPECT_TRUE(absl::StrContains(
      fw.text(), " hooks=ingress,forward,egress/ingress,forward "))
      << fw.text();

  Arrivals at_dst, at_src;
  ASSERT_EQ(SendFlows(topo, Flows(), at_dst, at_src), "");
  EXPECT_EQ(FlowMismatches(Flows(), at_dst, at_src), "");

  Output counters = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl, "counters"});
  EXPECT_EQ(counters.exit_code, 0) << counters.text;
  EXPECT_EQ(fw.Stop(SIGTERM), 0) << fw.text();
  ExpectCounts(fw.text(), rules, "final");
  // The live counters agree with the final ones.
  EXPECT_EQ(PacketsOf(counters.text, absl::StrCat("rule ", rules, ":25 ")), 54)
      << counters.text;
  unlink(rules.c_str());
}

}  // namespace
