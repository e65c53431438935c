// Reference interpreter: one group of tests per expression kind (payload,
// compare, bitwise, byteorder, lookup, meta, ct); interp_flow_test.cc has
// statements, chain control flow, extension headers and payload writes.
// The IR is built by hand with interp_test_util.h's helpers.
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
// payload

TEST(InterpPayload, BoundsAtExactFrameEnd) {
  Packet p = Tcp();
  uint32_t inner_len = 4;  // the TCP payload: de ad be ef
  uint32_t last = 20 + 20 + inner_len - 4;  // network offset of the last word
  EXPECT_TRUE(Matches({LoadNet(last, 4), CmpEq({0xde, 0xad, 0xbe, 0xef})}, p));
  // One byte further reads past the end: no match, even with `!=`.
  EXPECT_FALSE(Matches({LoadNet(last + 1, 4), CmpOpOf(CmpOp::kNeq, {0, 0, 0, 0})}, p));
  EXPECT_FALSE(Matches({LoadNet(last, 5), CmpOpOf(CmpOp::kNeq, {0, 0, 0, 0, 0})}, p));
  EXPECT_TRUE(Matches({Load(PayloadBase::kInner, 0, 4), CmpEq({0xde, 0xad, 0xbe, 0xef})}, p));
  EXPECT_FALSE(Matches({Load(PayloadBase::kInner, 1, 4), CmpOpOf(CmpOp::kNeq, {0, 0, 0, 0})}, p));
}

TEST(InterpPayload, HugeOffsetDoesNotWrap) {
  Packet p = Tcp();
  EXPECT_FALSE(Matches({LoadNet(0xfffffff0u, 32), CmpOpOf(CmpOp::kNeq, Bytes(32, 1))}, p));
}

TEST(InterpPayload, LoadZeroesTheRestOfItsLastWord) {
  Packet p = Tcp(0x1234);
  EXPECT_TRUE(Matches({Imm({0xff, 0xff, 0xff, 0xff}), LoadTh(2, 2),
                       CmpEq({0x12, 0x34, 0, 0})}, p));
  // A 4-byte aligned load leaves the next word alone.
  EXPECT_TRUE(Matches({Imm({9, 9, 9, 9, 9, 9, 9, 9}), LoadNet(16, 4),
                       CmpEq({10, 0, 0, 2, 9, 9, 9, 9})}, p));
}

TEST(InterpPayload, LinkAndAbsentHeaders) {
  Packet p = Tcp();
  // Ethertype at link offset 12.
  EXPECT_TRUE(Matches({Load(PayloadBase::kLink, 12, 2), CmpEq({0x08, 0x00})}, p));
  // Without a link header (frame starts at IP) link loads fail.
  auto ip = BuildFrame(FrameSpec{.proto = 6, .ethernet = false});
  PacketView v = packet::ParseIp(ip.data(), static_cast<uint32_t>(ip.size()));
  Ruleset rs = Simple({R({Load(PayloadBase::kLink, 0, 1),
                          CmpOpOf(CmpOp::kNeq, {0xaa}), Drop()})});
  EXPECT_EQ(Interpreter(rs).Run(Hook::kInput, v, {}).verdict, VerdictCode::kAccept);
}

