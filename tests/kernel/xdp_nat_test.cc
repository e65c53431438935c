// `rulejit run` with conntrack and NAT, as users meet it: ordinary sockets
// on both ends (xdp_sockets.h), offloads as veth sets them.
//
//   ns src: 10.77.0.1/24 on s0 ── fwin [rulejit run] fwout ── d0 10.77.0.2/24 :ns dst
//
// Checked: `ctl conntrack list` prints the flows as `conntrack -L` prints
// the same flows of the kernel's conntrack in dst (which sees the same
// packets), `--json` too, and `ctl conntrack flush` empties the table (a
// TCP connection then goes on: picked up again); with SNAT or MASQUERADE
// (iptables and nft) the server sees the translated source, every
// connection's 256 KiB come back intact, and a port-unreachable about a
// translated datagram reaches the client's connected socket
// (ECONNREFUSED: the quoted packet was translated back); with DNAT the
// client reaches the server at the translated address; an ICMP error of a
// flow passes a policy-drop ruleset as RELATED and one about no flow is
// dropped. About 10 seconds.
#include <errno.h>
#include <netinet/ip.h>

#include <algorithm>
#include <functional>
#include <map>
#include <atomic>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/kernel/xdp_harness.h"
#include "tests/kernel/xdp_sockets.h"

namespace {

using namespace rulejit::xdp_test;  // NOLINT: the harness is this test's

constexpr size_t kTransfer = 256 * 1024;
constexpr int kConnections = 4;

// The lines of `rulejit ctl --socket SOCK ARGS...` (stdout and stderr).
std::vector<std::string> Ctl(const std::string& sock, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {RULEJIT_TOOL, "ctl", "--socket", sock};
  argv.insert(argv.end(), args.begin(), args.end());
  Output out = RunCmd(argv);
  return absl::StrSplit(out.text, '\n', absl::SkipEmpty());
}

// The flow lines among `lines` (those `conntrack -L` prints per flow).
std::vector<std::string> FlowLines(const std::vector<std::string>& lines) {
  std::vector<std::string> flows;
  for (const std::string& l : lines) {
    if (absl::StartsWith(l, "tcp ") || absl::StartsWith(l, "udp ") ||
        absl::StartsWith(l, "icmp ")) {
      flows.push_back(l);
    }
  }
  return flows;
}

// A flow line without its seconds left (the third field), and those seconds.
std::string WithoutTimeout(const std::string& line, int64_t* seconds) {
  std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (f.size() < 3 || !absl::SimpleAtoi(f[2], seconds)) return line;
  f[2] = "T";
  return absl::StrJoin(f, " ");
}

class XdpNat : public XdpRunTest {};

// kConnections echoes of kTransfer bytes to `ip`:`port` from the client;
// how many came back intact.
int EchoAll(const Topology& topo, const char* ip, uint16_t port) {
  int intact = 0;
  for (int i = 0; i < kConnections; ++i) intact += EchoThrough(topo.src(), ip, port, kTransfer);
  return intact;
}

// A connected UDP socket of the client (bound to `sport`) to the server's
// `dport`; after sending a datagram (when `send_first`), what recv says:
// the errno of the ICMP error that reached it, or EAGAIN for none.
int UdpErrorAtClient(const Topology& topo, uint16_t sport, uint16_t dport, bool send_first,
                     const std::function<void()>& meanwhile = {}) {
  Socket s(SocketIn(topo.src(), SOCK_DGRAM));
  SetTimeout(s.fd, 1500);
  const sockaddr_in to = Address(kDstAddr, dport);
  if (!BindTo(s.fd, kSrcAddr, sport) ||
      connect(s.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    return -1;
  }
  if (send_first && send(s.fd, "ping", 4, 0) != 4) return -1;
  if (meanwhile) meanwhile();
  char buf[64];
  return recv(s.fd, buf, sizeof buf, 0) < 0 ? errno : 0;
}

// ------------------------------------------------------------ ctl conntrack

constexpr char kStateful[] = R"(table inet f {
  chain forwarding {
    type filter hook forward priority 0; policy drop;
    ct state established,related accept
    meta l4proto udp accept
    icmp type echo-request accept
    tcp dport 8080 ct state new accept
  }
}
)";

