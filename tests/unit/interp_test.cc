// Reference interpreter: one group of tests per expression kind, then chain
// control flow (jump/goto/return/policies, several base chains, families).
// The IR is built by hand with the small helpers below.
#include "api/internal.h"
#include "ir/interp.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rulejit/rulejit.h"
#include "packet/parse.h"
#include "tests/support/frames.h"

namespace rulejit::ir {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

// ---------------------------------------------------------------------------
// IR helpers

Expr Load(PayloadBase base, uint32_t off, uint32_t len, Reg r = 1) {
  return PayloadLoad{base, off, len, r};
}
Expr LoadNet(uint32_t off, uint32_t len, Reg r = 1) {
  return Load(PayloadBase::kNetwork, off, len, r);
}
Expr LoadTh(uint32_t off, uint32_t len, Reg r = 1) {
  return Load(PayloadBase::kTransport, off, len, r);
}
Expr CmpOpOf(CmpOp op, Bytes data, Reg r = 1) { return Cmp{op, r, std::move(data)}; }
Expr CmpEq(Bytes data, Reg r = 1) { return CmpOpOf(CmpOp::kEq, std::move(data), r); }
Expr Meta(MetaKey key, Reg r = 1) { return MetaLoad{key, r}; }
Expr Ct(CtKey key, Reg r = 1) { return CtLoad{key, r}; }
Expr Imm(Bytes data, Reg r = 1) {
  Immediate i;
  i.dreg = r;
  i.data = std::move(data);
  return i;
}
Expr V(VerdictCode code, std::string chain = "") {
  Immediate i;
  i.verdict = Verdict{code, std::move(chain)};
  return i;
}
Expr Accept() { return V(VerdictCode::kAccept); }
Expr Drop() { return V(VerdictCode::kDrop); }
Expr Return() { return V(VerdictCode::kReturn); }
Expr Jump(std::string c) { return V(VerdictCode::kJump, std::move(c)); }
Expr Goto(std::string c) { return V(VerdictCode::kGoto, std::move(c)); }

Rule R(std::vector<Expr> exprs) {
  Rule r;
  for (Expr& e : exprs) r.exprs.push_back(Node{std::move(e), {}});
  return r;
}
// `meta mark set M`: two expressions.
std::vector<Expr> MarkSet(uint32_t mark) {
  Bytes b(4);
  std::memcpy(b.data(), &mark, 4);
  return {Imm(b), MetaSet{MetaKey::kMark, 1}};
}
Rule Cat(std::vector<Expr> a, std::vector<Expr> b) {
  for (Expr& e : b) a.push_back(std::move(e));
  return R(std::move(a));
}

Chain Base(std::string name, std::vector<Rule> rules, Hook hook = Hook::kInput,
           int32_t prio = 0, VerdictCode policy = VerdictCode::kAccept,
           std::string device = "") {
  Chain c;
  c.name = std::move(name);
  c.base = BaseChain{"filter", hook, prio, std::move(device), policy};
  c.rules = std::move(rules);
  return c;
}
Chain Regular(std::string name, std::vector<Rule> rules) {
  Chain c;
  c.name = std::move(name);
  c.rules = std::move(rules);
  return c;
}
Table T(Family f, std::vector<Chain> chains, std::vector<Set> sets = {}) {
  Table t;
  t.family = f;
  t.name = "t";
  t.chains = std::move(chains);
  t.sets = std::move(sets);
  return t;
}
Ruleset RS(std::vector<Table> tables) {
  Ruleset rs;
  rs.tables = std::move(tables);
  return rs;
}
// One ip table, one input base chain with these rules.
Ruleset Simple(std::vector<Rule> rules, VerdictCode policy = VerdictCode::kAccept) {
  return RS({T(Family::kIp, {Base("input", std::move(rules), Hook::kInput, 0, policy)})});
}

Bytes Be16(uint16_t v) { return {uint8_t(v >> 8), uint8_t(v)}; }
Bytes Le32(uint32_t v) {
  Bytes b(4);
  std::memcpy(b.data(), &v, 4);
  return b;
}
Bytes Concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A frame kept alive with its parsed view.
struct Packet {
  std::vector<uint8_t> bytes;
  PacketView view() const {
    return packet::ParseEthernet(bytes.data(), static_cast<uint32_t>(bytes.size()));
  }
};
Packet Tcp(uint16_t dport = 22, std::string src = "10.0.0.1") {
  return {BuildFrame(FrameSpec{.src = src, .proto = 6, .dport = dport,
                               .payload = {0xde, 0xad, 0xbe, 0xef}})};
}
Packet Tcp6(uint16_t dport = 22) {
  return {BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2",
                               .proto = 6, .dport = dport})};
}

EvalResult RunOn(const Ruleset& rs, const Packet& p, Hook hook = Hook::kInput,
                 PacketMeta meta = {}, InterpState* state = nullptr) {
  Interpreter interp(rs);
  return interp.Run(hook, p.view(), meta, state);
}
// Does the rule `exprs + drop` match the packet (policy accept)?
bool Matches(std::vector<Expr> exprs, const Packet& p, PacketMeta meta = {},
             std::vector<Set> sets = {}) {
  exprs.push_back(Drop());
  Ruleset rs = RS({T(Family::kIp, {Base("input", {R(std::move(exprs))})},
                     std::move(sets))});
  return RunOn(rs, p, Hook::kInput, meta).verdict == VerdictCode::kDrop;
}

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

PacketMeta WithIif(const char* name, uint32_t index) {
  PacketMeta m;
  std::strncpy(m.iifname, name, sizeof(m.iifname));
  m.iif = index;
  m.has_iif = true;
  return m;
}
Bytes Name(const char* n) {
  Bytes b(16, 0);
  std::memcpy(b.data(), n, std::strlen(n));
  return b;
}

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
}  // namespace rulejit::ir
