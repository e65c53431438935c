// Offline conntrack: NEW until a reply, ESTABLISHED after, confirmation only
// on accept, the TCP state machine and window checks, ICMP and ICMPv6 as
// nf_conntrack classifies them, checksums, timeouts in packet time, ct
// mark, one run through the interpreter with a stateful ruleset, and SCTP
// associations (chunk checks, states, verification tags, CRC32c). (The
// kernel itself judges these in tests/kernel/conntrack_kernel_test.)
#include "runtime/conntrack.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ir/interp.h"
#include "packet/parse.h"
#include "tests/support/frames.h"

namespace rulejit::runtime {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

struct Packet {
  std::vector<uint8_t> bytes;
  PacketView view() const {
    return packet::ParseEthernet(bytes.data(), static_cast<uint32_t>(bytes.size()));
  }
};

Packet Udp(const char* src, const char* dst, uint16_t sport, uint16_t dport) {
  return {BuildFrame(FrameSpec{.src = src, .dst = dst, .proto = 17,
                               .sport = sport, .dport = dport})};
}
Packet Tcp(const char* src, const char* dst, uint16_t sport, uint16_t dport,
           uint8_t flags, uint32_t seq = 1, uint32_t ack = 0, size_t payload = 0) {
  return {BuildFrame(FrameSpec{.src = src, .dst = dst, .proto = 6, .sport = sport,
                               .dport = dport, .tcp_flags = flags,
                               .payload = std::vector<uint8_t>(payload, 'x'), .tcp_seq = seq,
                               .tcp_ack = ack})};
}
Packet Icmp(const char* src, const char* dst, uint8_t type, uint16_t id,
            std::vector<uint8_t> quoted = {}, uint8_t code = 0) {
  bool v6 = std::strchr(src, ':') != nullptr;
  return {BuildFrame(FrameSpec{.src = src, .dst = dst, .proto = uint8_t(v6 ? 58 : 1),
                               .payload = std::move(quoted), .icmp_type = type,
                               .icmp_code = code, .icmp_id = id})};
}

// Tracks a packet at prerouting and confirms it with the given verdict.
PacketMeta Step(Conntrack& ct, const Packet& p, bool accepted = true, bool arriving = true) {
  PacketMeta meta;
  Conntrack::Entry e = ct.In(p.view(), meta, arriving);
  ct.Confirm(e, meta, accepted);
  return meta;
}

constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;
constexpr uint64_t kSecond = 1000000000ull;

TEST(ConntrackTest, NewUntilReplyThenEstablished) {
  Conntrack ct;
  Packet req = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  Packet rep = Udp("10.0.0.2", "10.0.0.1", 53, 5000);
  PacketMeta m = Step(ct, req);
  EXPECT_TRUE(m.ct_valid);
  EXPECT_EQ(m.ct_state, ir::kCtStateNew);
  EXPECT_EQ(m.ct_dir, 0);
  EXPECT_EQ(m.ct_status, 0u);  // not confirmed yet when the rules ran
  EXPECT_EQ(ct.flows(), 1u);

  m = Step(ct, req);  // confirmed, but no reply yet
  EXPECT_EQ(m.ct_state, ir::kCtStateNew);
  EXPECT_EQ(m.ct_status, kIpsConfirmed);

  m = Step(ct, rep);
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(m.ct_dir, 1);
  EXPECT_EQ(m.ct_status, kIpsConfirmed | kIpsSeenReply);

  m = Step(ct, req);
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(m.ct_dir, 0);
  EXPECT_EQ(ct.flows(), 1u);

  // Another source port is another flow.
  EXPECT_EQ(Step(ct, Udp("10.0.0.1", "10.0.0.2", 5001, 53)).ct_state, ir::kCtStateNew);
  EXPECT_EQ(ct.flows(), 2u);
}

TEST(ConntrackTest, DroppedFirstPacketCreatesNothing) {
  Conntrack ct;
  Packet req = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  EXPECT_EQ(Step(ct, req, /*accepted=*/false).ct_state, ir::kCtStateNew);
  EXPECT_EQ(ct.flows(), 0u);
  // The reply of a flow that was never confirmed is itself a new flow.
  PacketMeta m = Step(ct, Udp("10.0.0.2", "10.0.0.1", 53, 5000));
  EXPECT_EQ(m.ct_state, ir::kCtStateNew);
  EXPECT_EQ(m.ct_dir, 0);
}

TEST(ConntrackTest, DroppedReplyStillMarksSeenReply) {
  Conntrack ct;
  Step(ct, Udp("10.0.0.1", "10.0.0.2", 5000, 53));
  Step(ct, Udp("10.0.0.2", "10.0.0.1", 53, 5000), /*accepted=*/false);
  EXPECT_EQ(Step(ct, Udp("10.0.0.1", "10.0.0.2", 5000, 53)).ct_state,
            ir::kCtStateEstablished);
}

TEST(ConntrackTest, TcpLoosePickupAndImpossibleFirstSegments) {
  Conntrack ct;
  EXPECT_EQ(Step(ct, Tcp("10.0.0.1", "10.0.0.2", 1, 22, kAck)).ct_state, ir::kCtStateNew);
  EXPECT_EQ(Step(ct, Tcp("10.0.0.1", "10.0.0.2", 2, 22, kSyn)).ct_state, ir::kCtStateNew);
  // RST, SYN-ACK and FIN-ACK start nothing; no flags and SYN+FIN are errors.
  for (uint8_t flags : {kRst, uint8_t(kSyn | kAck), uint8_t(kFin | kAck), uint8_t(0),
                        uint8_t(kSyn | kFin)}) {
    PacketMeta m = Step(ct, Tcp("10.0.0.1", "10.0.0.2", 3, 22, flags));
    EXPECT_FALSE(m.ct_valid) << int(flags);
    EXPECT_EQ(m.ct_state, ir::kCtStateInvalid) << int(flags);
  }
  EXPECT_EQ(ct.flows(), 2u);
  // With nf_conntrack_tcp_loose off, only a SYN starts a flow.
  Conntrack strict(ConntrackOptions{.tcp_loose = false});
  EXPECT_FALSE(Step(strict, Tcp("10.0.0.1", "10.0.0.2", 1, 22, kAck)).ct_valid);
  EXPECT_TRUE(Step(strict, Tcp("10.0.0.1", "10.0.0.2", 1, 22, kSyn)).ct_valid);
}

// A handshake, data both ways and a close, with the states the chains see.
TEST(ConntrackTest, TcpHandshakeDataAndClose) {
  Conntrack ct;
  const char *c = "10.0.0.1", *s = "10.0.0.2";
  EXPECT_EQ(Step(ct, Tcp(c, s, 4000, 80, kSyn, 100)).ct_state, ir::kCtStateNew);
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpSynSent);
  // A SYN-ACK acknowledging something never sent is out of window.
  EXPECT_FALSE(Step(ct, Tcp(s, c, 80, 4000, kSyn | kAck, 500, 9999)).ct_valid);
  PacketMeta m = Step(ct, Tcp(s, c, 80, 4000, kSyn | kAck, 500, 101));
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(m.ct_dir, 1);
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpSynRecv);
  m = Step(ct, Tcp(c, s, 4000, 80, kAck, 101, 501, 10));
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpEstablished);
  EXPECT_TRUE(m.ct_status & kIpsAssured);
  EXPECT_EQ(Step(ct, Tcp(s, c, 80, 4000, kAck, 501, 111, 20)).ct_state,
            ir::kCtStateEstablished);
  // Data far beyond what the receiver's window allows: invalid.
  EXPECT_FALSE(Step(ct, Tcp(c, s, 4000, 80, kAck, 111 + 10000000, 521, 10)).ct_valid);
  // A SYN in an established flow is ignored: it keeps its flow.
  EXPECT_EQ(Step(ct, Tcp(c, s, 4000, 80, kSyn, 7000)).ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpEstablished);
  Step(ct, Tcp(c, s, 4000, 80, kFin | kAck, 111, 521));
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpFinWait);
  Step(ct, Tcp(s, c, 80, 4000, kFin | kAck, 521, 112));
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpLastAck);
  Step(ct, Tcp(c, s, 4000, 80, kAck, 112, 522));
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpTimeWait);
  // A new SYN on the same ports reopens: the old flow goes, a new one starts.
  m = Step(ct, Tcp(c, s, 4000, 80, kSyn, 90000));
  EXPECT_EQ(m.ct_state, ir::kCtStateNew);
  EXPECT_EQ(ct.live_flows(), 1u);
  EXPECT_EQ(ct.flows(), 1u);  // the old flow's slot holds the new one
  EXPECT_EQ(ct.flow(0).tcp.state, kTcpSynSent);
}