// One flow of each kind, the kernel's conntrack in dst tracking the same.
TEST_F(XdpNat, ConntrackListIsTheKernelsAndFlushEmptiesIt) {
  if (RunCmd({"conntrack", "--version"}).exit_code != 0) GTEST_SKIP() << "no conntrack tool";
  ASSERT_TRUE(Start("ct.nft", kStateful,
                    {{"ip", "netns", "exec", topo.dst(), "nft",
                      "add table ip k; add chain ip k in { type filter hook input priority 0; }; "
                      "add rule ip k in ct state new counter"}}));
  const int listener = Listen(8080);
  ASSERT_GE(listener, 0);
  // TCP: a connection with data both ways, kept open.
  Socket client(SocketIn(topo.src(), SOCK_STREAM));
  SetTimeout(client.fd, 3000);
  const sockaddr_in server = Address(kDstAddr, 8080);
  ASSERT_EQ(connect(client.fd, reinterpret_cast<const sockaddr*>(&server), sizeof server), 0);
  Socket accepted(accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
  SetTimeout(accepted.fd, 3000);
  char buf[16];
  ASSERT_EQ(send(client.fd, "hi", 2, 0), 2);
  ASSERT_EQ(recv(accepted.fd, buf, sizeof buf, 0), 2);
  ASSERT_EQ(send(accepted.fd, "ho", 2, 0), 2);
  ASSERT_EQ(recv(client.fd, buf, sizeof buf, 0), 2);
  // UDP to a bound socket that never answers: unreplied.
  Socket sink(SocketIn(topo.dst(), SOCK_DGRAM));
  ASSERT_TRUE(BindTo(sink.fd, kDstAddr, 7000));
  Socket udp(SocketIn(topo.src(), SOCK_DGRAM));
  ASSERT_TRUE(BindTo(udp.fd, kSrcAddr, 5555));
  const sockaddr_in to7000 = Address(kDstAddr, 7000);
  ASSERT_EQ(sendto(udp.fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&to7000), sizeof to7000), 1);
  // ICMP echo (id 0x4242), answered by dst's kernel.
  Socket raw(SocketIn(topo.src(), SOCK_RAW, IPPROTO_ICMP));
  uint8_t echo[8] = {8, 0, 0, 0, 0x42, 0x42, 0, 1};
  const uint16_t check = Checksum(echo, sizeof echo);
  echo[2] = static_cast<uint8_t>(check >> 8);
  echo[3] = static_cast<uint8_t>(check);
  ASSERT_EQ(sendto(raw.fd, echo, sizeof echo, 0, reinterpret_cast<const sockaddr*>(&to7000),
                   sizeof to7000),
            8);
  usleep(300 * 1000);

  std::vector<std::string> ours = FlowLines(Ctl(ctl_, {"conntrack", "list"}));
  std::vector<std::string> kernel =
      FlowLines(absl::StrSplit(RunCmd({"ip", "netns", "exec", topo.dst(), "conntrack", "-L"}).text,
                               '\n', absl::SkipEmpty()));
  ASSERT_EQ(ours.size(), 3u) << absl::StrJoin(ours, "\n") << "\n" << fw->text();
  std::multiset<std::string> ours_set, kernel_set;
  std::map<std::string, int64_t> our_seconds;
  for (const std::string& l : ours) {
    int64_t s = -1;
    ours_set.insert(WithoutTimeout(l, &s));
    our_seconds[WithoutTimeout(l, &s)] = s;
  }
  for (const std::string& l : kernel) {
    int64_t s = -1;
    const std::string key = WithoutTimeout(l, &s);
    kernel_set.insert(key);
    // Seconds left agree to within the test's own pauses.
    if (our_seconds.count(key)) {
      EXPECT_NEAR(our_seconds[key], s, 2) << l;
    }
  }
  EXPECT_EQ(ours_set, kernel_set) << "ours:\n"
                                  << absl::StrJoin(ours, "\n") << "\nkernel:\n"
                                  << absl::StrJoin(kernel, "\n");
  std::vector<std::string> json = Ctl(ctl_, {"conntrack", "list", "--json"});
  auto is_flow = [](const std::string& l) { return absl::StartsWith(l, "{\"family\":\"ipv4\""); };
  EXPECT_EQ(std::count_if(json.begin(), json.end(), is_flow), 3)
      << absl::StrJoin(json, "\n");

  std::vector<std::string> flushed = Ctl(ctl_, {"conntrack", "flush"});
  EXPECT_NE(std::find(flushed.begin(), flushed.end(), "flushed 3"), flushed.end())
      << absl::StrJoin(flushed, "\n");
  EXPECT_TRUE(FlowLines(Ctl(ctl_, {"conntrack", "list"})).empty());
  // The connection goes on: its next segment is picked up as new (tcp_loose)
  // and the ruleset admits it again.
  ASSERT_EQ(send(client.fd, "again", 5, 0), 5);
  EXPECT_EQ(recv(accepted.fd, buf, sizeof buf, 0), 5);
  ASSERT_EQ(send(accepted.fd, "back", 4, 0), 4);
  EXPECT_EQ(recv(client.fd, buf, sizeof buf, 0), 4);
  std::vector<std::string> after = FlowLines(Ctl(ctl_, {"conntrack", "list"}));
  ASSERT_EQ(after.size(), 1u) << absl::StrJoin(after, "\n");
  EXPECT_TRUE(absl::StrContains(after[0], "ESTABLISHED src=10.77.0.1 dst=10.77.0.2")) << after[0];
}