// KERNEL (Linux 6.18): on a non-first fragment the fast-path payload loads
// (1, 2 or 4 bytes at an aligned offset) read the fragment's data where the
// transport header would be; every other transport or inner load fails.
TEST(InterpPayload, LaterFragmentsOnlyFastTransportLoads) {
  Packet later{BuildFrame(FrameSpec{.proto = 17, .payload = {1, 2, 3, 4, 5, 6, 7, 8},
                                    .frag_offset = 2})};
  EXPECT_TRUE(Matches({LoadTh(0, 1), CmpEq({1})}, later));
  EXPECT_TRUE(Matches({LoadTh(2, 2), CmpEq({3, 4})}, later));
  EXPECT_TRUE(Matches({LoadTh(4, 4), CmpEq({5, 6, 7, 8})}, later));
  // Generic path: unaligned, odd lengths, longer loads, the inner header.
  EXPECT_FALSE(Matches({LoadTh(1, 2), CmpOpOf(CmpOp::kNeq, {0xaa, 0xaa})}, later));
  EXPECT_FALSE(Matches({LoadTh(0, 3), CmpOpOf(CmpOp::kNeq, {0xaa, 0xaa, 0xaa})}, later));
  EXPECT_FALSE(Matches({LoadTh(0, 8), CmpOpOf(CmpOp::kNeq, Bytes(8, 0xaa))}, later));
  EXPECT_FALSE(Matches({Load(PayloadBase::kInner, 0, 1), CmpOpOf(CmpOp::kNeq, {0xaa})}, later));
  // A fast load past the fragment's end fails like any other.
  EXPECT_FALSE(Matches({LoadTh(8, 4), CmpOpOf(CmpOp::kNeq, {0, 0, 0, 0})}, later));
  // meta l4proto works.
  EXPECT_TRUE(Matches({Meta(MetaKey::kL4Proto), CmpEq({17})}, later));
  // Even a view claiming a transport header: fragoff != 0 means no header
  // for the generic path.
  PacketView v = later.view();
  v.transport_off = v.network_off + 20;
  Ruleset rs = Simple({R({LoadTh(0, 3), CmpOpOf(CmpOp::kNeq, {0xaa, 0xaa, 0xaa}), Drop()})});
  EXPECT_EQ(Interpreter(rs).Run(Hook::kInput, v, {}).verdict, VerdictCode::kAccept);
}

// ip6tables-legacy's view (ip6_packet_match): `meta ip6t_l4proto` walks
// over AH, and every load from the ip6t-transport header, fast-path sized
// or not, fails on a non-first fragment (par->fragoff != 0).
TEST(InterpPayload, Ip6tablesTransportHeader) {
  auto load6 = [](uint32_t off, uint32_t len) { return Load(PayloadBase::kIp6tTransport, off, len); };
  // In an inet table, which sees both families.
  auto Matches = [](std::vector<Expr> exprs, const Packet& p) {
    exprs.push_back(Drop());
    Ruleset rs = RS({T(Family::kInet, {Base("input", {R(std::move(exprs))})})});
    return RunOn(rs, p, Hook::kInput).verdict == VerdictCode::kDrop;
  };
  Packet ah{BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 6,
                                 .sport = 7, .dport = 22, .ext_headers = {51}})};
  EXPECT_TRUE(Matches({Meta(MetaKey::kIp6tL4Proto), CmpEq({6})}, ah));
  EXPECT_TRUE(Matches({Meta(MetaKey::kL4Proto), CmpEq({51})}, ah));
  EXPECT_TRUE(Matches({load6(2, 2), CmpEq({0, 22})}, ah));
  EXPECT_TRUE(Matches({load6(0, 4), CmpEq({0, 7, 0, 22})}, ah));
  Packet later{BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 6,
                                    .payload = {0, 0, 0, 0, 0, 0, 0, 0}, .frag_offset = 2,
                                    .ext_headers = {44}})};
  EXPECT_TRUE(Matches({Meta(MetaKey::kIp6tL4Proto), CmpEq({6})}, later));
  EXPECT_TRUE(Matches({LoadTh(2, 2), CmpEq({0, 0})}, later));  // nft: the IPv6 header
  EXPECT_FALSE(Matches({load6(2, 2), CmpOpOf(CmpOp::kNeq, {0xaa, 0xaa})}, later));
  EXPECT_FALSE(Matches({load6(0, 1), CmpOpOf(CmpOp::kGte, {0})}, later));
  // IPv4: neither is defined.
  EXPECT_FALSE(Matches({Meta(MetaKey::kIp6tL4Proto), CmpOpOf(CmpOp::kNeq, {0})}, Tcp()));
  EXPECT_FALSE(Matches({load6(0, 1), CmpOpOf(CmpOp::kGte, {0})}, Tcp()));
  EXPECT_EQ(PayloadSlot(PayloadBase::kIp6tTransport, 2, 2), HeaderSlot::kIp6tTransport);
}

