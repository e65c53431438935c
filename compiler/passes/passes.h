// The optimizer's pass list and driver.
//
//   ir::Ruleset ──drop_repeated_rules──remove_shadowed_rules──fold_masked_compare──▶
//     ir::Ruleset ──▶ compiler/lower (the plan) ──▶ backend
//
// Every pass rewrites the IR in place, keeps its meaning exactly (the
// differential tests run optimized against unoptimized IR), has a name for
// `--dump-after=NAME` and can be turned off (`--no-NAME`, or
// PassOptions::disabled).
#ifndef RULEJIT_COMPILER_PASSES_PASSES_H_
#define RULEJIT_COMPILER_PASSES_PASSES_H_

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace rulejit::passes {

struct PassInfo {
  const char* name;     // "fold-masked-compare"
  const char* summary;  // one line for --help
  void (*run)(ir::Ruleset& ruleset);
};

// All passes, in the order they run.
const std::vector<PassInfo>& AllPasses();

struct PassOptions {
  std::vector<std::string> disabled;  // pass names not to run
  std::string dump_after;             // pass name whose before/after to show
  // Receives "before" and "after" IR text for dump_after.
  std::function<void(const std::string& before, const std::string& after)> dump;
};

// Runs the enabled passes in order. Unknown names in `disabled` or
// `dump_after` are the caller's to reject (see IsPassName).
void RunPasses(ir::Ruleset& ruleset, const PassOptions& options);
bool IsPassName(const std::string& name);

// The passes themselves, one per file.
void DropRepeatedRules(ir::Ruleset& ruleset);
void FoldMaskedCompare(ir::Ruleset& ruleset);
void RemoveShadowedRules(ir::Ruleset& ruleset);

}  // namespace rulejit::passes

#endif  // RULEJIT_COMPILER_PASSES_PASSES_H_
