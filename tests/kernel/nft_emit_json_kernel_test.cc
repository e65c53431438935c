// `--emit nft-json` (emit::PrintNftJson) checked against nft itself: every
// corpus ruleset rulejit loads (../shared/corpus/realworld, iptables-save
// and nft, and ../shared/corpus/nftables-dumps) is printed as libnftables
// JSON and as nft text. The JSON must load into the real nft (`nft -j -f`,
// in a throwaway network namespace), and `nft list ruleset` of it must be
// the listing of the printed text loaded the same way (the two printers
// say the same thing to the kernel). Read back by rulejit's JSON reader it
// must mean what the input meant: analysis::DiffRulesets at every hook says
// equivalent (or inexact where diff cannot reason exactly), never
// different. A refusal must be located (FILE:LINE). By default every 8th
// file runs; RULEJIT_EMITJSON_ALL=1 runs the whole corpus. The figures go
// to stdout.
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

// `nft [-j] -f path && nft list ruleset` in a fresh network namespace.
ShellResult LoadAndList(const std::string& path, bool json) {
  return RunShell("unshare --net sh -c " +
                  ShellQuote(absl::StrCat("nft ", json ? "-j " : "", "-f ", ShellQuote(path),
                                          " 2>&1 && nft list ruleset 2>&1")));
}

TEST(NftEmitJson, CorpusPrintsAsJsonThatNftLoadsAsTheTextAndMeansTheSame) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) GTEST_SKIP() << ok.message();
  if (PrinterCorpusFiles().empty()) GTEST_SKIP() << "no corpus under " << kShared;
  const std::string json_path = ::testing::TempDir() + "/nft_emit.json";
  const std::string text_path = ::testing::TempDir() + "/nft_emit_for_json.nft";

  CorpusCounts counts;
  BackCounts back;
  int emitted = 0, nft_loads = 0, same_listing = 0, refused_total = 0, kernel_refuses_both = 0;
  int refused_json_only = 0, refused_both = 0;
  std::map<std::string, int> refused;
  ForEachPrinterInput(8, "RULEJIT_EMITJSON_ALL", counts, [&](const std::string& id, const std::string& path,
                                                            const ir::Ruleset& input) {
    absl::StatusOr<std::string> json = emit::PrintNftJson(input);
    absl::StatusOr<std::string> text = emit::PrintNft(input);
    if (!json.ok()) {
      const std::string msg(json.status().message());
      ++refused_total;
      // What the text printer prints too is refused for nft's JSON alone:
      // the error must name nft's limit (as of 1.0.6, the nft here).
      const bool json_only = text.ok();
      ++(json_only ? refused_json_only : refused_both);
      ++refused[absl::StrCat(json_only ? "(nft JSON) " : "(nft text too) ", RefusalReason(msg))];
      std::printf("refused   %s: %s\n", id.c_str(), msg.c_str());
      EXPECT_NE(msg.find(fs::path(path).filename().string() + ":"), std::string::npos)
          << id << ": refusal without a location: " << msg;
      if (json_only) {
        EXPECT_NE(msg.find("nft 1.0.6"), std::string::npos) << id << ": a JSON-only refusal naming no nft limit: " << msg;
      }
      return;
    }
    // The JSON printer refuses whatever the text printer refuses.
    ASSERT_TRUE(text.ok()) << id << ": JSON printed where the text printer refuses: "
                           << text.status().message();
    ++emitted;
    std::ofstream(json_path) << *json;
    std::ofstream(text_path) << *text;
    ShellResult from_json = LoadAndList(json_path, true);
    ShellResult from_text = LoadAndList(text_path, false);
    if (from_json.exit_code != 0 && from_text.exit_code != 0) {
      // The kernel here lacks something both need (nft -c took the text):
      // not the printer's doing.
      ++kernel_refuses_both;
      std::printf("kernel    %s: the kernel refuses the text and the JSON alike\n", id.c_str());
      return;
    }
    if (from_json.exit_code != 0) {
      ADD_FAILURE() << id << ": nft -j -f refuses the printed JSON:\n" << from_json.output.substr(0, 2000);
      return;
    }
    ++nft_loads;
    if (from_text.exit_code == 0 && from_text.output == from_json.output) {
      ++same_listing;
    } else {
      ADD_FAILURE() << id << ": the JSON lists differently from the text:\n--- text\n"
                    << from_text.output.substr(0, 3000) << "\n--- json\n" << from_json.output.substr(0, 3000);
    }
    if (std::optional<std::string> diff = ReadBackAndCompare(input, *json, id, "emitted JSON", back)) {
      ADD_FAILURE() << id << ": the printed JSON means something else: " << *diff;
    }
  });
  std::printf("%d files tried, rulejit loads %d (nft -c refuses %d of them as input), JSON emitted %d, "
              "refused %d (%d for nft's JSON alone, %d by the text printer too), kernel refuses text and JSON "
              "alike %d, nft -j -f loads %d, lists as the text %d, equivalent %d, inexact %d, not read back %d\n",
              counts.tried, counts.loads, counts.nft_refuses_input, emitted, refused_total, refused_json_only,
              refused_both, kernel_refuses_both,
              nft_loads, same_listing, back.equivalent, back.inexact, back.unreadable);
  for (const auto& [reason, n] : refused) std::printf("refused %3d x %s\n", n, reason.c_str());
}

}  // namespace
}  // namespace rulejit::testing
