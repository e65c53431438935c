// Real rulesets (../shared/corpus/realworld/*.ipt and *.nft, unedited)
// along the whole path, against the kernel: each ruleset that the kernel
// loads runs in fw (kernel_oracle.h, path mode) and in `rulejit eval --path
// forward --host` on fw's host model, on every tier. The frames are what
// reaches a server or router from several kinds of source (a client
// prefix, a private LAN, the internet, IPv6 alike): TCP SYNs and UDP to
// common service ports and ICMP echo requests, addressed to fw itself (the
// input path: most real rulesets are INPUT chains) and to a forwarded
// destination. Each frame's fate (delivered, forwarded, dropped) must be
// the kernel's. Rulesets where rulejit does not meet that yet ("differs",
// the run prints the first frame that differs) or does not load the file
// ("refuses") are listed in realworld_path_expected_failures.txt (rewrite
// with RULEJIT_UPDATE_REALWORLD=1), so each is pinned.
//
// Needs root, `ip netns`, nft, iptables-legacy-restore and the rulejit
// binary; skips with the reason otherwise. About a minute.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/golden/expected_failures.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/files.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "realworld";

// Every source × destination × service, one flow each.
Frames ServiceFrames(bool v6) {
  const std::vector<std::string> sources =
      v6 ? std::vector<std::string>{"2001:db8:1::5", "fd00::5"}
         : std::vector<std::string>{"10.1.0.5", "192.168.1.50", "203.0.113.9"};
  const std::vector<std::string> destinations =
      v6 ? std::vector<std::string>{"2001:2:0:1::1", "2001:db8::1"}
         : std::vector<std::string>{"198.18.0.1", "10.20.0.1"};
  const uint16_t tcp_ports[] = {22, 25, 53, 80, 443, 8080, 3306};
  const uint16_t udp_ports[] = {53, 67, 123, 500, 1194, 51820};
  Frames frames;
  uint16_t sport = 33000;
  for (const std::string& src : sources) {
    for (const std::string& dst : destinations) {
      for (uint16_t port : tcp_ports) {
        frames.push_back(BuildFrame({.src = src, .dst = dst, .proto = 6, .sport = sport++,
                                     .dport = port, .payload = {0, 0, 0, 0}}));
      }
      for (uint16_t port : udp_ports) {
        frames.push_back(BuildFrame({.src = src, .dst = dst, .proto = 17, .sport = sport++,
                                     .dport = port, .payload = {0, 0, 0, 0}}));
      }
      frames.push_back(BuildFrame({.src = src, .dst = dst, .proto = uint8_t(v6 ? 58 : 1),
                                   .payload = {0, 0, 0, 0}, .icmp_type = uint8_t(v6 ? 128 : 8),
                                   .icmp_id = sport++}));
    }
  }
  return frames;
}

// An ip6tables dump says so in its header or its name (rules.v6, ip6, ipv6).
bool IsIp6tablesDump(const fs::path& path, const std::string& text) {
  const std::string name = path.filename().string();
  return absl::StrContains(text, "ip6tables-save") || absl::StrContains(name, "v6") ||
         absl::StrContains(name, "ip6");
}

TEST(RealworldPath, EveryTierFollowsTheKernel) {
  for (OracleSyntax s : {OracleSyntax::kIptablesSave, OracleSyntax::kIp6tablesSave,
                         OracleSyntax::kNft}) {
    if (absl::Status ok = OracleAvailable(s); !ok.ok()) GTEST_SKIP() << ok.message();
  }
  if (!fs::exists(kDir)) GTEST_SKIP() << "no corpus at " << kDir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".ipt" || ext == ".nft") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ScratchDir dir("rulejit-realworld-path");
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  std::vector<std::string> failed;
  int compared = 0, agreeing = 0;
  std::map<std::string, int> kernel_fates;  // over every frame of every ruleset
  for (const fs::path& path : files) {
    const std::string text = ReadFile(path.string());
    const std::string name = path.filename().string();
    const bool nft = path.extension() == ".nft";
    const bool v6 = !nft && IsIp6tablesDump(path, text);
    const OracleSyntax syntax = nft  ? OracleSyntax::kNft
                                : v6 ? OracleSyntax::kIp6tablesSave
                                     : OracleSyntax::kIptablesSave;
    // nft rulesets see both families; a dump only its own.
    Frames frames = ServiceFrames(v6);
    if (nft) {
      Frames more = ServiceFrames(true);
      frames.insert(frames.end(), more.begin(), more.end());
    }
    std::string host;
    absl::StatusOr<std::vector<PathOutcome>> kernel =
        KernelPathOutcomes({.syntax = syntax, .text = text}, frames, {.fw_host_json = &host});
    if (!kernel.ok()) continue;  // the kernel refuses it (realworld_*_test pin those)
    ++compared;
    for (const PathOutcome& k : *kernel) {
      ++kernel_fates[KernelFate(k)];
    }
    absl::StatusOr<Frames> injected = PrepareOracleFrames(frames);
    ASSERT_TRUE(injected.ok()) << injected.status();
    const std::string pcap = dir.path + "/frames.pcap";
    ASSERT_TRUE(WritePcap(pcap, *injected));
    std::ofstream(dir.path + "/host.json") << host;
    std::string difference;
    bool refused = false;
    for (const std::string& tier : tiers) {
      ToolOutput run = RunTool(absl::StrCat("eval ", path.string(), " ", pcap,
                                            " --path forward --iif fwin --host ", dir.path,
                                            "/host.json --backend ", tier));
      if (run.exit_code != 0) {
        difference = run.out.substr(0, run.out.find('\n'));
        refused = true;
        break;
      }
      std::vector<std::string> ours = ParsePathFates(run.out, frames.size());
      for (size_t i = 0; i < frames.size() && difference.empty(); ++i) {
        const PathOutcome& k = (*kernel)[i];
        const std::string want = KernelFate(k);
        if (ours[i] != want) {
          difference = absl::StrCat("frame ", i, " tier ", tier, ": kernel ", want,
                                    ", rulejit ", ours[i]);
        }
      }
      if (!difference.empty()) break;
    }
    if (difference.empty()) {
      ++agreeing;
    } else {
      const char* what = refused ? "refuses" : "differs";
      failed.push_back(absl::StrCat(what, " ", name));
      std::printf("%s  %s: %s\n", what, name.c_str(), difference.c_str());
    }
  }
  std::printf("%zu rulesets: the kernel loads %d, rulejit agrees on every frame of %d\n",
              files.size(), compared, agreeing);
  std::printf("the kernel's fates: %d delivered, %d forwarded, %d dropped\n",
              kernel_fates["delivered"], kernel_fates["forwarded"], kernel_fates["drop"]);
  // The frames separate: each fate happens, so agreeing on them means something.
  EXPECT_GT(kernel_fates["delivered"], 0);
  EXPECT_GT(kernel_fates["forwarded"], 0);
  EXPECT_GT(kernel_fates["drop"], 0);
  golden::CheckExpectedFailures("tests/kernel/realworld_path_expected_failures.txt",
                                "RULEJIT_UPDATE_REALWORLD", failed);
}

}  // namespace
}  // namespace rulejit::testing
