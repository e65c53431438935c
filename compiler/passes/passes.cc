// The pass driver (see passes.h).
#include "compiler/passes/passes.h"

#include <algorithm>

#include "ir/printer.h"

namespace rulejit::passes {

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> kPasses = {
      {"drop-repeated-rules",
       "empty rules that repeat an earlier chain-ending rule (they never match)",
       &DropRepeatedRules},
      {"remove-shadowed-rules",
       "empty rules whose packets earlier chain-ending rules all take (proved on boxes)",
       &RemoveShadowedRules},
      {"fold-masked-compare",
       "fuse payload load + mask + compare into one masked compare", &FoldMaskedCompare},
  };
  return kPasses;
}

bool IsPassName(const std::string& name) {
  const auto& all = AllPasses();
  return std::any_of(all.begin(), all.end(),
                     [&](const PassInfo& p) { return name == p.name; });
}

void RunPasses(ir::Ruleset& ruleset, const PassOptions& options) {
  for (const PassInfo& pass : AllPasses()) {
    const auto& off = options.disabled;
    if (std::find(off.begin(), off.end(), pass.name) != off.end()) continue;
    const bool dump = options.dump && options.dump_after == pass.name;
    std::string before = dump ? ir::PrintRuleset(ruleset) : "";
    pass.run(ruleset);
    if (dump) options.dump(before, ir::PrintRuleset(ruleset));
  }
}

}  // namespace rulejit::passes
