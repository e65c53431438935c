// `rulejit translate FILE [--to nft]`: the ruleset in nft syntax, printed
// only after diff proves it equivalent to FILE.
//
// The translation is emit::PrintNft (a located error where a rule has no
// exact nft form); the printed script is read back with the nft frontend
// and compared with FILE by analysis::DiffRulesets at every hook
// (prerouting ... postrouting). Any difference, or a rule diff cannot
// reason about exactly, stops it with that rule and why: nothing unproved
// is printed. `--to iptables` (emit/ has no iptables printer yet) is
// refused as not implemented.
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "emit/nft_print.h"
#include "ir/diag.h"
#include "tools/commands.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "translate";

// "FILE:LINE" of a rule of `rs`, or its chain's policy.
std::string RuleAt(const ir::Ruleset& rs, const ir::RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0) return "the hook's default";
  const ir::Chain& chain = rs.tables[ref.table].chains[ref.chain];
  if (ref.rule < 0) return absl::StrCat("chain ", chain.name, "'s policy");
  std::string where = rs.Where(chain.rules[ref.rule].loc);
  return where.empty() ? absl::StrCat(chain.name, " rule ", ref.rule + 1) : where;
}

// "" when `a` and `b` are proved equivalent at every hook, else why not.
std::string Prove(const ir::Ruleset& a, const ir::Ruleset& b) {
  for (ir::Hook hook : {ir::Hook::kPrerouting, ir::Hook::kInput, ir::Hook::kForward,
                        ir::Hook::kOutput, ir::Hook::kPostrouting}) {
    analysis::DiffResult d = analysis::DiffRulesets(a, b, {.hook = hook});
    if (!d.regions.empty()) {
      const analysis::DiffRegion& r = d.regions.front();
      return absl::StrCat("at hook ", ir::HookName(hook), " the translation of ",
                          RuleAt(a, r.old_side.rule), " decides differently (",
                          analysis::DescribePoint(r.witness, d.space), ")");
    }
    if (!d.old_inexact.empty()) {
      return absl::StrCat("cannot prove ", RuleAt(a, d.old_inexact.front().rule),
                          " equivalent: ", d.old_inexact.front().reason);
    }
    if (!d.new_inexact.empty()) {
      return absl::StrCat("cannot prove the translation of a rule at hook ",
                          ir::HookName(hook), " equivalent: ", d.new_inexact.front().reason);
    }
  }
  return "";
}

int RunTranslate(const Args& args, Streams io) {
  std::string to = args.value_or("to", "nft");
  if (to == "iptables") return UsageError(kName, "--to iptables is not implemented yet", io.err);
  if (to != "nft") return UsageError(kName, absl::StrCat("unknown --to '", to, "' (expected nft)"), io.err);
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  std::optional<LoadedRuleset> loaded = LoadRuleset(args.positional(0), *format, io.err);
  if (!loaded) return kExitInputError;
  absl::StatusOr<std::string> text = emit::PrintNft(loaded->ruleset);
  if (!text.ok()) {
    io.err << "rulejit translate: error: " << text.status().message() << "\n";
    return kExitInputError;
  }
  ir::Diagnostics diags;
  std::string name = DisplayName(args.positional(0)) + " (as nft)";
  std::optional<ir::Ruleset> back =
      frontends::ParseRuleset(*text, name, InputFormat::kNft, diags);
  if (!back) {
    io.err << "rulejit translate: error: rulejit cannot read its own translation back\n";
    return kExitInputError;
  }
  if (std::string why = Prove(loaded->ruleset, *back); !why.empty()) {
    io.err << "rulejit translate: error: " << why << "\n";
    return kExitInputError;
  }
  io.out << *text;
  return kExitOk;
}

}  // namespace

Command TranslateCommand() {
  return Command{
      .name = kName,
      .synopsis = "translate FILE [--to nft] [--format F] [--ipset FILE]",
      .summary = "print the ruleset as nft, after diff proves the translation equivalent",
      .spec = {.flags = {{"to", true}, {"format", true}, {"ipset", true}},
               .positionals = {"FILE"}},
      .run = RunTranslate,
      .description =
          "Prints FILE (iptables-save, nft or nft JSON) as an nft script, but only once "
          "`rulejit diff` has proved the script equivalent to FILE at every hook. A rule with "
          "no exact nft form, or one the proof cannot reason about exactly, stops it with the "
          "rule's location and why (exit 1).",
      .examples = {{"rulejit translate rules.ipt > rules.nft",
                    "An iptables-save dump as a proved-equivalent nft script."}},
  };
}

}  // namespace rulejit::tools
