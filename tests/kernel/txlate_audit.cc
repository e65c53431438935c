// The iptables-restore-translate audit (txlate_audit.h): runs the tool on
// each loadable dump, pairs its lines with the dump's, compares each pair
// with analysis::CompareRuleSlices and writes the report.
#include "tests/kernel/txlate_audit.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/analysis/rule_slice.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "ir/diag.h"
#include "ir/equal.h"
#include "ir/ifname_cmp.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

namespace an = rulejit::analysis;

struct Lines {
  std::vector<int> numbers;  // 1-based
  std::vector<std::string> texts;
};

// The dump's `-A` and `-I` lines, or the tool's rule lines (`add rule`, `insert
// rule`, or a `# ` comment that is not its header or footer).
Lines RuleLines(const std::string& text, bool nft) {
  Lines out;
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++n;
    bool rule = nft ? absl::StartsWith(line, "add rule ") || absl::StartsWith(line, "insert rule ") ||
                          (absl::StartsWith(line, "# ") && !absl::StartsWith(line, "# Translated by") &&
                           !absl::StartsWith(line, "# Completed on"))
                    : absl::StartsWith(line, "-A ") || absl::StartsWith(line, "-I ");
    if (!rule) continue;
    out.numbers.push_back(n);
    out.texts.emplace_back(absl::StripTrailingAsciiWhitespace(line));
  }
  return out;
}

// Every rule of `rs` by the line it came from.
std::map<int, std::vector<ir::RuleRef>> RulesByLine(const ir::Ruleset& rs) {
  std::map<int, std::vector<ir::RuleRef>> out;
  for (size_t t = 0; t < rs.tables.size(); ++t) {
    for (size_t c = 0; c < rs.tables[t].chains.size(); ++c) {
      const ir::Chain& chain = rs.tables[t].chains[c];
      for (size_t r = 0; r < chain.rules.size(); ++r) {
        out[static_cast<int>(chain.rules[r].loc.line)].push_back(
            {static_cast<int>(t), static_cast<int>(c), static_cast<int>(r)});
      }
    }
  }
  return out;
}

// Loads `text`; on failure "" and the error in `error`.
std::optional<ir::Ruleset> Parse(const std::string& name, const std::string& text, bool nft,
                                 std::string& error) {
  ir::Diagnostics diags;
  const int file = diags.AddFile(name, text);
  absl::StatusOr<ir::Ruleset> rs = nft ? frontends::ParseNft(text, file, diags)
                                       : frontends::ParseIptablesSave(text, file, diags);
  if (!rs.ok()) {
    error = std::string(rs.status().message());
    return std::nullopt;
  }
  return *std::move(rs);
}

std::string Tool(bool ipv6, const char* what) {
  return absl::StrCat(ipv6 ? "ip6tables-" : "iptables-", what);
}

std::vector<std::string> Words(const std::string& line) {
  return absl::StrSplit(line, ' ', absl::SkipEmpty());
}

// `text` with chain `from` called `to`: in a dump its `:from`, `-A/-I/-N
// from` and `-j/-g from`; in the tool's output `add chain F T from`, `add
// rule F T from` and `jump/goto from`.
std::string RenameChain(const std::string& text, const std::string& from, const std::string& to,
                        bool nft) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<std::string> w = Words(std::string(line));
    bool changed = false;
    for (size_t i = 0; i < w.size(); ++i) {
      bool name_position =
          nft ? (i == 4 && (w[0] == "add" || w[0] == "insert")) ||
                    (i > 0 && (w[i - 1] == "jump" || w[i - 1] == "goto"))
              : (i > 0 && (w[i - 1] == "-A" || w[i - 1] == "-I" || w[i - 1] == "-N" ||
                           w[i - 1] == "-j" || w[i - 1] == "-g"));
      if (name_position && w[i] == from) {
        w[i] = to;
        changed = true;
      } else if (!nft && i == 0 && w[i] == ":" + from) {
        w[i] = ":" + to;
        changed = true;
      }
    }
    absl::StrAppend(&out, changed ? absl::StrJoin(w, " ") : std::string(line), "\n");
  }
  return out;
}

