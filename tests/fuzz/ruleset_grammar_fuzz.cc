// libFuzzer target: rulesets mutated by their structure (tests/fuzz/
// ruleset_mutator.h: tokens swapped within their class, numbers at their
// edges, lines duplicated, spliced, nested and repeated), so that inputs
// get past the parsers into the lowering, the passes and every tier. What
// loads must give the same answer on every tier for frames made from the
// ruleset's own addresses and ports (tests/fuzz/tier_agreement.h); nothing
// may crash, hang or read out of bounds. Inputs up to 1 MiB
// (`-max_len=1048576`); seed it with real rulesets (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "rulejit/rulejit.h"
#include "tests/fuzz/ruleset_mutator.h"
#include "tests/fuzz/tier_agreement.h"

namespace {

rulejit::testing::RulesetMutator& Mutator() {
  static rulejit::testing::RulesetMutator mutator;
  return mutator;
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  // One in eight: libFuzzer's own byte-level edits (they find what no
  // grammar would write: stray bytes, cut tokens).
  if (seed % 8 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string out = Mutator().Mutate(text, seed, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Mutator().Learn(text.substr(0, 1 << 16));
  if (size > 64 * 1024) {
    // Big inputs are for the parsers' bounds; compiling every tier of them
    // would take longer than the fuzzer's timeout.
    (void)rulejit::ParseRuleset(text, "fuzz");
    return 0;
  }
  rulejit::testing::TierCheckOptions options;
  options.seed = static_cast<uint32_t>(size);
  // The LLVM tier costs milliseconds a compile: only small rulesets.
  options.with_llvm = size < 2048;
  rulejit::testing::TierCheck check = rulejit::testing::CheckTiersAgree(text, options);
  if (!check.disagreement.empty()) {
    std::fprintf(stderr, "tiers disagree: %s\n", check.disagreement.c_str());
    std::abort();
  }
  return 0;
}
