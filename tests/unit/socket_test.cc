// Socket lookups on the host model and the expressions that read them:
// host/socket_lookup.cc's choice among established sockets, listeners
// bound to an address and to the any address, dual-stack sockets, bound
// devices and UDP scores; the host JSON's "sockets" list; nft's socket and
// tproxy and iptables' -m socket and -j TPROXY on every tier; their IR
// lines read back; the refusal where the host lists no sockets. The
// kernel's verdicts: tests/kernel/socket_kernel_test.cc.
#include <arpa/inet.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "host/socket_lookup.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "rulejit/host.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

constexpr char kHost[] = R"({"addr": [
  {"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"addr_info":[
    {"family":"inet","local":"127.0.0.1","prefixlen":8},
    {"family":"inet6","local":"::1","prefixlen":128}]},
  {"ifindex":2,"ifname":"eth0","link_type":"ether","address":"02:00:00:00:00:02",
   "addr_info":[{"family":"inet","local":"10.0.0.1","prefixlen":24},
    {"family":"inet6","local":"2001:db8::1","prefixlen":64}]},
  {"ifindex":3,"ifname":"eth1","link_type":"ether","address":"02:00:00:00:01:02","addr_info":[
    {"family":"inet","local":"192.168.1.1","prefixlen":24}]}],
 "sockets": [
  {"proto":"tcp","state":"listen","local":"0.0.0.0","lport":80},
  {"proto":"tcp","state":"listen","local":"10.0.0.1","lport":80,"transparent":true,"mark":7},
  {"proto":"tcp","state":"established","local":"10.0.0.1","lport":22,
   "remote":"10.0.0.9","rport":5555,"mark":51},
  {"proto":"tcp","state":"listen","local":"::","lport":443,"transparent":true},
  {"proto":"udp","state":"listen","local":"0.0.0.0","lport":53,"dev":"eth1"},
  {"proto":"udp","state":"listen","local":"0.0.0.0","lport":53},
  {"proto":"tcp","state":"listen","local":"127.0.0.1","lport":1088,"transparent":true},
  {"proto":"udp","state":"listen","local":"0.0.0.0","lport":1088,"transparent":true},
  {"proto":"udp","state":"established","local":"10.0.0.1","lport":4000,
   "remote":"10.0.0.9","rport":4001}]})";

HostModel Host() {
  absl::StatusOr<HostModel> host = ParseHostJson(kHost);
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? *host : HostModel{};
}

int Find(uint8_t proto, const std::string& src, uint16_t sport, const std::string& dst,
         uint16_t dport, uint32_t dev = 2,
         host::SocketLookup kind = host::SocketLookup::kAny) {
  host::SocketTuple k;
  k.family = src.find(':') != std::string::npos ? 6 : 4;
  k.protocol = proto;
  inet_pton(k.family == 4 ? AF_INET : AF_INET6, src.c_str(), k.saddr.data());
  inet_pton(k.family == 4 ? AF_INET : AF_INET6, dst.c_str(), k.daddr.data());
  k.sport = sport;
  k.dport = dport;
  k.in_dev = dev;
  return host::FindSocket(Host(), k, kind);
}

TEST(SocketLookup, EstablishedThenTheBestListener) {
  EXPECT_EQ(Find(6, "10.0.0.9", 5555, "10.0.0.1", 22), 2);
  EXPECT_EQ(Find(6, "10.0.0.9", 5556, "10.0.0.1", 22), -1);  // no listener on 22
  EXPECT_EQ(Find(6, "10.0.0.9", 1, "10.0.0.1", 80), 1);       // bound beats any
  EXPECT_EQ(Find(6, "10.0.0.9", 1, "10.0.0.7", 80), 0);
  EXPECT_EQ(Find(6, "10.0.0.9", 1, "10.0.0.1", 443), 3);      // dual-stack ::
  EXPECT_EQ(Find(6, "2001:db8::9", 1, "2001:db8::1", 443), 3);
  EXPECT_EQ(Find(6, "2001:db8::9", 1, "2001:db8::1", 80), -1);  // AF_INET only
  EXPECT_EQ(Find(17, "192.168.1.9", 1, "192.168.1.1", 53, 3), 4);  // bound device scores
  EXPECT_EQ(Find(17, "10.0.0.9", 1, "10.0.0.1", 53, 2), 5);
  EXPECT_EQ(Find(17, "10.0.0.9", 4001, "10.0.0.1", 4000), 8);
  EXPECT_EQ(Find(17, "10.0.0.8", 4001, "10.0.0.1", 4000), -1);  // connected elsewhere
}