// nft's first error line when `nft -c -f` (in a namespace of its own)
// refuses `text`, else "".
std::string NftRefuses(const std::string& text) {
  char path[] = "/tmp/txlate_audit_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "cannot write a temporary file";
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) return "cannot write a temporary file";
  ShellResult r = RunShell(absl::StrCat("unshare -n nft -c -f ", ShellQuote(path)));
  unlink(path);
  if (r.exit_code == 0) return "";
  std::string first = r.output.substr(0, r.output.find('\n'));
  if (absl::StartsWith(first, path)) first = "FILE" + first.substr(sizeof(path) - 1);
  return std::string(absl::StripTrailingAsciiWhitespace(first));
}

void CompareRule(const ir::Ruleset& dump, const std::vector<ir::RuleRef>& a,
                 const ir::Ruleset& nft, const std::vector<ir::RuleRef>& b, AuditRule& rule) {
  // The very same bytecode means the same whatever state the rule keeps
  // (limits, recent): that answers where the slices cannot.
  bool same_bytecode = a.size() == b.size();
  for (size_t i = 0; same_bytecode && i < a.size(); ++i) {
    ir::TableSets sa(dump.tables[a[i].table]), sb(nft.tables[b[i].table]);
    same_bytecode = ir::SameExprs(sa, dump.tables[a[i].table].chains[a[i].chain].rules[a[i].rule].exprs,
                                  sb, nft.tables[b[i].table].chains[b[i].chain].rules[b[i].rule].exprs);
  }
  if (same_bytecode) {
    rule.kind = AuditKind::kSame;
    rule.reason = "same bytecode";
    return;
  }
  an::RuleSliceResult r = an::CompareRuleSlices(dump, a, nft, b);
  rule.hook = ir::HookName(r.hook);
  if (!r.inexact.empty()) {
    rule.kind = AuditKind::kInexact;
    rule.reason = r.inexact.front().reason;
    return;
  }
  if (!r.match_regions.empty()) {
    rule.kind = AuditKind::kMatchDiffers;
    for (const an::DiffRegion& region : r.match_regions) {
      bool dump_matches = region.old_side.verdict == ir::VerdictCode::kDrop;
      rule.witnesses.push_back(absl::StrCat(an::DescribePoint(region.witness, r.space),
                                            dump_matches ? ": matched by the dump's rule only"
                                                         : ": matched by the translation only"));
    }
    return;
  }
  if (r.verdict_differs) {
    rule.kind = AuditKind::kVerdictDiffers;
    rule.witnesses.push_back(absl::StrCat(an::DescribePoint(r.verdict_witness, r.space),
                                          ": dump ", r.old_verdict, ", translation ",
                                          r.new_verdict));
    return;
  }
  rule.kind = r.actions_differ_in_form ? AuditKind::kFormDiffers : AuditKind::kSame;
}

