// `rulejit eval --random N --symhash N --jhash-seed N`: what the kernel
// draws at random is an explicit input; without it eval (and bench) refuse
// the ruleset at the rule that reads it (tools/draw_option.h). A rule with
// its own jhash seed needs none. The CPU the kernel processes a packet
// on (`meta cpu`, iptables' cpu match) is such an input too: --cpu N.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"
#include "tests/cli/pcap_writer.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;

class CliDrawsTest : public CliTest {
 protected:
  std::string OnePacket() {
    return Write("one.pcap", PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{})}));
  }
  std::string Rules(const std::string& rule) {
    return Write("t.nft", "table ip t {\n  chain c {\n    type filter hook input priority 0;\n    " +
                              rule + "\n  }\n}\n");
  }
};

TEST_F(CliDrawsTest, SymhashNeedsItsInputAndScalesIt) {
  const std::string rules = Rules("symhash mod 2 vmap { 0 : accept, 1 : drop }");
  const std::string pcap = OnePacket();
  ToolResult none = Run({"eval", rules, pcap});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("t.nft:4: error: this rule reads the packet's symmetric flow "
                                  "hash, which the kernel keys with a secret drawn at boot: give "
                                  "--symhash N"));
  for (const char* backend : {"interp", "jit", "llvm"}) {
    ToolResult low = Run({"eval", rules, pcap, "--symhash", "0x7fffffff", "--backend", backend});
    ASSERT_EQ(low.exit_code, 0) << low.err;
    EXPECT_EQ(low.out, "0 accept\n") << backend;
    ToolResult high = Run({"eval", rules, pcap, "--symhash", "2147483648", "--backend", backend});
    EXPECT_EQ(high.out, "0 drop\n") << backend;
  }
}

TEST_F(CliDrawsTest, AJhashWithoutSeedNeedsTheKernelsDraw) {
  const std::string pcap = OnePacket();
  ToolResult none = Run({"eval", Rules("jhash ip saddr mod 2 vmap { 0 : accept, 1 : drop }"), pcap});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("t.nft:4: error: this jhash has no seed, so the kernel draws "
                                  "one when it loads the rule: give --jhash-seed N"));
  // Two seeds that choose differently for this packet.
  std::vector<std::string> outs;
  for (const char* seed : {"0", "1", "2", "3", "4", "5", "6", "7"}) {
    ToolResult r = Run({"eval", Rules("jhash ip saddr mod 2 vmap { 0 : accept, 1 : drop }"), pcap,
                        "--jhash-seed", seed});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    outs.push_back(r.out);
  }
  EXPECT_THAT(outs, ::testing::Contains("0 accept\n"));
  EXPECT_THAT(outs, ::testing::Contains("0 drop\n"));
  ToolResult seeded =
      Run({"eval", Rules("jhash ip saddr mod 2 seed 0x1 vmap { 0 : accept, 1 : drop }"), pcap});
  EXPECT_EQ(seeded.exit_code, 0) << seeded.err;
}

TEST_F(CliDrawsTest, NumgenRandomNeedsTheDrawAlongThePathToo) {
  const std::string rules = Rules("numgen random mod 2 vmap { 0 : accept, 1 : drop }");
  const std::string pcap = OnePacket();
  ToolResult none = Run({"eval", rules, pcap, "--path", "input"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("t.nft:4: error: this rule reads the kernel's per-packet random "
                                  "draw: give --random N"));
  ToolResult low = Run({"eval", rules, pcap, "--random", "1"});
  ASSERT_EQ(low.exit_code, 0) << low.err;
  EXPECT_EQ(low.out, "0 accept\n");
  ToolResult high = Run({"eval", rules, pcap, "--random", "0xffffffff"});
  EXPECT_EQ(high.out, "0 drop\n");
  ToolResult bad = Run({"eval", rules, pcap, "--random", "4294967296"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--random '4294967296': expected 0..4294967295"));
}

TEST_F(CliDrawsTest, TheCpuIsAnInput) {
  const std::string pcap = OnePacket();
  const std::string rules = Rules("meta cpu 1 drop");
  ToolResult none = Run({"eval", rules, pcap});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("t.nft:4: error: this rule reads the CPU the kernel processes "
                                  "the packet on: give --cpu N"));
  for (const char* backend : {"interp", "jit", "llvm"}) {
    EXPECT_EQ(Run({"eval", rules, pcap, "--cpu", "1", "--backend", backend}).out, "0 drop\n")
        << backend;
    EXPECT_EQ(Run({"eval", rules, pcap, "--cpu", "0", "--backend", backend}).out, "0 accept\n")
        << backend;
  }
  const std::string ipt = Write("t.ipt", "*filter\n:INPUT ACCEPT [0:0]\n"
                                         "-A INPUT -m cpu ! --cpu 0 -j DROP\nCOMMIT\n");
  EXPECT_EQ(Run({"eval", ipt, pcap, "--cpu", "0"}).out, "0 accept\n");
  EXPECT_EQ(Run({"eval", ipt, pcap, "--cpu", "3"}).out, "0 drop\n");
  EXPECT_EQ(Run({"eval", ipt, pcap}).exit_code, 1);
}

}  // namespace
}  // namespace rulejit::testing
