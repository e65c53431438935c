// Real iptables-save dumps (../shared/corpus/realworld/*.ipt, unedited):
// the kernel decides which load. Each dump is loaded for real, with
// iptables-legacy-restore or ip6tables-legacy-restore, into a throwaway
// network namespace (a real load, not --test: only the kernel's own checks,
// such as which hooks a nat target may run at, refuse some dumps), and
// rulejit's frontend reads the same text. A dump the kernel loads must
// load in rulejit; one the kernel refuses must be refused with a located
// error. Where rulejit does not meet that yet, the case is listed in
// realworld_ipt_expected_failures.txt (rewrite with
// RULEJIT_UPDATE_REALWORLD=1), so each dump is pinned: a new failure is a
// regression, a listed dump that now agrees must leave the list.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/iptables.h"
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

// An ip6tables dump says so in its header or its name (rules.v6, ip6, ipv6).
bool IsIp6tablesDump(const fs::path& path, const std::string& text) {
  const std::string name = path.filename().string();
  return absl::StrContains(text, "ip6tables-save") || absl::StrContains(name, "v6") ||
         absl::StrContains(name, "ip6");
}

struct KernelLoad {
  bool loaded = false;
  std::string output;  // the tool's messages when it refused
};

// Loads `path` into a fresh namespace and removes the namespace.
KernelLoad LoadInKernel(const fs::path& path, bool ipv6) {
  const std::string ns = absl::StrCat(kNetnsPrefix, getpid(), "-realworld");
  RunShell("ip netns del " + ns + " 2>/dev/null");
  ShellResult add = RunShell("ip netns add " + ns);
  if (add.exit_code != 0) return {false, "ip netns add: " + add.output};
  ShellResult load = RunShell("ip netns exec " + ns + " " +
                              (ipv6 ? "ip6tables-legacy-restore" : "iptables-legacy-restore") +
                              " -w 120 < " + ShellQuote(path.string()));
  RunShell("ip netns del " + ns);
  return {load.exit_code == 0, load.output};
}

struct Frontend {
  bool loaded = false;
  bool located = false;  // every error has a line
  std::string first_error;
};

Frontend LoadInRulejit(const std::string& text, bool ipv6) {
  ir::Diagnostics diags;
  const int file = diags.AddFile("dump.ipt", text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseIptablesSave(
      text, file, diags, ipv6 ? frontends::IpVersion::kIpv6 : frontends::IpVersion::kIpv4,
      frontends::IptablesFlavor::kLegacy);
  Frontend out{rs.ok(), true, ""};
  for (const ir::Diagnostic& d : diags.all()) {
    if (d.severity != ir::Severity::kError) continue;
    out.located = out.located && d.loc.line > 0;
    if (out.first_error.empty()) out.first_error = d.message;
  }
  return out;
}

TEST(RealworldIptables, LoadsWhatTheKernelLoads) {
  for (OracleSyntax s : {OracleSyntax::kIptablesSave, OracleSyntax::kIp6tablesSave}) {
    if (absl::Status ok = OracleAvailable(s); !ok.ok()) GTEST_SKIP() << ok.message();
  }
  if (!fs::exists(kDir)) GTEST_SKIP() << "no corpus at " << kDir;
  std::vector<fs::path> dumps;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.path().extension() == ".ipt") dumps.push_back(entry.path());
  }
  std::sort(dumps.begin(), dumps.end());
  ASSERT_GE(dumps.size(), 40u);

  int kernel_loads = 0, both_load = 0, both_refuse = 0;
  std::vector<std::string> failed;
  for (const fs::path& path : dumps) {
    const std::string text = ReadFile(path.string());
    const bool ipv6 = IsIp6tablesDump(path, text);
    const KernelLoad kernel = LoadInKernel(path, ipv6);
    const Frontend rulejit = LoadInRulejit(text, ipv6);
    const std::string name = path.filename().string();
    kernel_loads += kernel.loaded;
    if (kernel.loaded && rulejit.loaded) {
      ++both_load;
    } else if (!kernel.loaded && !rulejit.loaded) {
      ++both_refuse;
      EXPECT_TRUE(rulejit.located) << name << ": an error without a line";
    } else if (kernel.loaded) {
      failed.push_back("refused " + name);
      std::printf("refused  %s: %s\n", name.c_str(), rulejit.first_error.c_str());
    } else {
      failed.push_back("accepted " + name);
      std::printf("accepted %s: the kernel says %s\n", name.c_str(), kernel.output.c_str());
    }
  }
  std::printf("%zu dumps: the kernel loads %d, rulejit loads %d of those; both refuse %d\n",
              dumps.size(), kernel_loads, both_load, both_refuse);
  golden::CheckExpectedFailures("tests/kernel/realworld_ipt_expected_failures.txt",
                                "RULEJIT_UPDATE_REALWORLD", failed);
}

}  // namespace
}  // namespace rulejit::testing