TEST(SocketLookup, TproxyKinds) {
  using host::SocketLookup;
  EXPECT_EQ(Find(6, "10.0.0.9", 5555, "10.0.0.1", 22, 2, SocketLookup::kEstablished), 2);
  EXPECT_EQ(Find(6, "10.0.0.9", 1, "10.0.0.1", 80, 2, SocketLookup::kEstablished), -1);
  EXPECT_EQ(Find(6, "10.0.0.9", 5555, "10.0.0.1", 22, 2, SocketLookup::kListener), -1);
  // UDP: established wants a connected socket, listener an unconnected one.
  EXPECT_EQ(Find(17, "10.0.0.9", 4001, "10.0.0.1", 4000, 2, SocketLookup::kEstablished), 8);
  EXPECT_EQ(Find(17, "10.0.0.9", 4001, "10.0.0.1", 4000, 2, SocketLookup::kListener), -1);
  EXPECT_EQ(Find(17, "10.0.0.9", 1, "10.0.0.1", 53, 2, SocketLookup::kEstablished), -1);
}

TEST(SocketHostJson, FieldsAndErrors) {
  HostModel h = Host();
  ASSERT_TRUE(h.sockets_listed);
  ASSERT_EQ(h.sockets.size(), 9u);
  EXPECT_EQ(h.sockets[4].bound_dev, 3u);
  EXPECT_EQ(h.sockets[3].family, 6);
  EXPECT_EQ(h.sockets[2].mark, 51u);
  EXPECT_FALSE(ParseHostJson(R"({"addr":[]})")->sockets_listed);
  EXPECT_TRUE(ParseHostJson(R"({"addr":[],"sockets":[]})")->sockets_listed);
  for (const char* bad : {
           R"({"addr":[],"sockets":[{"proto":"sctp","state":"listen","local":"::","lport":1}]})",
           R"({"addr":[],"sockets":[{"proto":"tcp","state":"listen","local":"x","lport":1}]})",
           R"({"addr":[],"sockets":[{"proto":"tcp","state":"listen","local":"::"}]})",
           R"({"addr":[],"sockets":[{"proto":"tcp","state":"established","local":"::","lport":1}]})",
           R"({"addr":[],"sockets":[{"proto":"tcp","state":"listen","local":"::","lport":1,"dev":"x"}]})"}) {
    absl::StatusOr<HostModel> h2 = ParseHostJson(bad);
    EXPECT_FALSE(h2.ok()) << bad;
    if (!h2.ok()) EXPECT_NE(h2.status().message().find("sockets[0]"), std::string::npos);
  }
}

absl::StatusOr<std::unique_ptr<const Program>> Compile(const std::string& text, Backend b,
                                                        const HostModel& host = Host()) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "t.rules");
  if (!rs.ok()) return rs.status();
  CompileOptions options{.backend = b};
  options.host = std::make_shared<const HostModel>(host);
  return Program::Compile(*std::move(rs), options);
}

// The verdict and mark of `text` at prerouting for a frame in on eth0, the
// same on every tier.
std::string RunTiers(const std::string& text, const FrameSpec& spec) {
  std::vector<uint8_t> frame = BuildFrame(spec);
  PacketView view = ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()));
  PacketMeta meta;
  meta.has_iif = true;
  meta.iif = 2;
  std::string answer;
  for (Backend b : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    auto program = Compile(text, b);
    EXPECT_TRUE(program.ok()) << program.status();
    if (!program.ok()) return "error";
    const Result r = (*program)->Run(Hook::kPrerouting, view, meta);
    const std::string got = absl::StrCat(r.verdict == Verdict::kDrop ? "drop" : "accept",
                                         " mark ", r.mark);
    if (!answer.empty()) EXPECT_EQ(answer, got) << "tier " << static_cast<int>(b);
    answer = got;
  }
  return answer;
}

constexpr char kNft[] = R"(table inet t {
  chain p {
    type filter hook prerouting priority -150; policy accept;
    socket wildcard 0 socket transparent 1 socket mark 7 drop
    tcp dport 9999 tproxy ip to 127.0.0.1:1088 meta mark set 5 socket transparent 1 drop
    udp dport 9999 tproxy to :1088 drop
    tcp dport 9998 tproxy ip to 127.0.0.1:1089 drop
  }
}
)";

TEST(SocketExpr, NftOnEveryTier) {
  const auto tcp = [](const std::string& dst, uint16_t dport, uint16_t sport = 1234) {
    return FrameSpec{.src = "10.0.0.9", .dst = dst, .proto = 6, .sport = sport, .dport = dport};
  };
  EXPECT_EQ(RunTiers(kNft, tcp("10.0.0.1", 80)), "drop mark 0");
  EXPECT_EQ(RunTiers(kNft, tcp("10.0.0.7", 80)), "accept mark 0");    // wildcard listener
  EXPECT_EQ(RunTiers(kNft, tcp("10.0.0.1", 22, 5555)), "accept mark 0");  // not transparent
  EXPECT_EQ(RunTiers(kNft, tcp("10.0.0.1", 9999)), "drop mark 5");    // tproxy'd, then its socket
  EXPECT_EQ(RunTiers(kNft, tcp("10.0.0.1", 9998)), "accept mark 0");  // no listener: rule ends
  FrameSpec udp{.src = "10.0.0.9", .dst = "10.0.0.1", .proto = 17, .dport = 9999};
  EXPECT_EQ(RunTiers(kNft, udp), "drop mark 0");
}

