// Two programs of one ruleset agree on random frames: verdict, reject,
// marks, deciding rule per frame, then every rule's counter. For tests of
// passes (the reference runs the IR as written, the other optimized).
#ifndef RULEJIT_TESTS_SUPPORT_AGREE_H_
#define RULEJIT_TESTS_SUPPORT_AGREE_H_

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/ir_gen.h"
#include "tests/support/results.h"

namespace rulejit::testing {

inline ::testing::AssertionResult AgreeOnRandomFrames(const Program& reference,
                                                      const Program& compiled,
                                                      const ir::Ruleset& rs,
                                                      std::mt19937& rng, int frames) {
  RunState s1, s2;
  for (int i = 0; i < frames; ++i) {
    std::vector<uint8_t> frame = RandomFrame(rng);
    PacketMeta meta = RandomMeta(rng);
    Result a = reference.Classify(Hook::kForward, frame.data(), frame.size(), meta, &s1);
    Result b = compiled.Classify(Hook::kForward, frame.data(), frame.size(), meta, &s2);
    if (!SameResult(a, b)) {
      return ::testing::AssertionFailure()
             << "frame " << i << " differs: verdicts " << static_cast<int>(a.verdict) << "/"
             << static_cast<int>(b.verdict) << " rules " << a.decided_by.table << "/"
             << a.decided_by.chain << "/" << a.decided_by.rule << " vs " << b.decided_by.table
             << "/" << b.decided_by.chain << "/" << b.decided_by.rule << " marks " << a.mark
             << "/" << b.mark;
    }
  }
  for (size_t t = 0; t < rs.tables.size(); ++t) {
    for (size_t c = 0; c < rs.tables[t].chains.size(); ++c) {
      for (size_t r = 0; r < rs.tables[t].chains[c].rules.size(); ++r) {
        RuleRef ref{static_cast<int>(t), static_cast<int>(c), static_cast<int>(r)};
        if (s1.CounterOf(ref).packets != s2.CounterOf(ref).packets ||
            s1.CounterOf(ref).bytes != s2.CounterOf(ref).bytes) {
          return ::testing::AssertionFailure()
                 << "counter of rule " << t << "/" << c << "/" << r << " differs";
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_AGREE_H_
