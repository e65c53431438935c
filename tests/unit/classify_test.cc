// Unit tests of compiler/classify: lifting each expression form into a box,
// the rules that must not lift, chain segmentation, key extraction, and
// first-match answers of small hand-made classifiers against a brute-force
// scan of the same boxes.
#include <random>
#include <vector>

#include "api/internal.h"
#include "compiler/headerspace/box.h"
#include "compiler/classify/classifier.h"
#include "compiler/headerspace/lift_box.h"
#include "compiler/classify/segments.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "packet/parse.h"
#include "tests/support/frames.h"

namespace rulejit::classify {
namespace {

ir::Node N(ir::Expr e) { return ir::Node{std::move(e), {}}; }
ir::Node LoadSaddr(ir::Reg r = 1) { return N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 4, r}); }
ir::Node LoadDaddr(ir::Reg r = 1) { return N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 16, 4, r}); }
ir::Node LoadSport(ir::Reg r = 1) { return N(ir::PayloadLoad{ir::PayloadBase::kTransport, 0, 2, r}); }
ir::Node LoadDport(ir::Reg r = 1) { return N(ir::PayloadLoad{ir::PayloadBase::kTransport, 2, 2, r}); }
ir::Node LoadProto(ir::Reg r = 1) { return N(ir::MetaLoad{ir::MetaKey::kL4Proto, r}); }
ir::Node Mask(ir::Bytes m, ir::Reg r = 1) {
  return N(ir::Bitwise{ir::BitwiseOp::kMaskXor, r, r, static_cast<uint32_t>(m.size()), m,
                       ir::Bytes(m.size(), 0), 0});
}
ir::Node Cmp(ir::CmpOp op, ir::Bytes data, ir::Reg r = 1) { return N(ir::Cmp{op, r, data}); }
ir::Node RangeE(ir::Bytes from, ir::Bytes to, bool neg = false, ir::Reg r = 1) {
  return N(ir::Range{neg, r, from, to});
}
ir::Node Verdict(ir::VerdictCode code) {
  return N(ir::Immediate{ir::kVerdictReg, {}, {code, code == ir::VerdictCode::kJump ||
                                                      code == ir::VerdictCode::kGoto
                                                  ? "other"
                                                  : ""}});
}
ir::Node Accept() { return Verdict(ir::VerdictCode::kAccept); }
ir::Bytes B16(uint16_t v) { return {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)}; }

ir::Rule R(std::vector<ir::Node> exprs) {
  ir::Rule r;
  r.exprs = std::move(exprs);
  return r;
}

Box Lift(std::vector<ir::Node> exprs) {
  auto lifted = headerspace::LiftToBox(R(std::move(exprs)));
  EXPECT_TRUE(lifted.ok()) << lifted.status();
  return lifted.ok() ? lifted->box : Box{};
}

void ExpectNotLiftable(std::vector<ir::Node> exprs, const char* what) {
  auto lifted = headerspace::LiftToBox(R(std::move(exprs)));
  EXPECT_FALSE(lifted.ok()) << what << " lifted to " << BoxToString(lifted->box);
}

constexpr uint64_t Ip(int a, int b, int c, int d) {
  return (uint64_t(a) << 24) | (b << 16) | (c << 8) | d;
}

TEST(ClassifyLift, PrefixBecomesAddressRange) {
  Box b = Lift({LoadSaddr(), Mask({255, 255, 255, 0}), Cmp(ir::CmpOp::kEq, {10, 1, 2, 0}), Accept()});
  EXPECT_EQ(b.lo[kSrcAddr], Ip(10, 1, 2, 0));
  EXPECT_EQ(b.hi[kSrcAddr], Ip(10, 1, 2, 255));
  EXPECT_TRUE(b.Requires(kSrcAddr));
  for (int d : {kDstAddr, kSrcPort, kDstPort, kProto}) {
    EXPECT_EQ(b.lo[d], 0u);
    EXPECT_EQ(b.hi[d], AbsentValue(d)) << "dimension " << d << " must stay unconstrained";
  }
}