// ------------------------------------------------------------ NAT

struct SnatCase {
  const char* name;
  const char* rules;
  const char* translated;  // the source the server sees
};

constexpr char kFilterIpt[] = R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -i fwin -p tcp --dport 8080 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -i fwin -p udp -m conntrack --ctstate NEW -j ACCEPT
COMMIT
)";
constexpr char kFilterNft[] = R"(table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established,related accept
    iifname "fwin" tcp dport 8080 ct state new accept
    iifname "fwin" meta l4proto udp ct state new accept
  }
}
)";
constexpr char kNatHeadIpt[] =
    "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
    ":POSTROUTING ACCEPT [0:0]\n";

std::vector<SnatCase> SnatCases() {
  static const std::string snat_ipt =
      absl::StrCat(kNatHeadIpt, "-A POSTROUTING -o fwout -j SNAT --to-source 10.77.0.100\nCOMMIT\n",
                   kFilterIpt);
  static const std::string masq_ipt =
      absl::StrCat(kNatHeadIpt, "-A POSTROUTING -o fwout -j MASQUERADE\nCOMMIT\n", kFilterIpt);
  static const std::string snat_nft = absl::StrCat(
      "table ip nat {\n  chain post { type nat hook postrouting priority srcnat; "
      "oifname \"fwout\" snat to 10.77.0.100; }\n}\n",
      kFilterNft);
  static const std::string masq_nft = absl::StrCat(
      "table ip nat {\n  chain post { type nat hook postrouting priority srcnat; "
      "oifname \"fwout\" masquerade; }\n}\n",
      kFilterNft);
  return {{"snat_iptables", snat_ipt.c_str(), "10.77.0.100"},
          {"snat_nft", snat_nft.c_str(), "10.77.0.100"},
          {"masquerade_iptables", masq_ipt.c_str(), "10.77.0.254"},
          {"masquerade_nft", masq_nft.c_str(), "10.77.0.254"}};
}

// (gtest prints a case by its name, not its bytes.)
void PrintTo(const SnatCase& c, std::ostream* os) { *os << c.name; }

class XdpSnat : public XdpNat, public ::testing::WithParamInterface<SnatCase> {};

TEST_P(XdpSnat, ServerSeesTheTranslatedSourceAndErrorsComeBack) {
  const SnatCase& c = GetParam();
  // fwout's address is masquerade's source; the server reaches the
  // translated address at the client's MAC, through the bridge.
  ASSERT_TRUE(Start(c.name, c.rules,
                    {{"ip", "-n", topo.fw(), "addr", "add", "10.77.0.254/24", "dev", "fwout"},
                     {"ip", "-n", topo.dst(), "neigh", "add", c.translated, "lladdr", kSrcMacText,
                      "dev", "d0"}}));
  const int listener = Listen(8080);
  ASSERT_GE(listener, 0);
  EchoServer server(listener, kConnections);
  EXPECT_EQ(EchoAll(topo, kDstAddr, 8080), kConnections) << fw->text();
  const std::vector<std::string>& peers = server.Join();
  EXPECT_EQ(peers, std::vector<std::string>(kConnections, c.translated));
  // The table shows the binding: replies go to the translated address.
  std::vector<std::string> flows = FlowLines(Ctl(ctl_, {"conntrack", "list"}));
  ASSERT_FALSE(flows.empty());
  EXPECT_TRUE(absl::StrContains(flows[0], absl::StrCat("src=10.77.0.2 dst=", c.translated)))
      << flows[0];
  // A datagram to a closed port: the server's port-unreachable, sent to
  // the translated address and quoting the translated datagram, reaches
  // the client's connected socket.
  EXPECT_EQ(UdpErrorAtClient(topo, 5600, 7001, /*send_first=*/true), ECONNREFUSED) << fw->text();
}

INSTANTIATE_TEST_SUITE_P(Rulesets, XdpSnat, ::testing::ValuesIn(SnatCases()),
                         [](const auto& info) { return std::string(info.param.name); });

