// `rulejit translate FILE [--to nft|nft-json|iptables]`: the ruleset in nft
// syntax (or as libnftables JSON, or as an iptables-save dump), printed only
// after it is proved equivalent to FILE.
//
// The translation is emit::PrintNft, emit::PrintNftJson or, with `--to
// iptables`, emit::PrintIptables (a located error where a rule has no
// exact form); the printed text is read back with its frontend and
// compared with FILE rule by rule: each rule loads as the very same
// bytecode (interface-name compares taken in one width, ir/ifname_cmp.h),
// or matches, alone, the same packets with the same verdict and
// statements (analysis::CompareRuleSlices); this proof also holds for
// what diff cannot reason about across rules: NAT, limits, dynamic sets.
// Otherwise by analysis::DiffRulesets at every hook (prerouting ...
// postrouting). Any difference, or a rule neither proof covers, stops it
// with that rule and why: nothing unproved is printed.
#include <functional>
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "compiler/analysis/rule_slice.h"
#include "emit/ipt_print.h"
#include "emit/nft_print.h"
#include "ir/equal.h"
#include "ir/ifname_cmp.h"
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

bool SameObject(const ir::Object& a, const ir::Object& b) {
  return a.type == b.type && a.name == b.name && a.counter == b.counter && a.quota == b.quota &&
         a.limit == b.limit && a.synproxy == b.synproxy && a.l4proto == b.l4proto &&
         a.dport == b.dport && a.timeout_ms == b.timeout_ms && a.size == b.size;
}

// Whether rule `i` of chain `c` of table `t` means the same on both sides.
using SameRule = std::function<bool(size_t t, size_t c, size_t i)>;

bool SameChain(const ir::Chain& a, const ir::Chain& b, const std::function<bool(size_t)>& same_rule) {
  if (a.name != b.name || a.base.has_value() != b.base.has_value() || a.rules.size() != b.rules.size()) {
    return false;
  }
  if (a.base && (a.base->type != b.base->type || a.base->hook != b.base->hook ||
                 a.base->priority != b.base->priority || a.base->devices != b.base->devices ||
                 a.base->policy != b.base->policy)) {
    return false;
  }
  for (size_t i = 0; i < a.rules.size(); ++i) {
    if (!same_rule(i)) return false;
  }
  return true;
}

// The same tables, chains, objects and named sets, and every rule the same
// by `same_rule`.
bool SameShape(const ir::Ruleset& a, const ir::Ruleset& b, const SameRule& same_rule) {
  if (a.tables.size() != b.tables.size()) return false;
  for (size_t t = 0; t < a.tables.size(); ++t) {
    const ir::Table& ta = a.tables[t];
    const ir::Table& tb = b.tables[t];
    if (ta.family != tb.family || ta.name != tb.name || ta.chains.size() != tb.chains.size() ||
        ta.objects.size() != tb.objects.size() || ta.flowtables.size() != tb.flowtables.size()) {
      return false;
    }
    for (size_t i = 0; i < ta.objects.size(); ++i) {
      if (!SameObject(ta.objects[i], tb.objects[i])) return false;
    }
    for (const ir::Set& set : ta.sets) {
      if (set.anonymous()) continue;
      const ir::Set* other = tb.FindSet(set.name);
      if (!other || !ir::SameSet(set, *other)) return false;
    }
    for (size_t c = 0; c < ta.chains.size(); ++c) {
      if (!SameChain(ta.chains[c], tb.chains[c], [&](size_t i) { return same_rule(t, c, i); })) {
        return false;
      }
    }
  }
  return true;
}

