// nf_conntrack_max against the kernel: a table full of assured flows has
// nothing early drop may take, so the kernel drops the packet of every new
// flow (nf_conntrack_in's NF_DROP) while known flows go on; rulejit, given
// the same limit (`--sysctl nf_conntrack_max=N`), must agree packet by
// packet on every tier. (Which unassured flow the kernel evicts depends on
// its random hash seed: that case is the unit tests'.)
//
// nf_conntrack_max is writable only in the initial network namespace and
// limits every namespace: this test sets it for its run and restores it,
// and ctest runs it alone (RUN_SERIAL, the `_serial_` in its file name), so
// that no other kernel test runs under the small limit. Needs root, `ip
// netns` and nft; skips otherwise. About 2 seconds.
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

constexpr const char* kMaxSysctl = "/proc/sys/net/netfilter/nf_conntrack_max";
constexpr uint8_t kSyn = 0x02, kPsh = 0x08, kAck = 0x10;

// Sets nf_conntrack_max for the test's lifetime.
class GlobalConntrackMax {
 public:
  explicit GlobalConntrackMax(int value) {
    std::ifstream(kMaxSysctl) >> saved_;
    ok_ = saved_ > 0 && static_cast<bool>(std::ofstream(kMaxSysctl) << value);
  }
  ~GlobalConntrackMax() {
    if (saved_ > 0) std::ofstream(kMaxSysctl) << saved_;
  }
  bool ok() const { return ok_; }

 private:
  long saved_ = 0;
  bool ok_ = false;
};

// A TCP connection from client 10.1.0.N to server 10.30.0.N: 4 payload
// bytes a segment (the harness's index), sequence numbers moving on.
struct Connection {
  int n;
  uint32_t next[2] = {1000, 5000};  // client, server
  PathPacket Send(bool from_server, uint8_t flags) {
    FrameSpec s;
    s.src = absl::StrCat(from_server ? "10.30.0." : "10.1.0.", n);
    s.dst = absl::StrCat(from_server ? "10.1.0." : "10.30.0.", n);
    s.proto = 6;
    s.sport = from_server ? 80 : static_cast<uint16_t>(40000 + n);
    s.dport = from_server ? static_cast<uint16_t>(40000 + n) : 80;
    s.payload = {0, 0, 0, 0};
    s.tcp_flags = flags;
    s.tcp_seq = next[from_server];
    s.tcp_ack = (flags & kAck) ? next[!from_server] : 0;
    next[from_server] += 4 + ((flags & kSyn) ? 1 : 0);
    return {from_server, s};
  }
};

TEST(ConntrackSerialKernel, FullTableOfAssuredFlowsDropsNewOnes) {
  if (!OracleAvailable(OracleSyntax::kNft).ok()) GTEST_SKIP() << "needs root, ip netns and nft";
  constexpr int kMax = 4;
  GlobalConntrackMax limit(kMax);
  if (!limit.ok()) GTEST_SKIP() << "cannot write " << kMaxSysctl;
  ScratchDir dir("rulejit-ctmax");

  // kMax connections opened and assured (the ACK after the SYN-ACK), then
  // a fifth connection and a UDP flow that find no room, then data on the
  // first connection, which is known.
  std::vector<PathPacket> packets;
  std::vector<Connection> conns;
  for (int n = 1; n <= kMax + 1; ++n) conns.push_back(Connection{n});
  for (int i = 0; i < kMax; ++i) {
    packets.push_back(conns[i].Send(false, kSyn));
    packets.push_back(conns[i].Send(true, kSyn | kAck));
    packets.push_back(conns[i].Send(false, kAck));
  }
  packets.push_back(conns[kMax].Send(false, kSyn));
  FrameSpec udp{.src = "10.1.0.9", .dst = "10.30.0.9", .proto = 17, .sport = 5000, .dport = 53,
                .payload = {0, 0, 0, 0}};
  packets.push_back({false, udp});
  packets.push_back(conns[0].Send(false, kPsh | kAck));
  packets.push_back(conns[0].Send(true, kPsh | kAck));

  const std::string pcap = dir.path + "/frames.pcap";
  absl::StatusOr<PathTraffic> built = WritePathTraffic(packets, pcap);
  ASSERT_TRUE(built.ok()) << built.status();
  // A stateful ruleset: what conntrack drops never reaches it.
  const std::string text =
      "table inet f {\n"
      "  chain forwarding { type filter hook forward priority 0; policy accept;\n"
      "    ct state invalid drop\n  }\n}\n";
  std::string host;
  OracleOptions options{.fw_host_json = &host};
  absl::StatusOr<std::vector<PathOutcome>> kernel =
      KernelPathOutcomes({.syntax = OracleSyntax::kNft, .text = text}, built->frames, options,
                         built->from_server);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // The kernel itself dropped the two new flows and nothing else.
  for (size_t i = 0; i < kernel->size(); ++i) {
    const bool new_flow = i == 3 * kMax || i == 3 * kMax + 1;
    EXPECT_EQ((*kernel)[i].forwarded, !new_flow) << "frame " << i;
  }
  const std::string file = dir.path + "/ruleset.nft";
  std::ofstream(file) << text;
  std::ofstream(dir.path + "/host.json") << host;
  ExpectKernelPath("nf_conntrack_max", file, pcap,
                   absl::StrCat("--host ", dir.path, "/host.json --sysctl nf_conntrack_max=", kMax),
                   *kernel, SupportedTiers(dir.path), dir.path);
}

}  // namespace
}  // namespace rulejit::testing
