// `rulejit eval --time T|pcap --kernel-tz Z`: the clock that time matches
// read is an explicit input; without it eval refuses the ruleset at the
// rule that reads it (tools/clock_option.h). The frames of PcapBytes are
// stamped 2025-12-02 10:00:00 UTC (a Tuesday) and on.
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
using ::testing::IsEmpty;

class CliClockTest : public CliTest {
 protected:
  std::string OnePacket() {
    return Write("one.pcap", PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{})}));
  }
};

TEST_F(CliClockTest, TimeOrPcapClockOnEveryBackend) {
  const std::string rules =
      Write("t.ipt", Dump("-A INPUT -m time --timestart 09:00 --timestop 11:00 -j DROP\n"));
  const std::string pcap = OnePacket();
  for (const char* backend : {"interp", "jit", "llvm"}) {
    ToolResult pcap_clock = Run({"eval", rules, pcap, "--time", "pcap", "--backend", backend});
    ASSERT_EQ(pcap_clock.exit_code, 0) << backend << ": " << pcap_clock.err;
    EXPECT_EQ(pcap_clock.out, "0 drop\n") << backend;
    ToolResult later =
        Run({"eval", rules, pcap, "--time", "2025-12-02T12:30:00+01:00", "--backend", backend});
    ASSERT_EQ(later.exit_code, 0) << backend << ": " << later.err;
    EXPECT_EQ(later.out, "0 accept\n") << backend;  // 11:30 UTC
    ToolResult earlier =
        Run({"eval", rules, pcap, "--time", "2025-12-02T10:59:59.9Z", "--backend", backend});
    EXPECT_EQ(earlier.out, "0 drop\n") << backend;
  }
}

TEST_F(CliClockTest, AlongThePathToo) {
  const std::string rules =
      Write("t.ipt", Dump("-A INPUT -m time --timestart 09:00 --timestop 11:00 -j DROP\n"));
  const std::string pcap = OnePacket();
  ToolResult in = Run({"eval", rules, pcap, "--path", "input", "--time", "pcap"});
  ASSERT_EQ(in.exit_code, 0) << in.err;
  EXPECT_EQ(in.out, "0 drop\n");
  ToolResult out = Run({"eval", rules, pcap, "--path", "input", "--time", "2025-12-02T11:00:01Z"});
  EXPECT_THAT(out.out, ::testing::StartsWith("0 accept")) << out.err;
  ToolResult none = Run({"eval", rules, pcap, "--path", "input"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("t.ipt:5: error: this rule reads the wall clock"));
}

TEST_F(CliClockTest, NoClockIsALocatedError) {
  const std::string rules = Write("t.nft",
                                  "table ip t {\n  chain c {\n    type filter hook input priority 0;\n"
                                  "    meta hour \"09:00\"-\"11:00\" drop\n  }\n}\n");
  ToolResult r = Run({"eval", rules, OnePacket()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("t.nft:4: error: this rule reads the wall clock: give --time"));
  EXPECT_THAT(r.out, IsEmpty());
  ToolResult bad = Run({"eval", rules, OnePacket(), "--time", "yesterday"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--time 'yesterday': expected pcap or an RFC 3339 time"));
}

TEST_F(CliClockTest, MetaDayNeedsTheKernelTimezone) {
  // 2025-12-02 10:00 UTC is Tuesday (2); at UTC-11 it is Monday (1).
  const std::string rules = Write("d.nft",
                                  "table ip t {\n  chain c {\n    type filter hook input priority 0;\n"
                                  "    meta day 1 drop\n  }\n}\n");
  const std::string pcap = OnePacket();
  ToolResult no_tz = Run({"eval", rules, pcap, "--time", "pcap"});
  EXPECT_EQ(no_tz.exit_code, 1);
  EXPECT_THAT(no_tz.err, HasSubstr("d.nft:4: error: this rule reads the kernel's timezone"));
  ToolResult utc = Run({"eval", rules, pcap, "--time", "pcap", "--kernel-tz", "UTC"});
  EXPECT_EQ(utc.out, "0 accept\n") << utc.err;
  ToolResult west = Run({"eval", rules, pcap, "--time", "pcap", "--kernel-tz", "-11:00"});
  EXPECT_EQ(west.out, "0 drop\n") << west.err;
}

}  // namespace
}  // namespace rulejit::testing