TEST(ClassifyLift, ExactAddressPortsAndProto) {
  Box b = Lift({LoadDaddr(), Cmp(ir::CmpOp::kEq, {192, 168, 1, 7}), LoadSport(),
                Cmp(ir::CmpOp::kEq, B16(53)), LoadDport(), RangeE(B16(1000), B16(2000)),
                LoadProto(), Cmp(ir::CmpOp::kEq, {17}), Accept()});
  EXPECT_EQ(b.lo[kDstAddr], Ip(192, 168, 1, 7));
  EXPECT_EQ(b.hi[kDstAddr], Ip(192, 168, 1, 7));
  EXPECT_EQ(b.lo[kSrcPort], 53u);
  EXPECT_EQ(b.hi[kSrcPort], 53u);
  EXPECT_EQ(b.lo[kDstPort], 1000u);
  EXPECT_EQ(b.hi[kDstPort], 2000u);
  EXPECT_EQ(b.lo[kProto], 17u);
  EXPECT_EQ(b.hi[kProto], 17u);
  EXPECT_EQ(b.hi[kSrcAddr], AbsentValue(kSrcAddr));
}

TEST(ClassifyLift, OrderedCompares) {
  auto dport = [](ir::CmpOp op, uint16_t v) {
    Box b = Lift({LoadDport(), Cmp(op, B16(v)), Accept()});
    return std::pair<uint64_t, uint64_t>(b.lo[kDstPort], b.hi[kDstPort]);
  };
  EXPECT_EQ(dport(ir::CmpOp::kLt, 1024), (std::pair<uint64_t, uint64_t>(0, 1023)));
  EXPECT_EQ(dport(ir::CmpOp::kLte, 1024), (std::pair<uint64_t, uint64_t>(0, 1024)));
  EXPECT_EQ(dport(ir::CmpOp::kGt, 1024), (std::pair<uint64_t, uint64_t>(1025, 65535)));
  EXPECT_EQ(dport(ir::CmpOp::kGte, 1024), (std::pair<uint64_t, uint64_t>(1024, 65535)));
  // neq at an edge of the domain is one interval.
  EXPECT_EQ(dport(ir::CmpOp::kNeq, 0), (std::pair<uint64_t, uint64_t>(1, 65535)));
  EXPECT_EQ(dport(ir::CmpOp::kNeq, 65535), (std::pair<uint64_t, uint64_t>(0, 65534)));
  // Impossible compares give an empty box, which still lifts.
  EXPECT_TRUE(Lift({LoadDport(), Cmp(ir::CmpOp::kLt, B16(0)), Accept()}).Empty());
  EXPECT_TRUE(Lift({LoadDport(), Cmp(ir::CmpOp::kGt, B16(65535)), Accept()}).Empty());
}

TEST(ClassifyLift, MaskedOrderedComparesAndRanges) {
  // (sport & 0xff00) >= 0x0150  <=>  sport >= 0x0200
  Box b = Lift({LoadSport(), Mask({0xff, 0x00}), Cmp(ir::CmpOp::kGte, B16(0x0150)), Accept()});
  EXPECT_EQ(b.lo[kSrcPort], 0x0200u);
  EXPECT_EQ(b.hi[kSrcPort], 0xffffu);
  // (sport & 0xff00) <= 0x0150  <=>  sport <= 0x01ff
  b = Lift({LoadSport(), Mask({0xff, 0x00}), Cmp(ir::CmpOp::kLte, B16(0x0150)), Accept()});
  EXPECT_EQ(b.hi[kSrcPort], 0x01ffu);
  // Equality with bits outside the mask never holds.
  EXPECT_TRUE(Lift({LoadSaddr(), Mask({255, 0, 0, 0}), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}), Accept()})
                  .Empty());
  // ... so its negation always holds (but still needs the field).
  b = Lift({LoadSaddr(), Mask({255, 0, 0, 0}), Cmp(ir::CmpOp::kNeq, {10, 0, 0, 1}), Accept()});
  EXPECT_EQ(b.lo[kSrcAddr], 0u);
  EXPECT_EQ(b.hi[kSrcAddr], FieldMax(kSrcAddr));
  // A /0 mask makes every address equal to 0.0.0.0.
  b = Lift({LoadSaddr(), Mask({0, 0, 0, 0}), Cmp(ir::CmpOp::kEq, {0, 0, 0, 0}), Accept()});
  EXPECT_EQ(b.hi[kSrcAddr], FieldMax(kSrcAddr));
  // range neq touching the bottom of the domain.
  b = Lift({LoadDport(), RangeE(B16(0), B16(1023), true), Accept()});
  EXPECT_EQ(b.lo[kDstPort], 1024u);
  EXPECT_EQ(b.hi[kDstPort], 65535u);
  // Two compares on one field intersect.
  b = Lift({LoadDport(), Cmp(ir::CmpOp::kGte, B16(10)), Cmp(ir::CmpOp::kLt, B16(20)), Accept()});
  EXPECT_EQ(b.lo[kDstPort], 10u);
  EXPECT_EQ(b.hi[kDstPort], 19u);
}

