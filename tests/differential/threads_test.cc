// One compiled Program called from many threads at once (each with its
// own RunState) gives every thread exactly the results a single thread
// gets, counters included: the hot path shares nothing mutable.
#include <random>
#include <thread>
#include <vector>

#include "api/internal.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/ir_gen.h"
#include "tests/support/results.h"

namespace rulejit {
namespace {

struct Sample {
  std::vector<uint8_t> frame;
  PacketMeta meta;
};

TEST(Threads, ManyThreadsOneProgramSameResults) {
  constexpr int kThreads = 4;
  constexpr int kFrames = 3000;
  for (Backend backend : {Backend::kJit, Backend::kLlvm}) {
    std::mt19937 rng(backend == Backend::kJit ? 11 : 12);
    ir::Ruleset rs = testing::RandomIrRuleset(rng);
    CompileOptions options{.backend = backend};
    options.classify_min_rules = 2;  // classifiers in the mix
    auto program = Program::Compile(RulesetOf(rs), options);
    ASSERT_TRUE(program.ok()) << program.status();
    std::vector<Sample> samples;
    for (int i = 0; i < kFrames; ++i) samples.push_back({testing::RandomFrame(rng), testing::RandomMeta(rng)});
    // The reference: one thread.
    RunState ref_state;
    std::vector<Result> expected;
    for (const Sample& s : samples) {
      expected.push_back((*program)->Classify(Hook::kForward, s.frame.data(), s.frame.size(),
                                              s.meta, &ref_state));
    }
    std::vector<int> mismatches(kThreads, 0);
    std::vector<RunState> states(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kFrames; ++i) {
          const Sample& s = samples[i];
          Result r = (*program)->Classify(Hook::kForward, s.frame.data(), s.frame.size(), s.meta,
                                          &states[t]);
          mismatches[t] += !testing::SameResult(r, expected[i]);
        }
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(mismatches[t], 0) << "thread " << t;
      for (size_t tb = 0; tb < rs.tables.size(); ++tb) {
        for (size_t c = 0; c < rs.tables[tb].chains.size(); ++c) {
          for (size_t r = 0; r < rs.tables[tb].chains[c].rules.size(); ++r) {
            RuleRef ref{static_cast<int>(tb), static_cast<int>(c), static_cast<int>(r)};
            ASSERT_EQ(states[t].CounterOf(ref).packets, ref_state.CounterOf(ref).packets);
            ASSERT_EQ(states[t].CounterOf(ref).bytes, ref_state.CounterOf(ref).bytes);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace rulejit
