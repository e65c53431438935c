// Every tier of one arbitrary ruleset agrees on frames made from its own
// words: the check behind ruleset_grammar_fuzz and mutated_rulesets_test.
//
// The ruleset text is parsed (format detected) and, when it loads, compiled
// for the interpreter (the reference), the JIT with linear chains, the JIT
// with decision structures for every chain of a rule or more, and (when
// asked) the LLVM tier. Frames are built from the addresses and ports the
// text names, so that its rules match some of them, and classified at every
// hook that has base chains, with one RunState per tier carried over the
// frames (so limits, quotas, recent lists and dynamic sets evolve alike) on
// one fixed clock.
#ifndef RULEJIT_TESTS_FUZZ_TIER_AGREEMENT_H_
#define RULEJIT_TESTS_FUZZ_TIER_AGREEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace rulejit::testing {

struct TierCheck {
  bool loaded = false;      // the text parsed and the interpreter compiled it
  std::string disagreement; // empty when every tier agreed
  int classified = 0;        // frames x hooks with base chains classified
  int decided_by_rule = 0;   // ... of which a rule decided (not a policy)
  bool jit_native = false;   // the jit tier runs machine code (no interpreter fallback)
};

struct TierCheckOptions {
  bool with_llvm = false;
  int frames = 24;       // at least; two more per line of the text, up to max_frames
  int max_frames = 512;
  uint32_t seed = 1;  // picks the frames' fields among the text's words
};

TierCheck CheckTiersAgree(std::string_view ruleset_text, const TierCheckOptions& options);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_FUZZ_TIER_AGREEMENT_H_
