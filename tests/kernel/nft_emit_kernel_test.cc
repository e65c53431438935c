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

// The printer's reason without its location: "rule in chain X: why" → "why".
std::string Reason(const std::string& message) {
  size_t at = message.rfind(": ");
  return at == std::string::npos ? message : message.substr(at + 2);
}

TEST(NftEmit, CorpusPrintsAsNftThatLoadsAndMeansTheSame) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) GTEST_SKIP() << ok.message();
  const bool all = std::getenv("RULEJIT_EMIT_ALL") != nullptr;
  std::vector<fs::path> files;
  for (const char* dir : {"realworld", "nftables-dumps"}) {
    if (!fs::exists(kShared / dir)) continue;
    for (const auto& entry : fs::directory_iterator(kShared / dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".nft" || ext == ".ipt" || ext == ".json") files.push_back(entry.path());
    }
  }
  if (files.empty()) GTEST_SKIP() << "no corpus under " << kShared;
  std::sort(files.begin(), files.end());
  const std::string out_path = ::testing::TempDir() + "/nft_emit.nft";

  int tried = 0, loads = 0, nft_refuses_input = 0, unreadable = 0, emitted = 0, nft_ok = 0, equivalent = 0, inexact = 0;
  std::map<std::string, int> refused;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!all && i % 3 != 0) continue;
    ++tried;
    const fs::path& path = files[i];
    const std::string id = path.parent_path().filename().string() + "/" + path.filename().string();
    std::optional<ir::Ruleset> input = ReadCorpusRuleset(ReadFile(path.string()), path.string(), nullptr);
    if (!input) continue;
    ++loads;
    // An nft ruleset the kernel's nft refuses here (a device or module this
    // machine lacks) says nothing about the printer.
    if (path.extension() == ".nft" &&
        RunShell("unshare --net nft -c -f " + ShellQuote(path.string()) + " >/dev/null 2>&1")
                .exit_code != 0) {
      ++nft_refuses_input;
      continue;
    }
    absl::StatusOr<std::string> text = emit::PrintNft(*input);
    if (!text.ok()) {
      const std::string msg(text.status().message());
      ++refused[Reason(msg)];
      std::printf("refused   %s: %s\n", id.c_str(), msg.c_str());
      EXPECT_NE(msg.find(path.filename().string() + ":"), std::string::npos)
          << id << ": refusal without a location: " << msg;
      continue;
    }
    ++emitted;
    std::ofstream(out_path) << *text;
    ShellResult r = RunShell("unshare --net nft -c -f " + ShellQuote(out_path) + " 2>&1");
    if (r.exit_code != 0) {
      ADD_FAILURE() << id << ": nft refuses the printed script:\n" << r.output.substr(0, 2000);
      continue;
    }
    ++nft_ok;
    std::string error;
    std::optional<ir::Ruleset> back = ReadCorpusRuleset(*text, id + " (as emitted nft)", &error);
    if (!back) {  // nft took it: a gap of rulejit's nft frontend, counted
      ++unreadable;
      std::printf("unread    %s: rulejit cannot read the printed script back: %s\n", id.c_str(),
                  error.c_str());
      continue;
    }
    std::string why;
    switch (CompareAtEveryHook(*input, *back, &why)) {
      case Outcome::kEquivalent: ++equivalent; break;
      case Outcome::kInexact:
        ++inexact;
        std::printf("inexact   %s: %s\n", id.c_str(), why.c_str());
        break;
      case Outcome::kDifferent:
        ADD_FAILURE() << id << ": the printed nft means something else: " << why;
        break;
    }
  }
  std::printf("%d files tried, rulejit loads %d (nft -c refuses %d of them as input), emitted %d, nft -c loads %d, equivalent %d, "
              "inexact %d, not read back %d\n", tried, loads, nft_refuses_input, emitted, nft_ok, equivalent, inexact, unreadable);
  for (const auto& [reason, n] : refused) std::printf("refused %3d x %s\n", n, reason.c_str());
}

}  // namespace
}  // namespace rulejit::testing
