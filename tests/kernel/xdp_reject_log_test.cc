// `rulejit run` answering rejects and writing log lines, seen by ordinary
// sockets:
//
//   ns src: 10.77.0.1/24 on s0 ── fwin [rulejit run --log FILE] fwout ── d0 10.77.0.2/24 :ns dst
//
// With `-j REJECT --reject-with tcp-reset` (and its nft twin) on port 8081,
// a client's connect() fails at once with ECONNREFUSED although a server
// listens there (the RST came from the firewall, not from dst); with
// icmp-port-unreachable on UDP port 9999 a connected UDP socket gets
// ECONNREFUSED; a LOG rule on UDP port 7000 writes one kernel-format line
// per datagram to the --log file, and NFLOG (nft `log group N`) the same
// line, and a limit match limits the lines. Each for iptables and nft, on the jit, the interpreter and llvm;
// the nft (inet) ruleset also refuses IPv6 sockets the same way.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

constexpr char kIptables[] = R"(*filter
:FORWARD ACCEPT [0:0]
-A FORWARD -p tcp --dport 8081 -j REJECT --reject-with tcp-reset
-A FORWARD -p udp --dport 9999 -j REJECT --reject-with icmp-port-unreachable
-A FORWARD -p udp --dport 7000 -j LOG --log-prefix "rjrun: "
-A FORWARD -p udp --dport 7003 -j NFLOG --nflog-prefix "rjnflog: " --nflog-group 5
-A FORWARD -p udp --dport 7004 -m limit --limit 1/minute --limit-burst 3 -j LOG --log-prefix "rjlimit: "
COMMIT
)";

constexpr char kNft[] = R"(table inet f {
  chain forwarding {
    type filter hook forward priority 0; policy accept;
    tcp dport 8081 reject with tcp reset
    udp dport 9999 reject
    udp dport 7000 log prefix "rjrun: "
    udp dport 7003 log prefix "rjnflog: " group 5
    udp dport 7004 limit rate 1/minute burst 3 packets log prefix "rjlimit: "
  }
}
)";

struct Param {
  const char* name;
  const char* rules;
  const char* backend;
};

