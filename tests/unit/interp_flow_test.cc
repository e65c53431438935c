// Reference interpreter: statements (counters, limits, reject, queue,
// quota, nat), chain control flow (jump/goto/return/policies, several base
// chains, families), extension headers and payload writes. The IR is built
// by hand with interp_test_util.h's helpers.
#include "ir/interp.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "api/internal.h"
#include "rulejit/rulejit.h"
#include "packet/parse.h"
#include "tests/support/frames.h"
#include "tests/unit/interp_test_util.h"

namespace rulejit::ir::interp_test {
namespace {

// ---------------------------------------------------------------------------
// statements: counter, limit, log, reject, notrack

TEST(InterpStatements, CountersNeedState) {
  Ruleset rs = Simple({R({Counter{}}), R({LoadTh(2, 2), CmpEq(Be16(22)), Counter{}, Drop()})});
  InterpState st;
  RunOn(rs, Tcp(22), Hook::kInput, {}, &st);
  RunOn(rs, Tcp(23), Hook::kInput, {}, &st);
  ASSERT_EQ(st.counters.size(), 1u);
  EXPECT_EQ(st.counters[0][0][0].packets, 2u);
  EXPECT_EQ(st.counters[0][0][0].bytes, 2u * 44);
  EXPECT_EQ(st.counters[0][0][1].packets, 1u);
  RunOn(rs, Tcp(22));  // no state: nothing to count, no crash
}

Expr Lim(uint64_t rate, uint32_t burst, bool over, bool bytes = false) {
  Limit l;
  l.rate = rate;
  l.unit_seconds = 1;
  l.burst = burst;
  l.over = over;
  l.bytes = bytes;
  return l;
}

TEST(InterpStatements, LimitWithoutStateIsWithinTheLimit) {
  EXPECT_TRUE(Matches({Lim(1, 1, false)}, Tcp()));
  EXPECT_FALSE(Matches({Lim(1, 1, true)}, Tcp()));
}

TEST(InterpStatements, LimitTokenBucket) {
  // limit rate 2/second burst 2 packets: 2 packets at once, then one per 0.5 s.
  Ruleset rs = Simple({R({Lim(2, 2, false), Accept()})}, VerdictCode::kDrop);
  Ruleset over = Simple({R({Lim(2, 2, true), Drop()})});
  InterpState st, st_over;
  std::vector<VerdictCode> got, got_over;
  for (uint64_t t : {0ull, 0ull, 0ull, 400000000ull, 500000000ull, 600000000ull}) {
    st.now_ns = st_over.now_ns = t;
    got.push_back(RunOn(rs, Tcp(), Hook::kInput, {}, &st).verdict);
    got_over.push_back(RunOn(over, Tcp(), Hook::kInput, {}, &st_over).verdict);
  }
  using VC = VerdictCode;
  std::vector<VC> want = {VC::kAccept, VC::kAccept, VC::kDrop, VC::kDrop, VC::kAccept, VC::kDrop};
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_over, want);  // `over` matches exactly the packets over the rate
  EXPECT_EQ(st.buckets.size(), 1u);
}

TEST(InterpStatements, ByteLimitBucketHoldsRatePlusBurst) {
  // Each packet is 44 bytes; rate 100 bytes/second. The bucket holds
  // unit * (rate + burst) / rate: 100 bytes (2 packets) with burst 0, 150
  // bytes (3 packets) with burst 50.
  for (uint32_t burst : {0u, 50u}) {
    Ruleset rs = Simple({R({Lim(100, burst, true, true), Drop()})});
    InterpState st;
    int passed = 0;
    for (int i = 0; i < 5; ++i) {
      passed += RunOn(rs, Tcp(), Hook::kInput, {}, &st).verdict == VerdictCode::kAccept;
    }
    EXPECT_EQ(passed, burst == 0 ? 2 : 3) << burst;
  }
}

TEST(InterpStatements, RejectIsFinalDrop) {
  Ruleset rs = RS({T(Family::kIp, {Base("a", {R({Log{}, Notrack{}, Reject{}})}, Hook::kInput, 0),
                                   Base("b", {Cat({}, MarkSet(5))}, Hook::kInput, 10)})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_TRUE(r.rejected);
  EXPECT_EQ(r.mark, 0u);  // chain b never ran
  EXPECT_EQ(r.decided_by.chain, 0);
  EXPECT_EQ(r.decided_by.rule, 0);
}

TEST(InterpStatements, QueueIsFinalAndSaysWhichQueue) {
  // Base chain a queues; chain b (later priority) must not run.
  Ruleset rs = RS({T(Family::kIp, {Base("a", {R({Queue{4, 2, kQueueBypass}})}, Hook::kInput, 0),
                                   Base("b", {Cat({}, MarkSet(5)), R({Drop()})}, Hook::kInput, 10)})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kQueue);
  ASSERT_TRUE(r.queue.has_value());
  EXPECT_EQ(r.queue->num, 4u);
  EXPECT_EQ(r.queue->total, 2u);
  EXPECT_EQ(r.queue->flags, kQueueBypass);
  EXPECT_EQ(r.mark, 0u);
  // The queue number from a register (host-order word).
  Queue from_reg;
  from_reg.sreg_qnum = 1;
  EvalResult q = RunOn(Simple({R({Imm(Le32(7)), from_reg})}), Tcp());
  EXPECT_EQ(q.verdict, VerdictCode::kQueue);
  EXPECT_EQ(q.queue->num, 7u);
}

TEST(InterpStatements, QuotaCountsBytesAcrossPackets) {
  // The frame's skb length (network header on) decides: 2.5 packets' worth.
  const Packet p = Tcp();
  const uint32_t len = SkbLen(p.view());
  Quota within{len * 5 / 2, 0, false};
  Quota over{len * 5 / 2, 0, true};
  for (const Quota& q : {within, over}) {
    Ruleset rs = Simple({R({q, Drop()})});
    InterpState st;
    std::vector<VerdictCode> got;
    for (int i = 0; i < 4; ++i) got.push_back(RunOn(rs, p, Hook::kInput, {}, &st).verdict);
    const VerdictCode in = q.over ? VerdictCode::kAccept : VerdictCode::kDrop;
    const VerdictCode out = q.over ? VerdictCode::kDrop : VerdictCode::kAccept;
    EXPECT_EQ(got, (std::vector<VerdictCode>{in, in, out, out})) << q.over;
  }
  // Bytes already used (`used N`) count from the start.
  Ruleset used = Simple({R({Quota{len * 5 / 2, len * 2, false}, Drop()})});
  InterpState st;
  EXPECT_EQ(RunOn(used, p, Hook::kInput, {}, &st).verdict, VerdictCode::kAccept);
}

TEST(InterpStatements, NatAcceptsAndRecordsTheBinding) {
  Nat dnat;
  dnat.kind = NatKind::kDnat;
  dnat.addr_min = 1;
  dnat.proto_min = 2;
  dnat.flags = kNatProtoSpecified;
  // The NAT statement ends the base chain with accept; a later chain runs.
  Ruleset rs = RS({T(Family::kIp, {Base("nat", {R({Imm({192, 168, 3, 2}), Imm(Be16(8080), 2), dnat}),
                                                R({Drop()})}, Hook::kInput, 0),
                                   Base("b", {Cat({}, MarkSet(5))}, Hook::kInput, 10)})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
  EXPECT_EQ(r.mark, 5u);  // the drop rule after it never ran; chain b did
  ASSERT_TRUE(r.nat.has_value());
  EXPECT_EQ(r.nat->kind, NatKind::kDnat);
  EXPECT_EQ(r.nat->addr_min, (Bytes{192, 168, 3, 2}));
  EXPECT_EQ(r.nat->proto_min, Be16(8080));
  EXPECT_TRUE(r.nat->addr_max.empty());
}

// ---------------------------------------------------------------------------
// control flow

TEST(InterpFlow, RegistersPersistAcrossRulesAndStartZeroed) {
  EXPECT_TRUE(Matches({CmpEq(Bytes(64, 0))}, Tcp()));
  Ruleset rs = Simple({R({Imm(Le32(5))}), R({CmpEq(Le32(5)), Drop()})});
  EXPECT_EQ(RunOn(rs, Tcp()).verdict, VerdictCode::kDrop);
}

TEST(InterpFlow, ContinueGoesOn) {
  // `continue` inside a rule runs the rest of the rule ...
  EXPECT_TRUE(Matches({V(VerdictCode::kContinue)}, Tcp()));
  // ... and as a rule's verdict goes on with the next rule.
  Ruleset rs = Simple({R({V(VerdictCode::kContinue)}), R({Drop()})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.decided_by.rule, 1);
}

TEST(InterpFlow, JumpAndImplicitReturn) {
  Ruleset rs = RS({T(Family::kIp,
                     {Base("input", {R({Jump("sub")}), R({Drop()})}),
                      Regular("sub", {R({LoadTh(2, 2), CmpEq(Be16(22)), Accept()})})})});
  EvalResult r = RunOn(rs, Tcp(22));
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
  EXPECT_EQ(r.decided_by.chain, 1);
  EXPECT_EQ(r.decided_by.rule, 0);
  r = RunOn(rs, Tcp(80));  // sub ends: back to the rule after the jump
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.decided_by.chain, 0);
  EXPECT_EQ(r.decided_by.rule, 1);
}

TEST(InterpFlow, ExplicitReturn) {
  Ruleset rs = RS({T(Family::kIp,
                     {Base("input", {R({Jump("sub")}), Cat({}, MarkSet(2))}),
                      Regular("sub", {R({Return()}), R({Drop()})})})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
  EXPECT_EQ(r.mark, 2u);
  EXPECT_EQ(r.decided_by.rule, -1);  // the accept policy
}

TEST(InterpFlow, ReturnInBaseChainIsPolicy) {
  Ruleset rs = Simple({R({Return()}), R({Accept()})}, VerdictCode::kDrop);
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.decided_by.chain, 0);
  EXPECT_EQ(r.decided_by.rule, -1);
}

TEST(InterpFlow, GotoDoesNotComeBack) {
  // goto from the base chain: the end of the target is the base policy.
  Ruleset rs = RS({T(Family::kIp,
                     {Base("input", {R({Goto("sub")}), R({Accept()})}, Hook::kInput, 0,
                           VerdictCode::kDrop),
                      Regular("sub", {Cat({}, MarkSet(3))})})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.decided_by.rule, -1);
  EXPECT_EQ(r.mark, 3u);
  // jump a -> goto b -> end of b returns to after the jump in the base chain.
  Ruleset rs2 = RS({T(Family::kIp,
                      {Base("input", {R({Jump("a")}), Cat({}, MarkSet(9))}),
                       Regular("a", {R({Goto("b")}), R({Drop()})}),
                       Regular("b", {R({Meta(MetaKey::kL4Proto), CmpEq({17}), Drop()})})})});
  r = RunOn(rs2, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
  EXPECT_EQ(r.mark, 9u);
}

TEST(InterpFlow, NestedJumps) {
  Ruleset rs = RS({T(Family::kIp,
                     {Base("input", {R({Jump("a")}), R({Drop()})}),
                      Regular("a", {R({Jump("b")}), Cat({}, MarkSet(4))}),
                      Regular("b", {R({Return()})})})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.mark, 4u);
}

Ruleset JumpChain(int jumps) {
  std::vector<Chain> chains;
  chains.push_back(Base("input", {R({Jump("c1")})}));
  for (int i = 1; i <= jumps; ++i) {
    std::string next = "c" + std::to_string(i + 1);
    chains.push_back(Regular("c" + std::to_string(i),
                             {i == jumps ? R({Accept()}) : R({Jump(next)})}));
  }
  chains[0].base->policy = VerdictCode::kDrop;
  return RS({T(Family::kIp, std::move(chains))});
}

TEST(InterpFlow, JumpStackDepthLimit) {
  EvalResult ok = RunOn(JumpChain(16), Tcp());  // 16 nested jumps: allowed
  EXPECT_EQ(ok.verdict, VerdictCode::kAccept);
  EXPECT_EQ(ok.decided_by.chain, 16);
  EvalResult deep = RunOn(JumpChain(17), Tcp());  // the 17th: the kernel drops
  EXPECT_EQ(deep.verdict, VerdictCode::kDrop);
  EXPECT_EQ(deep.decided_by.chain, 16);
}

TEST(InterpFlow, AcceptGoesOnToTheNextBaseChainByPriority) {
  // Table 0 (priority 10) drops marked packets; table 1 (priority -5) marks
  // and accepts. Priority order runs table 1 first.
  Table late = T(Family::kIp, {Base("late", {R({Meta(MetaKey::kMark), CmpEq(Le32(7)), Drop()})},
                                    Hook::kInput, 10)});
  Table early = T(Family::kIp, {Base("early", {Cat(MarkSet(7), {Accept()})}, Hook::kInput, -5)});
  EvalResult r = RunOn(RS({late, early}), Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.decided_by.table, 0);
  EXPECT_EQ(r.decided_by.rule, 0);
  // Swap the priorities: the drop chain runs first and lets it through.
  late.chains[0].base->priority = -10;
  r = RunOn(RS({late, early}), Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
  EXPECT_EQ(r.mark, 7u);
  EXPECT_EQ(r.decided_by.table, 1);
}

TEST(InterpFlow, ThreeBaseChainsOutOfOrder) {
  // Each chain advances the mark only from the previous step's value, so
  // the final mark is 3 only in priority order -10, 0, 10.
  auto step = [](uint32_t from, uint32_t to) {
    return Cat({Meta(MetaKey::kMark), CmpEq(Le32(from))}, MarkSet(to));
  };
  Ruleset rs = RS({T(Family::kIp, {Base("c", {step(2, 3)}, Hook::kInput, 10),
                                   Base("a", {step(0, 1)}, Hook::kInput, -10)}),
                   T(Family::kInet, {Base("b", {step(1, 2)}, Hook::kInput, 0)})});
  EXPECT_EQ(RunOn(rs, Tcp()).mark, 3u);
}

TEST(InterpFlow, DropIsFinal) {
  Table first = T(Family::kIp, {Base("a", {R({Drop()})}, Hook::kInput, -1)});
  Table second = T(Family::kIp, {Base("b", {Cat(MarkSet(1), {Accept()})}, Hook::kInput, 0)});
  EvalResult r = RunOn(RS({second, first}), Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.mark, 0u);
  EXPECT_EQ(r.decided_by.table, 1);
}

TEST(InterpFlow, EqualPrioritiesKeepTableThenChainOrder) {
  Table t1 = T(Family::kIp, {Base("x", {Cat({}, MarkSet(1))}), Base("y", {Cat({}, MarkSet(2))})});
  Table t2 = T(Family::kIp, {Base("z", {Cat({}, MarkSet(3))})});
  EXPECT_EQ(RunOn(RS({t1, t2}), Tcp()).mark, 3u);
  EXPECT_EQ(RunOn(RS({t2, t1}), Tcp()).mark, 2u);
}

TEST(InterpFlow, NoBaseChainAccepts) {
  EvalResult r = RunOn(RS({}), Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
  EXPECT_EQ(r.decided_by.chain, -1);
  // A chain on another hook does not run.
  r = RunOn(Simple({R({Drop()})}), Tcp(), Hook::kForward);
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
}

TEST(InterpFlow, FamiliesSeeTheirPackets) {
  auto drops = [](Family f) { return RS({T(f, {Base("c", {R({Drop()})})})}); };
  EXPECT_EQ(RunOn(drops(Family::kIp), Tcp()).verdict, VerdictCode::kDrop);
  EXPECT_EQ(RunOn(drops(Family::kIp), Tcp6()).verdict, VerdictCode::kAccept);
  EXPECT_EQ(RunOn(drops(Family::kIp6), Tcp()).verdict, VerdictCode::kAccept);
  EXPECT_EQ(RunOn(drops(Family::kIp6), Tcp6()).verdict, VerdictCode::kDrop);
  EXPECT_EQ(RunOn(drops(Family::kInet), Tcp()).verdict, VerdictCode::kDrop);
  EXPECT_EQ(RunOn(drops(Family::kInet), Tcp6()).verdict, VerdictCode::kDrop);
  EXPECT_EQ(RunOn(drops(Family::kBridge), Tcp()).verdict, VerdictCode::kAccept);
  // meta nfproto in inet reports the packet's family.
  Ruleset inet = RS({T(Family::kInet, {Base("c", {R({Meta(MetaKey::kNfProto),
                                                     CmpEq({kNfProtoIpv6}), Drop()})})})});
  EXPECT_EQ(RunOn(inet, Tcp6()).verdict, VerdictCode::kDrop);
  EXPECT_EQ(RunOn(inet, Tcp()).verdict, VerdictCode::kAccept);
}

TEST(InterpFlow, NetdevMatchesItsDevice) {
  Ruleset rs = RS({T(Family::kNetdev,
                     {Base("in", {R({Meta(MetaKey::kNfProto), CmpEq({5}), Drop()})},
                           Hook::kIngress, 0, VerdictCode::kAccept, "eth0")}),
                   T(Family::kIp, {Base("ip", {R({Drop()})}, Hook::kInput)})});
  EXPECT_EQ(RunOn(rs, Tcp(), Hook::kIngress, WithIif("eth0", 2)).verdict, VerdictCode::kDrop);
  EXPECT_EQ(RunOn(rs, Tcp(), Hook::kIngress, WithIif("eth1", 3)).verdict, VerdictCode::kAccept);
  EXPECT_EQ(RunOn(rs, Tcp(), Hook::kIngress, WithIif("eth00", 3)).verdict, VerdictCode::kAccept);
  // Netdev sees non-IP frames too.
  Packet arp{std::vector<uint8_t>(42, 0)};
  arp.bytes[12] = 0x08;
  arp.bytes[13] = 0x06;
  EXPECT_EQ(RunOn(rs, arp, Hook::kIngress, WithIif("eth0", 2)).verdict, VerdictCode::kDrop);
  // Egress matches the output device.
  Ruleset eg = RS({T(Family::kNetdev, {Base("out", {R({Drop()})}, Hook::kEgress, 0,
                                            VerdictCode::kAccept, "eth9")})});
  PacketMeta m;
  std::strcpy(m.oifname, "eth9");
  m.has_oif = true;
  EXPECT_EQ(RunOn(eg, Tcp(), Hook::kEgress, m).verdict, VerdictCode::kDrop);
  EXPECT_EQ(RunOn(eg, Tcp(), Hook::kEgress, WithIif("eth9", 1)).verdict, VerdictCode::kAccept);
}

// ---------------------------------------------------------------------------
// exthdr

Expr Ext(ExthdrOp op, uint8_t type, uint32_t off, uint32_t len, bool present = false) {
  return Exthdr{op, type, off, len, present, 1};
}
// `exprs + drop` in an inet input chain: does it match?
bool MatchesInet(std::vector<Expr> exprs, const Packet& p) {
  exprs.push_back(Drop());
  Ruleset rs = RS({T(Family::kInet, {Base("input", {R(std::move(exprs))})})});
  return RunOn(rs, p).verdict == VerdictCode::kDrop;
}

TEST(InterpExthdr, Ipv6HeadersFoundByWalkingTheChain) {
  Packet p{BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 6,
                                .ext_headers = {0, 60}})};
  auto present = [&](uint8_t type, uint8_t want) {
    return MatchesInet({Ext(ExthdrOp::kIpv6, type, 0, 1, true), CmpEq({want, 0, 0, 0})}, p);
  };
  EXPECT_TRUE(present(0, 1));
  EXPECT_TRUE(present(60, 1));
  EXPECT_TRUE(present(6, 1));    // the transport header ends the walk, found
  EXPECT_TRUE(present(43, 0));   // absent: present loads 0 and the rule goes on
  EXPECT_TRUE(present(44, 0));
  // hop-by-hop's next header is 60, destination options' is tcp.
  EXPECT_TRUE(MatchesInet({Ext(ExthdrOp::kIpv6, 0, 0, 1), CmpEq({60})}, p));
  EXPECT_TRUE(MatchesInet({Ext(ExthdrOp::kIpv6, 60, 0, 1), CmpEq({6})}, p));
  // A load from an absent header is NFT_BREAK, even with `!=`.
  EXPECT_FALSE(MatchesInet({Ext(ExthdrOp::kIpv6, 43, 0, 1), CmpOpOf(CmpOp::kNeq, {0})}, p));
  // IPv4 packets have no IPv6 extension headers.
  EXPECT_TRUE(MatchesInet({Ext(ExthdrOp::kIpv6, 0, 0, 1, true), CmpEq({0, 0, 0, 0})}, Tcp()));
}

TEST(InterpExthdr, TcpOptions) {
  // doff 6: one option word after the fixed header, MSS 1460.
  Packet p = {BuildFrame(FrameSpec{.proto = 6, .payload = {2, 4, 0x05, 0xb4}})};
  p.bytes[14 + 20 + 12] = 0x60;
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kTcpopt, 2, 2, 2), CmpEq({0x05, 0xb4})}, p));
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kTcpopt, 2, 0, 1, true), CmpEq({1, 0, 0, 0})}, p));
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kTcpopt, 8, 0, 1, true), CmpEq({0, 0, 0, 0})}, p));
  // Reading past the option's own length does not match.
  EXPECT_FALSE(Matches({Ext(ExthdrOp::kTcpopt, 2, 2, 4), CmpOpOf(CmpOp::kNeq, {0, 0, 0, 0})}, p));
  // Without doff covering it, the option is not there.
  Packet bare = {BuildFrame(FrameSpec{.proto = 6, .payload = {2, 4, 0x05, 0xb4}})};
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kTcpopt, 2, 0, 1, true), CmpEq({0, 0, 0, 0})}, bare));
  // Not TCP: never found.
  Packet udp = {BuildFrame(FrameSpec{.proto = 17, .payload = {2, 4, 0x05, 0xb4}})};
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kTcpopt, 2, 0, 1, true), CmpEq({0, 0, 0, 0})}, udp));
}

