// `ctl conntrack list`'s lines (runtime/conntrack_list.h) against what
// `conntrack -L` (conntrack-tools 1.4.7) printed for the same flows in the
// kernel (lines copied from a run in a namespace, ports and all).
#include "runtime/conntrack_list.h"

#include <arpa/inet.h>

#include "gtest/gtest.h"
#include "rulejit/types.h"
#include "tests/support/frames.h"

namespace rulejit::runtime {
namespace {

constexpr uint64_t kSecond = 1000000000ull;

Conntrack::Key Tuple(uint8_t proto, const char* src, const char* dst, uint16_t sport,
                     uint16_t dport) {
  Conntrack::Key k;
  const bool v6 = std::string(src).find(':') != std::string::npos;
  k.family = v6 ? kNfProtoIpv6 : kNfProtoIpv4;
  k.proto = proto;
  k.sport = sport;
  k.dport = dport;
  inet_pton(v6 ? AF_INET6 : AF_INET, src, k.src.data());
  inet_pton(v6 ? AF_INET6 : AF_INET, dst, k.dst.data());
  return k;
}

// A flow whose reply tuple is its original one inverted, expiring
// `seconds` (and a half) after `now`.
Conntrack::Flow FlowOf(const Conntrack::Key& orig, uint64_t now, uint64_t seconds) {
  Conntrack::Flow f;
  f.tuple[0] = orig;
  f.tuple[1] = orig.Reversed();
  f.expires_ns = now + seconds * kSecond + kSecond / 2;
  return f;
}

TEST(ConntrackList, LinesAreConntrackToolsDefaultFormat) {
  const uint64_t now = 1000 * kSecond;
  Conntrack::Flow tcp = FlowOf(Tuple(6, "10.99.0.1", "10.99.0.2", 49564, 8080), now, 59);
  tcp.tcp.state = kTcpCloseWait;
  tcp.seen_reply = tcp.assured = true;
  EXPECT_EQ(ConntrackLine(tcp, now),
            "tcp      6 59 CLOSE_WAIT src=10.99.0.1 dst=10.99.0.2 sport=49564 dport=8080 "
            "src=10.99.0.2 dst=10.99.0.1 sport=8080 dport=49564 [ASSURED] mark=0 use=1");

  Conntrack::Flow udp = FlowOf(Tuple(17, "10.99.0.1", "10.99.0.2", 5555, 7000), now, 29);
  EXPECT_EQ(ConntrackLine(udp, now),
            "udp      17 29 src=10.99.0.1 dst=10.99.0.2 sport=5555 dport=7000 [UNREPLIED] "
            "src=10.99.0.2 dst=10.99.0.1 sport=7000 dport=5555 mark=0 use=1");

  Conntrack::Key echo = Tuple(1, "10.99.0.1", "10.99.0.2", 1, 1);
  echo.icmp_type = 8;
  Conntrack::Flow icmp = FlowOf(echo, now, 29);
  icmp.seen_reply = true;
  EXPECT_EQ(ConntrackLine(icmp, now),
            "icmp     1 29 src=10.99.0.1 dst=10.99.0.2 type=8 code=0 id=1 "
            "src=10.99.0.2 dst=10.99.0.1 type=0 code=0 id=1 mark=0 use=1");
}

TEST(ConntrackList, NatMarksIpv6AndExpiry) {
  const uint64_t now = 5 * kSecond;
  // SNAT: the reply goes to the translated address and port.
  Conntrack::Flow snat = FlowOf(Tuple(17, "10.0.0.1", "10.0.0.2", 4000, 53), now, 119);
  snat.tuple[1] = Tuple(17, "10.0.0.2", "10.0.0.100", 53, 61000);
  snat.seen_reply = snat.assured = true;
  snat.mark = 7;
  EXPECT_EQ(ConntrackLine(snat, now),
            "udp      17 119 src=10.0.0.1 dst=10.0.0.2 sport=4000 dport=53 "
            "src=10.0.0.2 dst=10.0.0.100 sport=53 dport=61000 [ASSURED] mark=7 use=1");
  Conntrack::Flow v6 = FlowOf(Tuple(6, "2001:db8::1", "2001:db8::2", 1000, 22), now, 119);
  v6.tcp.state = kTcpSynSent;
  EXPECT_EQ(ConntrackLine(v6, now),
            "tcp      6 119 SYN_SENT src=2001:db8::1 dst=2001:db8::2 sport=1000 dport=22 "
            "[UNREPLIED] src=2001:db8::2 dst=2001:db8::1 sport=22 dport=1000 mark=0 use=1");
  // Due (or overdue) flows show 0 seconds left, as ctnetlink does.
  EXPECT_EQ(ConntrackLine(v6, v6.expires_ns + kSecond).substr(0, 13), "tcp      6 0 ");
}

TEST(ConntrackList, JsonHasTheSameFields) {
  const uint64_t now = 0;
  Conntrack::Flow tcp = FlowOf(Tuple(6, "10.0.0.1", "10.0.0.2", 40000, 8080), now, 431999);
  tcp.tcp.state = kTcpEstablished;
  tcp.seen_reply = tcp.assured = true;
  EXPECT_EQ(ConntrackJson(tcp, now),
            R"({"family":"ipv4","proto":"tcp","protonum":6,"timeout":431999,)"
            R"("state":"ESTABLISHED","orig":{"src":"10.0.0.1","dst":"10.0.0.2","sport":40000,)"
            R"("dport":8080},"reply":{"src":"10.0.0.2","dst":"10.0.0.1","sport":8080,)"
            R"("dport":40000},"unreplied":false,"assured":true,"mark":0})");
}

// `conntrack -F`: every flow goes, and a packet of a flushed flow starts
// a new one.
TEST(ConntrackList, FlushEmptiesTheTable) {
  Conntrack ct;
  auto step = [&](const char* src, const char* dst, uint16_t sport, uint16_t dport) {
    std::vector<uint8_t> frame = testing::BuildFrame(
        {.src = src, .dst = dst, .proto = 17, .sport = sport, .dport = dport});
    PacketMeta meta;
    Conntrack::Entry e =
        ct.In(ParseFrame(frame.data(), static_cast<uint32_t>(frame.size())), meta, true);
    ct.Confirm(e, meta, true);
    return meta.ct_state;
  };
  step("10.0.0.1", "10.0.0.2", 1000, 53);
  EXPECT_EQ(step("10.0.0.2", "10.0.0.1", 53, 1000), kCtStateEstablished);
  step("10.0.0.1", "10.0.0.3", 1001, 53);
  EXPECT_EQ(ct.live_flows(), 2u);
  ct.Flush();
  EXPECT_EQ(ct.live_flows(), 0u);
  EXPECT_EQ(ct.flows(), 0u);
  EXPECT_EQ(step("10.0.0.2", "10.0.0.1", 53, 1000), kCtStateNew);
  EXPECT_EQ(ct.live_flows(), 1u);
}

}  // namespace
}  // namespace rulejit::runtime