AuditFile AuditOne(const std::filesystem::path& path) {
  AuditFile out;
  out.name = path.filename().string();
  const std::string text = ReadFile(path.string());
  std::string error;
  std::optional<ir::Ruleset> dump = Parse(out.name, text, false, error);
  if (!dump) {
    out.error = absl::StrCat("rulejit does not load it: ", error);
    return out;
  }
  out.ipv6 = !dump->tables.empty() && dump->tables.front().family == ir::Family::kIp6;
  const std::string q = ShellQuote(path.string());
  if (RunShell(absl::StrCat(Tool(out.ipv6, "legacy-restore"), " --test < ", q)).exit_code != 0) {
    out.error = absl::StrCat(Tool(out.ipv6, "legacy-restore"), " --test refuses it");
    return out;
  }
  ShellResult tr = RunShell(absl::StrCat(Tool(out.ipv6, "restore-translate"), " -f ", q,
                                         " 2>/dev/null"));
  if (tr.exit_code != 0) {
    out.error = absl::StrCat(Tool(out.ipv6, "restore-translate"), " fails");
    return out;
  }
  out.translation = tr.output;
  out.nft_error = NftRefuses(tr.output);
  std::string dump_text = text;
  std::optional<ir::Ruleset> nft = Parse(out.name + " (translated)", out.translation, true, error);
  // A chain named like an nft keyword: renamed on both sides, so the other
  // rules can be audited.
  for (int tries = 0; !nft && tries < 4 && absl::StrContains(error, "keyword of nft's grammar");
       ++tries) {
    std::string keyword = error.substr(error.find('\'') + 1);
    keyword = keyword.substr(0, keyword.find('\''));
    const std::string renamed = keyword + "_chain";
    dump_text = RenameChain(dump_text, keyword, renamed, false);
    out.translation = RenameChain(out.translation, keyword, renamed, true);
    absl::StrAppend(&out.renamed, out.renamed.empty() ? "" : ", ", keyword);
    dump = Parse(out.name, dump_text, false, error);
    if (!dump) break;
    nft = Parse(out.name + " (translated)", out.translation, true, error);
  }
  if (!dump || !nft) {
    out.error = absl::StrCat("rulejit does not load the translation: ", error);
    return out;
  }
  Lines dl = RuleLines(dump_text, false), nl = RuleLines(out.translation, true);
  if (dl.numbers.size() != nl.numbers.size()) {
    out.error = absl::StrCat(dl.numbers.size(), " rules but ", nl.numbers.size(),
                             " translated lines");
    return out;
  }
  // iptables' 8-byte `-i eth0` is nft's 16-byte `iifname "eth0"`.
  ir::WidenIfnameCompares(*dump);
  ir::WidenIfnameCompares(*nft);
  std::map<int, std::vector<ir::RuleRef>> da = RulesByLine(*dump), nb = RulesByLine(*nft);
  for (size_t i = 0; i < dl.numbers.size(); ++i) {
    AuditRule rule{.dump_line = dl.numbers[i], .nft_line = nl.numbers[i],
                   .dump_text = dl.texts[i], .nft_text = nl.texts[i]};
    if (absl::StartsWith(rule.nft_text, "#")) {
      rule.kind = AuditKind::kNotTranslated;
    } else if (da[rule.dump_line].empty() || nb[rule.nft_line].empty()) {
      rule.kind = AuditKind::kNotLoaded;
      rule.reason = da[rule.dump_line].empty() ? "no rule from the dump's line"
                                               : "no rule from the translated line";
    } else {
      CompareRule(*dump, da[rule.dump_line], *nft, nb[rule.nft_line], rule);
    }
    out.rules.push_back(std::move(rule));
  }
  return out;
}


}  // namespace

const char* AuditKindName(AuditKind kind) {
  switch (kind) {
    case AuditKind::kSame: return "same";
    case AuditKind::kMatchDiffers: return "matches other packets";
    case AuditKind::kVerdictDiffers: return "another verdict";
    case AuditKind::kFormDiffers: return "statements differ in form (not proven)";
    case AuditKind::kInexact: return "not compared exactly";
    case AuditKind::kNotTranslated: return "not translated (the tool says so)";
    case AuditKind::kNotLoaded: return "not loaded";
  }
  return "?";
}

std::vector<AuditFile> AuditCorpus(const std::string& dir) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".ipt") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<AuditFile> out;
  for (const auto& path : paths) out.push_back(AuditOne(path));
  return out;
}

std::string DumpMatches(const std::string& line) {
  std::vector<std::string> w = Words(line);
  if (w.size() < 2 || (w[0] != "-A" && w[0] != "-I")) return "";
  std::string out;
  bool quoted = false;
  // `-I CHAIN N`: the position is no match.
  size_t first = w[0] == "-I" && w.size() > 2 && absl::ascii_isdigit(w[2][0]) ? 3 : 2;
  for (size_t i = first; i < w.size(); ++i) {
    if (!quoted && (w[i] == "-j" || w[i] == "-g")) break;
    for (char ch : w[i]) quoted ^= ch == '"';
    absl::StrAppend(&out, out.empty() ? "" : " ", w[i]);
  }
  return out;
}

std::string NftMatches(const std::string& line) {
  std::vector<std::string> w = Words(line);
  if (w.size() < 5 || (w[0] != "add" && w[0] != "insert") || w[1] != "rule") return "";
  std::string out;
  for (size_t i = 5; i < w.size() && w[i] != "counter"; ++i) {
    absl::StrAppend(&out, out.empty() ? "" : " ", w[i]);
  }
  return out;
}