TEST(ClassifyLift, LoadWithoutCompareStillRequiresTheField) {
  Box b = Lift({LoadSport(), Accept()});
  EXPECT_EQ(b.lo[kSrcPort], 0u);
  EXPECT_EQ(b.hi[kSrcPort], 65535u);
  EXPECT_TRUE(b.Requires(kSrcPort));
  EXPECT_FALSE(b.Requires(kDstPort));
  b = Lift({LoadProto(), Accept()});
  EXPECT_TRUE(b.Requires(kProto));
}

TEST(ClassifyLift, FusedCompare) {
  ir::FusedCmp f;
  f.load = ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 4, 1};
  f.mask = {255, 192, 0, 0};
  f.op = ir::CmpOp::kNeq;
  f.data = {10, 0, 0, 0};
  // ! -s 10.0.0.0/10 is two intervals: does not lift.
  ExpectNotLiftable({N(f), Accept()}, "fused neq in the middle");
  f.op = ir::CmpOp::kEq;
  Box b = Lift({N(f), Accept()});
  EXPECT_EQ(b.lo[kSrcAddr], Ip(10, 0, 0, 0));
  EXPECT_EQ(b.hi[kSrcAddr], Ip(10, 63, 255, 255));
}

// `sport 539 dport 26`, fused by the passes into one 4-byte compare.
TEST(ClassifyLift, FusedPortPair) {
  ir::FusedCmp f;
  f.load = ir::PayloadLoad{ir::PayloadBase::kTransport, 0, 4, 1};
  f.op = ir::CmpOp::kEq;
  f.data = {0x02, 0x1b, 0x00, 0x1a};
  Box b = Lift({N(f), Accept()});
  EXPECT_EQ(b.lo[kSrcPort], 539u);
  EXPECT_EQ(b.hi[kSrcPort], 539u);
  EXPECT_EQ(b.lo[kDstPort], 26u);
  EXPECT_EQ(b.hi[kDstPort], 26u);
  // A zero half constrains nothing but still needs the field.
  f.mask = {0xff, 0xff, 0, 0};
  f.data = {0x02, 0x1b, 0, 0};
  b = Lift({N(f), Accept()});
  EXPECT_EQ(b.lo[kDstPort], 0u);
  EXPECT_EQ(b.hi[kDstPort], FieldMax(kDstPort));
  f.mask = {0xff, 0x0f, 0xff, 0xff};
  ExpectNotLiftable({N(f), Accept()}, "non-prefix half mask");
  f.mask = {};
  f.op = ir::CmpOp::kNeq;
  ExpectNotLiftable({N(f), Accept()}, "neq of both ports");
}