TEST(InterpExthdr, SctpChunks) {
  // A 4-byte DATA-less chunk of type 9 (error), then an INIT of 20 bytes.
  std::vector<uint8_t> chunks = {9, 0, 0, 4, 1, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0, 2,
                                 0, 3, 0, 4, 0, 0, 0, 5};
  Packet p = {BuildFrame(FrameSpec{.proto = 132, .payload = chunks})};
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kSctp, 1, 16, 4), CmpEq({0, 0, 0, 5})}, p));
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kSctp, 9, 0, 1, true), CmpEq({1, 0, 0, 0})}, p));
  EXPECT_TRUE(Matches({Ext(ExthdrOp::kSctp, 0, 0, 1, true), CmpEq({0, 0, 0, 0})}, p));
  // Past the chunk's length: no match.
  EXPECT_FALSE(Matches({Ext(ExthdrOp::kSctp, 9, 4, 1), CmpOpOf(CmpOp::kNeq, {0})}, p));
}

// ---------------------------------------------------------------------------
// payload write

// The IPv4 header checksum computed from scratch over `frame`'s header.
uint16_t FreshIpChecksum(std::vector<uint8_t> frame) {
  frame[14 + 10] = frame[14 + 11] = 0;
  return testing::frames_internal::Fold(testing::frames_internal::Sum(frame.data() + 14, 20));
}

