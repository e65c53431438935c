// Shadowed and redundant rules (compiler/analysis/lint.h): what is found,
// what blocks it, and what must not be reported.
#include "api/internal.h"
#include "compiler/analysis/lint.h"

#include <algorithm>

#include <string>
#include <vector>

#include "compiler/analysis/space.h"
#include "compiler/headerspace/shadowed.h"
#include "ir/hook_order.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"

namespace rulejit::testing {
namespace {

using analysis::LintKind;

ir::Ruleset Parse(const std::string& text) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "rules");
  EXPECT_TRUE(rs.ok()) << rs.status().message();
  return rs.ok() ? IrOf(*rs) : ir::Ruleset{};
}

std::string Filter(const std::string& input_rules, const std::string& extra = "") {
  return "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n" +
         extra + input_rules + "COMMIT\n";
}

// "kind@line<-line,line" per finding, for compact expectations.
std::vector<std::string> Summary(const ir::Ruleset& rs, bool redundant = false) {
  std::vector<std::string> out;
  for (const analysis::LintFinding& f :
       analysis::LintRuleset(rs, {.redundant = redundant}).findings) {
    const auto line = [&](const ir::RuleRef& r) {
      return std::to_string(rs.tables[r.table].chains[r.chain].rules[r.rule].loc.line);
    };
    std::string s = (f.kind == LintKind::kShadowed      ? "shadowed@"
                     : f.kind == LintKind::kUnreachable ? "unreachable@"
                                                        : "redundant@") +
                    line(f.rule);
    for (size_t i = 0; i < f.blocked_by.size(); ++i) {
      s += (i == 0 ? "<-" : ",") + line(f.blocked_by[i]);
    }
    out.push_back(s);
  }
  return out;
}

TEST(LintTest, RuleCoveredByOneEarlierRule) {
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -s 10.0.0.0/8 -j ACCEPT\n"
      "-A INPUT -s 10.1.0.0/16 -p tcp --dport 22 -j DROP\n"
      "-A INPUT -p tcp --dport 22 -j ACCEPT\n"));
  EXPECT_THAT(Summary(rs), ::testing::ElementsAre("shadowed@6<-5"));
}

TEST(LintTest, RuleCoveredOnlyByTheUnionOfEarlierRules) {
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -p tcp --dport 1:100 -j ACCEPT\n"
      "-A INPUT -p tcp --dport 101:200 -j DROP\n"
      "-A INPUT -p tcp --dport 50:150 -j ACCEPT\n"
      "-A INPUT -p tcp --dport 50:250 -j ACCEPT\n"));
  EXPECT_THAT(Summary(rs), ::testing::ElementsAre("shadowed@7<-5,6"));
}

TEST(LintTest, PartialOverlapIsNotShadowed) {
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -p tcp --dport 1:100 -j ACCEPT\n"
      "-A INPUT -p tcp --dport 50:150 -j DROP\n"
      "-A INPUT -p udp --dport 1:100 -j DROP\n"));
  EXPECT_THAT(Summary(rs), ::testing::IsEmpty());
}

TEST(LintTest, JumpConditionExcludesRuleOfUserChain) {
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -p tcp --dport 22 -j SSH\n"
      "-A SSH -p udp -j DROP\n"
      "-A SSH -s 10.0.0.0/8 -j ACCEPT\n",
      ":SSH - [0:0]\n"));
  EXPECT_THAT(Summary(rs), ::testing::ElementsAre("shadowed@7"));
}

TEST(LintTest, JumpThatReturnsDoesNotShadow) {
  // Packets from SSH come back to INPUT: rule 8 is reachable.
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -p tcp -j CHECK\n"
      "-A INPUT -p tcp --dport 22 -j ACCEPT\n"
      "-A CHECK -s 10.0.0.0/8 -j RETURN\n",
      ":CHECK - [0:0]\n"));
  EXPECT_THAT(Summary(rs), ::testing::IsEmpty());
}

TEST(LintTest, InexactRuleBeforeMakesItUncertain) {
  // The limit can't be reasoned about; what follows it is not judged.
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -p tcp -m limit --limit 5/min -j ACCEPT\n"
      "-A INPUT -s 10.0.0.0/8 -j ACCEPT\n"
      "-A INPUT -s 10.1.0.0/16 -j DROP\n"));
  EXPECT_THAT(Summary(rs), ::testing::IsEmpty());
}

TEST(LintTest, RedundantOnlyWhenAsked) {
  // Rule 6 drops what the DROP policy drops anyway; rule 5 matters.
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -p tcp --dport 22 -j ACCEPT\n"
      "-A INPUT -p udp -j DROP\n"));
  EXPECT_THAT(Summary(rs), ::testing::IsEmpty());
  EXPECT_THAT(Summary(rs, true), ::testing::ElementsAre("redundant@6"));
}

