// share-loads keeps every observable result: generated rulesets (fields
// loaded by many rules, plain and fused, in several chains and tables) run
// by the interpreter and by the JIT keeping shared fields per packet agree
// on verdict, deciding rule and counters, also on frames cut at every
// length (a field absent at its first load stays absent for later rules).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "api/internal.h"
#include "api/program_internal.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tests/support/agree.h"

namespace rulejit {
namespace {

TEST(ShareLoads, JitAgreesWithTheInterpreter) {
  constexpr int kRulesets = 300;
  constexpr int kFrames = 200;
  size_t shared = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 4447);
    ir::Ruleset rs = testing::RandomIrRuleset(rng);
    auto interp = Program::Compile(RulesetOf(rs), {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();
    CompileOptions options{.backend = Backend::kJit};
    options.classify_min_rules = seed % 3 ? 1u << 30 : 2;
    auto jit = Program::Compile(RulesetOf(rs), options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    shared += ProgramInternal::PlanOf(**jit)->shared_loads.size();
    EXPECT_TRUE(testing::AgreeOnRandomFrames(**interp, **jit, rs, rng, kFrames))
        << "seed " << seed << "\n" << ir::PrintRuleset(rs);
  }
  std::printf("%zu shared fields\n", shared);
  EXPECT_GT(shared, static_cast<size_t>(kRulesets));
}

TEST(ShareLoads, TruncatedFramesAgreeAtEveryLength) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(
      "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy accept;\n"
      "  tcp dport 80 ip saddr 10.0.0.1 counter drop\n"
      "  tcp dport 81 counter drop\n"
      "  ip saddr 10.0.0.1 tcp sport 1234 counter accept\n"
      "  tcp dport 80 counter accept\n"
      "  ip daddr 10.0.0.2 counter drop\n }\n}\n",
      "cut.nft");
  ASSERT_TRUE(rs.ok()) << rs.status();
  auto interp = Program::Compile(*rs, {.backend = Backend::kInterp});
  auto jit = Program::Compile(*rs, {.backend = Backend::kJit});
  ASSERT_TRUE(interp.ok() && jit.ok());
  EXPECT_GE(ProgramInternal::PlanOf(**jit)->shared_loads.size(), 2u);  // dport, saddr
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<uint8_t> frame = testing::RandomFrame(rng);
    for (size_t len = 0; len <= frame.size(); ++len) {
      std::vector<uint8_t> cut(frame.begin(), frame.begin() + len);
      PacketMeta meta;
      RunState s1, s2;
      Result a = (*interp)->Classify(Hook::kForward, cut.data(), cut.size(), meta, &s1);
      Result b = (*jit)->Classify(Hook::kForward, cut.data(), cut.size(), meta, &s2);
      ASSERT_TRUE(testing::SameResult(a, b)) << "trial " << trial << " length " << len;
    }
  }
}

}  // namespace
}  // namespace rulejit