// A socket made in namespace `ns`, closed with the object.
class NsSocket {
 public:
  NsSocket(const std::string& ns, int type, int family = AF_INET) {
    InNetns in(ns);
    if (in.ok()) fd_ = socket(family, type | SOCK_CLOEXEC, 0);
    const timeval three_seconds{3, 0};
    for (int option : {SO_RCVTIMEO, SO_SNDTIMEO}) {
      setsockopt(fd_, SOL_SOCKET, option, &three_seconds, sizeof three_seconds);
    }
  }
  ~NsSocket() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

class XdpRejectLog : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
    RemoveStaleNamespaces();
    const std::string base = absl::StrCat(::testing::TempDir(), "/rejectlog_", getpid());
    rules_ = base + ".rules";
    log_ = base + ".log";
    std::ofstream(rules_) << GetParam().rules;
    unlink(log_.c_str());
    if (std::string err = topo_.Create(); !err.empty()) GTEST_SKIP() << err;
    for (const auto& [ns, dev, addr] : {std::tuple{topo_.src(), "s0", "10.77.0.1/24"},
                                        std::tuple{topo_.dst(), "d0", "10.77.0.2/24"}}) {
      Output r = RunCmd({"ip", "-n", ns, "addr", "add", addr, "dev", dev});
      ASSERT_EQ(r.exit_code, 0) << r.text;
    }
    fw_ = std::make_unique<Child>(std::vector<std::string>{
        "ip", "netns", "exec", topo_.fw(), RULEJIT_TOOL, "run", rules_, "--in", "fwin",
        "--out", "fwout", "--ctl", "none", "--backend", GetParam().backend, "--log", log_});
    ASSERT_TRUE(fw_->WaitForLine("ready ", 10000)) << fw_->text();
  }
  void TearDown() override {
    if (fw_) EXPECT_EQ(fw_->Stop(SIGTERM), 0) << fw_->text();
    unlink(rules_.c_str());
    unlink(log_.c_str());
  }

  // Sends `n` five-byte datagrams from src to dst's `port`; the lines run
  // wrote to --log by then.
  std::vector<std::string> DatagramsLogged(uint16_t port, int n) {
    NsSocket client(topo_.src(), SOCK_DGRAM);
    sockaddr_in to = Address("10.77.0.2", port);
    for (int i = 0; i < n; ++i) {
      sendto(client.fd(), "12345", 5, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
    usleep(300 * 1000);
    return absl::StrSplit(LogText(), '\n', absl::SkipEmpty());
  }

  // What run wrote to --log so far.
  std::string LogText() const {
    std::ifstream in(log_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  Topology topo_;
  std::unique_ptr<Child> fw_;
  std::string rules_, log_;
};

TEST_P(XdpRejectLog, TcpResetRefusesTheConnectionAtOnce) {
  // dst listens on 8081: only the firewall's RST can refuse the connection.
  NsSocket server(topo_.dst(), SOCK_STREAM);
  sockaddr_in port = Address("10.77.0.2", 8081);
  ASSERT_EQ(bind(server.fd(), reinterpret_cast<sockaddr*>(&port), sizeof port), 0);
  ASSERT_EQ(listen(server.fd(), 4), 0);
  NsSocket client(topo_.src(), SOCK_STREAM);
  const auto start = std::chrono::steady_clock::now();
  const int rc = connect(client.fd(), reinterpret_cast<sockaddr*>(&port), sizeof port);
  const int err = errno;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(rc, -1);
  EXPECT_EQ(err, ECONNREFUSED) << strerror(err) << "\n" << fw_->text();
  EXPECT_LT(seconds, 1.0);
  std::printf("connect refused after %.3f ms\n", seconds * 1000);
}

TEST_P(XdpRejectLog, PortUnreachableReachesAConnectedUdpSocket) {
  // dst has a socket on 9999: only the firewall's ICMP error can refuse.
  NsSocket server(topo_.dst(), SOCK_DGRAM), client(topo_.src(), SOCK_DGRAM);
  sockaddr_in port = Address("10.77.0.2", 9999);
  ASSERT_EQ(bind(server.fd(), reinterpret_cast<sockaddr*>(&port), sizeof port), 0);
  ASSERT_EQ(connect(client.fd(), reinterpret_cast<sockaddr*>(&port), sizeof port), 0);
  ASSERT_EQ(send(client.fd(), "ping", 4, 0), 4);
  char buf[16];
  EXPECT_EQ(recv(client.fd(), buf, sizeof buf, 0), -1);
  EXPECT_EQ(errno, ECONNREFUSED) << strerror(errno) << "\n" << fw_->text();
}

TEST_P(XdpRejectLog, LogWritesOneKernelLinePerPacket) {
  NsSocket server(topo_.dst(), SOCK_DGRAM), client(topo_.src(), SOCK_DGRAM);
  sockaddr_in port = Address("10.77.0.2", 7000);
  ASSERT_EQ(bind(server.fd(), reinterpret_cast<sockaddr*>(&port), sizeof port), 0);
  constexpr int kDatagrams = 25;
  for (int i = 0; i < kDatagrams; ++i) {
    ASSERT_EQ(sendto(client.fd(), "logged", 6, 0, reinterpret_cast<sockaddr*>(&port), sizeof port),
              6);
    char buf[16];
    ASSERT_EQ(recv(server.fd(), buf, sizeof buf, 0), 6) << fw_->text();  // it passed, too
  }
  // Other traffic writes nothing: a datagram to another port.
  sockaddr_in other = Address("10.77.0.2", 7001);
  sendto(client.fd(), "quiet", 5, 0, reinterpret_cast<sockaddr*>(&other), sizeof other);
  usleep(200 * 1000);
  const std::string text = LogText();
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kDatagrams)) << text;
  for (const std::string& line : lines) {
    // nf_log_syslog's line for a forwarded UDP datagram from s0 to d0.
    EXPECT_TRUE(absl::StartsWith(line, "rjrun: IN=fwin OUT=fwout MAC=02:00:00:00:0a:02:02:00:00:00:0a:01:08:00 "
                                       "SRC=10.77.0.1 DST=10.77.0.2 LEN=34 TOS=0x00 PREC=0x00 TTL=64 ID="))
        << line;
    EXPECT_TRUE(absl::StrContains(line, " DF PROTO=UDP SPT=")) << line;
    EXPECT_TRUE(absl::EndsWith(line, " DPT=7000 LEN=14 ")) << line;
  }
}

// NFLOG (nft `log group N`) writes the same line, with its prefix.
TEST_P(XdpRejectLog, NflogWritesTheSameLine) {
  const std::vector<std::string> lines = DatagramsLogged(7003, 3);
  ASSERT_EQ(lines.size(), 3u) << LogText();
  for (const std::string& line : lines) {
    EXPECT_TRUE(absl::StartsWith(line, "rjnflog: IN=fwin OUT=fwout MAC=")) << line;
    EXPECT_TRUE(absl::EndsWith(line, " DPT=7003 LEN=13 ")) << line;
  }
}

// The rule's own limit match rate-limits its log lines: a burst of 3.
TEST_P(XdpRejectLog, LimitRateLimitsTheLines) {
  const std::vector<std::string> lines = DatagramsLogged(7004, 10);
  ASSERT_EQ(lines.size(), 3u) << LogText();
  for (const std::string& line : lines) EXPECT_TRUE(absl::StartsWith(line, "rjlimit: IN=fwin ")) << line;
}

// IPv6 through the nft inet twin: the RST and the ICMPv6 port unreachable
// (icmpx's default) reach ordinary IPv6 sockets.
TEST_P(XdpRejectLog, Ipv6ResetAndPortUnreachable) {
  if (GetParam().rules != kNft) GTEST_SKIP() << "the iptables ruleset is IPv4 only";
  for (const auto& [ns, dev, addr] : {std::tuple{topo_.src(), "s0", "fd77::1/64"},
                                      std::tuple{topo_.dst(), "d0", "fd77::2/64"}}) {
    Output on = RunCmd({"ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                        "net.ipv6.conf.all.disable_ipv6=0", absl::StrCat("net.ipv6.conf.", dev,
                                                                        ".disable_ipv6=0")});
    ASSERT_EQ(on.exit_code, 0) << on.text;
    Output r = RunCmd({"ip", "-n", ns, "addr", "add", addr, "dev", dev, "nodad"});
    ASSERT_EQ(r.exit_code, 0) << r.text;
  }
  sockaddr_in6 tcp{}, udp{};
  for (auto [a, port] : {std::pair{&tcp, 8081}, std::pair{&udp, 9999}}) {
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, "fd77::2", &a->sin6_addr);
  }
  NsSocket server(topo_.dst(), SOCK_STREAM, AF_INET6), quiet(topo_.dst(), SOCK_DGRAM, AF_INET6);
  ASSERT_EQ(bind(server.fd(), reinterpret_cast<sockaddr*>(&tcp), sizeof tcp), 0);
  ASSERT_EQ(listen(server.fd(), 4), 0);
  ASSERT_EQ(bind(quiet.fd(), reinterpret_cast<sockaddr*>(&udp), sizeof udp), 0);

  NsSocket client(topo_.src(), SOCK_STREAM, AF_INET6);
  EXPECT_EQ(connect(client.fd(), reinterpret_cast<sockaddr*>(&tcp), sizeof tcp), -1);
  EXPECT_EQ(errno, ECONNREFUSED) << strerror(errno) << "\n" << fw_->text();
  NsSocket dgram(topo_.src(), SOCK_DGRAM, AF_INET6);
  ASSERT_EQ(connect(dgram.fd(), reinterpret_cast<sockaddr*>(&udp), sizeof udp), 0);
  ASSERT_EQ(send(dgram.fd(), "ping", 4, 0), 4);
  char buf[16];
  EXPECT_EQ(recv(dgram.fd(), buf, sizeof buf, 0), -1);
  EXPECT_EQ(errno, ECONNREFUSED) << strerror(errno) << "\n" << fw_->text();
}

INSTANTIATE_TEST_SUITE_P(Rulesets, XdpRejectLog,
                         ::testing::Values(Param{"iptables_jit", kIptables, "jit"},
                                           Param{"nft_jit", kNft, "jit"},
                                           Param{"iptables_interp", kIptables, "interp"},
                                           Param{"nft_llvm", kNft, "llvm"}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