// Expired flows free their slots though no packet of theirs comes again.
TEST(ConntrackTest, ExpiredFlowsAreSweptAndTheirSlotsReused) {
  Conntrack ct;
  for (uint16_t port = 1; port <= 100; ++port) Step(ct, Udp("10.0.0.1", "10.0.0.2", port, 53));
  EXPECT_EQ(ct.live_flows(), 100u);
  ct.set_now_ns(31 * kSecond);  // past every unreplied UDP flow's 30 s
  for (uint16_t port = 1000; port < 1100; ++port) {
    Step(ct, Udp("10.0.0.1", "10.0.0.2", port, 53));
  }
  EXPECT_LE(ct.flows(), 110u);  // the new flows took the old slots
  EXPECT_LE(ct.live_flows(), 110u);
}

TEST(ConntrackTest, TcpRstBeforeAnyReplyEndsTheFlow) {
  Conntrack ct;
  Step(ct, Tcp("10.0.0.1", "10.0.0.2", 4000, 81, kSyn, 100));
  // The server refuses: an RST|ACK for the SYN. It passes with the flow,
  // which then dies; the client's retry starts afresh.
  PacketMeta m = Step(ct, Tcp("10.0.0.2", "10.0.0.1", 81, 4000, kRst | kAck, 0, 101));
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_FALSE(ct.Live(0));
  EXPECT_EQ(Step(ct, Tcp("10.0.0.1", "10.0.0.2", 4000, 81, kSyn, 100)).ct_state,
            ir::kCtStateNew);
}