// nft's /8, /16, /24: loads of the address's first bytes. In an ip table
// they are prefixes of the address; elsewhere the load may succeed where
// the whole address is not there, so they stay linear.
TEST(ClassifyLift, PartialAddressLoadsInAnIpTable) {
  const headerspace::BoxContext ip{.complete_ipv4_header = true};
  auto lift = [&](std::vector<ir::Node> exprs) {
    auto lifted = headerspace::LiftToBox(R(std::move(exprs)), ip);
    EXPECT_TRUE(lifted.ok()) << lifted.status();
    return lifted.ok() ? lifted->box : Box{};
  };
  // ip saddr 10.1.2.0/24
  Box b = lift({N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 3, 1}), Cmp(ir::CmpOp::kEq, {10, 1, 2}),
                Accept()});
  EXPECT_EQ(b.lo[kSrcAddr], Ip(10, 1, 2, 0));
  EXPECT_EQ(b.hi[kSrcAddr], Ip(10, 1, 2, 255));
  // ip daddr 10.0.0.0/12 as a 2-byte load masked: 10.0.0.0 - 10.15.255.255
  b = lift({N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 16, 2, 1}), Mask({255, 240}),
            Cmp(ir::CmpOp::kEq, {10, 0}), Accept()});
  EXPECT_EQ(b.lo[kDstAddr], Ip(10, 0, 0, 0));
  EXPECT_EQ(b.hi[kDstAddr], Ip(10, 15, 255, 255));
  // first byte in 10-12, and as a fused compare != 10
  b = lift({N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 1, 1}), RangeE({10}, {12}), Accept()});
  EXPECT_EQ(b.lo[kSrcAddr], Ip(10, 0, 0, 0));
  EXPECT_EQ(b.hi[kSrcAddr], Ip(12, 255, 255, 255));
  ir::FusedCmp f;
  f.load = ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 1, 1};
  f.op = ir::CmpOp::kLt;
  f.data = {10};
  b = lift({N(f), Accept()});
  EXPECT_EQ(b.lo[kSrcAddr], 0u);
  EXPECT_EQ(b.hi[kSrcAddr], Ip(9, 255, 255, 255));
  // Outside an ip table; and bytes that are no prefix (offset 13).
  ExpectNotLiftable({N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 3, 1}),
                     Cmp(ir::CmpOp::kEq, {10, 1, 2}), Accept()},
                    "partial load without the ip table context");
  EXPECT_FALSE(headerspace::LiftToBox(R({N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 13, 3, 1}),
                           Cmp(ir::CmpOp::kEq, {1, 2, 3}), Accept()}),
                        ip)
                   .ok());
}

// A rule a pass blanked is a no-op: it lifts to a box nothing is in.
TEST(ClassifyLift, EmptyRuleNeverMatches) {
  auto lifted = headerspace::LiftToBox(R({}));
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_TRUE(lifted->box.Empty());
}

TEST(ClassifyLift, ActionPart) {
  auto lifted = headerspace::LiftToBox(R({LoadSaddr(), Cmp(ir::CmpOp::kEq, {1, 2, 3, 4}), N(ir::Counter{}),
                            Verdict(ir::VerdictCode::kDrop)}));
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(lifted->action_begin, 2u);
  EXPECT_TRUE(headerspace::LiftToBox(R({N(ir::Counter{}), Verdict(ir::VerdictCode::kReturn)})).ok());
  EXPECT_TRUE(headerspace::LiftToBox(R({Verdict(ir::VerdictCode::kGoto)})).ok());
  EXPECT_TRUE(headerspace::LiftToBox(R({LoadDport(), Cmp(ir::CmpOp::kEq, B16(23)), N(ir::Reject{})})).ok());
}

