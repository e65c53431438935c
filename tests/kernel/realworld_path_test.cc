// Real rulesets (../shared/corpus/realworld/*.ipt and *.nft, unedited)
// along the whole path, against the kernel: each ruleset that the kernel
// loads runs in fw (kernel_oracle.h, path mode) and in `rulejit eval --path
// forward --host` on fw's host model, on every tier. The frames are what
// reaches a server or router from several kinds of source (a client
// prefix, a private LAN, the internet, IPv6 alike): TCP SYNs and UDP to
// common service ports and ICMP echo requests, addressed to fw itself (the
// input path: most real rulesets are INPUT chains) and to a forwarded
// destination; and whole exchanges with a server beyond fw (a TCP
// handshake, UDP query and answer, echo and reply, the answers sent from the
// server's side), so that established and invalid traffic meet the
// rulesets' `ct state` rules. Each frame's fate (delivered, forwarded,
// dropped) must be the kernel's. Rulesets where rulejit does not meet that yet ("differs",
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

const uint16_t kTcpPorts[] = {22, 25, 53, 80, 443, 8080, 3306};
const uint16_t kUdpPorts[] = {53, 67, 123, 500, 1194, 51820};

// Every source × destination × service, one first packet each.
std::vector<PathPacket> ServicePackets(bool v6, uint16_t& sport) {
  const std::vector<std::string> sources =
      v6 ? std::vector<std::string>{"2001:db8:1::5", "fd00::5"}
         : std::vector<std::string>{"10.1.0.5", "192.168.1.50", "203.0.113.9"};
  const std::vector<std::string> destinations =
      v6 ? std::vector<std::string>{"2001:2:0:1::1", "2001:db8::1"}
         : std::vector<std::string>{"198.18.0.1", "10.20.0.1"};
  std::vector<PathPacket> packets;
  for (const std::string& src : sources) {
    for (const std::string& dst : destinations) {
      for (uint16_t port : kTcpPorts) {
        packets.push_back({false, {.src = src, .dst = dst, .proto = 6, .sport = sport++,
                                   .dport = port, .payload = {0, 0, 0, 0}}});
      }
      for (uint16_t port : kUdpPorts) {
        packets.push_back({false, {.src = src, .dst = dst, .proto = 17, .sport = sport++,
                                   .dport = port, .payload = {0, 0, 0, 0}}});
      }
      packets.push_back({false, {.src = src, .dst = dst, .proto = uint8_t(v6 ? 58 : 1),
                                 .payload = {0, 0, 0, 0}, .icmp_type = uint8_t(v6 ? 128 : 8),
                                 .icmp_id = sport++}});
    }
  }
  return packets;
}

// Whole exchanges between a client (behind fwin) and a server beyond fwout,
// the server's answers sent from its side: a TCP handshake and its first
// data, a UDP query, answer and follow-up, an echo and its reply. What
// `ct state established,related accept` lets through, and what it does
// not, as the kernel's connection tracking decides.
std::vector<PathPacket> Connections(bool v6, uint16_t& sport) {
  const std::string client = v6 ? "2001:db8:1::7" : "10.1.0.7";
  const std::string server = v6 ? "2001:db8::1" : "10.20.0.1";
  auto from = [&](bool from_server, uint8_t proto, uint16_t cport, uint16_t port) {
    FrameSpec s{.src = from_server ? server : client, .dst = from_server ? client : server,
                .proto = proto, .sport = from_server ? port : cport,
                .dport = from_server ? cport : port, .payload = {0, 0, 0, 0}};
    return PathPacket{from_server, s};
  };
  std::vector<PathPacket> packets;
  for (uint16_t port : kTcpPorts) {
    const uint16_t cport = sport++;
    PathPacket syn = from(false, 6, cport, port), synack = from(true, 6, cport, port),
               ack = from(false, 6, cport, port);
    syn.spec.tcp_flags = 0x02;
    syn.spec.tcp_seq = 1000;
    synack.spec.tcp_flags = 0x12;
    synack.spec.tcp_seq = 5000;
    synack.spec.tcp_ack = 1005;
    ack.spec.tcp_flags = 0x18;
    ack.spec.tcp_seq = 1005;
    ack.spec.tcp_ack = 5005;
    packets.insert(packets.end(), {syn, synack, ack});
  }
  for (uint16_t port : kUdpPorts) {
    const uint16_t cport = sport++;
    packets.insert(packets.end(), {from(false, 17, cport, port), from(true, 17, cport, port),
                                   from(false, 17, cport, port)});
  }
  PathPacket echo = from(false, uint8_t(v6 ? 58 : 1), 0, 0), reply = echo;
  echo.spec.icmp_type = v6 ? 128 : 8;
  echo.spec.icmp_id = sport++;
  reply.from_server = true;
  std::swap(reply.spec.src, reply.spec.dst);
  reply.spec.icmp_type = v6 ? 129 : 0;
  reply.spec.icmp_id = echo.spec.icmp_id;
  packets.insert(packets.end(), {echo, reply});
  return packets;
}

// The traffic for one ruleset: first packets and connections of its
// families (nft rulesets see both; a dump only its own).
std::vector<PathPacket> Traffic(bool v4, bool v6) {
  std::vector<PathPacket> packets;
  uint16_t sport = 33000;
  for (bool family_v6 : {false, true}) {
    if (family_v6 ? !v6 : !v4) continue;
    for (std::vector<PathPacket> more :
         {ServicePackets(family_v6, sport), Connections(family_v6, sport)}) {
      packets.insert(packets.end(), more.begin(), more.end());
    }
  }
  return packets;
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
    const std::string pcap = dir.path + "/frames.pcap";
    absl::StatusOr<PathTraffic> traffic = WritePathTraffic(Traffic(nft || !v6, nft || v6), pcap);
    ASSERT_TRUE(traffic.ok()) << traffic.status();
    const Frames& frames = traffic->frames;
    std::string host;
    absl::StatusOr<std::vector<PathOutcome>> kernel = KernelPathOutcomes(
        {.syntax = syntax, .text = text}, frames, {.fw_host_json = &host}, traffic->from_server);
    if (!kernel.ok()) continue;  // the kernel refuses it (realworld_*_test pin those)
    ++compared;
    for (const PathOutcome& k : *kernel) {
      ++kernel_fates[KernelFate(k)];
    }
    std::ofstream(dir.path + "/host.json") << host;
    std::string difference;
    bool refused = false;
    for (const std::string& tier : tiers) {
      // kube-proxy picks a service's endpoint with `numgen random`: rulejit
      // is given draw 0 (--random), the kernel draws its own, so a frame
      // whose fate the draw decides would show here as a difference.
      ToolOutput run = RunTool(absl::StrCat("eval ", path.string(), " ", pcap,
                                            " --path forward --random 0 --host ", dir.path,
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