TEST(ConntrackTest, IcmpEcho) {
  Conntrack ct;
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 0, 7)).ct_valid);  // lone reply
  EXPECT_EQ(Step(ct, Icmp("10.0.0.1", "10.0.0.2", 8, 7)).ct_state, ir::kCtStateNew);
  PacketMeta m = Step(ct, Icmp("10.0.0.2", "10.0.0.1", 0, 7));
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(m.ct_dir, 1);
  // A different identifier is another flow, and so is another code: the
  // tuple holds type and code.
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 0, 8)).ct_valid);
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 0, 7, {}, 1)).ct_valid);
  // Router advertisements and the like are not tracked; unknown types are errors.
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 9, 0)).ct_valid);
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 40, 0)).ct_valid);
}

TEST(ConntrackTest, IcmpTimestampInformationAndMaskRequestsStartFlows) {
  Conntrack ct;
  for (uint8_t type : {13, 15, 17}) {
    EXPECT_EQ(Step(ct, Icmp("10.0.0.1", "10.0.0.2", type, 3)).ct_state, ir::kCtStateNew) << +type;
    EXPECT_EQ(Step(ct, Icmp("10.0.0.2", "10.0.0.1", type + 1, 3)).ct_state,
              ir::kCtStateEstablished)
        << +type;
  }
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 14, 4)).ct_valid);  // a lone reply
}

TEST(ConntrackTest, Icmpv6DiscoveryIsUntrackedAndNodeInformationTracked) {
  Conntrack ct;
  for (uint8_t type : {130, 131, 132, 133, 134, 135, 136, 143, 151, 152}) {
    PacketMeta m = Step(ct, Icmp("2001:db8::1", "2001:db8::2", type, 0));
    EXPECT_FALSE(m.ct_valid) << +type;
    EXPECT_EQ(m.ct_state, ir::kCtStateUntracked) << +type;
  }
  EXPECT_EQ(Step(ct, Icmp("2001:db8::1", "2001:db8::2", 139, 5)).ct_state, ir::kCtStateNew);
  EXPECT_EQ(Step(ct, Icmp("2001:db8::2", "2001:db8::1", 140, 5)).ct_state,
            ir::kCtStateEstablished);
  EXPECT_EQ(Step(ct, Icmp("2001:db8::1", "2001:db8::2", 144, 0)).ct_state, ir::kCtStateInvalid);
}

TEST(ConntrackTest, BadChecksumsAreInvalidWhereTheKernelVerifies) {
  Conntrack ct;
  Packet p = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  PacketView v = p.view();
  p.bytes[v.transport_off + 6] ^= 0x55;  // break the UDP checksum
  EXPECT_FALSE(Step(ct, p).ct_valid);
  // At output nothing is verified; nor is a partial checksum at prerouting.
  EXPECT_TRUE(Step(ct, p, true, /*arriving=*/false).ct_valid);
  PacketMeta partial;
  partial.csum_partial = true;
  EXPECT_TRUE(ct.In(p.view(), partial, true).kind != Conntrack::Entry::kInvalid);
  Conntrack unchecked(ConntrackOptions{.checksum = false});
  EXPECT_TRUE(Step(unchecked, p).ct_valid);
}

TEST(ConntrackTest, FlowsTimeOutInPacketTime) {
  Conntrack ct;
  Packet query = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  Packet answer = Udp("10.0.0.2", "10.0.0.1", 53, 5000);
  ct.set_now_ns(100 * kSecond);
  Step(ct, query);
  ct.set_now_ns(129 * kSecond);  // within the 30 s of an unreplied flow
  EXPECT_EQ(Step(ct, answer).ct_state, ir::kCtStateEstablished);
  ct.set_now_ns(158 * kSecond);
  EXPECT_EQ(Step(ct, query).ct_state, ir::kCtStateEstablished);
  EXPECT_TRUE(ct.flow(0).assured);  // traffic both ways after 2 s: a stream
  ct.set_now_ns((158 + 119) * kSecond);
  EXPECT_EQ(Step(ct, answer).ct_state, ir::kCtStateEstablished);
  ct.set_now_ns((158 + 119 + 121) * kSecond);  // 120 s of silence: gone
  PacketMeta m = Step(ct, answer);
  EXPECT_EQ(m.ct_state, ir::kCtStateNew);
  EXPECT_EQ(m.ct_dir, 0);
}