TEST(ClassifyLift, NotLiftable) {
  ExpectNotLiftable({LoadDport(), Cmp(ir::CmpOp::kNeq, B16(80)), Accept()}, "neq in the middle");
  ExpectNotLiftable({LoadDport(), RangeE(B16(10), B16(20), true), Accept()}, "range neq in the middle");
  ExpectNotLiftable({LoadSaddr(), Mask({255, 0, 255, 0}), Cmp(ir::CmpOp::kEq, {10, 0, 1, 0}), Accept()},
                    "non-prefix mask");
  ExpectNotLiftable({LoadSaddr(), N(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 4, {255, 255, 255, 255},
                                                {1, 0, 0, 0}, 0}),
                     Cmp(ir::CmpOp::kEq, {10, 0, 1, 0}), Accept()},
                    "xor");
  ExpectNotLiftable({N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 9, 1, 1}), Cmp(ir::CmpOp::kEq, {6}),
                     Accept()},
                    "unmodelled payload field");
  ExpectNotLiftable({N(ir::MetaLoad{ir::MetaKey::kMark, 1}), Cmp(ir::CmpOp::kEq, {1, 0, 0, 0}), Accept()},
                    "meta mark");
  ExpectNotLiftable({LoadSaddr(), N(ir::Lookup{1, "s", std::nullopt, false}), Accept()}, "lookup");
  ExpectNotLiftable({Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}), Accept()}, "cmp on an unloaded register");
  ExpectNotLiftable({LoadSaddr(), Cmp(ir::CmpOp::kEq, {10, 0}), Accept()}, "cmp shorter than the field");
  ExpectNotLiftable({LoadSaddr(1), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}, 2), Accept()}, "cmp on another register");
  // reg 1 loses the address when reg 8 (its first word) is overwritten.
  ExpectNotLiftable({LoadSaddr(1), LoadDport(8), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}, 1), Accept()},
                    "clobbered register");
  ExpectNotLiftable({LoadSaddr(), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}), Verdict(ir::VerdictCode::kJump)},
                    "jump");
  ExpectNotLiftable({LoadSaddr(), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1})}, "no verdict");
  ExpectNotLiftable({LoadSaddr(), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}), N(ir::Counter{})}, "counter, no verdict");
  ExpectNotLiftable({LoadSaddr(), N(ir::Counter{}), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}), Accept()},
                    "statement inside the match");
  ExpectNotLiftable({LoadSaddr(), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}), Accept(), N(ir::Counter{})},
                    "expression after the verdict");
}

TEST(ClassifyLift, UnrelatedRegistersDoNotInterfere) {
  // reg 2 holds the port while reg 1 holds the address.
  Box b = Lift({LoadSaddr(1), LoadDport(2), Cmp(ir::CmpOp::kEq, {10, 0, 0, 1}, 1),
                Cmp(ir::CmpOp::kEq, B16(22), 2), Accept()});
  EXPECT_EQ(b.lo[kSrcAddr], Ip(10, 0, 0, 1));
  EXPECT_EQ(b.lo[kDstPort], 22u);
}

TEST(ClassifySegments, RunsOfLiftableRules) {
  ir::Chain c;
  c.rules.push_back(R({LoadDport(), Cmp(ir::CmpOp::kEq, B16(22)), Accept()}));
  c.rules.push_back(R({LoadDport(), Cmp(ir::CmpOp::kEq, B16(23)), Accept()}));
  c.rules.push_back(R({N(ir::MetaLoad{ir::MetaKey::kMark, 1}), Cmp(ir::CmpOp::kEq, {1, 0, 0, 0}), Accept()}));
  c.rules.push_back(R({LoadDport(), Cmp(ir::CmpOp::kEq, B16(24)), Accept()}));
  std::vector<Segment> s = SplitChain(c);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].liftable);
  EXPECT_EQ(s[0].begin, 0u);
  EXPECT_EQ(s[0].end, 2u);
  EXPECT_FALSE(s[1].liftable);
  EXPECT_EQ(s[1].begin, 2u);
  EXPECT_EQ(s[1].end, 3u);
  EXPECT_TRUE(s[2].liftable);
  EXPECT_EQ(s[2].end, 4u);
  EXPECT_TRUE(Classifier::Build(c, 0, 2).ok());
  EXPECT_FALSE(Classifier::Build(c, 0, 3).ok());
  EXPECT_FALSE(Classifier::Build(c, 3, 5).ok());
}

