// fold-masked-compare: small IR inputs with the expected output beside them.
#include <string>

#include "compiler/passes/passes.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/reader.h"

namespace rulejit::passes {
namespace {

// Builds a one-rule ruleset from `[ ... ]` lines, runs the pass, prints the
// rule's expressions back.
std::string Fold(const std::vector<std::string>& lines, ir::Set* set = nullptr) {
  ir::Ruleset rs;
  ir::Table table;
  table.name = "t";
  if (set) table.sets.push_back(*set);
  ir::Chain chain;
  chain.name = "c";
  ir::Rule rule;
  for (const std::string& line : lines) {
    auto expr = ir::ParseExprLine(line);
    EXPECT_TRUE(expr.ok()) << line << ": " << expr.status();
    if (expr.ok()) rule.exprs.push_back({*expr, {}});
  }
  chain.rules.push_back(rule);
  table.chains.push_back(chain);
  rs.tables.push_back(table);
  FoldMaskedCompare(rs);
  std::string out;
  for (const auto& node : rs.tables[0].chains[0].rules[0].exprs) {
    out += ir::PrintExpr(node.expr) + "\n";
  }
  return out;
}

TEST(FoldMaskedCompare, SeedCaseNegatedPrefix) {
  // iptables `! -s 10.0.0.0/10`
  EXPECT_EQ(Fold({"[ payload load 4b @ network header + 12 => reg 1 ]",
                  "[ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]",
                  "[ cmp neq reg 1 0x0000000a ]",
                  "[ immediate reg 0 drop ]"}),
            "[ fused payload 4b @ network header + 12 & 0x0000c0ff neq 0x0000000a ]\n"
            "[ immediate reg 0 drop ]\n");
}

TEST(FoldMaskedCompare, LoadAndCompareWithoutMask) {
  EXPECT_EQ(Fold({"[ payload load 2b @ transport header + 2 => reg 1 ]",
                  "[ cmp eq reg 1 0x00001600 ]"}),
            "[ fused payload 2b @ transport header + 2 eq 0x00001600 ]\n");
}

TEST(FoldMaskedCompare, KeepsLoadWhenRegisterIsReadLater) {
  const std::vector<std::string> in = {
      "[ payload load 1b @ network header + 9 => reg 1 ]",
      "[ cmp eq reg 1 0x00000006 ]",
      "[ cmp neq reg 1 0x00000011 ]"};
  // The first pair can't fuse (reg 1 is read again); the second cmp has no
  // load before it.
  EXPECT_EQ(Fold(in),
            "[ payload load 1b @ network header + 9 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000006 ]\n"
            "[ cmp neq reg 1 0x00000011 ]\n");
}

TEST(FoldMaskedCompare, KeepsNonzeroXorAndOtherRegisters) {
  EXPECT_EQ(Fold({"[ payload load 4b @ network header + 12 => reg 1 ]",
                  "[ bitwise reg 1 = ( reg 1 & 0xffffffff ) ^ 0x00000001 ]",
                  "[ cmp eq reg 1 0x0000000a ]"}),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0xffffffff ) ^ 0x00000001 ]\n"
            "[ cmp eq reg 1 0x0000000a ]\n");
  EXPECT_EQ(Fold({"[ payload load 4b @ network header + 12 => reg 1 ]",
                  "[ cmp eq reg 2 0x0000000a ]"}),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ cmp eq reg 2 0x0000000a ]\n");
}

TEST(FoldMaskedCompare, KeepsCompareWiderThanTheLoad) {
  EXPECT_EQ(Fold({"[ payload load 2b @ transport header + 0 => reg 1 ]",
                  "[ cmp eq reg 1 0x00001600 0x00000000 ]"}),
            "[ payload load 2b @ transport header + 0 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00001600 0x00000000 ]\n");
}

TEST(FoldMaskedCompare, KeepsConcatenationKeyLoads) {
  ir::Set set;
  set.name = "s";
  set.key_len = 8;
  const std::vector<std::string> in = {
      "[ payload load 4b @ network header + 12 => reg 1 ]",
      "[ payload load 2b @ transport header + 2 => reg 9 ]",
      "[ lookup reg 1 set s ]"};
  EXPECT_EQ(Fold(in, &set),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ payload load 2b @ transport header + 2 => reg 9 ]\n"
            "[ lookup reg 1 set s ]\n");
}

}  // namespace
}  // namespace rulejit::passes