TEST(PayloadSlot, FastPathIsOneTwoOrFourAlignedBytes) {
  using S = HeaderSlot;
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 0, 1), S::kTransportFast);
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 13, 1), S::kTransportFast);
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 2, 2), S::kTransportFast);
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 8, 4), S::kTransportFast);
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 1, 2), S::kTransport);
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 2, 4), S::kTransport);
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 0, 3), S::kTransport);
  EXPECT_EQ(PayloadSlot(PayloadBase::kTransport, 0, 8), S::kTransport);
  EXPECT_EQ(PayloadSlot(PayloadBase::kInner, 0, 1), S::kInner);
  EXPECT_EQ(PayloadSlot(PayloadBase::kLink, 12, 2), S::kLink);
  EXPECT_EQ(PayloadSlot(PayloadBase::kNetwork, 12, 4), S::kNetwork);
  EXPECT_EQ(PayloadSlot(PayloadBase::kNetwork, 8, 16), S::kNetwork);
}

TEST(InterpPayload, RegisterFileOverflowDoesNotMatch) {
  // reg 4 is the last 16 bytes: a 32-byte load or compare there cannot fit
  // (the verifier rejects it; the interpreter must still not overrun).
  Packet p = Tcp();
  EXPECT_FALSE(Matches({LoadNet(0, 32, 4), CmpOpOf(CmpOp::kNeq, Bytes(16, 1), 4)}, p));
  EXPECT_FALSE(Matches({LoadNet(0, 16, 4), CmpOpOf(CmpOp::kNeq, Bytes(32, 1), 4)}, p));
  EXPECT_FALSE(Matches({LoadNet(0, 4, 99), CmpOpOf(CmpOp::kNeq, Bytes(4, 1))}, p));
  EXPECT_TRUE(Matches({LoadNet(0, 16, 4), CmpOpOf(CmpOp::kNeq, Bytes(16, 1), 4)}, p));
}

// ---------------------------------------------------------------------------
// cmp, range

TEST(InterpCmp, AllOperatorsInMemcmpOrder) {
  Packet p = Tcp(0x0116);  // dport bytes 01 16
  struct Case { CmpOp op; uint16_t value; bool match; };
  const Case cases[] = {
      {CmpOp::kEq, 0x0116, true},   {CmpOp::kEq, 0x0117, false},
      {CmpOp::kNeq, 0x0117, true},  {CmpOp::kNeq, 0x0116, false},
      {CmpOp::kLt, 0x0117, true},   {CmpOp::kLt, 0x0116, false},
      {CmpOp::kLte, 0x0116, true},  {CmpOp::kLte, 0x0115, false},
      {CmpOp::kGt, 0x0115, true},   {CmpOp::kGt, 0x0116, false},
      {CmpOp::kGte, 0x0116, true},  {CmpOp::kGte, 0x0117, false},
      // Big-endian order: 0x0116 > 0x00ff even though 0x16 < 0xff.
      {CmpOp::kGt, 0x00ff, true},   {CmpOp::kLt, 0x0200, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Matches({LoadTh(2, 2), CmpOpOf(c.op, Be16(c.value))}, p), c.match)
        << int(c.op) << " " << c.value;
  }
}