// The second proof, for rulesets diff cannot reason about exactly (NAT
// chains, limits, dynamic sets): the translation has the same tables,
// chains, objects and named sets, and each rule either loads as the very
// same bytecode (which means the same whatever state it keeps) or, alone,
// matches the same packets with the same verdict and statements
// (analysis::CompareRuleSlices: at its chain's hook, or at every hook for
// a user chain's rule).
bool SameRuleByRule(const ir::Ruleset& a, const ir::Ruleset& b) {
  return SameShape(a, b, [&](size_t t, size_t c, size_t i) {
    ir::TableSets sa(a.tables[t]), sb(b.tables[t]);
    if (ir::SameExprs(sa, a.tables[t].chains[c].rules[i].exprs, sb,
                      b.tables[t].chains[c].rules[i].exprs)) {
      return true;
    }
    const std::vector<ir::RuleRef> ra{{static_cast<int>(t), static_cast<int>(c), static_cast<int>(i)}};
    const ir::Chain& chain = a.tables[t].chains[c];
    std::vector<ir::Hook> hooks = {analysis::SliceHook(chain)};
    if (!chain.base) {
      hooks = {ir::Hook::kPrerouting, ir::Hook::kInput, ir::Hook::kForward, ir::Hook::kOutput,
               ir::Hook::kPostrouting};
    }
    for (ir::Hook hook : hooks) {
      if (!analysis::CompareRuleSlices(a, ra, b, ra, hook).same()) return false;
    }
    return true;
  });
}

// "" when `a` and `b` are proved equivalent at every hook, else why not.
std::string Prove(const ir::Ruleset& a, const ir::Ruleset& b) {
  // iptables' 8-byte `-i eth0` is nft's 16-byte `iifname "eth0"`.
  ir::Ruleset wide_a = a, wide_b = b;
  ir::WidenIfnameCompares(wide_a);
  ir::WidenIfnameCompares(wide_b);
  if (SameRuleByRule(wide_a, wide_b)) return "";
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
  if (to != "nft" && to != "nft-json" && to != "iptables") {
    return UsageError(kName, absl::StrCat("unknown --to '", to, "' (expected nft, nft-json or iptables)"),
                      io.err);
  }
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  std::optional<LoadedRuleset> loaded = LoadRuleset(args.positional(0), *format, io.err);
  if (!loaded) return kExitInputError;
  absl::StatusOr<std::string> text = to == "nft"        ? emit::PrintNft(loaded->ruleset)
                                     : to == "nft-json" ? emit::PrintNftJson(loaded->ruleset)
                                                        : emit::PrintIptables(loaded->ruleset);
  if (!text.ok()) {
    io.err << "rulejit translate: error: " << text.status().message() << "\n";
    return kExitInputError;
  }
  ir::Diagnostics diags;
  std::string name = DisplayName(args.positional(0)) + " (as " + to + ")";
  std::optional<ir::Ruleset> back =
      frontends::ParseRuleset(*text, name, to == "iptables" ? InputFormat::kIptables : InputFormat::kNft, diags);
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
      .synopsis = "translate FILE [--to nft|nft-json|iptables] [--format F] [--ipset FILE]",
      .summary = "print the ruleset as nft, after diff proves the translation equivalent",
      .spec = {.flags = {{"to", true}, {"format", true}, {"ipset", true}},
               .positionals = {"FILE"}},
      .run = RunTranslate,
      .description =
          "Prints FILE (iptables-save, nft or nft JSON) as an nft script, but only once "
          "`rulejit diff` has proved the script equivalent to FILE at every hook. A rule with "
          "no exact nft form, or one the proof cannot reason about exactly, stops it with the "
          "rule's location and why (exit 1). --to nft-json prints the same as libnftables JSON "
          "(what `nft -j -f` loads), --to iptables as iptables-save text (emit/ipt_print.h: the "
          "shapes iptables generates), each proved the same way.",
      .examples = {{"rulejit translate rules.ipt > rules.nft",
                    "An iptables-save dump as a proved-equivalent nft script."},
                   {"rulejit translate rules.ipt --to nft-json | nft -j -f -",
                    "The same, loaded through nft's JSON interface."}},
  };
}

}  // namespace rulejit::tools