constexpr char kIpt[] = R"(*mangle
:PREROUTING ACCEPT [0:0]
-A PREROUTING -p tcp -m socket --transparent --restore-skmark -j DROP
-A PREROUTING -p tcp -m tcp --dport 9999 -j TPROXY --on-port 1088 --on-ip 127.0.0.1 --tproxy-mark 0x1/0x1
-A PREROUTING -p tcp -m tcp --dport 9998 -j TPROXY --on-port 1089 --on-ip 127.0.0.1
COMMIT
)";

TEST(SocketExpr, IptablesOnEveryTier) {
  const auto tcp = [](const std::string& dst, uint16_t dport) {
    return FrameSpec{.src = "10.0.0.9", .dst = dst, .proto = 6, .dport = dport};
  };
  EXPECT_EQ(RunTiers(kIpt, tcp("10.0.0.1", 80)), "drop mark 7");     // restored, then dropped
  EXPECT_EQ(RunTiers(kIpt, tcp("10.0.0.7", 80)), "accept mark 0");   // wildcard: ignored
  EXPECT_EQ(RunTiers(kIpt, tcp("10.0.0.1", 9999)), "accept mark 1");  // TPROXY accepts
  EXPECT_EQ(RunTiers(kIpt, tcp("10.0.0.1", 9998)), "drop mark 0");    // TPROXY drops on a miss
  EXPECT_EQ(RunTiers(kIpt, tcp("10.0.0.1", 9997)), "accept mark 0");
}

TEST(SocketExpr, IrLinesReadBack) {
  for (const char* line :
       {"[ socket load transparent => reg 1 ]", "[ socket load mark => reg 9 ]",
        "[ socket load wildcard => reg 1 ]", "[ tproxy ip addr reg 1 port reg 2 ]",
        "[ tproxy ip6 addr reg 1 ]", "[ tproxy port reg 1 ]",
        "[ tproxy ip port reg 2 else drop ]"}) {
    absl::StatusOr<ir::Expr> e = ir::ParseExprLine(line);
    ASSERT_TRUE(e.ok()) << line << ": " << e.status();
    EXPECT_EQ(ir::PrintExpr(*e), line);
  }
}

TEST(SocketExpr, IptablesLowering) {
  using frontends::iptables_test::Lower;
  EXPECT_EQ(Lower("-m socket", frontends::IpVersion::kAuto, "mangle", "PREROUTING"),
            "[ socket load wildcard => reg 1 ]\n[ cmp eq reg 1 0x00000000 ]");
  EXPECT_EQ(Lower("-m socket --nowildcard --transparent", frontends::IpVersion::kAuto,
                  "mangle", "PREROUTING"),
            "[ socket load transparent => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_NE(Lower("-m socket", frontends::IpVersion::kAuto, "filter", "OUTPUT")
                .find("not valid in chain 'OUTPUT'"),
            std::string::npos);
  EXPECT_NE(Lower("-p tcp -j TPROXY --on-port 1", frontends::IpVersion::kAuto, "raw",
                  "PREROUTING").find("only valid in the mangle table"),
            std::string::npos);
  EXPECT_NE(Lower("-j TPROXY --on-port 1", frontends::IpVersion::kAuto, "mangle", "PREROUTING")
                .find("-p tcp or -p udp"),
            std::string::npos);
}

TEST(SocketExpr, RefusedWithoutListedSockets) {
  HostModel bare = Host();
  bare.sockets_listed = false;
  bare.sockets.clear();
  auto program = Compile(kNft, Backend::kInterp, bare);
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("t.rules:4:"), std::string::npos)
      << program.status();
  EXPECT_NE(program.status().message().find("lists no sockets"), std::string::npos);
  // cgroupv2 and the output hook are refused where they are written.
  absl::StatusOr<Ruleset> cg = ParseRuleset(
      "table inet t {\n chain c {\n  type filter hook input priority 0;\n  socket cgroupv2 "
      "level 1 \"a\" accept\n }\n}\n", "c.nft");
  EXPECT_FALSE(cg.ok());
  absl::StatusOr<Ruleset> out = ParseRuleset(
      "table inet t {\n chain c {\n  type filter hook output priority 0;\n  socket "
      "transparent 1 accept\n }\n}\n", "o.nft");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("o.nft:4:"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace rulejit
