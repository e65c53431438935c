// `rulejit check FILE [--format F] [--lint]`: parse and verify, then look
// for rules that never decide anything (compiler/analysis/lint.h).
//
// On success prints one summary line to stdout:
//   FILE: ok, 1 tables, 5 chains, 12 rules
// Shadowed and unreachable rules are warnings on stderr, located at the
// rule and naming the earlier rules that take its packets:
//   rules.ipt:14:1: warning: rule is shadowed: no packet that reaches it
//   matches it (covered by rules.ipt:12)
//   rules.nft:9:5: warning: rule is unreachable: no packet gets to it
//   (earlier rules decide every packet: rules.nft:8)
// `--lint` also reports redundant rules (removing them changes no
// verdict). Warnings do not change the exit code: 0 unless there is an
// error (then the located diagnostics go to stderr and the exit is 1).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/analysis/lint.h"
#include "ir/diag.h"
#include "tools/commands.h"

namespace rulejit::tools {
namespace {

struct Counts {
  size_t tables = 0;
  size_t chains = 0;
  size_t rules = 0;
  size_t elements = 0;  // of all sets and maps
};

Counts CountRuleset(const ir::Ruleset& ruleset) {
  Counts counts;
  counts.tables = ruleset.tables.size();
  for (const ir::Table& table : ruleset.tables) {
    counts.chains += table.chains.size();
    for (const ir::Chain& chain : table.chains) {
      counts.rules += chain.rules.size();
    }
    for (const ir::Set& set : table.sets) counts.elements += set.elements.size();
  }
  return counts;
}

// Above this many rules `check` skips the shadowed-rule analysis unless
// --lint asks for it: it is exact and costs about as much as a diff (on
// ClassBench fw1_1K, ~900 wildcard-heavy rules, several seconds).
constexpr size_t kShadowCheckMaxRules = 500;
// And above this many set elements: a rule that looks up a set of a
// million addresses took longer to analyse than to parse and compile.
constexpr size_t kShadowCheckMaxElements = 100000;

std::string ShadowMessage(const ir::Ruleset& ruleset,
                          const analysis::LintFinding& finding) {
  if (finding.kind == analysis::LintKind::kRedundant) {
    return "rule is redundant: removing it changes no verdict";
  }
  const bool unreachable = finding.kind == analysis::LintKind::kUnreachable;
  std::string message =
      unreachable ? "rule is unreachable: no packet gets to it"
                  : "rule is shadowed: no packet that reaches it matches it";
  if (finding.blocked_by.empty()) {
    return absl::StrCat(message, unreachable
                                     ? " (nothing jumps to its chain)"
                                     : " (the conditions that lead to its chain exclude it)");
  }
  std::string covering;
  for (const ir::RuleRef& r : finding.blocked_by) {
    const ir::Rule& rule = ruleset.tables[r.table].chains[r.chain].rules[r.rule];
    absl::StrAppend(&covering, covering.empty() ? "" : ", ", ruleset.Where(rule.loc));
  }
  return absl::StrCat(message, unreachable ? " (earlier rules decide every packet: "
                                           : " (covered by ",
                      covering, ")");
}

// Prints the lint findings as located warnings, quoting the source lines.
void ReportLint(const ir::Ruleset& ruleset, const analysis::LintResult& lint,
                std::ostream& err) {
  if (lint.findings.empty()) return;
  ir::Diagnostics diags;
  for (const std::string& name : ruleset.files) {
    std::string ignored;
    diags.AddFile(name, ReadFile(name, ignored).value_or(""));
  }
  for (const analysis::LintFinding& f : lint.findings) {
    const ir::Rule& rule =
        ruleset.tables[f.rule.table].chains[f.rule.chain].rules[f.rule.rule];
    diags.Warning(rule.loc, ShadowMessage(ruleset, f));
  }
  err << diags.Format();
}

int RunCheck(const Args& args, Streams io) {
  absl::StatusOr<std::optional<InputFormat>> format = FormatOption(args);
  if (!format.ok())
    return UsageError("check", format.status().message(), io.err);
  const std::string& path = args.positional(0);
  std::optional<LoadedRuleset> loaded = LoadRuleset(path, *format, io.err);
  if (!loaded) return kExitInputError;
  Counts counts = CountRuleset(loaded->ruleset);
  const bool lint = args.has("lint");
  if (lint || (counts.rules <= kShadowCheckMaxRules &&
               counts.elements <= kShadowCheckMaxElements)) {
    ReportLint(loaded->ruleset,
               analysis::LintRuleset(loaded->ruleset, {.redundant = lint}), io.err);
  } else if (counts.rules > kShadowCheckMaxRules) {
    io.err << absl::StrFormat(
        "%s: note: %d rules: shadowed-rule analysis skipped (--lint runs it)\n", path,
        counts.rules);
  } else {
    io.err << absl::StrFormat(
        "%s: note: %d set elements: shadowed-rule analysis skipped (--lint runs it)\n", path,
        counts.elements);
  }
  io.out << absl::StrFormat("%s: ok, %d tables, %d chains, %d rules\n", path,
                            counts.tables, counts.chains, counts.rules);
  return kExitOk;
}

}  // namespace

Command CheckCommand() {
  return Command{
      .name = "check",
      .synopsis = "check FILE [--format F] [--lint]",
      .summary = "parse and verify FILE; located errors, shadowed (and with "
                 "--lint redundant) rules on stderr",
      .spec = {.flags = {{"format", true}, {"lint", false}}, .positionals = {"FILE"}},
      .run = RunCheck,
  };
}

}  // namespace rulejit::tools