TEST(ConntrackTest, IcmpErrorsQuotingAFlowAreRelated) {
  Conntrack ct;
  FrameSpec req{.src = "10.0.0.1", .dst = "10.0.0.2", .proto = 17, .sport = 5000,
                .dport = 53, .ethernet = false};
  Step(ct, {BuildFrame(FrameSpec{req.src, req.dst, 17, 5000, 53})});
  // Port unreachable from 10.0.0.2 quoting the request.
  PacketMeta m = Step(ct, Icmp("10.0.0.2", "10.0.0.1", 3, 0, BuildFrame(req)));
  EXPECT_TRUE(m.ct_valid);
  EXPECT_EQ(m.ct_state, ir::kCtStateRelated);
  EXPECT_EQ(m.ct_dir, 1);
  EXPECT_EQ(ct.flows(), 1u);
  // Quoting an unknown flow: invalid.
  FrameSpec other = req;
  other.dport = 54;
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 3, 0, BuildFrame(other))).ct_valid);
  // Sent to another host than the flow's endpoint: invalid.
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.9", 3, 0, BuildFrame(req))).ct_valid);
  // A truncated quote: invalid, no crash.
  auto cut = BuildFrame(req);
  cut.resize(22);
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 3, 0, cut)).ct_valid);
}

TEST(ConntrackTest, Icmpv6ErrorsAreRelated) {
  Conntrack ct;
  FrameSpec req{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 6,
                .sport = 4000, .dport = 443, .ethernet = false};
  Step(ct, {BuildFrame(FrameSpec{req.src, req.dst, 6, 4000, 443, 0x02})});
  PacketMeta m = Step(ct, Icmp("2001:db8::ff", "2001:db8::1", 1, 0, BuildFrame(req)));
  EXPECT_EQ(m.ct_state, ir::kCtStateRelated);
  EXPECT_EQ(Step(ct, Icmp("2001:db8::1", "2001:db8::2", 128, 9)).ct_state, ir::kCtStateNew);
  EXPECT_EQ(Step(ct, Icmp("2001:db8::2", "2001:db8::1", 129, 9)).ct_state,
            ir::kCtStateEstablished);
}

TEST(ConntrackTest, CtMarkSticksToTheFlow) {
  Conntrack ct;
  Packet req = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  PacketMeta m;
  Conntrack::Entry e = ct.In(req.view(), m, true);
  m.ct_mark = 42;  // as `ct mark set 42` would report
  ct.Confirm(e, m, true);
  PacketMeta reply = Step(ct, Udp("10.0.0.2", "10.0.0.1", 53, 5000));
  EXPECT_EQ(reply.ct_mark, 42u);
}

TEST(ConntrackTest, UntrackablePacketsAreInvalid) {
  Conntrack ct;
  Packet arp{std::vector<uint8_t>(42, 0)};
  arp.bytes[12] = 0x08;
  arp.bytes[13] = 0x06;
  EXPECT_FALSE(Step(ct, arp).ct_valid);
  // A later fragment has no ports.
  Packet frag{BuildFrame(FrameSpec{.proto = 17, .payload = {1, 2, 3, 4, 5, 6, 7, 8},
                                   .frag_offset = 4})};
  EXPECT_EQ(Step(ct, frag).ct_state, ir::kCtStateInvalid);
  EXPECT_EQ(ct.flows(), 0u);
}

// Tracks a packet whose template put it in `zone` (`ct zone set`, CT --zone).
PacketMeta StepInZone(Conntrack& ct, const Packet& p, CtZone zone) {
  PacketMeta meta;
  meta.ct_zone = zone;
  Conntrack::Entry e = ct.In(p.view(), meta, true);
  ct.Confirm(e, meta, true);
  return meta;
}

TEST(ConntrackTest, ZonesKeepEqualTuplesApart) {
  Conntrack ct;
  Packet req = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  Packet rep = Udp("10.0.0.2", "10.0.0.1", 53, 5000);
  EXPECT_EQ(StepInZone(ct, req, CtZone{.id = 1}).ct_state, ir::kCtStateNew);
  // The same tuple in the default zone is another flow.
  EXPECT_EQ(Step(ct, req).ct_state, ir::kCtStateNew);
  EXPECT_EQ(ct.live_flows(), 2u);
  // A reply in zone 0 finds zone 0's flow only; zone 1's stays unreplied.
  EXPECT_EQ(Step(ct, rep).ct_state, ir::kCtStateEstablished);
  PacketMeta again = StepInZone(ct, req, CtZone{.id = 1});
  EXPECT_EQ(again.ct_state, ir::kCtStateNew);
  EXPECT_EQ(again.ct_zone.id, 1);
  EXPECT_EQ(StepInZone(ct, rep, CtZone{.id = 1}).ct_state, ir::kCtStateEstablished);
}

