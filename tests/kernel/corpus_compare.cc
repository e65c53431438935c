// Reading and comparing corpus rulesets (see corpus_compare.h).
#include "tests/kernel/corpus_compare.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "frontends/frontend.h"
#include "ir/diag.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {

std::vector<std::string> PrinterCorpusFiles() {
  namespace fs = std::filesystem;
  const fs::path shared = fs::path(RULEJIT_SHARED_DIR) / "corpus";
  std::vector<std::string> files;
  for (const char* dir : {"realworld", "nftables-dumps"}) {
    if (!fs::exists(shared / dir)) continue;
    for (const auto& entry : fs::directory_iterator(shared / dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".nft" || ext == ".ipt" || ext == ".json") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void ForEachPrinterInput(size_t every, const char* all_env, CorpusCounts& counts,
                         const std::function<void(const std::string& id, const std::string& path,
                                                  const ir::Ruleset& input)>& fn) {
  const bool all = std::getenv(all_env) != nullptr;
  const std::vector<std::string> files = PrinterCorpusFiles();
  for (size_t i = 0; i < files.size(); ++i) {
    if (!all && i % every != 0) continue;
    ++counts.tried;
    const std::filesystem::path path = files[i];
    std::optional<ir::Ruleset> input = ReadCorpusRuleset(ReadFile(files[i]), files[i], nullptr);
    if (!input) continue;
    ++counts.loads;
    if (path.extension() == ".nft" &&
        RunShell("unshare --net nft -c -f " + ShellQuote(files[i]) + " >/dev/null 2>&1").exit_code != 0) {
      ++counts.nft_refuses_input;
      continue;
    }
    fn(path.parent_path().filename().string() + "/" + path.filename().string(), files[i], *input);
  }
}

std::optional<std::string> ReadBackAndCompare(const ir::Ruleset& input, const std::string& printed,
                                              const std::string& id, const std::string& what,
                                              BackCounts& counts) {
  std::string error;
  std::optional<ir::Ruleset> back = ReadCorpusRuleset(printed, id + " (as " + what + ")", &error);
  if (!back) {  // nft took it: a gap of one of rulejit's readers, counted
    ++counts.unreadable;
    std::printf("unread    %s: rulejit cannot read the printed %s back: %s\n", id.c_str(), what.c_str(),
                error.c_str());
    return std::nullopt;
  }
  std::string why;
  switch (CompareAtEveryHook(input, *back, &why)) {
    case Outcome::kEquivalent:
      ++counts.equivalent;
      return std::nullopt;
    case Outcome::kInexact:
      ++counts.inexact;
      std::printf("inexact   %s: %s\n", id.c_str(), why.c_str());
      return std::nullopt;
    case Outcome::kDifferent:
      break;
  }
  return why;
}

std::string RefusalReason(const std::string& message) {
  size_t at = message.rfind(": ");
  return at == std::string::npos ? message : message.substr(at + 2);
}

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
