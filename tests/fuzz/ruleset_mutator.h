// A structure-aware mutator for ruleset text (iptables-save and nft alike).
//
// Byte flips rarely get past a parser's first token, so a fuzzer that only
// flips bytes never reaches the lowering, the passes or the tiers. This
// mutator cuts the text into tokens of a few classes (words, options,
// numbers, addresses, strings, punctuation, line breaks) and edits it the
// way a grammar would allow: a token replaced by another of its class seen
// in any input so far (so `tcp dport 22` may become `udp sport 65535`),
// numbers pushed to their edges, lines duplicated, dropped, swapped or
// spliced in from other rulesets, blocks nested deeply and lines repeated
// into long element lists. The vocabulary is learnt from every input it
// sees, so seeding the fuzzer with real rulesets gives it the real words.
//
//   RulesetMutator m;
//   m.Learn(seed_text);
//   std::string next = m.Mutate(seed_text, rng_seed, max_size);
#ifndef RULEJIT_TESTS_FUZZ_RULESET_MUTATOR_H_
#define RULEJIT_TESTS_FUZZ_RULESET_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace rulejit::testing {

enum class TokenClass { kSpace, kNewline, kPunct, kWord, kOption, kNumber, kAddress, kString };
constexpr int kTokenClasses = 8;

struct Token {
  TokenClass cls;
  std::string text;
};

// Cuts text into tokens; concatenating their texts gives the text back.
std::vector<Token> Tokenize(std::string_view text);

class RulesetMutator {
 public:
  // Adds the tokens and lines of `text` to the vocabulary (bounded).
  void Learn(std::string_view text);

  // `text` with one (at times up to four) structural edits, at most `max_size` bytes.
  std::string Mutate(std::string_view text, uint32_t seed, size_t max_size);

  size_t vocabulary_size() const;

 private:
  using Rng = std::mt19937;
  void Edit(std::vector<Token>& tokens, Rng& rng, size_t max_size);
  const std::string* Pick(TokenClass cls, Rng& rng) const;

  std::vector<std::string> words_[kTokenClasses];
  std::vector<std::string> lines_;
};

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_FUZZ_RULESET_MUTATOR_H_
