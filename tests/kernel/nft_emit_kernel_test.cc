// `--emit nft` (emit/nft_print.h) checked against nft itself: every corpus
// ruleset rulejit loads (../shared/corpus/realworld, iptables-save and nft,
// and ../shared/corpus/nftables-dumps) is printed as nft; the printed
// script must load with the real `nft -c -f` (in a throwaway network
// namespace), and read back by rulejit it must mean what the input meant:
// analysis::DiffRulesets at every hook says equivalent (or, where diff
// cannot reason exactly, inexact), never different. A ruleset the printer
// refuses must be refused with a located reason (FILE:LINE). By default
// every 3rd file runs; RULEJIT_EMIT_ALL=1 runs the whole corpus. The
// figures go to stdout.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emit/nft_print.h"
#include "gtest/gtest.h"
#include "tests/kernel/corpus_compare.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = fs::path(RULEJIT_SHARED_DIR) / "corpus";

TEST(NftEmit, CorpusPrintsAsNftThatLoadsAndMeansTheSame) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) GTEST_SKIP() << ok.message();
  if (PrinterCorpusFiles().empty()) GTEST_SKIP() << "no corpus under " << kShared;
  const std::string out_path = ::testing::TempDir() + "/nft_emit.nft";

  CorpusCounts counts;
  BackCounts back;
  int emitted = 0, nft_ok = 0;
  std::map<std::string, int> refused;
  ForEachPrinterInput(3, "RULEJIT_EMIT_ALL", counts, [&](const std::string& id, const std::string& path,
                                                        const ir::Ruleset& input) {
    absl::StatusOr<std::string> text = emit::PrintNft(input);
    if (!text.ok()) {
      const std::string msg(text.status().message());
      ++refused[RefusalReason(msg)];
      std::printf("refused   %s: %s\n", id.c_str(), msg.c_str());
      EXPECT_NE(msg.find(fs::path(path).filename().string() + ":"), std::string::npos)
          << id << ": refusal without a location: " << msg;
      return;
    }
    ++emitted;
    std::ofstream(out_path) << *text;
    ShellResult r = RunShell("unshare --net nft -c -f " + ShellQuote(out_path) + " 2>&1");
    if (r.exit_code != 0) {
      ADD_FAILURE() << id << ": nft refuses the printed script:\n" << r.output.substr(0, 2000);
      return;
    }
    ++nft_ok;
    if (std::optional<std::string> diff = ReadBackAndCompare(input, *text, id, "emitted nft", back)) {
      ADD_FAILURE() << id << ": the printed nft means something else: " << *diff;
    }
  });
  std::printf("%d files tried, rulejit loads %d (nft -c refuses %d of them as input), emitted %d, nft -c loads %d, equivalent %d, "
              "inexact %d, not read back %d\n", counts.tried, counts.loads, counts.nft_refuses_input, emitted, nft_ok,
              back.equivalent, back.inexact, back.unreadable);
  for (const auto& [reason, n] : refused) std::printf("refused %3d x %s\n", n, reason.c_str());
}

}  // namespace
}  // namespace rulejit::testing