TEST(InterpPayloadWrite, LaterRulesSeeTheBytesAndTheChecksumIsKeptRight) {
  Packet p = Tcp();
  std::vector<uint8_t> want = p.bytes;
  want[14 + 4] = 0x12;
  want[14 + 5] = 0x34;
  const uint16_t sum = FreshIpChecksum(want);
  PayloadWrite w{PayloadBase::kNetwork, 4, 2, 1, kCsumInet, 10, 0};
  // Rule 1 writes ip id (and fixes the checksum); rule 2 matches both.
  Ruleset rs = RS({T(Family::kIp, {Base("input", {
      R({Imm({0x12, 0x34}), w}),
      R({LoadNet(4, 2), CmpEq({0x12, 0x34}), LoadNet(10, 2),
         CmpEq({uint8_t(sum >> 8), uint8_t(sum)}), Drop()})})})});
  EXPECT_EQ(RunOn(rs, p).verdict, VerdictCode::kDrop);
  // The caller's packet is not changed.
  EXPECT_NE(p.bytes[14 + 4], 0x12);
  // Out of bounds: the rule does not match and nothing is written.
  PayloadWrite far{PayloadBase::kNetwork, 60, 2, 1, 0, 0, 0};
  Ruleset rs2 = RS({T(Family::kIp, {Base("input", {
      R({Imm({0x12, 0x34}), far, Accept()}), R({LoadNet(4, 2), CmpEq({0x12, 0x34}), Drop()})})})});
  EXPECT_EQ(RunOn(rs2, p).verdict, VerdictCode::kAccept);
}

