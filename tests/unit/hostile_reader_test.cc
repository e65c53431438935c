// The IR text reader and the ClassBench rule and trace readers take
// untrusted text too (issue 26): none of them recurses on its input or
// sizes an allocation from a number it reads, so huge lines, deep brackets
// and absurd numbers are errors, not crashes. (The pcap reader is
// libpcap's, which bounds records by the snapshot length; see
// tests/cli/hostile_input_test.cc.)
#include <string>

#include "frontends/classbench/classbench.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/reader.h"

namespace rulejit {
namespace {

TEST(HostileReaderTest, IrLineWithDeepBrackets) {
  EXPECT_FALSE(ir::ParseExprLine(std::string(100000, '[')).ok());
  EXPECT_FALSE(ir::ParseExprLine("[ " + std::string(100000, '[') + " ]").ok());
}

TEST(HostileReaderTest, IrLineWithHugeTokens) {
  EXPECT_FALSE(ir::ParseExprLine("[ cmp eq reg 1 0x" + std::string(1 << 20, 'f') + " ]").ok());
  EXPECT_FALSE(ir::ParseExprLine("[ payload load " + std::string(1 << 20, '9') +
                                 "b @ network header + 12 => reg 1 ]").ok());
  EXPECT_FALSE(ir::ParseExprLine("[ " + std::string(1 << 20, 'x') + " ]").ok());
}

TEST(HostileReaderTest, IrBlockOfManyBadLines) {
  std::string text = "ip t c\n";
  for (int i = 0; i < 100000; ++i) text += "  [ [ [\n";
  EXPECT_FALSE(ir::ParseRuleBlock(text).ok());
}

TEST(HostileReaderTest, ClassBenchTraceWithHugeNumbersAndLines) {
  ir::Diagnostics diags;
  const std::string text = std::string(1 << 20, '9') + " 1 2 3 6 0\n" +
                           "1 2 3 4 5 " + std::string(1 << 20, '7') + "\n";
  int file = diags.AddFile("trace", text);
  EXPECT_FALSE(frontends::ParseClassBenchTrace(text, file, diags).ok());
  EXPECT_TRUE(diags.has_errors());
}

TEST(HostileReaderTest, ClassBenchRulesWithHugeLine) {
  ir::Diagnostics diags;
  const std::string text = "@1.2.3.4/" + std::string(1 << 20, '3') + " 0.0.0.0/0 0 : 65535 "
                           "0 : 65535 0x06/0xFF\n";
  int file = diags.AddFile("rules", text);
  EXPECT_FALSE(frontends::ParseClassBench(text, file, diags).ok());
}

}  // namespace
}  // namespace rulejit
