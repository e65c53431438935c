// Every `nft list ruleset` dump of nftables' shell tests
// (../shared/corpus/nftables-dumps/*.nft) must go through the nft frontend
// without a crash, and every rejection must be a located diagnostic. Each
// dump is pinned: tests/golden/nft_dumps_expected_failures.txt lists the
// dumps expected to be rejected (`reject FILE`); a newly rejected dump fails
// the test, and so does a listed one that now parses (remove it from the
// list). NFT_DUMPS_WRITE_EXPECTED=1 rewrites the list. Without
// ../shared/corpus the test is skipped.
//
// NFT_DUMPS_VERBOSE=1 prints the first diagnostic of each rejected dump.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/golden/expected_failures.h"
#include "tests/support/files.h"

namespace rulejit {
namespace {

namespace fs = std::filesystem;

using ::rulejit::testing::ReadFile;

TEST(NftDumps, ParseOrLocatedError) {
  fs::path root = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "nftables-dumps";
  if (!fs::exists(root)) GTEST_SKIP() << "no nft dumps at " << root;
  const char* verbose_env = std::getenv("NFT_DUMPS_VERBOSE");
  bool verbose = verbose_env != nullptr && *verbose_env == '1';
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.path().extension() == ".nft") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  int parsed = 0, unsupported = 0, other = 0, rules = 0;
  std::map<std::string, int> reasons;
  std::vector<std::string> rejected;
  for (const fs::path& p : files) {
    std::string text = ReadFile(p);
    ir::Diagnostics diags;
    int file = diags.AddFile(p.filename().string(), text);
    absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags, root.string());
    if (rs.ok()) {
      ++parsed;
      EXPECT_FALSE(diags.has_errors()) << p;
      for (const ir::Table& t : rs->tables) {
        for (const ir::Chain& c : t.chains) rules += static_cast<int>(c.rules.size());
      }
      continue;
    }
    rejected.push_back("reject " + p.filename().string());
    EXPECT_EQ(rs.status().code(), absl::StatusCode::kInvalidArgument) << p;
    ASSERT_TRUE(diags.has_errors()) << p << ": rejected without a diagnostic";
    const ir::Diagnostic& d = diags.all().front();
    EXPECT_GT(d.loc.line, 0u) << p << ": unlocated error: " << d.message;
    EXPECT_GT(d.loc.col, 0u) << p << ": unlocated error: " << d.message;
    if (absl::StrContains(d.message, "unsupported")) {
      ++unsupported;
    } else {
      ++other;
    }
    std::string reason = d.message.substr(0, d.message.find('\''));
    reasons[reason]++;
    if (verbose) std::cout << diags.Format(d) << "\n";
  }
  std::cout << "nft dumps: " << files.size() << " files, " << parsed << " parsed ("
            << rules << " rules), " << unsupported << " located 'unsupported' errors, "
            << other << " other located errors\n";
  for (const auto& [reason, n] : reasons) std::cout << "  " << n << "  " << reason << "\n";
  golden::CheckExpectedFailures("tests/golden/nft_dumps_expected_failures.txt",
                                "NFT_DUMPS_WRITE_EXPECTED", rejected);
}

}  // namespace
}  // namespace rulejit
