// Real nft rulesets (../shared/corpus/realworld/*.nft, unedited): nft and
// the kernel decide which load. Each file is checked with `nft -c -f` in a
// throwaway network namespace (nft parses and evaluates it and the kernel
// checks the batch without committing it: a missing conntrack helper, a
// flowtable the kernel lacks, a chain jumped to before it is added, a user
// or group the host lacks refuse it), and rulejit's frontend reads the same
// text. A file nft loads must load in rulejit; one nft refuses must be
// refused with a located error. Where rulejit does not meet that yet, the
// case is listed in realworld_nft_expected_failures.txt (rewrite with
// RULEJIT_UPDATE_REALWORLD=1), so each file is pinned: a new failure is a
// regression, a listed file that now agrees must leave the list.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/golden/expected_failures.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "realworld";

struct Verdict {
  bool loaded = false;
  bool located = true;  // rulejit: every error has a line
  std::string message;  // nft's, or rulejit's first error
};

// `nft -c -f path` in a fresh namespace, removed afterwards.
Verdict CheckWithNft(const fs::path& path) {
  const std::string ns = absl::StrCat(kNetnsPrefix, getpid(), "-realworld-nft");
  RunShell("ip netns del " + ns + " 2>/dev/null");
  ShellResult add = RunShell("ip netns add " + ns);
  if (add.exit_code != 0) return {false, true, "ip netns add: " + add.output};
  ShellResult check = RunShell("ip netns exec " + ns + " nft -c -f " + ShellQuote(path.string()));
  RunShell("ip netns del " + ns);
  return {check.exit_code == 0, true, check.output};
}

Verdict CheckWithRulejit(const fs::path& path) {
  const std::string text = ReadFile(path.string());
  ir::Diagnostics diags;
  const int file = diags.AddFile(path.filename().string(), text);
  absl::StatusOr<ir::Ruleset> rs =
      frontends::ParseNft(text, file, diags, path.parent_path().string());
  Verdict out{rs.ok(), true, ""};
  for (const ir::Diagnostic& d : diags.all()) {
    if (d.severity != ir::Severity::kError) continue;
    out.located = out.located && d.loc.line > 0;
    if (out.message.empty()) out.message = absl::StrCat(d.loc.line, ":", d.loc.col, ": ", d.message);
  }
  return out;
}

TEST(RealworldNft, LoadsWhatNftLoads) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) {
    GTEST_SKIP() << ok.message();
  }
  if (!fs::exists(kDir)) GTEST_SKIP() << "no corpus at " << kDir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.path().extension() == ".nft") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 20u);

  int nft_loads = 0, both_load = 0, both_refuse = 0;
  std::vector<std::string> failed;
  for (const fs::path& path : files) {
    const Verdict nft = CheckWithNft(path);
    const Verdict rulejit = CheckWithRulejit(path);
    const std::string name = path.filename().string();
    nft_loads += nft.loaded;
    if (nft.loaded && rulejit.loaded) {
      ++both_load;
    } else if (!nft.loaded && !rulejit.loaded) {
      ++both_refuse;
      EXPECT_TRUE(rulejit.located) << name << ": an error without a line";
      // Both refuse, not necessarily for the same reason: shown side by side.
      std::printf("both refuse %s: nft: %s | rulejit: %s\n", name.c_str(),
                  nft.message.substr(0, nft.message.find('\n')).c_str(),
                  rulejit.message.c_str());
    } else if (nft.loaded) {
      failed.push_back("refused " + name);
      std::printf("refused  %s: %s\n", name.c_str(), rulejit.message.c_str());
    } else {
      failed.push_back("accepted " + name);
      std::printf("accepted %s: nft says %s\n", name.c_str(),
                  nft.message.substr(0, nft.message.find('\n')).c_str());
    }
  }
  std::printf("%zu files: nft loads %d, rulejit loads %d of those; both refuse %d\n",
              files.size(), nft_loads, both_load, both_refuse);
  golden::CheckExpectedFailures("tests/kernel/realworld_nft_expected_failures.txt",
                                "RULEJIT_UPDATE_REALWORLD", failed);
}

}  // namespace
}  // namespace rulejit::testing
