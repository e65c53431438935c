// nft's JSON listing read as a ruleset (frontends/nft/json.h), checked
// against nft itself: each corpus ruleset (../shared/corpus/realworld and
// ../shared/corpus/nftables-dumps) is loaded by nft into a throwaway
// network namespace and listed with `nft -j list ruleset`; rulejit reads
// both the text and the listing, and analysis::DiffRulesets proves them the
// same at every hook (equivalent), or says it cannot reason exactly about
// some rule (inexact), or finds a difference (different: always a
// failure). A listing rulejit refuses while it reads the text is pinned in
// nft_json_expected_failures.txt (rewrite with RULEJIT_UPDATE_NFTJSON=1).
// By default every 8th file runs (the test stays well under two minutes);
// RULEJIT_NFTJSON_ALL=1 runs the whole corpus and prints the figures.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "frontends/frontend.h"
#include "frontends/nft/json.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/printer.h"
#include "tests/golden/expected_failures.h"
#include "tests/kernel/corpus_compare.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = fs::path(RULEJIT_SHARED_DIR) / "corpus";

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// `nft -f path && nft -j list ruleset` in a fresh namespace; "" when nft
// refuses the file.
std::string ListAsJson(const fs::path& path) {
  ShellResult r = RunShell("unshare --net sh -c " +
                           ShellQuote("nft -f " + ShellQuote(path.string()) +
                                      " >/dev/null 2>&1 && nft -j list ruleset 2>/dev/null"));
  return r.exit_code == 0 ? r.output : "";
}

TEST(NftJson, ListingMeansWhatTheTextMeans) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) GTEST_SKIP() << ok.message();
  const bool all = std::getenv("RULEJIT_NFTJSON_ALL") != nullptr;
  std::vector<fs::path> files;
  for (const char* dir : {"realworld", "nftables-dumps"}) {
    if (!fs::exists(kShared / dir)) continue;
    for (const auto& entry : fs::directory_iterator(kShared / dir)) {
      if (entry.path().extension() == ".nft") files.push_back(entry.path());
    }
  }
  if (files.empty()) GTEST_SKIP() << "no corpus under " << kShared;
  std::sort(files.begin(), files.end());

  int tried = 0, nft_loads = 0, both = 0, equivalent = 0, inexact = 0, different = 0;
  int refused = 0, same_ir = 0;
  std::vector<std::string> failed;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!all && i % 8 != 0) continue;
    ++tried;
    const fs::path& path = files[i];
    const std::string id = path.parent_path().filename().string() + "/" + path.filename().string();
    const std::string json = ListAsJson(path);
    if (json.empty()) continue;
    ++nft_loads;
    std::optional<ir::Ruleset> text = ReadCorpusRuleset(ReadFile(path.string()), path.string(), nullptr);
    if (!text) continue;  // the text frontend's own corpus tests pin these
    ++both;
    std::string error;
    std::optional<ir::Ruleset> listed = ReadCorpusRuleset(json, id + ".json", &error);
    if (!listed) {
      ++refused;
      failed.push_back("refused " + id);
      std::printf("refused   %s: %s\n", id.c_str(), error.c_str());
      continue;
    }
    same_ir += ir::PrintRuleset(*text) == ir::PrintRuleset(*listed);
    std::string why;
    switch (CompareAtEveryHook(*text, *listed, &why)) {
      case Outcome::kEquivalent:
        ++equivalent;
        break;
      case Outcome::kInexact:
        ++inexact;
        std::printf("inexact   %s: %s\n", id.c_str(), why.c_str());
        break;
      case Outcome::kDifferent:
        ++different;
        ADD_FAILURE() << id << ": the listing differs from the text: " << why;
        break;
    }
  }
  std::printf("%d files tried, nft loads %d, rulejit reads the text of %d: listing "
              "equivalent %d, inexact %d, different %d, refused %d (identical IR %d)\n",
              tried, nft_loads, both, equivalent, inexact, different, refused, same_ir);
  if (all) return;  // the pinned list is for the sample
  golden::CheckExpectedFailures("tests/kernel/nft_json_expected_failures.txt",
                                "RULEJIT_UPDATE_NFTJSON", failed);
}

// The command line as a user runs it: `rulejit diff TEXT LISTING` proves a
// real ruleset and nft's listing of it equivalent at every hook it has,
// and a listing nft wrote that rulejit cannot read is refused at a JSON
// path by `rulejit check --json`.
TEST(NftJson, DiffCommandComparesTextWithListing) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) GTEST_SKIP() << ok.message();
  const fs::path text = kShared / "realworld" / "dhenkes_router.nft";
  if (!fs::exists(text)) GTEST_SKIP() << "no " << text;
  const std::string json = ListAsJson(text);
  ASSERT_FALSE(json.empty());
  const std::string dir = ::testing::TempDir();
  const std::string listing = dir + "/nftjson_listing.json";
  WriteFile(listing, json);
  for (const char* hook : {"input", "forward", "output"}) {
    ShellResult r = RunShell(absl::StrCat(RULEJIT_TOOL, " diff ", ShellQuote(text.string()), " ",
                                          ShellQuote(listing), " --hook ", hook));
    EXPECT_EQ(r.exit_code, 0) << hook << ": " << r.output;
    EXPECT_NE(r.output.find("equivalent"), std::string::npos) << r.output;
  }
  std::string bad = json;
  const size_t at = bad.find("\"accept\": null");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 8, "\"bogus\"");
  const std::string bad_path = dir + "/nftjson_bad.json";
  WriteFile(bad_path, bad);
  ShellResult r = RunShell(absl::StrCat(RULEJIT_TOOL, " check --json ", ShellQuote(bad_path)));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("].rule.expr["), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unsupported statement 'bogus'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rulejit::testing
