// `rulejit run` as users run it: ordinary sockets on both ends, the veths'
// offloads left as the kernel sets them (so the frames a socket sends carry
// partial checksums), and rulesets that track connections.
//
//   ns src: 10.77.0.1/24 on s0 ── fwin [rulejit run] fwout ── d0 10.77.0.2/24 :ns dst
//
// The engine is a transparent bridge: ARP crosses it, and IP frames pass
// prerouting, forward and postrouting with conntrack as a bridge with
// br_netfilter runs them. Checked: UDP datagrams arrive with checksums the
// receiver accepts; a stateful ruleset (policy drop, established and
// related accepted, new TCP to 8080 accepted) lets whole TCP connections
// to 8080 move data both ways intact, through a reload in their middle,
// and none to 8081 connect.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"
#include "tests/kernel/xdp_sockets.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

// The stateful ruleset of most real firewalls, nft and iptables alike.
constexpr char kStatefulNft[] = R"(table inet f {
  chain forwarding {
    type filter hook forward priority 0; policy drop;
    ct state established,related accept
    ct state invalid drop
    meta l4proto udp accept
    tcp dport 8080 ct state new accept
  }
}
)";

// The topology with `rulejit run` on the stateful ruleset, per test.
class XdpSockets : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
    RemoveStaleNamespaces();
    rules_ = WriteFile("sockets.nft", kStatefulNft);
    if (std::string err = StartRun(topo, rules_, "none", &fw); !err.empty()) GTEST_SKIP() << err;
  }
  void TearDown() override {
    if (fw) EXPECT_EQ(fw->Stop(SIGTERM), 0) << fw->text();
    // A failed test shows the firewall's final counters (where frames went).
    if (fw && HasFailure()) ADD_FAILURE() << "rulejit run's output:\n" << fw->text();
    if (!rules_.empty()) unlink(rules_.c_str());
  }

  Topology topo;
  std::unique_ptr<Child> fw;

 private:
  std::string rules_;
};

TEST_F(XdpSockets, UdpDatagramsFromASocketArrive) {
  Socket server(SocketIn(topo.dst(), SOCK_DGRAM)), client(SocketIn(topo.src(), SOCK_DGRAM));
  ASSERT_GE(server.fd, 0);
  ASSERT_GE(client.fd, 0);
  sockaddr_in bind_to = Address(kDstAddr, 7000);
  ASSERT_EQ(bind(server.fd, reinterpret_cast<sockaddr*>(&bind_to), sizeof bind_to), 0);
  SetTimeout(server.fd, 2000);
  // Room for every datagram: a receiver thread starved of CPU (a busy
  // machine) would otherwise lose them at its own socket.
  const int big = 16 << 20;
  setsockopt(server.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  constexpr int kDatagrams = 2000;
  std::atomic<int> received{0};
  std::atomic<bool> path_up{false};
  std::thread receiver([&] {
    char buf[2048];
    for (ssize_t n; (n = recv(server.fd, buf, sizeof buf, 0)) > 0;) {
      if (buf[0] == 'w') path_up = true;
      if (buf[0] == 'u') ++received;
    }
  });
  const sockaddr_in to = Address(kDstAddr, 7000);
  char payload[512];
  // First the path: until the client's ARP request and its answer have
  // crossed the firewall, the client's stack keeps only a few datagrams
  // (unres_qlen_bytes) and silently drops the rest, before any reaches the
  // firewall; a starved worker (a busy machine) makes that window long.
  std::memset(payload, 'w', sizeof payload);
  for (int i = 0; i < 100 && !path_up; ++i) {
    sendto(client.fd, payload, sizeof payload, 0, reinterpret_cast<const sockaddr*>(&to),
           sizeof to);
    usleep(50000);
  }
  ASSERT_TRUE(path_up) << "no datagram crossed in 5 s\n" << fw->text();
  std::memset(payload, 'u', sizeof payload);
  for (int i = 0; i < kDatagrams; ++i) {
    sendto(client.fd, payload, sizeof payload, 0, reinterpret_cast<const sockaddr*>(&to),
           sizeof to);
    if (i % 50 == 49) usleep(2000);  // no ring overflows: this tests checksums
  }
  receiver.join();
  EXPECT_EQ(received.load(), kDatagrams) << fw->text();
}

TEST_F(XdpSockets, StatefulRulesetPassesWholeTcpConnections) {
  Socket listener(SocketIn(topo.dst(), SOCK_STREAM)), closed(SocketIn(topo.dst(), SOCK_STREAM));
  ASSERT_GE(listener.fd, 0);
  int one = 1;
  setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in open_port = Address(kDstAddr, 8080), other_port = Address(kDstAddr, 8081);
  ASSERT_EQ(bind(listener.fd, reinterpret_cast<sockaddr*>(&open_port), sizeof open_port), 0);
  ASSERT_EQ(listen(listener.fd, 32), 0);
  ASSERT_EQ(bind(closed.fd, reinterpret_cast<sockaddr*>(&other_port), sizeof other_port), 0);
  ASSERT_EQ(listen(closed.fd, 32), 0);
  constexpr int kConnections = 8;
  std::thread server([&] {
    std::vector<std::thread> echoes;
    for (int i = 0; i < kConnections; ++i) {
      int fd = accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) break;
      echoes.emplace_back([fd] {
        Echo(fd);
        close(fd);
      });
    }
    for (std::thread& t : echoes) t.join();
  });
  // The connections run while SIGHUP reloads the ruleset: the flows (the
  // worker's conntrack) outlive the old program, so none breaks.
  std::atomic<int> intact{0};
  std::thread clients([&] {
    for (int i = 0; i < kConnections; ++i) {
      intact += EchoThrough(topo.src(), kDstAddr, 8080, 256 * 1024);
    }
  });
  usleep(100 * 1000);
  kill(fw->pid(), SIGHUP);
  clients.join();
  server.join();
  EXPECT_EQ(intact.load(), kConnections) << fw->text();
  EXPECT_TRUE(fw->WaitForLine("reload generation=2 ", 5000)) << fw->text();

  // Port 8081 listens too, but the ruleset drops the SYN: no connection.
  Socket blocked(SocketIn(topo.src(), SOCK_STREAM));
  SetTimeout(blocked.fd, 1500);
  EXPECT_NE(connect(blocked.fd, reinterpret_cast<const sockaddr*>(&other_port), sizeof other_port),
            0);
}

}  // namespace
