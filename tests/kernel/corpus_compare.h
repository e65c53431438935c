// Shared by the corpus tests that compare two readings of one ruleset
// (nft_json_kernel_test: text vs nft's JSON listing; nft_emit_kernel_test:
// input vs rulejit's own nft printing): read a ruleset as any frontend
// does, and compare two rulesets at every IP hook with the exact diff.
#ifndef RULEJIT_TESTS_KERNEL_CORPUS_COMPARE_H_
#define RULEJIT_TESTS_KERNEL_CORPUS_COMPARE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace rulejit::testing {

// The ruleset `text` (format detected), or nullopt with the first error's
// message in `first_error` (when given).
std::optional<ir::Ruleset> ReadCorpusRuleset(const std::string& text, const std::string& name,
                                             std::string* first_error);

// The printer corpus: the .nft, .ipt and .json files of
// ../shared/corpus/realworld and ../shared/corpus/nftables-dumps, sorted.
std::vector<std::string> PrinterCorpusFiles();

// What a printer test went over.
struct CorpusCounts {
  int tried = 0, loads = 0, nft_refuses_input = 0;
};
// Calls fn(id, path, ruleset) for every `every`th printer corpus file (each
// one when the environment variable `all_env` is set) that rulejit reads
// and, for .nft, the real `nft -c` here accepts (a device or module this
// machine lacks says nothing of a printer); id is "dir/file".
void ForEachPrinterInput(size_t every, const char* all_env, CorpusCounts& counts,
                         const std::function<void(const std::string& id, const std::string& path,
                                                  const ir::Ruleset& input)>& fn);
// What printed rulesets read back came to.
struct BackCounts {
  int unreadable = 0, equivalent = 0, inexact = 0;
};
// Reads `printed` (named "ID (as WHAT)") back and compares it with `input`
// at every hook; counts the outcome in `counts` and prints a line for an
// unreadable or inexact one. Returns the difference where the printed
// ruleset means something else (the caller's failure), else nullopt.
std::optional<std::string> ReadBackAndCompare(const ir::Ruleset& input, const std::string& printed,
                                              const std::string& id, const std::string& what,
                                              BackCounts& counts);

// A printer's refusal without its location: "FILE:LINE: rule in chain X:
// why" → "why".
std::string RefusalReason(const std::string& message);

enum class Outcome { kEquivalent, kInexact, kDifferent };

// DiffRulesets at prerouting, input, forward, output and postrouting: the
// first difference, else inexact when some hook has a rule diff cannot
// reason about exactly (`why` says which hook and why).
Outcome CompareAtEveryHook(const ir::Ruleset& a, const ir::Ruleset& b, std::string* why);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_CORPUS_COMPARE_H_