std::string AuditReport(const std::vector<AuditFile>& files, const std::string& kernel_notes) {
  std::map<AuditKind, int> counts;
  int same_bytecode = 0;
  std::map<std::string, int> inexact;
  int audited = 0;
  std::string skipped, findings, form, refused, unproved;
  for (const AuditFile& f : files) {
    if (!f.nft_error.empty()) {
      absl::StrAppend(&refused, "- `", f.name, "`: `", f.nft_error, "`",
                      f.renamed.empty() ? "" : absl::StrCat(" (audited with chain ", f.renamed,
                                                            " renamed on both sides)"),
                      "\n");
    }
    if (!f.error.empty()) {
      absl::StrAppend(&skipped, "- `", f.name, "`: ", f.error, "\n");
      continue;
    }
    ++audited;
    for (const AuditRule& r : f.rules) {
      ++counts[r.kind];
      same_bytecode += r.reason == "same bytecode" ? 1 : 0;
      if (r.kind == AuditKind::kInexact) {
        ++inexact[r.reason];
        absl::StrAppend(&unproved, "- `", f.name, ":", r.dump_line, "` (", r.reason, ") `",
                        r.dump_text, "`\n  -> `", r.nft_text, "`\n");
      }
      if (r.kind == AuditKind::kFormDiffers) {
        absl::StrAppend(&form, "- `", f.name, ":", r.dump_line, "` `", r.dump_text, "`\n  -> `",
                        r.nft_text, "`\n");
      }
      if (r.kind != AuditKind::kMatchDiffers && r.kind != AuditKind::kVerdictDiffers) continue;
      absl::StrAppend(&findings, "### ", f.name, ":", r.dump_line, " (", AuditKindName(r.kind),
                      ", hook ", r.hook, ")\n\n```\n", r.dump_text, "\n", r.nft_text,
                      "\n```\n\n");
      for (const std::string& w : r.witnesses) absl::StrAppend(&findings, "- witness: `", w, "`\n");
      absl::StrAppend(&findings, "\n");
    }
  }
  std::string out = absl::StrCat(
      "# iptables-restore-translate on the real-world corpus\n\n"
      "Every rule of each dump in `../shared/corpus/realworld` that `iptables-legacy-restore --test` "
      "(or `ip6tables-`) loads, compared with the nft rule `iptables-restore-translate -f FILE` "
      "(v1.8.9) prints for it. Each pair is compared alone (compiler/analysis/rule_slice.h): the "
      "packets each rule matches, exactly, at its chain's hook (forward for a user chain), then "
      "the verdicts; counters are left out. Regenerate with:\n\n"
      "    RULEJIT_TXLATE_REPORT=$PWD/bench/txlate_audit.md build-l/tests/txlate_audit_kernel_test\n\n"
      "## Summary\n\n", audited, " dumps audited.\n\n| rules | count |\n|---|---|\n");
  for (const auto& [kind, n] : counts) absl::StrAppend(&out, "| ", AuditKindName(kind), " | ", n, " |\n");
  absl::StrAppend(&out, "\nOf the rules the same, ", same_bytecode,
                  " load as the very same bytecode (interface-name compares in one width); the "
                  "others match the same packets, exactly, with the same verdict and statements.\n"
                  "\nNot compared exactly, by reason:\n\n");
  for (const auto& [why, n] : inexact) absl::StrAppend(&out, "- ", n, ": ", why, "\n");
  absl::StrAppend(&out, "\nDumps not audited:\n\n", skipped.empty() ? "- none\n" : skipped,
                  "\n## Translations nft 1.0.6 refuses (`nft -c -f`)\n\n",
                  refused.empty() ? "None.\n" : refused,
                  "\n## Rules whose translation means something else\n\n",
                  findings.empty() ? "None.\n\n" : findings, "## The kernel's word\n\n",
                  kernel_notes, "\n## Statements that differ in form (not proven, not a finding)\n\n",
                  form.empty() ? "None.\n" : form,
                  "\n## Rules not compared exactly\n\nOther bytecode, and a field or state the "
                  "slices cannot reason about.\n\n", unproved.empty() ? "None.\n" : unproved);
  return out;
}

}  // namespace rulejit::testing
