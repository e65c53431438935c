// `rulejit run` draws what the kernel draws at random (runtime/draws.h),
// seen with ordinary UDP sockets through it:
//
//   ns src: 10.77.0.1/24 on s0 ── fwin [rulejit run] fwout ── d0 10.77.0.2/24 :ns dst
//
// `numgen random mod 2` drops about half of one flow's datagrams (each
// packet draws anew); `symhash mod 2` decides per flow: every datagram of
// one source port shares its fate, and of many flows some pass and some do
// not. Port 7000 is open for the warm-up that makes ARP cross first.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"
#include "tests/kernel/xdp_sockets.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

constexpr char kDrawsNft[] = R"(table inet f {
  chain forwarding {
    type filter hook forward priority 0; policy accept;
    udp dport 7001 numgen random mod 2 vmap { 0 : accept, 1 : drop }
    udp dport 7002 symhash mod 2 vmap { 0 : accept, 1 : drop }
  }
}
)";

class XdpDraws : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
    RemoveStaleNamespaces();
    rules_ = WriteFile("draws.nft", kDrawsNft);
    if (std::string err = StartRun(topo, rules_, "none", &fw); !err.empty()) GTEST_SKIP() << err;
  }
  void TearDown() override {
    if (fw) EXPECT_EQ(fw->Stop(SIGTERM), 0) << fw->text();
    if (fw && HasFailure()) ADD_FAILURE() << "rulejit run's output:\n" << fw->text();
    if (!rules_.empty()) unlink(rules_.c_str());
  }

  // A server on `port` in dst counting datagrams per source port, until
  // `quiet_ms` pass without one.
  struct Server {
    Socket socket;
    std::map<uint16_t, int> by_port;  // read after Join
    std::atomic<int> total{0};
    std::thread thread;
    explicit Server(const std::string& ns, uint16_t port, int quiet_ms)
        : socket(SocketIn(ns, SOCK_DGRAM)) {
      BindTo(socket.fd, kDstAddr, port);
      SetTimeout(socket.fd, quiet_ms);
      const int big = 16 << 20;
      setsockopt(socket.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
      thread = std::thread([this] {
        char buf[2048];
        sockaddr_in from{};
        socklen_t len = sizeof from;
        while (recvfrom(socket.fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len) >
               0) {
          ++by_port[ntohs(from.sin_port)];
          ++total;
          len = sizeof from;
        }
      });
    }
    void Join() { thread.join(); }
  };

  // Sends to the open port until a datagram crossed (ARP first: until
  // then the client's stack keeps only a few).
  bool WarmUp() {
    Server open(topo.dst(), 7000, 3000);
    Socket client(SocketIn(topo.src(), SOCK_DGRAM));
    const sockaddr_in to = Address(kDstAddr, 7000);
    char payload[64] = {};
    for (int i = 0; i < 50 && open.total == 0; ++i) {
      sendto(client.fd, payload, sizeof payload, 0, reinterpret_cast<const sockaddr*>(&to),
             sizeof to);
      usleep(100000);
    }
    open.Join();
    return open.total > 0;
  }

  Topology topo;
  std::unique_ptr<Child> fw;

 private:
  std::string rules_;
};

void SendFrom(int fd, uint16_t port, int count) {
  const sockaddr_in to = Address(kDstAddr, port);
  char payload[128] = {'d'};
  for (int i = 0; i < count; ++i) {
    sendto(fd, payload, sizeof payload, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    if (i % 20 == 19) usleep(2000);
  }
}

TEST_F(XdpDraws, NumgenRandomDrawsPerPacket) {
  ASSERT_TRUE(WarmUp()) << fw->text();
  Server server(topo.dst(), 7001, 1500);
  Socket client(SocketIn(topo.src(), SOCK_DGRAM));
  constexpr int kSent = 400;
  SendFrom(client.fd, 7001, kSent);
  server.Join();
  int received = 0;
  for (const auto& [port, n] : server.by_port) received += n;
  // Binomial(400, 1/2): 10 standard deviations either side.
  EXPECT_GT(received, 100) << fw->text();
  EXPECT_LT(received, 300) << fw->text();
}

TEST_F(XdpDraws, SymhashDecidesPerFlow) {
  ASSERT_TRUE(WarmUp()) << fw->text();
  Server server(topo.dst(), 7002, 1500);
  constexpr int kFlows = 48, kEach = 4;
  std::vector<std::unique_ptr<Socket>> clients;
  std::map<uint16_t, bool> sent_from;
  for (int i = 0; i < kFlows; ++i) {
    clients.push_back(std::make_unique<Socket>(SocketIn(topo.src(), SOCK_DGRAM)));
    ASSERT_TRUE(BindTo(clients.back()->fd, kSrcAddr, static_cast<uint16_t>(41000 + i)));
    SendFrom(clients.back()->fd, 7002, kEach);
  }
  server.Join();
  int passing = 0;
  for (const auto& [port, n] : server.by_port) {
    EXPECT_EQ(n, kEach) << "flow from port " << port << " passed in part";
    ++passing;
  }
  // Each flow passes with probability 1/2: none or all of 48 is 2^-47.
  EXPECT_GT(passing, 0) << fw->text();
  EXPECT_LT(passing, kFlows) << fw->text();
}

}  // namespace
