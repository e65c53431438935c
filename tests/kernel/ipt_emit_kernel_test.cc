// `--emit iptables` (emit::PrintIptables) checked against iptables itself:
// every iptables-save dump of ../shared/corpus/realworld that rulejit
// reads is printed back as iptables-save text; what prints must load with
// the real `iptables-restore --test` (in a throwaway network namespace)
// and, read back by rulejit, mean what the input meant (DiffRulesets at
// every hook: equivalent, or inexact where diff cannot reason exactly;
// never different). A refusal must be located (FILE:LINE). The figures go
// to stdout.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "emit/ipt_print.h"
#include "gtest/gtest.h"
#include "tests/kernel/corpus_compare.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

TEST(IptEmit, CorpusPrintsAsIptablesSaveThatLoadsAndMeansTheSame) {
  if (RunShell("command -v iptables-restore >/dev/null").exit_code != 0) GTEST_SKIP() << "no iptables-restore";
  const std::string out_path = ::testing::TempDir() + "/ipt_emit.ipt";
  int tried = 0, loads = 0, emitted = 0, restore_ok = 0;
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
    ShellResult r = RunShell("unshare --net iptables-restore --test " + ShellQuote(out_path) + " 2>&1");
    if (r.exit_code != 0) {
      ADD_FAILURE() << id << ": iptables-restore refuses the printed dump:\n" << r.output.substr(0, 2000)
                    << "\n" << text->substr(0, 2000);
      continue;
    }
    ++restore_ok;
    if (std::optional<std::string> diff = ReadBackAndCompare(*input, *text, id, "emitted iptables", back)) {
      ADD_FAILURE() << id << ": the printed dump means something else: " << *diff;
    }
  }
  std::printf("%d iptables dumps, rulejit loads %d, emitted %d, iptables-restore --test loads %d, "
              "equivalent %d, inexact %d, not read back %d\n",
              tried, loads, emitted, restore_ok, back.equivalent, back.inexact, back.unreadable);
  for (const auto& [reason, n] : refused) std::printf("refused %3d x %s\n", n, reason.c_str());
}

}  // namespace
}  // namespace rulejit::testing