TEST(ClassifyKey, FieldsPresentOnlyWhenTheirLoadsWouldSucceed) {
  testing::FrameSpec spec{.src = "10.0.0.1", .dst = "10.0.0.2", .proto = 6, .sport = 1234, .dport = 80};
  std::vector<uint8_t> f = testing::BuildFrame(spec);
  Key k = ExtractKey(packet::ParseEthernet(f.data(), f.size()));
  EXPECT_EQ(k.v[kSrcAddr], Ip(10, 0, 0, 1));
  EXPECT_EQ(k.v[kDstAddr], Ip(10, 0, 0, 2));
  EXPECT_EQ(k.v[kSrcPort], 1234u);
  EXPECT_EQ(k.v[kDstPort], 80u);
  EXPECT_EQ(k.v[kProto], 6u);
  // A view cut after the source port: dport absent, sport present.
  PacketView v = packet::ParseEthernet(f.data(), f.size());
  v.len = v.transport_off + 3;
  k = ExtractKey(v);
  EXPECT_EQ(k.v[kSrcPort], 1234u);
  EXPECT_EQ(k.v[kDstPort], AbsentValue(kDstPort));
  // Cut inside the destination address.
  v.len = v.network_off + 18;
  k = ExtractKey(v);
  EXPECT_EQ(k.v[kSrcAddr], Ip(10, 0, 0, 1));
  EXPECT_EQ(k.v[kDstAddr], AbsentValue(kDstAddr));
  // A non-first fragment has no ports.
  spec.frag_offset = 10;
  f = testing::BuildFrame(spec);
  k = ExtractKey(packet::ParseEthernet(f.data(), f.size()));
  EXPECT_EQ(k.v[kSrcPort], AbsentValue(kSrcPort));
  EXPECT_EQ(k.v[kDstPort], AbsentValue(kDstPort));
  EXPECT_EQ(k.v[kProto], 6u);
  // Not IP: the network-header loads still read bytes (as the kernel's do),
  // but there is no transport header and no l4proto.
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  arp[14 + 12] = 7;
  v = packet::ParseEthernet(arp.data(), arp.size());
  k = ExtractKey(v);
  EXPECT_EQ(k.v[kSrcAddr], v.network_off == kAbsent ? AbsentValue(kSrcAddr) : Ip(7, 0, 0, 0));
  for (int d : {kSrcPort, kDstPort, kProto}) EXPECT_EQ(k.v[d], AbsentValue(d)) << d;
  // No network header at all.
  v = PacketView{};
  v.data = arp.data();
  v.len = arp.size();
  k = ExtractKey(v);
  for (int d = 0; d < kDims; ++d) EXPECT_EQ(k.v[d], AbsentValue(d)) << d;
}

// Brute force: the first box holding the key.
int Scan(const std::vector<RuleBox>& rules, const Key& k) {
  for (const RuleBox& r : rules) {
    if (r.box.Contains(k)) return r.rule;
  }
  return -1;
}

Box RandomBox(std::mt19937& rng) {
  Box b;
  for (int d = 0; d < kDims; ++d) {
    const uint64_t max = FieldMax(d);
    switch (rng() % 4) {
      case 0: break;  // unconstrained (absent included)
      case 1: b.hi[d] = max; break;  // loaded, any value
      default: {
        // Small values so that boxes overlap often.
        uint64_t a = rng() % 16, c = rng() % 16;
        b.lo[d] = std::min(a, c);
        b.hi[d] = std::max(a, c);
      }
    }
  }
  return b;
}

Key RandomKey(std::mt19937& rng) {
  Key k;
  for (int d = 0; d < kDims; ++d) {
    uint32_t pick = rng() % 8;
    k.v[d] = pick == 0 ? AbsentValue(d) : pick == 1 ? FieldMax(d) : rng() % 18;
  }
  return k;
}

TEST(ClassifyClassifier, OverlappingRulesFirstMatchWins) {
  // Rule 0 is inside rule 1, rule 2 covers everything: first match decides.
  std::vector<RuleBox> rules(3);
  rules[0].box.lo[kDstPort] = rules[0].box.hi[kDstPort] = 22;
  rules[0].rule = 10;
  rules[1].box.lo[kDstPort] = 0;
  rules[1].box.hi[kDstPort] = 1023;
  rules[1].rule = 11;
  rules[2].rule = 12;
  for (uint32_t leaf : {1u, 8u}) {
    Classifier c = Classifier::FromBoxes(rules, {.leaf_size = leaf});
    EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, 22, 6}}), 10);
    EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, 23, 6}}), 11);
    EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, 1024, 6}}), 12);
    EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, AbsentValue(kDstPort), 6}}), 12);
    EXPECT_GT(c.memory_bytes(), 0u);
  }
  // Without the catch-all, a packet without ports matches nothing.
  rules.pop_back();
  Classifier c = Classifier::FromBoxes(rules);
  EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, AbsentValue(kDstPort), 6}}), -1);
  EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, 2000, 6}}), -1);
}

