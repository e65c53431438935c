// The burst entry point (Program::ClassifyBurst, which asks the decision
// structure for a whole burst ahead) gives exactly what one Classify call
// per frame gives: verdict, deciding rule, marks, and counters.
#include <random>
#include <string>
#include <vector>

#include "api/internal.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tests/support/ir_gen.h"
#include "tests/support/results.h"

namespace rulejit {
namespace {

using testing::SameResult;

TEST(BurstVsSingle, RandomRulesetsWithClassifiers) {
  constexpr int kRulesets = 150;
  constexpr int kFrames = 100;  // more than one internal chunk
  size_t classified = 0;
  int compared = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 7919);
    ir::Ruleset rs = testing::RandomIrRuleset(rng);
    CompileOptions options{.backend = Backend::kJit};
    options.classify_min_rules = 1;
    auto jit = Program::Compile(RulesetOf(rs), options);
    ASSERT_TRUE(jit.ok()) << "seed " << seed << ": " << jit.status();
    classified += (*jit)->classified_rules();

    std::vector<std::vector<uint8_t>> frames;
    std::vector<const uint8_t*> ptrs;
    std::vector<uint32_t> lens;
    for (int i = 0; i < kFrames; ++i) frames.push_back(testing::RandomFrame(rng));
    for (const auto& f : frames) {
      ptrs.push_back(f.data());
      lens.push_back(static_cast<uint32_t>(f.size()));
    }
    const PacketMeta meta = testing::RandomMeta(rng);
    for (Hook hook : {Hook::kForward, Hook::kOutput}) {
      RunState single_state, burst_state;
      std::vector<Result> burst(frames.size());
      (*jit)->ClassifyBurst(hook, ptrs.data(), lens.data(), ptrs.size(), meta, burst.data(),
                            &burst_state);
      for (size_t i = 0; i < frames.size(); ++i) {
        Result one = (*jit)->Classify(hook, ptrs[i], lens[i], meta, &single_state);
        ++compared;
        ASSERT_TRUE(SameResult(one, burst[i]))
            << "seed " << seed << " frame " << i << " hook " << ir::HookName(hook) << "\n"
            << ir::PrintRuleset(rs);
      }
      for (size_t t = 0; t < rs.tables.size(); ++t) {
        for (size_t c = 0; c < rs.tables[t].chains.size(); ++c) {
          for (size_t r = 0; r < rs.tables[t].chains[c].rules.size(); ++r) {
            RuleRef ref{static_cast<int>(t), static_cast<int>(c), static_cast<int>(r)};
            ASSERT_EQ(single_state.CounterOf(ref).packets, burst_state.CounterOf(ref).packets)
                << "seed " << seed;
            ASSERT_EQ(single_state.CounterOf(ref).bytes, burst_state.CounterOf(ref).bytes)
                << "seed " << seed;
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, kRulesets * kFrames * 2);
  // The burst path is only exercised when classifiers were built.
  EXPECT_GT(classified, static_cast<size_t>(kRulesets));
}

}  // namespace
}  // namespace rulejit