TEST(InterpRange, InclusiveAndNegated) {
  Packet p = Tcp(25);
  auto range = [](uint16_t lo, uint16_t hi, bool neg) {
    return Expr(Range{neg, 1, Be16(lo), Be16(hi)});
  };
  EXPECT_TRUE(Matches({LoadTh(2, 2), range(20, 30, false)}, p));
  EXPECT_TRUE(Matches({LoadTh(2, 2), range(25, 25, false)}, p));
  EXPECT_FALSE(Matches({LoadTh(2, 2), range(26, 30, false)}, p));
  EXPECT_FALSE(Matches({LoadTh(2, 2), range(20, 30, true)}, p));
  EXPECT_TRUE(Matches({LoadTh(2, 2), range(26, 300, true)}, p));
}

// ---------------------------------------------------------------------------
// bitwise, shifts, byteorder

Expr MaskXor(Bytes mask, Bytes x, Reg s = 1, Reg d = 1) {
  Bitwise b;
  b.op = BitwiseOp::kMaskXor;
  b.sreg = s;
  b.dreg = d;
  b.len = static_cast<uint32_t>(mask.size());
  b.mask = std::move(mask);
  b.xor_ = std::move(x);
  return b;
}
Expr Shift(BitwiseOp op, uint32_t n, uint32_t len, Reg s = 1, Reg d = 1) {
  Bitwise b;
  b.op = op;
  b.sreg = s;
  b.dreg = d;
  b.len = len;
  b.shift = n;
  return b;
}

TEST(InterpBitwise, PrefixMask) {
  Packet in{BuildFrame(FrameSpec{.src = "10.63.1.1", .proto = 6})};
  Packet out{BuildFrame(FrameSpec{.src = "10.64.1.1", .proto = 6})};
  std::vector<Expr> rule = {LoadNet(12, 4), MaskXor({0xff, 0xc0, 0, 0}, {0, 0, 0, 0}),
                            CmpEq({10, 0, 0, 0})};
  EXPECT_TRUE(Matches(rule, in));  // 10.0.0.0/10
  EXPECT_FALSE(Matches(rule, out));
}

TEST(InterpBitwise, XorAndSeparateDestination) {
  Packet p = Tcp();
  // reg 2 = (daddr & ff.ff.00.00) ^ 00.00.00.01, reg 1 untouched.
  EXPECT_TRUE(Matches({LoadNet(16, 4), MaskXor({0xff, 0xff, 0, 0}, {0, 0, 0, 1}, 1, 2),
                       CmpEq({10, 0, 0, 1}, 2), CmpEq({10, 0, 0, 2}, 1)}, p));
}

TEST(InterpBitwise, ShiftsWorkOnHostOrderWordsWithCarry) {
  Packet p = Tcp();
  // One word: host-order 0x40000001 << 1 = 0x80000002.
  EXPECT_TRUE(Matches({Imm(Le32(0x40000001)), Shift(BitwiseOp::kLshift, 1, 4),
                       CmpEq(Le32(0x80000002))}, p));
  EXPECT_TRUE(Matches({Imm(Le32(0x40000001)), Shift(BitwiseOp::kRshift, 1, 4),
                       CmpEq(Le32(0x20000000))}, p));
  // Two words, reg 1 -> reg 2: a left shift carries from word 1 into word 0,
  // a right shift from word 0 into word 1 (the kernel's loops).
  EXPECT_TRUE(Matches({Imm(Concat(Le32(1), Le32(0x80000000))),
                       Shift(BitwiseOp::kLshift, 1, 8, 1, 2),
                       CmpEq(Concat(Le32(3), Le32(0)), 2)}, p));
  EXPECT_TRUE(Matches({Imm(Concat(Le32(1), Le32(2))),
                       Shift(BitwiseOp::kRshift, 1, 8, 1, 2),
                       CmpEq(Concat(Le32(0), Le32(0x80000001)), 2)}, p));
}

Expr Order(ByteorderOp op, uint32_t len, uint32_t size) {
  return Byteorder{op, 1, 1, len, size};
}