TEST(ClassifyClassifier, RandomBoxesAgreeWithScan) {
  int matched = 0, missed = 0, fell_back = 0;
  for (int seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    std::vector<RuleBox> rules;
    const int n = 1 + rng() % 120;
    for (int i = 0; i < n; ++i) rules.push_back({RandomBox(rng), i});
    // One tree; partitioned by address range size (3 bits: the random boxes
    // fall into all four groups); one tree when within budget; a budget of
    // 1 box a rule, which a tree with leaves of 8 exceeds: the one-tree
    // attempt is thrown away and the groups built instead.
    struct Config {
      uint32_t leaf;
      bool partition;
      uint32_t budget;
    };
    // Each with every instruction set's lookups the CPU has.
    for (const Config& config :
         {Config{1, true, 0}, Config{4, false, 0}, Config{16, true, 100}, Config{8, true, 1}})
    for (const Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kBaseline}) {
      if (!CpuHas(isa)) continue;
      const uint32_t leaf = config.leaf;
      ClassifierOptions options;
      options.leaf_size = leaf;
      options.partition = config.partition;
      options.address_bits_small = 3;
      options.single_tree_budget = config.budget;
      options.max_isa = isa;
      Classifier c = Classifier::FromBoxes(rules, options);
      ASSERT_EQ(c.isa(), isa);  // the walk asked for, where the CPU has it
      if (config.partition && config.budget == 0 && n > 40) {
        EXPECT_GT(c.stats().trees, 1u) << "seed " << seed;
      }
      if (config.budget == 1) {  // one tree only when it copied no box
        EXPECT_TRUE(c.stats().trees > 1 || c.stats().leaf_entries <= c.stats().rules)
            << "seed " << seed;
        fell_back += c.stats().trees > 1;
      }
      std::vector<Key> keys;
      for (int i = 0; i < 300; ++i) keys.push_back(RandomKey(rng));
      std::vector<int> burst(keys.size());
      c.FirstMatchBurst(keys.data(), keys.size(), burst.data());
      for (size_t i = 0; i < keys.size(); ++i) {
        const int want = Scan(rules, keys[i]);
        ASSERT_EQ(c.FirstMatch(keys[i]), want) << "seed " << seed << " leaf " << leaf
                                               << " isa " << IsaName(isa);
        ASSERT_EQ(burst[i], want) << "seed " << seed << " leaf " << leaf << " isa " << IsaName(isa)
                                  << " (burst)";
        (want >= 0 ? matched : missed)++;
      }
    }
  }
  // Both outcomes must be exercised for the agreement to mean something.
  EXPECT_GT(matched, 2000);
  EXPECT_GT(missed, 2000);
  EXPECT_GT(fell_back, 20);
}

