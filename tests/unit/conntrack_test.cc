// Offline conntrack: NEW until a reply, ESTABLISHED after, confirmation only
// on accept, TCP loose pickup, ICMP echo and RELATED errors, ct mark, and
// one run through the interpreter with a stateful ruleset.
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
           uint8_t flags) {
  return {BuildFrame(FrameSpec{.src = src, .dst = dst, .proto = 6, .sport = sport,
                               .dport = dport, .tcp_flags = flags})};
}
Packet Icmp(const char* src, const char* dst, uint8_t type, uint16_t id,
            std::vector<uint8_t> quoted = {}) {
  bool v6 = std::strchr(src, ':') != nullptr;
  return {BuildFrame(FrameSpec{.src = src, .dst = dst, .proto = uint8_t(v6 ? 58 : 1),
                               .payload = std::move(quoted), .icmp_type = type,
                               .icmp_id = id})};
}

// Looks a packet up and commits it with the given verdict.
PacketMeta Step(Conntrack& ct, const Packet& p, bool accepted = true) {
  PacketMeta meta;
  ct.Lookup(p.view(), meta);
  ct.Commit(p.view(), meta, accepted);
  return meta;
}

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

TEST(ConntrackTest, TcpLoosePickup) {
  Conntrack ct;
  constexpr uint8_t kSyn = 0x02, kAck = 0x10, kRst = 0x04, kFin = 0x01;
  EXPECT_EQ(Step(ct, Tcp("10.0.0.1", "10.0.0.2", 1, 22, kAck)).ct_state, ir::kCtStateNew);
  EXPECT_EQ(Step(ct, Tcp("10.0.0.1", "10.0.0.2", 2, 22, kSyn)).ct_state, ir::kCtStateNew);
  for (uint8_t flags : {kRst, uint8_t(kSyn | kAck), uint8_t(kFin | kAck), uint8_t(0)}) {
    PacketMeta m = Step(ct, Tcp("10.0.0.1", "10.0.0.2", 3, 22, flags));
    EXPECT_FALSE(m.ct_valid) << int(flags);
    EXPECT_EQ(m.ct_state, ir::kCtStateInvalid) << int(flags);
  }
  EXPECT_EQ(ct.flows(), 2u);
  // Within a known flow any flags are fine (no TCP state machine).
  PacketMeta m = Step(ct, Tcp("10.0.0.2", "10.0.0.1", 22, 2, kSyn | kAck));
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(Step(ct, Tcp("10.0.0.1", "10.0.0.2", 2, 22, kRst)).ct_state,
            ir::kCtStateEstablished);
}

TEST(ConntrackTest, IcmpEcho) {
  Conntrack ct;
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 0, 7)).ct_valid);  // lone reply
  EXPECT_EQ(Step(ct, Icmp("10.0.0.1", "10.0.0.2", 8, 7)).ct_state, ir::kCtStateNew);
  PacketMeta m = Step(ct, Icmp("10.0.0.2", "10.0.0.1", 0, 7));
  EXPECT_EQ(m.ct_state, ir::kCtStateEstablished);
  EXPECT_EQ(m.ct_dir, 1);
  // A different identifier is another flow.
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 0, 8)).ct_valid);
  // Router advertisements and the like are not tracked.
  EXPECT_FALSE(Step(ct, Icmp("10.0.0.2", "10.0.0.1", 9, 0)).ct_valid);
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
  ct.Lookup(req.view(), m);
  m.ct_mark = 42;  // as `ct mark set 42` would report
  ct.Commit(req.view(), m, true);
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
  in.base = BaseChain{"filter", Hook::kInput, 0, "", VerdictCode::kDrop};
  in.rules = {est, dns};
  Ruleset rs;
  rs.tables.push_back(Table{Family::kIp, "f", {in}, {}, {}});
  Interpreter interp(rs);

  Conntrack ct;
  auto run = [&](const Packet& p) {
    PacketMeta meta;
    ct.Lookup(p.view(), meta);
    EvalResult r = interp.Run(Hook::kInput, p.view(), meta);
    meta.ct_mark = r.ct_mark;
    ct.Commit(p.view(), meta, r.verdict == VerdictCode::kAccept);
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

}  // namespace
}  // namespace rulejit::runtime
