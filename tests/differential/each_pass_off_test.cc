// The JIT with each optimizer pass turned off, one at a time, agrees with
// the reference interpreter on seeded random rulesets and frames (verdict,
// deciding rule, reject, marks, every counter): no pass is load-bearing
// for another pass's correctness, and `--no-pass NAME` is always safe.
#include <cstdio>
#include <random>
#include <string>

#include "api/internal.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tests/support/agree.h"
#include "tests/support/env.h"

namespace rulejit {
namespace {

class EachPassOff : public ::testing::TestWithParam<std::string> {};

// A longer campaign: RULEJIT_DIFF_RULESETS=5000 [RULEJIT_DIFF_SEED=N].
TEST_P(EachPassOff, JitAgreesWithTheInterpreter) {
  const int kRulesets = testing::EnvInt("RULEJIT_DIFF_RULESETS", 500);
  const int first = testing::EnvInt("RULEJIT_DIFF_SEED", 1);
  constexpr int kFrames = 150;
  for (int seed = first; seed < first + kRulesets; ++seed) {
    std::mt19937 rng(seed * 7919);
    ir::Ruleset rs = testing::RandomIrRuleset(rng);
    auto interp = Program::Compile(RulesetOf(rs), {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();
    CompileOptions options{.backend = Backend::kJit};
    options.classify_min_rules = seed % 2 ? 2 : 1u << 30;
    options.disabled_passes.push_back(GetParam());
    auto jit = Program::Compile(RulesetOf(rs), options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    ASSERT_TRUE(testing::AgreeOnRandomFrames(**interp, **jit, rs, rng, kFrames))
        << GetParam() << " off, seed " << seed << "\n" << ir::PrintRuleset(rs);
  }
}

INSTANTIATE_TEST_SUITE_P(Passes, EachPassOff, ::testing::ValuesIn(OptimizationNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace rulejit
