// lower::BuildPlan and VerifyPlan on small rulesets: the decisions land
// where they should, each can be turned off by name, and the verifier
// refuses a plan that breaks what the backends assume.
#include "api/internal.h"
#include "compiler/lower/plan.h"

#include <string>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"

namespace rulejit::lower {
namespace {

ir::Ruleset Parse(const std::string& text) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "plan.nft");
  EXPECT_TRUE(rs.ok()) << rs.status();
  return rs.ok() ? IrOf(*rs) : ir::Ruleset{};
}

// Five liftable rules, then a mark, then four rules varying one mark value
// (a meta load does not lift, so they are a set run, not a classified one).
const char kChain[] =
    "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy drop;\n"
    "  ip saddr 10.0.0.1 accept\n  ip saddr 10.0.0.2 counter drop\n"
    "  ip saddr 10.0.0.3 accept\n  ip saddr 10.0.0.4 accept\n  ip saddr 10.0.0.5 drop\n"
    "  meta mark set 1\n"
    "  meta mark 1 drop\n  meta mark 2 drop\n  meta mark 3 drop\n  meta mark 4 drop\n"
    " }\n}\n";

Plan MustPlan(const ir::Ruleset& rs, LowerOptions options = {}) {
  options.classify_min_rules = 4;
  absl::StatusOr<Plan> plan = BuildPlan(rs, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *std::move(plan);
}

TEST(Plan, SegmentsCoverTheChainInOrder) {
  const ir::Ruleset rs = Parse(kChain);
  const Plan plan = MustPlan(rs);
  ASSERT_TRUE(VerifyPlan(plan, rs).ok());
  const std::vector<Segment> segments = Segments(plan.chains[0], 10);
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].kind, Segment::kClassified);
  EXPECT_EQ(segments[0].end, 5u);
  EXPECT_EQ(segments[1].kind, Segment::kLinear);
  EXPECT_EQ(segments[2].kind, Segment::kSetRun);
  EXPECT_EQ(segments[2].begin, 6u);
  EXPECT_EQ(segments[2].end, 10u);
  EXPECT_FALSE(plan.direct[static_cast<int>(ir::Hook::kForward)].has_value());  // not all one run
}

TEST(Plan, DecisionsTurnOffByName) {
  const ir::Ruleset rs = Parse(kChain);
  LowerOptions options;
  options.disabled = {"merge-set-runs", "share-loads"};
  const Plan plan = MustPlan(rs, options);
  EXPECT_TRUE(plan.chains[0].set_runs.empty());
  EXPECT_TRUE(plan.shared_loads.empty());
  EXPECT_EQ(plan.chains[0].classified.size(), 1u);
  EXPECT_TRUE(IsDecisionName("inline-chains"));
  EXPECT_FALSE(IsDecisionName("fold-masked-compare"));  // an IR pass, not a decision
}

TEST(Plan, DumpAfterShowsTheDecision) {
  const ir::Ruleset rs = Parse(kChain);
  std::string before, after;
  LowerOptions options;
  options.dump_after = "merge-set-runs";
  options.dump = [&](const std::string& b, const std::string& a) {
    before = b;
    after = a;
  };
  MustPlan(rs, options);
  EXPECT_EQ(before.find("set run"), std::string::npos);
  EXPECT_NE(after.find("rules 6..9         set run on expression 1"), std::string::npos) << after;
}

TEST(Plan, VerifierRefusesBrokenPlans) {
  const ir::Ruleset rs = Parse(kChain);
  {
    Plan plan = MustPlan(rs);
    plan.chains[0].set_runs.push_back({2, 4, 0});  // inside the classified run
    EXPECT_FALSE(VerifyPlan(plan, rs).ok());
  }
  {
    Plan plan = MustPlan(rs);
    plan.chains[0].classified[0].action_begin[1] += 1;
    EXPECT_FALSE(VerifyPlan(plan, rs).ok());
  }
  {
    Plan plan = MustPlan(rs);
    plan.shared_loads.push_back({ir::PayloadBase::kNetwork, 0, 3});
    EXPECT_FALSE(VerifyPlan(plan, rs).ok());
  }
  {
    Plan plan = MustPlan(rs);
    plan.chains[0].inline_at_jumps = true;  // a base chain
    EXPECT_FALSE(VerifyPlan(plan, rs).ok());
  }
  {
    Plan plan = MustPlan(rs);
    plan.chains[0].classified[0].end = 11;  // past the chain
    EXPECT_FALSE(VerifyPlan(plan, rs).ok());
  }
}

TEST(Plan, FlatAclIsAnsweredFromATable) {
  const ir::Ruleset rs = Parse(
      "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy drop;\n"
      "  ip saddr 10.0.0.1 accept\n  ip saddr 10.0.0.2 counter drop\n"
      "  ip saddr 10.0.0.3 accept\n  tcp dport 22 accept\n }\n}\n");
  const Plan plan = MustPlan(rs);
  const auto& direct = plan.direct[static_cast<int>(ir::Hook::kForward)];
  ASSERT_TRUE(direct.has_value());
  EXPECT_EQ(direct->verdicts.size(), 4u);
  EXPECT_EQ(direct->verdicts[1], ir::VerdictCode::kDrop);
  EXPECT_TRUE(direct->counted[1]);
  EXPECT_EQ(direct->policy, ir::VerdictCode::kDrop);
  EXPECT_TRUE(VerifyPlan(plan, rs).ok());
}

}  // namespace
}  // namespace rulejit::lower
