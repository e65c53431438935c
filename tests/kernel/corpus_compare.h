// Shared by the corpus tests that compare two readings of one ruleset
// (nft_json_kernel_test: text vs nft's JSON listing; nft_emit_kernel_test:
// input vs rulejit's own nft printing): read a ruleset as any frontend
// does, and compare two rulesets at every IP hook with the exact diff.
#ifndef RULEJIT_TESTS_KERNEL_CORPUS_COMPARE_H_
#define RULEJIT_TESTS_KERNEL_CORPUS_COMPARE_H_

#include <optional>
#include <string>

#include "ir/ir.h"

namespace rulejit::testing {

// The ruleset `text` (format detected), or nullopt with the first error's
// message in `first_error` (when given).
std::optional<ir::Ruleset> ReadCorpusRuleset(const std::string& text, const std::string& name,
                                             std::string* first_error);

enum class Outcome { kEquivalent, kInexact, kDifferent };

// DiffRulesets at prerouting, input, forward, output and postrouting: the
// first difference, else inexact when some hook has a rule diff cannot
// reason about exactly (`why` says which hook and why).
Outcome CompareAtEveryHook(const ir::Ruleset& a, const ir::Ruleset& b, std::string* why);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_CORPUS_COMPARE_H_
