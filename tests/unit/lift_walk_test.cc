// Tests of the one header-space lifter (compiler/headerspace/lift_walk.h):
// the register file, the walk's dispatch to a policy, and that its two
// policies, box and cube, are projections of one model: where a rule lifts
// in both, the box's fields and the cube's dimensions agree.
#include <string>
#include <vector>

#include "compiler/headerspace/fields.h"
#include "compiler/headerspace/lift.h"
#include "compiler/headerspace/lift_walk.h"
#include "gtest/gtest.h"
#include "tests/support/rulesets.h"

namespace rulejit::headerspace {
namespace {

TEST(SymbolicRegisters, AWriteForgetsTheWholeValueItOverwrites) {
  SymbolicRegisters<char> regs;
  ASSERT_TRUE(regs.Write(1, 8, 'a'));  // words 0 and 1
  ASSERT_NE(regs.At(0), nullptr);
  EXPECT_EQ(regs.At(0)->sym, 'a');
  EXPECT_EQ(regs.At(0)->len, 8u);
  EXPECT_EQ(regs.At(1), nullptr);  // inside 'a', not its start
  ASSERT_TRUE(regs.Write(9, 2, 'b'));  // word 1
  EXPECT_EQ(regs.At(0), nullptr);
  ASSERT_NE(regs.At(1), nullptr);
  EXPECT_EQ(regs.At(1)->sym, 'b');
  EXPECT_EQ(regs.At(1)->bytes, 4u);
  regs.Forget(9, 4);
  EXPECT_EQ(regs.At(1), nullptr);
  EXPECT_FALSE(regs.Write(23, 8, 'c'));  // word 15 + 2 words
  EXPECT_FALSE(regs.Write(ir::kVerdictReg, 4, 'c'));
}

// Records what the walk hands it; symbols are the names of their loads.
struct RecordingPolicy {
  using Slot = SymbolicRegisters<std::string>::Slot;
  std::vector<std::string> calls;
  RuleWalk<RecordingPolicy, std::string> walk{*this};
  size_t skip_at = kStopWalk;  // Claim takes two expressions here
  bool done = false;

  size_t Claim(const std::vector<ir::Node>&, size_t i) { return i == skip_at ? 2 : 0; }
  bool Done() const { return done; }
  static bool Readable(const Slot& slot, size_t len) { return slot.len == len; }
  bool NoSource(const char* what, int word) {
    calls.push_back(std::string("no source for ") + what + " at " + std::to_string(word));
    return false;
  }
  bool BadWrite(ir::Reg) { return false; }
  bool Payload(const ir::PayloadLoad& e) {
    calls.push_back("payload");
    return walk.Write(e.dreg, e.len, "payload@" + std::to_string(e.offset));
  }
  bool Meta(const ir::MetaLoad& e) { return walk.Write(e.dreg, 1, "meta"); }
  bool CanDerive(const ir::Bitwise&) { return true; }
  std::optional<std::string> Derive(const std::string& src, const ir::Bitwise&) {
    calls.push_back("mask " + src);
    return src + "&m";
  }
  bool Compare(const std::string& src, const ir::Cmp&) {
    calls.push_back("cmp " + src);
    return true;
  }
  bool Range(const ir::Range&) { return true; }
  bool Fused(const ir::FusedCmp&) { return true; }
  bool Verdict(ir::VerdictCode code, const std::string&, size_t i) {
    calls.push_back(std::string(code == ir::VerdictCode::kDrop ? "drop" : "verdict") + " at " +
                    std::to_string(i));
    done = true;
    return true;
  }
  bool Other(const ir::Expr&, size_t i) {
    calls.push_back("other at " + std::to_string(i));
    return true;
  }
};

std::vector<ir::Node> SaddrMaskCmpCounterDrop() {
  return {
      {ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 4, 1}, {}},
      {ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 4, {255, 0, 0, 0}, {0, 0, 0, 0}, 0}, {}},
      {ir::Cmp{ir::CmpOp::kEq, 1, {10, 0, 0, 0}}, {}},
      {ir::Counter{}, {}},
      {ir::Reject{}, {}},  // the walk hands it on as drop
      {ir::Counter{}, {}},  // after the verdict: the policy is done
  };
}

TEST(RuleWalk, LoadsMasksAndComparesGoThroughTheRegisters) {
  RecordingPolicy p;
  p.walk.Run(SaddrMaskCmpCounterDrop());
  EXPECT_EQ(p.calls, (std::vector<std::string>{"payload", "mask payload@12", "cmp payload@12&m",
                                               "other at 3", "drop at 4"}));
}

TEST(RuleWalk, ClaimedExpressionsAreSkippedAndAMissingSourceStops) {
  RecordingPolicy p;
  p.skip_at = 0;  // load and mask: the cmp then reads nothing
  p.walk.Run(SaddrMaskCmpCounterDrop());
  EXPECT_EQ(p.calls, (std::vector<std::string>{"no source for cmp at 0"}));
}

Dim CubeDimOf(int box_dim) {
  for (Dim d : {Dim::kSaddr, Dim::kDaddr, Dim::kSport, Dim::kDport}) {
    if (BoxPayloadDim(d) == box_dim) return d;
  }
  return Dim::kProto;  // the box's protocol dimension: meta l4proto
}

// Rules that lift exactly in both projections: on IPv4 packets of the
// model, each box field (without "absent") is the cube's dimension.
TEST(Projections, BoxAndCubeAgreeOnTheFieldsTheyShare) {
  const ir::Ruleset rs = testing::NftRuleset(R"(table ip t {
  chain c {
    type filter hook input priority 0; policy accept;
    ip saddr 10.0.0.0/8 tcp dport 22 accept
    ip daddr 192.168.1.0/24 udp sport 1000-2000 drop
    ip saddr 10.0.0.0/9 accept
    ip saddr 1.2.3.4 ip daddr 5.6.7.8 accept
    meta l4proto udp counter drop
    tcp dport >= 1024 accept
    tcp sport < 1024 tcp dport 80 drop
  }
})");
  ASSERT_EQ(rs.tables.size(), 1u);
  const ir::Chain& chain = rs.tables[0].chains[0];
  const Space space = BuildSpace({&rs}, {.hook = ir::Hook::kInput});
  const Lifter<PacketModel::kAllPackets5Tuple> boxes(rs.tables[0], chain);
  const Lifter<PacketModel::kUnfragmented16> cubes(rs, space, ir::Hook::kInput);
  ASSERT_EQ(chain.rules.size(), 7u);
  for (size_t r = 0; r < chain.rules.size(); ++r) {
    auto box = boxes.Lift(0, chain.rules[r]);
    ASSERT_TRUE(box.ok()) << r << ": " << box.status();
    LiftedRule cube = cubes.Lift(0, chain.rules[r]);
    ASSERT_TRUE(cube.exact && cube.match) << r << ": " << cube.reason;
    for (int d = 0; d < kBoxDims; ++d) {
      const IntervalSet field =
          IntervalSet::Range(box->box.lo[d], std::min(box->box.hi[d], FieldMax(d)));
      EXPECT_EQ(field, cube.match->get(CubeDimOf(d))) << "rule " << r << " dimension " << d;
    }
  }
}

}  // namespace
}  // namespace rulejit::headerspace
