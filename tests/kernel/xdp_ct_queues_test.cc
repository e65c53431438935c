// End to end: `rulejit run --queues 2` with a stateful ruleset, ordinary
// sockets on both ends (xdp_sockets.h), veths of two queues each.
//
//   ns src: 10.77.0.1/24 on s0 ── fwin [run, workers 0 and 1] fwout ── d0 10.77.0.2/24 :ns dst
//
// XPS steers every frame the client sends onto s0's TX queue 0 and every
// frame the server sends onto d0's TX queue 1; a veth receives on the RX
// queue of its peer's TX queue, so worker 0 sees only the original
// direction and worker 1 only the replies (asserted from the per-queue
// counters of `ctl stats`). The workers share one connection table
// (runtime/shared_conntrack.h): connections to 8080 move their data intact
// both ways, none to 8081 connects; with SNAT the server sees the
// translated source and every connection completes. Before the shared
// table, `run` refused this ruleset with two queues.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"
#include "tests/kernel/xdp_sockets.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

constexpr int kConnections = 6;
constexpr size_t kTransfer = 256 * 1024;

constexpr char kFilterIpt[] =
    "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n"
    "-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
    "-A FORWARD -p tcp --dport 8080 -m conntrack --ctstate NEW -j ACCEPT\n"
    "COMMIT\n";
constexpr char kSnatIpt[] =
    "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
    ":POSTROUTING ACCEPT [0:0]\n"
    "-A POSTROUTING -o fwout -j SNAT --to-source 10.77.0.100\nCOMMIT\n";

// Every CPU, as an xps_cpus mask (32-bit groups, most significant first).
std::string AllCpusMask() {
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  std::string mask;
  for (long group = (cpus - 1) / 32; group >= 0; --group) {
    const long bits = std::min<long>(32, cpus - group * 32);
    const uint32_t word = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
    absl::StrAppend(&mask, mask.empty() ? "" : ",", absl::Hex(word, absl::kZeroPad8));
  }
  return mask;
}

// Makes every CPU of namespace `ns` send on `dev`'s TX queue `queue`.
std::vector<std::string> SteerTx(const std::string& ns, const std::string& dev, int queue) {
  return {"ip", "netns", "exec", ns, "sh", "-c",
          absl::StrCat("echo ", AllCpusMask(), " > /sys/class/net/", dev, "/queues/tx-", queue,
                       "/xps_cpus")};
}

class XdpCtQueues : public XdpRunTest {
 protected:
  // `run --queues 2` on `rules`, the two directions steered apart.
  bool StartSteered(const std::string& name, const std::string& rules,
                    std::vector<std::vector<std::string>> setup = {}) {
    setup.push_back(SteerTx(topo.src(), "s0", 0));
    setup.push_back(SteerTx(topo.dst(), "d0", 1));
    return Start(name, rules, setup, /*queues=*/2);
  }
  // kConnections echoes to the server's 8080 at once; how many came back
  // intact.
  int EchoAll() {
    std::atomic<int> intact{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < kConnections; ++i) {
      clients.emplace_back(
          [&] { intact += EchoThrough(topo.src(), kDstAddr, 8080, kTransfer); });
    }
    for (std::thread& t : clients) t.join();
    return intact.load();
  }
  // Originals only on queue 0, replies only on queue 1.
  void ExpectDirectionsOnTheirQueues() {
    Output stats = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl_, "stats"});
    ASSERT_EQ(stats.exit_code, 0) << stats.text;
    EXPECT_GT(LineValue(stats.text, "queue 0", "fwin", "rx_packets"), 100) << stats.text;
    EXPECT_EQ(LineValue(stats.text, "queue 1", "fwin", "rx_packets"), 0) << stats.text;
    EXPECT_GT(LineValue(stats.text, "queue 1", "fwout", "rx_packets"), 100) << stats.text;
    EXPECT_EQ(LineValue(stats.text, "queue 0", "fwout", "rx_packets"), 0) << stats.text;
  }

};

TEST_F(XdpCtQueues, RepliesOnAnotherWorkersQueueAreEstablished) {
  ASSERT_TRUE(StartSteered("ct_queues.ipt", kFilterIpt));
  EXPECT_TRUE(absl::StrContains(fw->text(), "queues=2")) << fw->text();
  const int listener = Listen(8080);
  ASSERT_GE(listener, 0);
  ASSERT_GE(Listen(8081), 0);
  EchoServer server(listener, kConnections);
  EXPECT_EQ(EchoAll(), kConnections) << fw->text();
  server.Join();

  // Port 8081 listens too, but the ruleset drops the SYN.
  Socket blocked(SocketIn(topo.src(), SOCK_STREAM));
  SetTimeout(blocked.fd, 1500);
  const sockaddr_in other_port = Address(kDstAddr, 8081);
  EXPECT_NE(connect(blocked.fd, reinterpret_cast<const sockaddr*>(&other_port), sizeof other_port),
            0);
  ExpectDirectionsOnTheirQueues();

  // The shared table lists every connection once and flushes.
  Output list = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl_, "conntrack", "list"});
  int flows_8080 = 0;
  for (absl::string_view line : absl::StrSplit(list.text, '\n')) {
    flows_8080 += absl::StartsWith(line, "tcp ") && absl::StrContains(line, "dport=8080 src=");
  }
  EXPECT_EQ(flows_8080, kConnections) << list.text;
  Output flush = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl_, "conntrack", "flush"});
  EXPECT_TRUE(absl::StrContains(flush.text, "flushed ")) << flush.text;
  list = RunCmd({RULEJIT_TOOL, "ctl", "--socket", ctl_, "conntrack", "list"});
  EXPECT_FALSE(absl::StrContains(list.text, "dport=8080")) << list.text;
}

TEST_F(XdpCtQueues, SnatBindingsServeRepliesOnAnotherQueue) {
  // The server reaches the translated address at the client's MAC,
  // through the bridge.
  ASSERT_TRUE(StartSteered("ct_queues_snat.ipt", absl::StrCat(kSnatIpt, kFilterIpt),
                    {{"ip", "-n", topo.dst(), "neigh", "add", "10.77.0.100", "lladdr",
                      kSrcMacText, "dev", "d0"}}));
  const int listener = Listen(8080);
  ASSERT_GE(listener, 0);
  EchoServer server(listener, kConnections);
  EXPECT_EQ(EchoAll(), kConnections) << fw->text();
  EXPECT_EQ(server.Join(), std::vector<std::string>(kConnections, "10.77.0.100"));
  ExpectDirectionsOnTheirQueues();
}

}  // namespace