TEST(InterpPayloadWrite, CompiledBackendsFallBackToTheInterpreter) {
  PayloadWrite w{PayloadBase::kNetwork, 4, 2, 1, kCsumInet, 10, 0};
  Ruleset rs = RS({T(Family::kIp, {Base("input", {R({Imm({0x12, 0x34}), w}),
                                                 R({LoadNet(4, 2), CmpEq({0x12, 0x34}), Drop()})})})});
  auto program = rulejit::Program::Compile(RulesetOf(rs), {.backend = rulejit::Backend::kJit});
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->backend(), rulejit::Backend::kInterp);
  Packet p = Tcp();
  EXPECT_EQ((*program)->Run(Hook::kInput, p.view(), {}).verdict, rulejit::Verdict::kDrop);
}

// NFT_BITWISE_AND/OR/XOR with a register operand, word by word.
TEST(InterpBitwise, RegisterOperand) {
  for (auto [op, want] : {std::pair{BitwiseOp::kAndReg, 0x0000f00fu},
                          std::pair{BitwiseOp::kOrReg, 0xfffff0ffu},
                          std::pair{BitwiseOp::kXorReg, 0xffff00f0u}}) {
    Bitwise b;
    b.op = op;
    b.sreg = 1;
    b.sreg2 = 2;
    b.dreg = 1;
    EXPECT_TRUE(Matches({Imm(Le32(0x00fff0ff)), Imm(Le32(0xff00f00f), 2), b, CmpEq(Le32(want))},
                        Tcp()))
        << static_cast<int>(op);
  }
}

}  // namespace
}  // namespace rulejit::ir::interp_test
