// drop-repeated-rules keeps every observable result: generated rulesets
// with copies of their own rules inserted later in the same chain, run by
// the interpreter (as written) and the compiled tiers (pass on), agree on
// verdict, deciding rule, marks and counters. The seed chain collapses.
#include <random>
#include <string>
#include <vector>

#include "api/internal.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tests/support/ir_gen.h"
#include "tests/support/agree.h"
#include "tests/support/results.h"

namespace rulejit {
namespace {

using testing::SameResult;

// Inserts copies of random rules after their originals.
void RepeatRules(ir::Ruleset& rs, std::mt19937& rng) {
  for (ir::Table& table : rs.tables) {
    for (ir::Chain& chain : table.chains) {
      const size_t n = chain.rules.size();
      for (size_t copies = 0; n > 0 && copies < 3; ++copies) {
        size_t from = rng() % n;
        size_t to = from + 1 + rng() % (chain.rules.size() - from);
        chain.rules.insert(chain.rules.begin() + to, chain.rules[from]);
      }
    }
  }
}

TEST(RepeatedRules, CompiledTiersAgreeWithTheInterpreter) {
  constexpr int kRulesets = 150;
  constexpr int kFrames = 150;
  size_t emptied = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 104729);
    ir::Ruleset rs = testing::RandomIrRuleset(rng);
    RepeatRules(rs, rng);
    auto interp = Program::Compile(RulesetOf(rs), {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();
    CompileOptions options{.backend = seed % 3 == 0 ? Backend::kLlvm : Backend::kJit};
    options.classify_min_rules = seed % 2 ? 1 : 1u << 30;
    auto compiled = Program::Compile(RulesetOf(rs), options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    emptied += testing::EmptyRules(IrOf((*compiled)->ruleset()));
    EXPECT_TRUE(testing::AgreeOnRandomFrames(**interp, **compiled, rs, rng, kFrames))
        << "seed " << seed << "\n" << ir::PrintRuleset(rs);
  }
  std::printf("%zu repeated rules emptied\n", emptied);
  EXPECT_GT(emptied, static_cast<size_t>(kRulesets / 2));  // the pass did run
}

// The rules drop-repeated-rules alone empties in a forward chain of `rules`.
size_t EmptiedByThePassAlone(const std::string& rules) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(
      "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy drop;\n" +
          rules + " }\n}\n",
      "sets.nft");
  EXPECT_TRUE(rs.ok()) << rs.status();
  if (!rs.ok()) return 0;
  CompileOptions options{.backend = Backend::kJit};
  options.disabled_passes.push_back("remove-shadowed-rules");  // this pass alone
  auto jit = Program::Compile(*rs, options);
  EXPECT_TRUE(jit.ok()) << jit.status();
  return jit.ok() ? testing::EmptyRules(IrOf((*jit)->ruleset())) : 0;
}

// Anonymous sets all print as `__set%d`: two rules that differ only in
// their sets' elements are not repeats (generated seed 296 found this).
TEST(RepeatedRules, LookupsOfOtherAnonymousSetsAreNoRepeats) {
  EXPECT_EQ(EmptiedByThePassAlone("  tcp dport { 1, 2 } accept\n  tcp dport { 3, 4 } accept\n"),
            0u);
}

// Each `{ 1, 2 }` is an anonymous set of its own (__set0, __set1): the
// same elements make the same lookup (ir/equal.h), so the second rule is a
// repeat.
TEST(RepeatedRules, LookupsOfEqualAnonymousSetsAreRepeats) {
  EXPECT_EQ(EmptiedByThePassAlone("  tcp dport { 1, 2 } accept\n  tcp dport { 1, 2 } accept\n"),
            1u);
}

TEST(RepeatedRules, SeedChainCollapsesToOneRule) {
  std::string text = "*filter\n:FORWARD ACCEPT [0:0]\n";
  for (int i = 0; i < 1000; ++i) text += "-A FORWARD ! -s 10.0.0.0/10 -j DROP\n";
  text += "COMMIT\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "seed.ipt");
  ASSERT_TRUE(rs.ok()) << rs.status();
  auto jit = Program::Compile(*rs, {.backend = Backend::kJit});
  ASSERT_TRUE(jit.ok()) << jit.status();
  EXPECT_EQ(testing::EmptyRules(IrOf((*jit)->ruleset())), 999u);
  CompileOptions off{.backend = Backend::kJit};
  off.disabled_passes.push_back("drop-repeated-rules");
  off.disabled_passes.push_back("remove-shadowed-rules");  // it would prove the same
  auto unoptimized = Program::Compile(*rs, off);
  ASSERT_TRUE(unoptimized.ok());
  EXPECT_EQ(testing::EmptyRules(IrOf((*unoptimized)->ruleset())), 0u);
  EXPECT_LT((*jit)->code_size() * 20, (*unoptimized)->code_size());
}

}  // namespace
}  // namespace rulejit
