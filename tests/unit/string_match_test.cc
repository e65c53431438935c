// The string match: what -m string lowers to (libxt_string's parsing of
// --hex-string, offsets, defaults), what is refused, the IR line read
// back, and ir/string_eval.cc's window and case rules. The kernel's
// verdicts: tests/kernel/string_kernel_test.cc.
#include <string>

#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "ir/string_eval.h"
#include "packet/parse.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

TEST(IptablesString, LowersPatternOffsetsAndFlags) {
  EXPECT_EQ(Lower("-m string --string abc --algo bm"),
            "[ string algo bm from 0 to 65535 len 3 pattern 0x00636261 ]");
  // Hex blocks, a quoted bar, spaces inside blocks; ! and --icase.
  EXPECT_EQ(Lower("-m string --algo kmp ! --hex-string \"|41 42|c\\\\|d|00|\" --icase "
                  "--from 0x10 --to 40"),
            "[ string algo kmp from 16 to 40 len 6 pattern 0x7c634241 0x00000064 icase invert ]");
}

TEST(IptablesString, RefusedAsIptablesAndTheKernelRefuseThem) {
  EXPECT_TRUE(Refused(Lower("-m string --string abc"), "needs --algo"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm"), "needs --string or --hex-string"));
  EXPECT_TRUE(Refused(Lower("-m string --algo fsm --string abc"), "not a text search"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm --string \"\""), "empty string pattern"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm --hex-string \"|41 4|\""), "Invalid hex block"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm --hex-string \"|4g|\""), "Invalid hex char"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm --string abc --from 10 --to 5"),
                      "--from after --to"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm --string abc --to 70000"), "invalid offset"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm --string abc --hex-string \"|41|\""),
                      "one --string or --hex-string"));
  EXPECT_TRUE(Refused(Lower("-m string --algo bm --string " + std::string(129, 'a')),
                      "STRING too long"));
}

TEST(IptablesString, TheIrLineReadsBack) {
  for (const char* rule : {"-m string --algo bm --string abcdefgh", "-m string --algo kmp "
                           "! --hex-string \"|ff|x\" --icase --from 3 --to 9"}) {
    const std::string line = Lower(rule);
    absl::StatusOr<ir::Expr> back = ir::ParseExprLine(line);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << line;
    EXPECT_EQ(ir::PrintExpr(*back), line);
    EXPECT_EQ(std::get<ir::StringMatch>(*back).pattern.size(),
              std::get<ir::StringMatch>(*ir::ParseExprLine(line)).pattern.size());
  }
}

bool Found(const ir::StringMatch& e, const std::string& payload) {
  const std::vector<uint8_t> frame = testing::BuildFrame(
      testing::FrameSpec{.proto = 17, .payload = {payload.begin(), payload.end()}});
  return ir::EvalStringMatch(
      e, packet::ParseEthernet(frame.data(), static_cast<uint32_t>(frame.size())));
}

TEST(StringEval, WindowFromNetworkHeaderAndCase) {
  ir::StringMatch e;
  e.pattern = {'a', 'b', 'c'};
  EXPECT_TRUE(Found(e, "xxabcxx"));  // at 30
  e.from = 30;
  e.to = 33;
  EXPECT_TRUE(Found(e, "xxabcxx"));
  e.to = 32;
  EXPECT_FALSE(Found(e, "xxabcxx"));  // ends past --to
  e.from = 31;
  e.to = 65535;
  EXPECT_FALSE(Found(e, "xxabcxx"));
  e.from = 0;
  EXPECT_FALSE(Found(e, "xxABCxx"));
  e.icase = true;
  EXPECT_TRUE(Found(e, "xxABCxx"));
  e.invert = true;
  EXPECT_FALSE(Found(e, "xxABCxx"));
  EXPECT_EQ(ir::KernelToUpper(0xe9), 0xc9);
  EXPECT_EQ(ir::KernelToUpper(0xf7), 0xf7);
  EXPECT_EQ(ir::KernelToUpper(0xff), 0xdf);
  EXPECT_EQ(ir::KernelToUpper('z'), 'Z');
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