TEST(LintTest, InetAndIp6TablesAreJudged) {
  ir::Ruleset rs = Parse(
      "table inet t {\n"
      "  chain in {\n"
      "    type filter hook input priority 0; policy drop;\n"
      "    tcp dport 22 accept\n"
      "    tcp dport 22 drop\n"
      "    ip6 saddr 2001:db8::/32 accept\n"
      "    ip6 saddr 2001:db8:1::/48 udp dport 53 drop\n"
      "    ip saddr 2.0.0.0/8 accept\n"
      "  }\n"
      "}\n");
  EXPECT_THAT(Summary(rs), ::testing::ElementsAre("shadowed@5<-4", "shadowed@7<-6"));
}

// The space has no extension headers and no fragments (cube.h): a rule
// that asks for them matches nothing there, but real packets match it.
// iptables-legacy's guard against fragments keeps rules judged.
TEST(LintTest, RulesAskingForWhatTheSpaceLeavesOutAreNotJudged) {
  ir::Ruleset rs = Parse(
      "table inet t {\n"
      "  chain in {\n"
      "    type filter hook input priority 0; policy drop;\n"
      "    exthdr hbh exists drop\n"
      "    ip frag-off & 0x1fff != 0 drop\n"
      "    ip6 nexthdr 44 drop\n"
      "    frag more-fragments 1 drop\n"
      "  }\n"
      "}\n");
  EXPECT_THAT(Summary(rs), ::testing::IsEmpty());
  ir::Ruleset legacy = Parse(Filter(
      "-A INPUT -f -j DROP\n"
      "-A INPUT -p tcp --dport 22 -j ACCEPT\n"
      "-A INPUT -p tcp --dport 22 -j DROP\n"));
  EXPECT_THAT(Summary(legacy), ::testing::ElementsAre("shadowed@7<-6"));
}

TEST(LintTest, RulesAfterACatchAllAreUnreachable) {
  ir::Ruleset rs = Parse(
      "table ip t {\n"
      "  chain in {\n"
      "    type filter hook input priority 0; policy drop;\n"
      "    tcp dport 22 accept\n"
      "    meta l4proto tcp drop\n"
      "    accept\n"
      "    udp dport 53 drop\n"
      "    tcp dport 80 accept\n"
      "  }\n"
      "  chain orphan {\n"
      "    tcp dport 443 accept\n"
      "  }\n"
      "}\n");
  EXPECT_THAT(Summary(rs), ::testing::ElementsAre("unreachable@7<-6", "unreachable@8<-5",
                                                  "unreachable@11"));
}

TEST(LintTest, NoUnreachableClaimsWhenSomethingIsNotExact) {
  ir::Ruleset rs = Parse(
      "table ip t {\n"
      "  chain in {\n"
      "    type filter hook input priority 0; policy drop;\n"
      "    limit rate 10/second jump orphan\n"
      "  }\n"
      "  chain orphan {\n"
      "    tcp dport 443 accept\n"
      "  }\n"
      "}\n");
  EXPECT_THAT(Summary(rs), ::testing::IsEmpty());
}

TEST(LintTest, NftIpTableIsJudged) {
  ir::Ruleset rs = Parse(
      "table ip t {\n"
      "  chain in {\n"
      "    type filter hook input priority 0; policy drop;\n"
      "    tcp dport { 22, 80 } accept\n"
      "    tcp dport 80 counter drop\n"
      "  }\n"
      "}\n");
  EXPECT_THAT(Summary(rs), ::testing::ElementsAre("shadowed@5<-4"));
}

// Lint's shadowed findings in chain (table, chain), by line.
std::vector<int> ShadowedLines(const ir::Ruleset& rs, int table, int chain) {
  std::vector<int> lines;
  for (const analysis::LintFinding& f : analysis::LintRuleset(rs, {}).findings) {
    if (f.kind == LintKind::kShadowed && f.rule.table == table && f.rule.chain == chain) {
      lines.push_back(rs.tables[table].chains[chain].rules[f.rule.rule].loc.line);
    }
  }
  return lines;
}

// The lines of the rules of `chain` the prover (compiler/headerspace/
// shadowed.h) proves shadowed with `entry` entering the chain.
std::vector<int> ProvedLines(const analysis::Lifter& lifter, int table,
                             const ir::Chain& chain, const std::vector<analysis::Cube>& entry) {
  std::vector<int> lines;
  for (const headerspace::ShadowedRule& s :
       headerspace::ShadowedRules(lifter, table, chain, entry)) {
    lines.push_back(chain.rules[s.rule].loc.line);
  }
  return lines;
}