// Rules small in both addresses and rules small in destination only, all
// at distinct destinations: one tree holds them with no copy of a box, so
// their two partition groups share it. Rules small in source only cross
// the destination-small ones (one tree would copy boxes of one kind under
// every cut of the other's addresses): they keep a tree of their own.
TEST(ClassifyClassifier, PartitionGroupsShareATreeWhenNoBoxIsCopied) {
  auto range = [](Box& b, int d, uint64_t lo) {
    b.lo[d] = lo;
    b.hi[d] = lo + 255;
  };
  std::vector<RuleBox> rules;
  for (int i = 0; i < 64; ++i) {
    Box b;
    range(b, kDstAddr, uint64_t(i) << 8);
    if (i % 2 == 0) range(b, kSrcAddr, uint64_t(i) << 8);
    rules.push_back({b, i});
  }
  ClassifierOptions options;
  options.single_tree_budget = 0;  // the groups' trees, no one-tree attempt
  EXPECT_EQ(Classifier::FromBoxes(rules, options).stats().trees, 1u);
  for (int i = 0; i < 64; ++i) {
    Box b;
    range(b, kSrcAddr, uint64_t(i) << 20);
    rules.push_back({b, 64 + i});
  }
  Classifier c = Classifier::FromBoxes(rules, options);
  EXPECT_EQ(c.stats().trees, 2u);
  std::vector<Key> keys;
  for (const RuleBox& r : rules) {
    Key k;
    for (int d = 0; d < kDims; ++d) k.v[d] = r.box.lo[d] + (r.box.hi[d] - r.box.lo[d]) / 2;
    keys.push_back(k);
  }
  std::vector<int> burst(keys.size());
  c.FirstMatchBurst(keys.data(), keys.size(), burst.data());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(c.FirstMatch(keys[i]), Scan(rules, keys[i])) << i;
    EXPECT_EQ(burst[i], Scan(rules, keys[i])) << i;
  }
}

TEST(ClassifyClassifier, EmptyClassifierMatchesNothing) {
  Classifier c = Classifier::FromBoxes({});
  EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, 4, 5}}), -1);
  Box empty;
  empty.lo[kProto] = 5;
  empty.hi[kProto] = 4;
  c = Classifier::FromBoxes({{empty, 0}});
  EXPECT_EQ(c.FirstMatch(Key{{1, 2, 3, 4, 5}}), -1);
  EXPECT_EQ(c.stats().rules, 0u);
}

}  // namespace
}  // namespace rulejit::classify

namespace rulejit::classify {
namespace {

TEST(ClassifyLift, IptablesPortRulesLiftWithFirstFragmentPorts) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(
      "*filter\n:FORWARD ACCEPT [0:0]\n"
      "-A FORWARD -p tcp --sport 22 --dport 80 -j DROP\n"
      "-A FORWARD -p udp -j DROP\n"
      "-A FORWARD ! -d 10.0.0.0/8 -j DROP\n"
      "-A FORWARD -p tcp --sport 100:600 -j DROP\n"
      "-A FORWARD -f -j DROP\n"
      "COMMIT\n",
      "frag.ipt");
  ASSERT_TRUE(rs.ok()) << rs.status();
  const ir::Table& table = IrOf(*rs).tables[0];
  const ir::Chain& chain = table.chains[0];
  const headerspace::BoxContext context = headerspace::BoxContextForChain(table, chain);
  EXPECT_TRUE(context.ports_first_fragment_only);
  for (int r : {0, 1, 3}) {  // 2: `! -d` leaves two intervals, a box can't
    EXPECT_TRUE(headerspace::LiftToBox(chain.rules[r], context).ok())
        << r << ": " << headerspace::LiftToBox(chain.rules[r], context).status();
  }
  EXPECT_FALSE(headerspace::LiftToBox(chain.rules[4], context).ok());  // -f: the test alone
  headerspace::BoxContext fast = context;
  fast.ports_first_fragment_only = false;
  EXPECT_FALSE(headerspace::LiftToBox(chain.rules[0], fast).ok());  // the test is no field then
}

TEST(ClassifyKey, FirstFragmentPortsAreAbsentOnLaterFragments) {
  testing::FrameSpec spec;
  spec.proto = 17;
  spec.frag_offset = 100;
  spec.payload = {0, 22, 0, 80, 0, 0, 0, 0};
  std::vector<uint8_t> f = testing::BuildFrame(spec);
  PacketView v = packet::ParseEthernet(f.data(), f.size());
  EXPECT_NE(ExtractKey(v).v[kDstPort], AbsentValue(kDstPort));  // the fast path reads data
  EXPECT_EQ(ExtractKey(v, true).v[kDstPort], AbsentValue(kDstPort));
  EXPECT_EQ(ExtractKey(v, true).v[kSrcPort], AbsentValue(kSrcPort));
}

}  // namespace
}  // namespace rulejit::classify