// `ct original zone set 1`: the original tuple is in zone 1, the reply
// tuple in zone 0, so a reply without any template finds the flow.
TEST(ConntrackTest, DirectionalZones) {
  Conntrack ct;
  Packet req = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  Packet rep = Udp("10.0.0.2", "10.0.0.1", 53, 5000);
  const CtZone orig_only{.id = 1, .dirs = kCtZoneOriginal};
  StepInZone(ct, req, orig_only);
  PacketMeta r = Step(ct, rep);
  EXPECT_EQ(r.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(r.ct_dir, 1);
  EXPECT_EQ(r.ct_zone, orig_only);
  // Original-direction packets must come with the zone-1 template.
  EXPECT_EQ(Step(ct, req).ct_state, ir::kCtStateNew);
}

TEST(ConntrackTest, ExpirationIsWhatTheTrackerLeft) {
  Conntrack ct;
  Packet req = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  ct.set_now_ns(100 * kSecond);
  EXPECT_EQ(Step(ct, req).ct_expiration_ms, 0u);  // unconfirmed: relative timeout
  ct.set_now_ns(110 * kSecond);
  EXPECT_EQ(Step(ct, req).ct_expiration_ms, 30000u);  // refreshed by this packet
  // An ICMP error does not refresh the flow it relates to.
  ct.set_now_ns(112 * kSecond + 500000);
  std::vector<uint8_t> quoted = req.bytes;
  quoted.erase(quoted.begin(), quoted.begin() + 14);
  PacketMeta err = Step(ct, Icmp("10.0.0.2", "10.0.0.1", 3, 0, quoted, 3));
  EXPECT_EQ(err.ct_state, ir::kCtStateRelated);
  EXPECT_EQ(err.ct_expiration_ms, 27999u);
}

TEST(ConntrackTest, FullTableEvictsUnassuredFlowsOrDrops) {
  Conntrack ct(ConntrackOptions{.max = 2});
  Step(ct, Udp("10.0.0.1", "10.0.0.2", 1, 53));
  Step(ct, Udp("10.0.0.1", "10.0.0.2", 2, 53));
  // Full: a third flow evicts an unreplied (not assured) one.
  PacketMeta third = Step(ct, Udp("10.0.0.1", "10.0.0.2", 3, 53));
  EXPECT_EQ(third.ct_state, ir::kCtStateNew);
  EXPECT_EQ(ct.live_flows(), 2u);

  // Two assured TCP connections fill it: nothing may go, the packet is
  // dropped (Entry::kDropped) and no flow is made.
  Conntrack full(ConntrackOptions{.max = 2});
  for (uint16_t port : {1000, 1001}) {
    Step(full, Tcp("10.0.0.1", "10.0.0.2", port, 80, kSyn, 100));
    Step(full, Tcp("10.0.0.2", "10.0.0.1", 80, port, kSyn | kAck, 500, 101));
    Step(full, Tcp("10.0.0.1", "10.0.0.2", port, 80, kAck, 101, 501));
  }
  ASSERT_EQ(full.live_flows(), 2u);
  for (size_t i = 0; i < full.flows(); ++i) EXPECT_TRUE(full.flow(i).assured);
  PacketMeta meta;
  Conntrack::Entry e = full.In(Tcp("10.0.0.1", "10.0.0.2", 1002, 80, kSyn, 100).view(), meta, true);
  EXPECT_EQ(e.kind, Conntrack::Entry::kDropped);
  EXPECT_FALSE(meta.ct_valid);
  full.Confirm(e, meta, true);
  EXPECT_EQ(full.live_flows(), 2u);
  // Known flows still pass.
  EXPECT_EQ(Step(full, Tcp("10.0.0.2", "10.0.0.1", 80, 1000, kAck, 501, 101)).ct_state,
            ir::kCtStateEstablished);
}

// ct state established,related accept; udp dport 53 accept; policy drop.
TEST(ConntrackTest, StatefulRulesetThroughTheInterpreter) {
  using namespace ir;
  auto node = [](Expr e) { return Node{std::move(e), {}}; };
  Bitwise mask;
  mask.len = 4;
  mask.mask = {uint8_t(kCtStateEstablished | kCtStateRelated), 0, 0, 0};
  mask.xor_ = {0, 0, 0, 0};
  Rule est;
  est.exprs = {node(CtLoad{CtKey::kState, 1}), node(mask),
               node(Cmp{CmpOp::kNeq, 1, {0, 0, 0, 0}}),
               node(Immediate{kVerdictReg, {}, ir::Verdict{VerdictCode::kAccept, ""}})};
  Rule dns;
  dns.exprs = {node(MetaLoad{MetaKey::kL4Proto, 1}), node(Cmp{CmpOp::kEq, 1, {17}}),
               node(PayloadLoad{PayloadBase::kTransport, 2, 2, 1}),
               node(Cmp{CmpOp::kEq, 1, {0, 53}}),
               node(Immediate{kVerdictReg, {}, ir::Verdict{VerdictCode::kAccept, ""}})};
  Chain in;
  in.name = "in";
  in.base = BaseChain{"filter", Hook::kInput, 0, {}, VerdictCode::kDrop};
  in.rules = {est, dns};
  Ruleset rs;
  rs.tables.push_back(Table{Family::kIp, "f", {in}, {}, {}});
  Interpreter interp(rs);

  Conntrack ct;
  auto run = [&](const Packet& p) {
    PacketMeta meta;
    Conntrack::Entry e = ct.In(p.view(), meta, true);
    EvalResult r = interp.Run(Hook::kInput, p.view(), meta);
    meta.ct_mark = r.ct_mark;
    ct.Confirm(e, meta, r.verdict == VerdictCode::kAccept);
    return r.verdict;
  };
  Packet query = Udp("10.0.0.1", "10.0.0.2", 5000, 53);
  Packet answer = Udp("10.0.0.2", "10.0.0.1", 53, 5000);
  Packet stray = Udp("10.0.0.2", "10.0.0.1", 53, 6000);
  EXPECT_EQ(run(stray), VerdictCode::kDrop);
  EXPECT_EQ(run(query), VerdictCode::kAccept);
  EXPECT_EQ(run(answer), VerdictCode::kAccept);  // established
  EXPECT_EQ(run(stray), VerdictCode::kDrop);     // still nothing known
}

// ---------------------------------------------------------------- SCTP

using testing::SctpChunk;
using testing::SctpInitBody;

// SCTP chunk types.
constexpr uint8_t kData = 0, kInit = 1, kInitAck = 2, kHeartbeat = 4, kHeartbeatAck = 5,
                  kAbort = 6, kShutdown = 7, kShutdownAck = 8, kCookieEcho = 10,
                  kCookieAck = 11, kShutdownComplete = 14;
constexpr uint8_t kTBit = 0x01;
// The tags each side chose: the client's (which the server's packets
// carry) and the server's (which the client's carry).
constexpr uint32_t kClientTag = 0x11111111, kServerTag = 0x22222222;

using Chunks = std::vector<std::vector<uint8_t>>;

// An SCTP packet between 10.0.0.1:5000 (the client) and 10.0.0.2:80.
Packet Sctp(bool from_server, uint32_t vtag, const Chunks& chunks, bool bad_crc = false) {
  std::vector<uint8_t> payload;
  for (const std::vector<uint8_t>& c : chunks) payload.insert(payload.end(), c.begin(), c.end());
  return {BuildFrame(FrameSpec{.src = from_server ? "10.0.0.2" : "10.0.0.1",
                               .dst = from_server ? "10.0.0.1" : "10.0.0.2", .proto = 132,
                               .sport = uint16_t(from_server ? 80 : 5000),
                               .dport = uint16_t(from_server ? 5000 : 80), .payload = payload,
                               .bad_l4_checksum = bad_crc, .sctp_vtag = vtag})};
}
// A chunk with 4 bytes of value (DATA: TSN, stream, sequence, PPID, data).
std::vector<uint8_t> Chunk(uint8_t type, uint8_t flags = 0) {
  return SctpChunk(type, flags, std::vector<uint8_t>(type == kData ? 16 : 4, 0));
}
Packet ClientInit() { return Sctp(false, 0, {SctpChunk(kInit, 0, SctpInitBody(kClientTag))}); }
Packet ServerInitAck() {
  return Sctp(true, kClientTag, {SctpChunk(kInitAck, 0, SctpInitBody(kServerTag))});
}
Packet ClientSends(uint8_t type, uint8_t flags = 0) {
  return Sctp(false, kServerTag, {Chunk(type, flags)});
}
Packet ServerSends(uint8_t type, uint8_t flags = 0) {
  return Sctp(true, kClientTag, {Chunk(type, flags)});
}

// INIT, INIT-ACK, COOKIE-ECHO, COOKIE-ACK: the four-way handshake.
void SctpHandshake(Conntrack& ct) {
  Step(ct, ClientInit());
  Step(ct, ServerInitAck());
  Step(ct, ClientSends(kCookieEcho));
  Step(ct, ServerSends(kCookieAck));
}

TEST(ConntrackTest, SctpAssociationSetupDataAndShutdown) {
  Conntrack ct;
  ct.set_now_ns(100 * kSecond);
  PacketMeta m = Step(ct, ClientInit());
  EXPECT_EQ(m.ct_state, ir::kCtStateNew);
  ASSERT_EQ(ct.flows(), 1u);
  const Conntrack::Flow& flow = ct.flow(0);
  EXPECT_EQ(flow.sctp.state, kSctpClosed);  // an INIT alone: CLOSED (10 s)
  EXPECT_EQ(flow.expires_ns, 110 * kSecond);

  m = Step(ct, ServerInitAck());
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(m.ct_dir, 1);
  EXPECT_EQ(flow.sctp.state, kSctpCookieWait);
  EXPECT_EQ(Step(ct, ClientSends(kCookieEcho)).ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(flow.sctp.state, kSctpCookieEchoed);
  EXPECT_FALSE(flow.assured);
  m = Step(ct, ServerSends(kCookieAck));
  EXPECT_EQ(flow.sctp.state, kSctpEstablished);
  EXPECT_TRUE(m.ct_status & kIpsAssured);  // set before the rules run
  EXPECT_EQ(flow.expires_ns, 100 * kSecond + 210 * kSecond);

  EXPECT_EQ(Step(ct, ClientSends(kData)).ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(Step(ct, ServerSends(kData)).ct_dir, 1);
  EXPECT_EQ(Step(ct, ClientSends(kShutdown)).ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(flow.sctp.state, kSctpShutdownSent);
  EXPECT_EQ(flow.expires_ns, 103 * kSecond);
  Step(ct, ServerSends(kShutdownAck));
  EXPECT_EQ(flow.sctp.state, kSctpShutdownAckSent);
  EXPECT_TRUE(Step(ct, ClientSends(kShutdownComplete)).ct_valid);
  EXPECT_EQ(flow.sctp.state, kSctpClosed);

  // CLOSED lasts 10 s; then the flow is gone and DATA starts nothing.
  ct.set_now_ns(111 * kSecond);
  EXPECT_FALSE(Step(ct, ClientSends(kData)).ct_valid);
  EXPECT_EQ(ct.flows(), 1u);
}

TEST(ConntrackTest, SctpWrongVerificationTagIsInvalid) {
  Conntrack ct;
  SctpHandshake(ct);
  const Conntrack::Flow& flow = ct.flow(0);
  ASSERT_EQ(flow.sctp.state, kSctpEstablished);
  EXPECT_FALSE(Step(ct, Sctp(false, kClientTag, {Chunk(kData)})).ct_valid);  // the other's tag
  EXPECT_FALSE(Step(ct, Sctp(true, 0x12345678, {Chunk(kShutdown)})).ct_valid);
  EXPECT_EQ(flow.sctp.state, kSctpEstablished);  // unchanged
  // An INIT in an association must carry tag 0; COOKIE-ECHO its own.
  EXPECT_FALSE(Step(ct, Sctp(false, kServerTag, {SctpChunk(kInit, 0, SctpInitBody(5))})).ct_valid);
  EXPECT_FALSE(Step(ct, Sctp(false, 0x12345678, {Chunk(kCookieEcho)})).ct_valid);
  // ABORT: the sender's tag, or with the T bit the receiver's.
  EXPECT_FALSE(Step(ct, ClientSends(kAbort, kTBit)).ct_valid);
  EXPECT_EQ(flow.sctp.state, kSctpEstablished);
  EXPECT_TRUE(Step(ct, Sctp(false, kClientTag, {Chunk(kAbort, kTBit)})).ct_valid);
  EXPECT_EQ(flow.sctp.state, kSctpClosed);
}

TEST(ConntrackTest, SctpAbortClosesTheAssociation) {
  Conntrack ct;
  ct.set_now_ns(50 * kSecond);
  SctpHandshake(ct);
  EXPECT_TRUE(Step(ct, ServerSends(kAbort)).ct_valid);
  EXPECT_EQ(ct.flow(0).sctp.state, kSctpClosed);
  EXPECT_EQ(ct.flow(0).expires_ns, 60 * kSecond);
  EXPECT_TRUE(ct.flow(0).assured);  // once assured, always
}

TEST(ConntrackTest, SctpOnlySomeChunksStartAFlow) {
  Conntrack ct;
  // DATA without an association, and the chunks that never start one.
  for (uint8_t type : {kData, kAbort, kCookieAck, kShutdownComplete}) {
    EXPECT_FALSE(Step(ct, ClientSends(type)).ct_valid) << int(type);
  }
  // An INIT with a non-zero tag, or cut short before its initiate tag's end.
  EXPECT_FALSE(Step(ct, Sctp(false, 7, {SctpChunk(kInit, 0, SctpInitBody(kClientTag))})).ct_valid);
  EXPECT_FALSE(Step(ct, Sctp(false, 0, {SctpChunk(kInit, 0, {0, 0, 0, 1})})).ct_valid);
  // A packet starting a flow may hold no chunk type without a row in the
  // state table (SACK = 3).
  EXPECT_FALSE(Step(ct, Sctp(false, 0, {Chunk(kHeartbeat), Chunk(3)})).ct_valid);
  EXPECT_EQ(ct.flows(), 0u);
  // A HEARTBEAT does (a secondary path), with its own tag.
  PacketMeta m = Step(ct, Sctp(false, 0x4444, {Chunk(kHeartbeat)}));
  EXPECT_EQ(m.ct_state, ir::kCtStateNew);
  ASSERT_EQ(ct.flows(), 1u);
  EXPECT_EQ(ct.flow(0).sctp.state, kSctpHeartbeatSent);
  EXPECT_EQ(ct.flow(0).sctp.vtag[0], 0x4444u);
  // Its HEARTBEAT-ACK makes it ESTABLISHED (and assured).
  EXPECT_TRUE(Step(ct, Sctp(true, 0x5555, {Chunk(kHeartbeatAck)})).ct_valid);
  EXPECT_EQ(ct.flow(0).sctp.state, kSctpEstablished);
  EXPECT_TRUE(ct.flow(0).assured);
}

TEST(ConntrackTest, SctpChunkChecks) {
  Conntrack ct;
  SctpHandshake(ct);
  // do_basic_checks: a zero chunk length, COOKIE-ECHO / COOKIE-ACK not
  // first, anything with an INIT, INIT-ACK or SHUTDOWN-COMPLETE, no chunk.
  std::vector<uint8_t> zero_length = Chunk(kData);
  zero_length[2] = zero_length[3] = 0;
  EXPECT_FALSE(Step(ct, Sctp(false, kServerTag, {zero_length})).ct_valid);
  EXPECT_FALSE(Step(ct, Sctp(false, kServerTag, {Chunk(kData), Chunk(kCookieEcho)})).ct_valid);
  EXPECT_FALSE(Step(ct, Sctp(false, kServerTag, {Chunk(kData), Chunk(kShutdownComplete)})).ct_valid);
  EXPECT_FALSE(Step(ct, Sctp(false, kServerTag, {Chunk(kShutdownComplete), Chunk(kData)})).ct_valid);
  EXPECT_FALSE(Step(ct, Sctp(false, kServerTag, {})).ct_valid);
  // A chunk may follow COOKIE-ACK; DATA and SACK bundle freely.
  EXPECT_TRUE(Step(ct, Sctp(true, kClientTag, {Chunk(kCookieAck), Chunk(kData)})).ct_valid);
  EXPECT_TRUE(Step(ct, Sctp(false, kServerTag, {Chunk(3), Chunk(kData), Chunk(kData)})).ct_valid);
  // A packet shorter than the 12-byte common header.
  Packet short_packet = ClientSends(kData);
  const PacketView v = short_packet.view();
  short_packet.bytes.resize(v.transport_off + 8);
  short_packet.bytes[v.network_off + 3] = static_cast<uint8_t>(v.transport_off - v.network_off + 8);
  EXPECT_FALSE(Step(ct, short_packet, true, /*arriving=*/false).ct_valid);
  EXPECT_EQ(ct.flow(0).sctp.state, kSctpEstablished);
}

TEST(ConntrackTest, SctpBadCrcIsInvalidWhereTheKernelVerifies) {
  Conntrack ct;
  Packet bad_init = Sctp(false, 0, {SctpChunk(kInit, 0, SctpInitBody(kClientTag))}, true);
  EXPECT_TRUE(TransportChecksumValid(ClientInit().view()));
  EXPECT_FALSE(TransportChecksumValid(bad_init.view()));
  EXPECT_FALSE(Step(ct, bad_init).ct_valid);
  EXPECT_EQ(ct.flows(), 0u);
  // At output nothing is verified; nor is a partial checksum at prerouting.
  EXPECT_TRUE(Step(ct, bad_init, /*accepted=*/false, /*arriving=*/false).ct_valid);
  PacketMeta partial;
  partial.csum_partial = true;
  EXPECT_NE(ct.In(bad_init.view(), partial, true).kind, Conntrack::Entry::kInvalid);
  Conntrack unchecked(ConntrackOptions{.checksum = false});
  EXPECT_TRUE(Step(unchecked, bad_init).ct_valid);
  // Within an association too.
  SctpHandshake(ct);
  EXPECT_FALSE(Step(ct, Sctp(false, kServerTag, {Chunk(kData)}, true)).ct_valid);
}

TEST(ConntrackTest, SctpChecksumIsCrc32c) {
  // RFC 3720 B.4: 32 zero bytes have CRC32c 0x8a9136aa.
  const std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(SctpChecksum(zeros.data(), 32), 0x8a9136aau);
  EXPECT_EQ(SctpChecksum(zeros.data(), 11), 0u);
}

TEST(ConntrackTest, SctpTimeoutsAreSysctls) {
  ConntrackOptions options;
  options.sctp_timeouts[kSctpEstablished] = 5;
  Conntrack ct(options);
  ct.set_now_ns(10 * kSecond);
  SctpHandshake(ct);
  EXPECT_EQ(ct.flow(0).expires_ns, 15 * kSecond);
  ct.set_now_ns(16 * kSecond);
  EXPECT_FALSE(Step(ct, ClientSends(kData)).ct_valid);  // gone; DATA starts nothing
}

}  // namespace
}  // namespace rulejit::runtime
