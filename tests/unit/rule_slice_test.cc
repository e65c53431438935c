// analysis::CompareRuleSlices (compiler/analysis/rule_slice.h): an
// iptables rule against an nft rule, each alone. Pairs that differ only in
// the matched protocol, only in the verdict, or only in a counter; every
// match witness is replayed through both slices by the reference
// interpreter (CheckWitnesses).
#include <string>

#include "compiler/analysis/rule_slice.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::analysis::diff_test {
namespace {

// The first rule of the first chain that has one, as a group.
std::vector<ir::RuleRef> FirstRule(const ir::Ruleset& rs) {
  for (size_t c = 0; c < rs.tables[0].chains.size(); ++c) {
    if (!rs.tables[0].chains[c].rules.empty()) return {{0, static_cast<int>(c), 0}};
  }
  return {};
}

std::string Dump(const std::string& rule) {
  return absl::StrCat("*filter\n:INPUT ACCEPT [0:0]\n:user - [0:0]\n", rule, "\nCOMMIT\n");
}

std::string Translated(const std::string& rule) {
  return absl::StrCat("add table ip filter\n"
                      "add chain ip filter INPUT { type filter hook input priority 0; policy accept; }\n"
                      "add chain ip filter user\n", rule, "\n");
}

RuleSliceResult Compare(const std::string& dump_rule, const std::string& nft_rule) {
  ir::Ruleset a = Ipt(Dump(dump_rule)), b = Nft(Translated(nft_rule));
  RuleSliceResult r = CompareRuleSlices(a, FirstRule(a), b, FirstRule(b));
  if (!r.match_regions.empty()) {
    DiffResult d{.space = r.space, .regions = r.match_regions};
    CheckWitnesses(SliceMatch(a, FirstRule(a), r.hook), SliceMatch(b, FirstRule(b), r.hook), d,
                   r.hook);
  }
  return r;
}

TEST(RuleSliceTest, SameRuleWithACounter) {
  RuleSliceResult r = Compare("-A INPUT -p udp -m udp --dport 53 -j ACCEPT",
                              "add rule ip filter INPUT udp dport 53 counter accept");
  EXPECT_TRUE(r.inexact.empty());
  EXPECT_TRUE(r.match_regions.empty());
  EXPECT_FALSE(r.verdict_differs);
  EXPECT_FALSE(r.actions_differ_in_form);
  EXPECT_EQ(r.hook, ir::Hook::kInput);
}

TEST(RuleSliceTest, ALostProtocolMatchesMore) {
  // iptables-restore-translate 1.8.9 on `-p udp -m udp -j REJECT`.
  RuleSliceResult r = Compare("-A INPUT -d 169.254.0.0/16 -p udp -m udp -j REJECT",
                              "add rule ip filter INPUT ip daddr 169.254.0.0/16 counter reject");
  ASSERT_TRUE(r.inexact.empty());
  ASSERT_FALSE(r.match_regions.empty());
  for (const DiffRegion& region : r.match_regions) {
    // Only the translation matches, and never a UDP packet.
    EXPECT_EQ(region.new_side.verdict, ir::VerdictCode::kDrop);
    EXPECT_THAT(DescribePoint(region.witness, r.space), ::testing::Not(::testing::StartsWith("udp")));
  }
}

TEST(RuleSliceTest, AnotherVerdictOnTheSamePackets) {
  RuleSliceResult r = Compare("-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT",
                              "add rule ip filter INPUT tcp dport 22 counter drop");
  ASSERT_TRUE(r.inexact.empty());
  EXPECT_TRUE(r.match_regions.empty());
  EXPECT_TRUE(r.verdict_differs);
  EXPECT_EQ(r.old_verdict, "accept");
  EXPECT_EQ(r.new_verdict, "drop");
  EXPECT_THAT(DescribePoint(r.verdict_witness, r.space), ::testing::HasSubstr(":22 "));
}

TEST(RuleSliceTest, AUserChainIsComparedAtForwardWithItsJumpTarget) {
  RuleSliceResult r = Compare("-A user -s 10.0.0.0/8 -j user",
                              "add rule ip filter user ip saddr 10.0.0.0/8 counter jump user");
  EXPECT_EQ(r.hook, ir::Hook::kForward);
  EXPECT_TRUE(r.match_regions.empty());
  EXPECT_FALSE(r.verdict_differs);
  RuleSliceResult other = Compare("-A user -s 10.0.0.0/8 -j user",
                                  "add rule ip filter user ip saddr 10.0.0.0/9 counter jump user");
  EXPECT_EQ(other.match_regions.size(), 1u);
}

TEST(RuleSliceTest, TheSameLimitAfterTheSameMatchesDecidesAlike) {
  RuleSliceResult same = Compare("-A INPUT -p tcp -m tcp --dport 22 -m limit --limit 2/sec -j ACCEPT",
                                 "add rule ip filter INPUT tcp dport 22 limit rate 2/second counter accept");
  EXPECT_TRUE(same.same()) << (same.inexact.empty() ? "" : same.inexact.front().reason);
  // Stateless parts that differ still differ, with a witness.
  RuleSliceResult port = Compare("-A INPUT -p tcp -m tcp --dport 22 -m limit --limit 2/sec -j ACCEPT",
                                 "add rule ip filter INPUT tcp dport 23 limit rate 2/second counter accept");
  EXPECT_EQ(port.match_regions.size(), 2u);
}

TEST(RuleSliceTest, AnotherLimitOrOneBeforeAMatchIsNotCompared) {
  RuleSliceResult burst = Compare("-A INPUT -m limit --limit 2/sec -j ACCEPT",
                                  "add rule ip filter INPUT limit rate 2/second burst 9 packets counter accept");
  ASSERT_FALSE(burst.inexact.empty());
  EXPECT_THAT(burst.inexact.front().reason, ::testing::HasSubstr("rate limits"));
  // The limit sees every packet on one side, port 22's on the other.
  RuleSliceResult order = Compare("-A INPUT -p tcp -m tcp --dport 22 -m limit --limit 2/sec -j ACCEPT",
                                  "add rule ip filter INPUT limit rate 2/second tcp dport 22 counter accept");
  ASSERT_FALSE(order.inexact.empty());
}

TEST(RuleSliceTest, AMatchAfterAStatementIsNotProved) {
  // The slice takes matches first: here the mark test reads what the rule
  // itself set, so the slice would not mean the rule.
  ir::Ruleset a = Nft(Translated("add rule ip filter INPUT meta mark set 1 meta mark 1 accept"));
  ir::Ruleset b = Nft(Translated("add rule ip filter INPUT meta mark set 1 meta mark 1 accept"));
  RuleSliceResult r = CompareRuleSlices(a, FirstRule(a), b, FirstRule(b));
  EXPECT_TRUE(r.interleaved);
  EXPECT_FALSE(r.same());
  RuleSliceResult plain = Compare("-A INPUT -p udp -j MARK --set-xmark 0x1/0xffffffff",
                                  "add rule ip filter INPUT ip protocol udp counter meta mark set 0x1");
  EXPECT_FALSE(plain.interleaved);
}

}  // namespace
}  // namespace rulejit::analysis::diff_test