TEST(InterpByteorder, SwapsElements) {
  Packet p = Tcp();
  EXPECT_TRUE(Matches({Imm({0x12, 0x34, 0x56, 0x78}), Order(ByteorderOp::kHton, 4, 4),
                       CmpEq({0x78, 0x56, 0x34, 0x12})}, p));
  EXPECT_TRUE(Matches({Imm({0x12, 0x34, 0x56, 0x78}), Order(ByteorderOp::kNtoh, 2, 2),
                       CmpEq({0x34, 0x12, 0x56, 0x78})}, p));
  // Size 2 elements step over 32-bit words, as the kernel's union does.
  EXPECT_TRUE(Matches({Imm({1, 2, 3, 4, 5, 6, 7, 8}), Order(ByteorderOp::kHton, 4, 2),
                       CmpEq({2, 1, 3, 4, 6, 5, 7, 8})}, p));
  EXPECT_TRUE(Matches({Imm({1, 2, 3, 4, 5, 6, 7, 8}), Order(ByteorderOp::kHton, 8, 8),
                       CmpEq({8, 7, 6, 5, 4, 3, 2, 1})}, p));
}

// ---------------------------------------------------------------------------
// lookups

Set MakeSet(std::string name, uint32_t key_len, uint32_t flags = kSetAnonymous) {
  Set s;
  s.name = std::move(name);
  s.key_len = key_len;
  s.flags = flags;
  return s;
}
SetElement El(Bytes key, std::optional<Bytes> end = std::nullopt) {
  SetElement e;
  e.key = std::move(key);
  e.key_end = std::move(end);
  return e;
}
Expr Lk(std::string set, Reg s = 1, std::optional<Reg> d = std::nullopt,
        bool invert = false) {
  return Lookup{s, std::move(set), d, invert};
}

TEST(InterpLookup, ExactAndInverted) {
  Set ports = MakeSet("ports", 2);
  ports.elements = {El(Be16(22)), El(Be16(80))};
  EXPECT_TRUE(Matches({LoadTh(2, 2), Lk("ports")}, Tcp(22), {}, {ports}));
  EXPECT_TRUE(Matches({LoadTh(2, 2), Lk("ports")}, Tcp(80), {}, {ports}));
  EXPECT_FALSE(Matches({LoadTh(2, 2), Lk("ports")}, Tcp(81), {}, {ports}));
  EXPECT_FALSE(Matches({LoadTh(2, 2), Lk("ports", 1, std::nullopt, true)}, Tcp(22), {}, {ports}));
  EXPECT_TRUE(Matches({LoadTh(2, 2), Lk("ports", 1, std::nullopt, true)}, Tcp(81), {}, {ports}));
  // An unknown set never matches.
  EXPECT_FALSE(Matches({LoadTh(2, 2), Lk("nope", 1, std::nullopt, true)}, Tcp(22), {}, {ports}));
}

TEST(InterpLookup, IntervalsAreInclusive) {
  Set nets = MakeSet("nets", 4, kSetAnonymous | kSetInterval);
  nets.elements = {El({10, 0, 0, 0}, Bytes{10, 0, 0, 255}), El({192, 168, 1, 1})};
  std::vector<Expr> rule = {LoadNet(12, 4), Lk("nets")};
  EXPECT_TRUE(Matches(rule, Tcp(22, "10.0.0.0"), {}, {nets}));
  EXPECT_TRUE(Matches(rule, Tcp(22, "10.0.0.255"), {}, {nets}));
  EXPECT_FALSE(Matches(rule, Tcp(22, "10.0.1.0"), {}, {nets}));
  EXPECT_TRUE(Matches(rule, Tcp(22, "192.168.1.1"), {}, {nets}));
  EXPECT_FALSE(Matches(rule, Tcp(22, "192.168.1.2"), {}, {nets}));
}

