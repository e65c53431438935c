// `--emit iptables` (emit::PrintIptables) checked against iptables itself:
// every iptables-save dump of ../shared/corpus/realworld that rulejit
// reads is printed back as iptables-save text; what prints must load with
// the real `iptables-legacy-restore --test` (ip6tables-legacy-restore for
// ip6 dumps; in a throwaway network namespace)
// and, read back by rulejit, mean what the input meant (DiffRulesets at
// every hook: equivalent, or inexact where diff cannot reason exactly;
// never different). A refusal must be located (FILE:LINE). The figures go
// to stdout.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "emit/ipt_print.h"
#include "ir/equal.h"
#include "ir/printer.h"
#include "gtest/gtest.h"
#include "tests/kernel/corpus_compare.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

// The first rule of `input` whose printed form, read back, is not the same
// IR (ir::SameExprs: sets by content), or nullopt.
std::optional<std::string> FirstRuleNotReadBack(const ir::Ruleset& input, const std::string& text,
                                                const std::string& id) {
  std::optional<ir::Ruleset> back = ReadCorpusRuleset(text, id + " (printed)", nullptr);
  if (!back || back->tables.size() != input.tables.size()) return "the printed dump reads back as other tables";
  for (size_t t = 0; t < input.tables.size(); ++t) {
    const ir::Table& a = input.tables[t];
    const ir::Table& b = back->tables[t];
    if (a.family != b.family) return "table " + a.name + " reads back as another family";
    ir::TableSets sa(a), sb(b);
    for (const ir::Chain& ca : a.chains) {
      const ir::Chain* cb = b.FindChain(ca.name);
      if (!cb || cb->rules.size() != ca.rules.size()) return "chain " + ca.name + " reads back with other rules";
      for (size_t r = 0; r < ca.rules.size(); ++r) {
        if (!ir::SameExprs(sa, ca.rules[r].exprs, sb, cb->rules[r].exprs)) {
          return absl::StrCat("rule ", r + 1, " of chain ", ca.name, " reads back as other IR:\n",
                              ir::PrintRule(a, ca, ca.rules[r]), "\n", ir::PrintRule(b, *cb, cb->rules[r]));
        }
      }
    }
  }
  return std::nullopt;
}

TEST(IptEmit, CorpusPrintsAsIptablesSaveThatLoadsAndMeansTheSame) {
  if (RunShell("command -v iptables-legacy-restore && command -v ip6tables-legacy-restore").exit_code != 0) {
    GTEST_SKIP() << "no iptables-legacy-restore";
  }
  const std::string out_path = ::testing::TempDir() + "/ipt_emit.ipt";
  int tried = 0, loads = 0, emitted = 0, emitted4 = 0, emitted6 = 0, restore_ok = 0, same_ir = 0;
  BackCounts back;
  std::map<std::string, int> refused;
  for (const std::string& file : PrinterCorpusFiles()) {
    const fs::path path = file;
    if (path.extension() != ".ipt") continue;
    ++tried;
    std::optional<ir::Ruleset> input = ReadCorpusRuleset(ReadFile(file), file, nullptr);
    if (!input) continue;
    ++loads;
    const std::string id = path.filename().string();
    absl::StatusOr<std::string> text = emit::PrintIptables(*input);
    if (!text.ok()) {
      const std::string msg(text.status().message());
      ++refused[RefusalReason(msg)];
      EXPECT_NE(msg.find(id + ":"), std::string::npos) << id << ": refusal without a location: " << msg;
      continue;
    }
    ++emitted;
    std::ofstream(out_path) << *text;
    // The IR is iptables-legacy's meaning (frontends::IptablesFlavor), so
    // its restore checks the dump; ip6 tables print as ip6tables-save.
    const bool v6 = !input->tables.empty() && input->tables.front().family == ir::Family::kIp6;
    ++(v6 ? emitted6 : emitted4);
    ShellResult r = RunShell(absl::StrCat("unshare --net ", v6 ? "ip6tables" : "iptables", "-legacy-restore --test ",
                                          ShellQuote(out_path), " 2>&1"));
    if (r.exit_code != 0) {
      ADD_FAILURE() << id << ": ip(6)tables-legacy-restore refuses the printed dump:\n" << r.output.substr(0, 2000)
                    << "\n" << text->substr(0, 2000);
      continue;
    }
    ++restore_ok;
    if (std::optional<std::string> diff = ReadBackAndCompare(*input, *text, id, "emitted iptables", back)) {
      ADD_FAILURE() << id << ": the printed dump means something else: " << *diff;
    }
    // Stricter than the diff (which is inexact on NAT chains and rate
    // limits, and does not see marks set): read back, every rule is the
    // very IR it was printed from.
    if (std::optional<std::string> why = FirstRuleNotReadBack(*input, *text, id)) {
      ADD_FAILURE() << id << ": " << *why;
    } else {
      ++same_ir;
    }
  }
  std::printf("%d iptables dumps, rulejit loads %d, emitted %d (ip %d, ip6 %d), "
              "ip(6)tables-legacy-restore --test loads %d, equivalent %d, inexact %d, not read back %d, "
              "read back as the same IR %d\n",
              tried, loads, emitted, emitted4, emitted6, restore_ok, back.equivalent, back.inexact, back.unreadable,
              same_ir);
  for (const auto& [reason, n] : refused) std::printf("refused %3d x %s\n", n, reason.c_str());
}

}  // namespace
}  // namespace rulejit::testing
