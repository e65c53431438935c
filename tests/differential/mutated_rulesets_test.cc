// Real rulesets, mutated by structure (tests/fuzz/ruleset_mutator.h), on
// every tier: a deterministic slice of what ruleset_grammar_fuzz does, so
// every build (and the ASan/UBSan one) runs it. What loads must agree on
// every tier (tests/fuzz/tier_agreement.h); nothing may crash.
// RULEJIT_MUTANTS=N runs N mutants instead of the default.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/fuzz/ruleset_mutator.h"
#include "tests/fuzz/tier_agreement.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

struct Seed {
  std::string name, text;
};

std::vector<Seed> Seeds() {
  std::vector<Seed> seeds;
  for (const char* dir : {"/corpus/realworld", "/corpus/nftables-dumps"}) {
    const fs::path root = fs::path(RULEJIT_SHARED_DIR + std::string(dir));
    if (!fs::is_directory(root)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".nft" || ext == ".ipt") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      std::ifstream in(f);
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().size() <= 64 * 1024) seeds.push_back(Seed{f.filename().string(), text.str()});
    }
  }
  return seeds;
}

int Mutants() {
  const char* env = std::getenv("RULEJIT_MUTANTS");
  return env ? std::atoi(env) : 400;
}

TEST(RulesetMutator, TokensConcatenateBackToTheText) {
  for (const Seed& seed : Seeds()) {
    std::string back;
    for (const Token& t : Tokenize(seed.text)) back += t.text;
    EXPECT_EQ(back, seed.text) << seed.name;
  }
}

TEST(RulesetMutator, StaysWithinTheSizeAndChangesTheText) {
  RulesetMutator mutator;
  const std::string text = "table inet t {\n  chain c {\n    tcp dport 22 accept\n  }\n}\n";
  mutator.Learn(text);
  mutator.Learn("-A INPUT -p udp --dport 53 -s 10.0.0.0/8 -j ACCEPT\n");
  int changed = 0;
  for (uint32_t seed = 0; seed < 500; ++seed) {
    std::string out = mutator.Mutate(text, seed, 4096);
    EXPECT_LE(out.size(), 4096u);
    changed += out != text;
  }
  EXPECT_GT(changed, 400);
}

TEST(MutatedRulesets, EverySeedAgreesOnEveryTier) {
  int loaded = 0, native = 0, classified = 0, by_rule = 0;
  for (const Seed& seed : Seeds()) {
    TierCheck check = CheckTiersAgree(seed.text, {.with_llvm = seed.text.size() < 8192});
    loaded += check.loaded;
    native += check.jit_native;
    classified += check.classified;
    by_rule += check.decided_by_rule;
    EXPECT_EQ(check.disagreement, "") << seed.name;
  }
  std::printf("%d seeds loaded, %d run as machine code; a rule decided %d of %d classifications\n",
              loaded, native, by_rule, classified);
  EXPECT_GT(loaded, 50);
  // The frames reach the rules (made from the rulesets' own addresses and
  // ports), not only the policies: measured 1442 of 6960.
  EXPECT_GT(by_rule, classified / 6);
}

// The mutants get past the parsers (a fair share load) and every tier
// agrees on what loads.
TEST(MutatedRulesets, MutantsAgreeOnEveryTier) {
  RulesetMutator mutator;
  std::vector<Seed> seeds;  // those that load: mutants of them reach deeper
  for (Seed& seed : Seeds()) {
    mutator.Learn(seed.text);
    if (ParseRuleset(seed.text, seed.name).ok()) seeds.push_back(std::move(seed));
  }
  ASSERT_FALSE(seeds.empty());
  int loaded = 0;
  const int mutants = Mutants();
  for (int i = 0; i < mutants; ++i) {
    const Seed& seed = seeds[(i * 7919) % seeds.size()];
    std::string text = mutator.Mutate(seed.text, static_cast<uint32_t>(i), 256 * 1024);
    TierCheck check = CheckTiersAgree(text, {.with_llvm = text.size() < 2048, .seed = static_cast<uint32_t>(i)});
    loaded += check.loaded;
    EXPECT_EQ(check.disagreement, "") << "mutant " << i << " of " << seed.name << ":\n" << text.substr(0, 4000);
  }
  std::printf("%d of %d mutants loaded\n", loaded, mutants);
  EXPECT_GT(loaded, mutants / 10);
}

}  // namespace
}  // namespace rulejit::testing