TEST(InterpLookup, Concatenation) {
  // ip saddr . tcp dport: 4 + (2 padded to 4) bytes, reg 1 then reg 9.
  Set s = MakeSet("pairs", 8, kSetAnonymous | kSetConcat);
  s.field_lens = {4, 2};
  s.elements = {El({10, 0, 0, 1, 0, 22, 0, 0})};
  std::vector<Expr> rule = {LoadNet(12, 4, 1), LoadTh(2, 2, 9), Lk("pairs")};
  EXPECT_TRUE(Matches(rule, Tcp(22, "10.0.0.1"), {}, {s}));
  EXPECT_FALSE(Matches(rule, Tcp(23, "10.0.0.1"), {}, {s}));
  EXPECT_FALSE(Matches(rule, Tcp(22, "10.0.0.2"), {}, {s}));
}

TEST(InterpLookup, ConcatenatedIntervalsMatchFieldByField) {
  Set s = MakeSet("pairs", 8, kSetAnonymous | kSetConcat | kSetInterval);
  s.field_lens = {4, 2};
  s.elements = {El({10, 0, 0, 0, 0, 20, 0, 0}, Bytes{10, 0, 0, 255, 0, 30, 0, 0})};
  std::vector<Expr> rule = {LoadNet(12, 4, 1), LoadTh(2, 2, 9), Lk("pairs")};
  EXPECT_TRUE(Matches(rule, Tcp(25, "10.0.0.7"), {}, {s}));
  EXPECT_TRUE(Matches(rule, Tcp(30, "10.0.0.255"), {}, {s}));
  // Lexicographically inside (first field strictly inside) but port 40 is
  // outside its field range: no match.
  EXPECT_FALSE(Matches(rule, Tcp(40, "10.0.0.7"), {}, {s}));
}

TEST(InterpLookup, MapWritesData) {
  Set m = MakeSet("marks", 2, kSetAnonymous | kSetMap);
  m.data_len = 4;
  SetElement e = El(Be16(22));
  e.data = Le32(0x2a);
  m.elements = {e};
  // meta mark set tcp dport map { 22 : 0x2a }
  Ruleset rs = RS({T(Family::kIp, {Base("input", {R({LoadTh(2, 2), Lk("marks", 1, Reg{1}),
                                                      MetaSet{MetaKey::kMark, 1}})})},
                     {m})});
  EXPECT_EQ(RunOn(rs, Tcp(22)).mark, 0x2au);
  EXPECT_EQ(RunOn(rs, Tcp(23)).mark, 0u);  // no element: the rule stops
}

TEST(InterpLookup, VerdictMap) {
  Set vm = MakeSet("vm", 2, kSetAnonymous | kSetMap);
  vm.verdict_map = true;
  auto add = [&](uint16_t port, VerdictCode code, std::string chain = "") {
    SetElement e = El(Be16(port));
    e.verdict = Verdict{code, std::move(chain)};
    vm.elements.push_back(e);
  };
  add(22, VerdictCode::kAccept);
  add(80, VerdictCode::kDrop);
  add(443, VerdictCode::kJump, "web");
  add(8080, VerdictCode::kContinue);
  Ruleset rs = RS({T(Family::kIp,
                     {Base("input", {R({LoadTh(2, 2), Lk("vm", 1, Reg{kVerdictReg})}),
                                     Cat({}, MarkSet(1))},
                           Hook::kInput, 0, VerdictCode::kDrop),
                      Regular("web", {Cat({}, MarkSet(7))})},
                     {vm})});
  EvalResult r = RunOn(rs, Tcp(22));
  EXPECT_EQ(r.verdict, VerdictCode::kAccept);
  EXPECT_EQ(r.decided_by.rule, 0);
  EXPECT_EQ(RunOn(rs, Tcp(80)).verdict, VerdictCode::kDrop);
  // Jump into "web", which returns; the next base rule sets mark 1.
  r = RunOn(rs, Tcp(443));
  EXPECT_EQ(r.mark, 1u);
  EXPECT_EQ(r.decided_by.rule, -1);  // the drop policy
  // Continue and no element: both go on with the next rule.
  EXPECT_EQ(RunOn(rs, Tcp(8080)).mark, 1u);
  EXPECT_EQ(RunOn(rs, Tcp(9)).mark, 1u);
}

