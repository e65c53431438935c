// Reading and comparing corpus rulesets (see corpus_compare.h).
#include "tests/kernel/corpus_compare.h"

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "frontends/frontend.h"
#include "ir/diag.h"

namespace rulejit::testing {

std::optional<ir::Ruleset> ReadCorpusRuleset(const std::string& text, const std::string& name,
                                             std::string* first_error) {
  ir::Diagnostics diags;
  std::optional<ir::Ruleset> rs = frontends::ParseRuleset(text, name, std::nullopt, diags);
  if (!rs && first_error) {
    for (const ir::Diagnostic& d : diags.all()) {
      if (d.severity == ir::Severity::kError) {
        *first_error = d.message;
        break;
      }
    }
  }
  return rs;
}

Outcome CompareAtEveryHook(const ir::Ruleset& a, const ir::Ruleset& b, std::string* why) {
  Outcome out = Outcome::kEquivalent;
  for (ir::Hook hook : {ir::Hook::kPrerouting, ir::Hook::kInput, ir::Hook::kForward,
                        ir::Hook::kOutput, ir::Hook::kPostrouting}) {
    analysis::DiffResult d = analysis::DiffRulesets(a, b, {.hook = hook});
    if (!d.regions.empty()) {
      *why = absl::StrCat(ir::HookName(hook), ": ", d.regions.size(), " regions differ");
      return Outcome::kDifferent;
    }
    if (!d.exact()) {
      out = Outcome::kInexact;
      const auto& first = d.old_inexact.empty() ? d.new_inexact : d.old_inexact;
      *why = absl::StrCat(ir::HookName(hook), ": ", first.front().reason);
    }
  }
  return out;
}

}  // namespace rulejit::testing