class XdpDnat : public XdpNat, public ::testing::WithParamInterface<bool> {};

TEST_P(XdpDnat, ClientReachesTheServerAtTheTranslatedAddress) {
  const std::string rules =
      GetParam()
          ? absl::StrCat(kNatHeadIpt,
                         "-A PREROUTING -d 10.77.0.50/32 -p tcp --dport 80 -j DNAT "
                         "--to-destination 10.77.0.2:8080\nCOMMIT\n",
                         kFilterIpt)
          : absl::StrCat("table ip nat {\n  chain pre { type nat hook prerouting priority dstnat; "
                         "ip daddr 10.77.0.50 tcp dport 80 dnat to 10.77.0.2:8080; }\n}\n",
                         kFilterNft);
  // The client sends frames for 10.77.0.50 to the server's MAC.
  ASSERT_TRUE(Start(GetParam() ? "dnat.ipt" : "dnat.nft", rules,
                    {{"ip", "-n", topo.src(), "neigh", "add", "10.77.0.50", "lladdr", kDstMacText,
                      "dev", "s0"}}));
  const int listener = Listen(8080);
  ASSERT_GE(listener, 0);
  EchoServer server(listener, kConnections);
  EXPECT_EQ(EchoAll(topo, "10.77.0.50", 80), kConnections) << fw->text();
  EXPECT_EQ(server.Join(), std::vector<std::string>(kConnections, kSrcAddr));
}

INSTANTIATE_TEST_SUITE_P(Rulesets, XdpDnat, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "iptables" : "nft"; });

// ------------------------------------------------------------ RELATED

// An ICMP port-unreachable quoting a UDP datagram from `sport` to `dport`
// that was never sent (no flow of the table): ICMP header, quoted IP
// header and UDP header.
std::vector<uint8_t> UnrelatedUnreachable(uint16_t sport, uint16_t dport) {
  std::vector<uint8_t> m = {3, 3, 0, 0, 0, 0, 0, 0};
  const uint8_t ip[20] = {0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0,
                          10,   77, 0, 1, 10, 77, 0,   2};
  m.insert(m.end(), ip, ip + 20);
  const uint16_t ip_check = Checksum(&m[8], 20);
  m[8 + 10] = static_cast<uint8_t>(ip_check >> 8);
  m[8 + 11] = static_cast<uint8_t>(ip_check);
  const uint8_t udp[8] = {static_cast<uint8_t>(sport >> 8), static_cast<uint8_t>(sport),
                          static_cast<uint8_t>(dport >> 8), static_cast<uint8_t>(dport), 0, 12, 0, 0};
  m.insert(m.end(), udp, udp + 8);
  const uint16_t check = Checksum(m.data(), m.size());
  m[2] = static_cast<uint8_t>(check >> 8);
  m[3] = static_cast<uint8_t>(check);
  return m;
}

TEST_F(XdpNat, IcmpErrorsOfAFlowAreRelatedOthersDropped) {
  ASSERT_TRUE(Start("related.nft", R"(table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established,related accept
    iifname "fwin" meta l4proto udp ct state new accept
    meta l4proto icmp counter drop
  }
}
)"));
  // A datagram to a closed port: the error comes back as RELATED.
  EXPECT_EQ(UdpErrorAtClient(topo, 5601, 7001, /*send_first=*/true), ECONNREFUSED) << fw->text();
  // An error about a datagram never sent: no flow, dropped by the last
  // rule, so the client's socket (which the quote names) hears nothing.
  Socket raw(SocketIn(topo.dst(), SOCK_RAW, IPPROTO_ICMP));
  ASSERT_GE(raw.fd, 0);
  const std::vector<uint8_t> error = UnrelatedUnreachable(5602, 7002);
  const sockaddr_in client = Address(kSrcAddr, 0);
  EXPECT_EQ(UdpErrorAtClient(topo, 5602, 7002, /*send_first=*/false,
                             [&] {
                               sendto(raw.fd, error.data(), error.size(), 0,
                                      reinterpret_cast<const sockaddr*>(&client), sizeof client);
                             }),
            EAGAIN);
  std::vector<std::string> counters = Ctl(ctl_, {"counters"});
  auto icmp_rule = std::find_if(counters.begin(), counters.end(), [](const std::string& l) {
    return absl::StrContains(l, "f/forwarding#3 ");
  });
  ASSERT_NE(icmp_rule, counters.end()) << absl::StrJoin(counters, "\n");
  EXPECT_TRUE(absl::StrContains(*icmp_rule, "packets=1 ")) << *icmp_rule;
}

}  // namespace