// ---------------------------------------------------------------------------
// meta and ct


TEST(InterpMeta, Interfaces) {
  Packet p = Tcp();
  PacketMeta eth0 = WithIif("eth0", 3);
  EXPECT_TRUE(Matches({Meta(MetaKey::kIifName), CmpEq(Name("eth0"))}, p, eth0));
  EXPECT_FALSE(Matches({Meta(MetaKey::kIifName), CmpEq(Name("eth1"))}, p, eth0));
  EXPECT_TRUE(Matches({Meta(MetaKey::kIif), CmpEq(Le32(3))}, p, eth0));
  EXPECT_TRUE(Matches({Meta(MetaKey::kIifType), CmpEq({1, 0})}, p, eth0));
  // Without an output device the kernel loads "" and ifindex 0 ...
  EXPECT_TRUE(Matches({Meta(MetaKey::kOifName), CmpOpOf(CmpOp::kNeq, Name("eth0"))}, p, eth0));
  EXPECT_TRUE(Matches({Meta(MetaKey::kOif), CmpEq(Le32(0))}, p, eth0));
  // ... but the interface type does not load at all.
  EXPECT_FALSE(Matches({Meta(MetaKey::kOifType), CmpOpOf(CmpOp::kNeq, {9, 9})}, p, eth0));
}

TEST(InterpMeta, PacketKeys) {
  Packet p = Tcp();
  PacketMeta m;
  m.mark = 0x11223344;
  m.priority = 5;
  m.pkttype = kPktBroadcast;
  EXPECT_TRUE(Matches({Meta(MetaKey::kL4Proto), CmpEq({6})}, p, m));
  EXPECT_TRUE(Matches({Meta(MetaKey::kNfProto), CmpEq({kNfProtoIpv4})}, p, m));
  EXPECT_TRUE(Matches({Meta(MetaKey::kProtocol), CmpEq({0x08, 0x00})}, p, m));
  // skb->len: network header to the end (20 + 20 + 4).
  EXPECT_TRUE(Matches({Meta(MetaKey::kLen), CmpEq(Le32(44))}, p, m));
  EXPECT_TRUE(Matches({Meta(MetaKey::kMark), CmpEq(Le32(0x11223344))}, p, m));
  EXPECT_TRUE(Matches({Meta(MetaKey::kPriority), CmpEq(Le32(5))}, p, m));
  EXPECT_TRUE(Matches({Meta(MetaKey::kPktType), CmpEq({kPktBroadcast})}, p, m));
  // 1-byte keys zero the rest of their word.
  EXPECT_TRUE(Matches({Imm({9, 9, 9, 9}), Meta(MetaKey::kL4Proto), CmpEq({6, 0, 0, 0})}, p, m));
  // Unmodelled keys do not match.
  EXPECT_FALSE(Matches({Meta(MetaKey::kSkUid), CmpOpOf(CmpOp::kNeq, Le32(77))}, p, m));
  // No l4proto (non-IP view): break.
  PacketView v = p.view();
  v.l4proto_valid = false;
  Ruleset rs = Simple({R({Meta(MetaKey::kL4Proto), CmpOpOf(CmpOp::kNeq, {1}), Drop()})});
  EXPECT_EQ(Interpreter(rs).Run(Hook::kInput, v, {}).verdict, VerdictCode::kAccept);
}

// skb->len counts from skb->data: PacketView::skb_off when set (the link
// header at netdev egress), else the network header.
TEST(InterpMeta, LenCountsFromSkbData) {
  PacketView v = Tcp().view();
  Ruleset rs44 = Simple({R({Meta(MetaKey::kLen), CmpEq(Le32(44)), Drop()})});
  Ruleset rs58 = Simple({R({Meta(MetaKey::kLen), CmpEq(Le32(58)), Drop()})});
  EXPECT_EQ(Interpreter(rs44).Run(Hook::kInput, v, {}).verdict, VerdictCode::kDrop);
  v.skb_off = v.link_off;  // 14 + 20 + 20 + 4
  EXPECT_EQ(Interpreter(rs44).Run(Hook::kInput, v, {}).verdict, VerdictCode::kAccept);
  EXPECT_EQ(Interpreter(rs58).Run(Hook::kInput, v, {}).verdict, VerdictCode::kDrop);
}