// In a base chain all packets enter: lint reports exactly what the prover
// proves with the full space entering.
TEST(LintTest, ShadowedInBaseChainsAreWhatTheProverProves) {
  const std::vector<std::string> inputs = {
      "-A INPUT -s 10.0.0.0/8 -j ACCEPT\n"
      "-A INPUT -s 10.1.0.0/16 -p tcp --dport 22 -j DROP\n"
      "-A INPUT -p tcp --dport 22 -j ACCEPT\n",
      "-A INPUT -p tcp --dport 1:100 -j ACCEPT\n"
      "-A INPUT -p tcp --dport 101:200 -j DROP\n"
      "-A INPUT -p tcp --dport 50:150 -j ACCEPT\n"
      "-A INPUT -p udp -j ACCEPT\n",
      "-A INPUT -i eth0 -j DROP\n"
      "-A INPUT -i eth0 -p icmp -j ACCEPT\n"
      "-A INPUT -m conntrack --ctstate ESTABLISHED -j ACCEPT\n"
      "-A INPUT -p tcp -m conntrack --ctstate ESTABLISHED --dport 80 -j ACCEPT\n",
  };
  size_t proved = 0;
  for (const std::string& input : inputs) {
    ir::Ruleset rs = Parse(Filter(input));
    const analysis::Space space = analysis::BuildSpace({&rs}, {.hook = ir::Hook::kInput});
    const analysis::Lifter lifter(rs, space, ir::Hook::kInput);
    for (const ir::RuleRef& base : ir::BaseChainsAt(rs, ir::Hook::kInput)) {
      const ir::Chain& chain = rs.tables[base.table].chains[base.chain];
      const std::vector<int> lines =
          ProvedLines(lifter, base.table, chain, analysis::FullRegion(space));
      proved += lines.size();
      EXPECT_EQ(ShadowedLines(rs, base.table, base.chain), lines) << input;
    }
  }
  EXPECT_EQ(proved, 4u);
}

// A user chain reached by a conditional jump: its entry is the jump's
// condition. Lint reports what the prover proves with that entry, which
// is more than it proves with all packets entering (rules 8 and 13 lie
// outside `tcp dport 22`).
TEST(LintTest, ShadowedInAJumpedToChainAreWhatTheProverProvesForItsEntry) {
  ir::Ruleset rs = Parse(Filter(
      "-A INPUT -p tcp --dport 22 -j SSH\n"
      "-A INPUT -p udp -j ACCEPT\n"
      "-A SSH -p udp -j DROP\n"
      "-A SSH -s 10.0.0.0/8 -j ACCEPT\n"
      "-A SSH -s 10.1.0.0/16 -j DROP\n"
      "-A SSH -s 192.168.0.0/16 -p tcp -j ACCEPT\n"
      "-A SSH -s 192.168.1.0/24 -p tcp --dport 1:100 -j DROP\n"
      "-A SSH -p tcp --dport 80 -j DROP\n"
      "-A SSH -p tcp -j RETURN\n",
      ":SSH - [0:0]\n"));
  const analysis::Space space = analysis::BuildSpace({&rs}, {.hook = ir::Hook::kInput});
  const analysis::Lifter lifter(rs, space, ir::Hook::kInput);
  const ir::Table& table = rs.tables[0];
  const int ssh = static_cast<int>(table.FindChain("SSH") - table.chains.data());
  const ir::Chain& input = table.chains[ir::BaseChainsAt(rs, ir::Hook::kInput)[0].chain];
  const analysis::LiftedRule jump = lifter.Lift(0, input.rules[0]);
  ASSERT_EQ(jump.branches.size(), 1u);
  const std::vector<analysis::Cube> entry = {jump.branches[0].match};

  EXPECT_THAT(ProvedLines(lifter, 0, table.chains[ssh], entry),
              ::testing::ElementsAre(8, 10, 12, 13));
  EXPECT_THAT(ProvedLines(lifter, 0, table.chains[ssh], analysis::FullRegion(space)),
              ::testing::ElementsAre(10, 12));
  EXPECT_THAT(ShadowedLines(rs, 0, ssh), ::testing::ElementsAre(8, 10, 12, 13));
  EXPECT_THAT(Summary(rs), ::testing::ElementsAre("shadowed@8", "shadowed@10<-9",
                                                  "shadowed@12<-11", "shadowed@13"));
}

}  // namespace
}  // namespace rulejit::testing
