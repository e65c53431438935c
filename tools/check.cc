// `rulejit check FILE [--format F] [--ipset FILE] [--lint]`: parse and verify, then look
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
// FILE "-" reads standard input.
//
// `--json` prints one JSON document on stdout instead, errors, warnings and
// notes alike in the shape of tools/diagnostic_output.h:
//   {"file":"rules.ipt","ok":true,"tables":1,"chains":5,"rules":12,
//    "diagnostics":[{"file":"rules.ipt","line":14,"column":1,
//                    "severity":"warning","message":"rule is shadowed: ...",
//                    "hint":""}]}
// (the counts only when ok); the exit code is the same as without it.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/analysis/lint.h"
#include "ir/diag.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace rulejit::tools {
namespace {

struct Counts {
  size_t tables = 0;
  size_t chains = 0;
  size_t rules = 0;
  size_t elements = 0;  // of all sets and maps
  size_t concat_elements = 0;  // of those with concatenated keys
};

Counts CountRuleset(const ir::Ruleset& ruleset) {
  Counts counts;
  counts.tables = ruleset.tables.size();
  for (const ir::Table& table : ruleset.tables) {
    counts.chains += table.chains.size();
    for (const ir::Chain& chain : table.chains) {
      counts.rules += chain.rules.size();
    }
    for (const ir::Set& set : table.sets) {
      counts.elements += set.elements.size();
      if (set.field_lens.size() > 1) counts.concat_elements += set.elements.size();
    }
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
// A concatenated set's elements are made disjoint each against the
// earlier ones it overlaps (headerspace/lift_cube_sets.cc, an index; one
// against all before, which took over 5 minutes at 100,000), but each
// element is still a cube of every dimension through the analysis: `check
// --lint` of `ipv4_addr . inet_service` pairs took 2.6 s and 150 MB at
// 10,000, 17.5 s of CPU and 800 MB at 100,000.
constexpr size_t kShadowCheckMaxConcatElements = 10000;

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

// Reports the lint findings as located warnings, quoting the source lines.
void ReportLint(const ir::Ruleset& ruleset, const analysis::LintResult& lint,
                DiagnosticOutput& out) {
  if (lint.findings.empty()) return;
  ir::Diagnostics diags;
  for (const std::string& name : ruleset.files) {
    std::string ignored;
    diags.AddFile(name, ReadFile(name, ignored).value_or(""));
  }
  for (const analysis::LintFinding& f : lint.findings) {
    const ir::Rule& rule =
        ruleset.tables[f.rule.table].chains[f.rule.chain].rules[f.rule.rule];
    // The analysis' packets (cube.h): a claim about them, not fragments.
    diags.Warning(rule.loc, ShadowMessage(ruleset, f),
                  "among unfragmented IPv4 packets without IP options and IPv6 packets "
                  "without extension headers");
  }
  out.Add(diags);
}

// The shadowed-rule analysis, or a note saying why it was skipped.
void Analyse(const std::string& name, const ir::Ruleset& ruleset, const Counts& counts,
             bool lint, DiagnosticOutput& out) {
  if (lint || (counts.rules <= kShadowCheckMaxRules &&
               counts.elements <= kShadowCheckMaxElements &&
               counts.concat_elements <= kShadowCheckMaxConcatElements)) {
    ReportLint(ruleset, analysis::LintRuleset(ruleset, {.redundant = lint}), out);
    return;
  }
  const bool many_rules = counts.rules > kShadowCheckMaxRules;
  out.Add(ToolDiagnostic{
      .file = name,
      .severity = ir::Severity::kNote,
      .message = absl::StrFormat("%d %s: shadowed-rule analysis skipped (--lint runs it)",
                                 many_rules ? counts.rules : counts.elements,
                                 many_rules ? "rules" : "set elements"),
      .hint = ""});
}

int RunCheck(const Args& args, Streams io) {
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok())
    return UsageError("check", format.status().message(), io.err);
  const std::string& path = args.positional(0);
  const std::string name = DisplayName(path);
  DiagnosticOutput diags(args.has("json"), io.err);
  std::optional<LoadedRuleset> loaded = LoadRuleset(path, *format, diags);
  Counts counts;
  if (loaded) {
    counts = CountRuleset(loaded->ruleset);
    Analyse(name, loaded->ruleset, counts, args.has("lint"), diags);
  }
  if (!diags.json()) {
    if (loaded) {
      io.out << absl::StrFormat("%s: ok, %d tables, %d chains, %d rules\n", name,
                                counts.tables, counts.chains, counts.rules);
    }
  } else {
    io.out << "{\"file\":" << JsonString(name) << ",\"ok\":" << (loaded ? "true" : "false");
    if (loaded) {
      io.out << ",\"tables\":" << counts.tables << ",\"chains\":" << counts.chains
             << ",\"rules\":" << counts.rules;
    }
    io.out << ",\"diagnostics\":" << diags.JsonArray() << "}\n";
  }
  return loaded ? kExitOk : kExitInputError;
}

}  // namespace

Command CheckCommand() {
  return Command{
      .name = "check",
      .synopsis = "check FILE [--format F] [--ipset FILE] [--lint] [--json]",
      .summary = "parse and verify FILE; located errors, shadowed (and with "
                 "--lint redundant) rules on stderr",
      .spec = {.flags = {{"format", true}, {"ipset", true}, {"lint", false}, {"json", false}}, .positionals = {"FILE"}},
      .run = RunCheck,
      .description =
          "Parses FILE, verifies it as the kernel would load it, and prints a summary line: "
          "FILE: ok, T tables, C chains, R rules. Errors are located (FILE:LINE:COL, the "
          "source line, a caret, and a hint when one helps). Rules no packet can reach or "
          "match are warnings naming the earlier rules that take their packets; --lint also "
          "reports redundant rules (removing them changes no verdict). Warnings do not change "
          "the exit status.\n\n"
          "--json prints one JSON document instead: {\"file\", \"ok\", \"tables\", "
          "\"chains\", \"rules\", \"diagnostics\"}, each diagnostic {\"file\", \"line\", "
          "\"column\", \"severity\", \"message\", \"hint\"} (line and column null when "
          "unknown).",
      .examples = {{"rulejit check rules.ipt", "Checks an iptables-save dump."},
                   {"iptables-save | rulejit check -",
                    "Checks the ruleset loaded now, read from standard input."},
                   {"nft list ruleset | rulejit check --lint --json -",
                    "Every finding, redundant rules included, as JSON."}},
  };
}

}  // namespace rulejit::tools