TEST(InterpMeta, SetMarkIsSeenLaterAndReported) {
  Ruleset rs = Simple({Cat({}, MarkSet(0x99)),
                       R({Meta(MetaKey::kMark), CmpEq(Le32(0x99)), Drop()})});
  EvalResult r = RunOn(rs, Tcp());
  EXPECT_EQ(r.verdict, VerdictCode::kDrop);
  EXPECT_EQ(r.mark, 0x99u);
}

// ct state established,related: load, mask with the state bits, != 0.
std::vector<Expr> CtStateIn(uint32_t bits) {
  return {Ct(CtKey::kState), MaskXor(Le32(bits), Le32(0)),
          CmpOpOf(CmpOp::kNeq, Le32(0))};
}

TEST(InterpCt, StateAlwaysLoads) {
  Packet p = Tcp();
  PacketMeta none;  // no conntrack entry
  EXPECT_TRUE(Matches(CtStateIn(kCtStateInvalid), p, none));
  EXPECT_FALSE(Matches(CtStateIn(kCtStateNew | kCtStateEstablished), p, none));
  PacketMeta untracked;
  untracked.ct_state = kCtStateUntracked;
  EXPECT_TRUE(Matches(CtStateIn(kCtStateUntracked), p, untracked));
  EXPECT_FALSE(Matches(CtStateIn(kCtStateInvalid), p, untracked));
  PacketMeta est;
  est.ct_valid = true;
  est.ct_state = kCtStateEstablished;
  EXPECT_TRUE(Matches(CtStateIn(kCtStateEstablished | kCtStateRelated), p, est));
  EXPECT_FALSE(Matches(CtStateIn(kCtStateNew), p, est));
}

TEST(InterpCt, OtherKeysNeedAnEntry) {
  Packet p = Tcp();
  PacketMeta none;
  none.ct_mark = 5;
  none.ct_dir = 1;
  EXPECT_FALSE(Matches({Ct(CtKey::kMark), CmpOpOf(CmpOp::kNeq, Le32(1))}, p, none));
  EXPECT_FALSE(Matches({Ct(CtKey::kDirection), CmpOpOf(CmpOp::kNeq, {7})}, p, none));
  EXPECT_FALSE(Matches({Ct(CtKey::kStatus), CmpOpOf(CmpOp::kNeq, Le32(1))}, p, none));
  PacketMeta m = none;
  m.ct_valid = true;
  m.ct_status = 0xa;
  EXPECT_TRUE(Matches({Ct(CtKey::kMark), CmpEq(Le32(5))}, p, m));
  EXPECT_TRUE(Matches({Ct(CtKey::kDirection), CmpEq({1, 0, 0, 0})}, p, m));
  EXPECT_TRUE(Matches({Ct(CtKey::kStatus), CmpEq(Le32(0xa))}, p, m));
}

TEST(InterpCt, SetMarkOnlyWithAnEntry) {
  Ruleset rs = Simple({R({Imm(Le32(7)), CtSet{CtKey::kMark, 1}})});
  PacketMeta m;
  m.ct_mark = 3;
  EXPECT_EQ(RunOn(rs, Tcp(), Hook::kInput, m).ct_mark, 3u);
  m.ct_valid = true;
  m.ct_state = kCtStateNew;
  EXPECT_EQ(RunOn(rs, Tcp(), Hook::kInput, m).ct_mark, 7u);
}

}  // namespace
}  // namespace rulejit::ir::interp_test
