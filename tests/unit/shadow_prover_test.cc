// The shadowed-rule prover (compiler/headerspace/shadow_prover.h): with an
// entry region it answers for the packets of the entry only and follows a
// walker's packets (taken, handed back); with all packets entering it cuts
// the rule's region by the covers, within its budget.
#include "compiler/headerspace/shadow_prover.h"

#include <vector>

#include "compiler/headerspace/lift.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/ir.h"

namespace rulejit::testing {
namespace {

using headerspace::Cube;
using headerspace::Dim;
using headerspace::IntervalSet;
using Cubes = headerspace::Lifter<headerspace::PacketModel::kUnfragmented16>;
using CubeProver = headerspace::ShadowProver<headerspace::PacketModel::kUnfragmented16>;

class ShadowProverTest : public ::testing::Test {
 protected:
  // TCP packets to destination ports lo..hi.
  Cube Dports(headerspace::Value lo, headerspace::Value hi) const {
    Cube c = headerspace::FamilyCube(space_, headerspace::kFamilyIpv4);
    c.set(Dim::kProto) = IntervalSet::Single(6);
    c.set(Dim::kDport) = IntervalSet::Range(lo, hi);
    return c;
  }

  ir::Ruleset ruleset_;
  headerspace::Space space_ = headerspace::BuildSpace({&ruleset_}, {.hook = ir::Hook::kInput});
  Cubes lifter_{ruleset_, space_, ir::Hook::kInput};
};

TEST_F(ShadowProverTest, OutsideTheEntryIsCovered) {
  const CubeProver entered(lifter_, {Dports(22, 22)});
  const CubeProver everything(lifter_);
  EXPECT_TRUE(entered.Covered({Dports(80, 80)}));
  EXPECT_FALSE(entered.Covered({Dports(1, 100)}));
  EXPECT_FALSE(everything.Covered({Dports(80, 80)}));
  EXPECT_TRUE(entered.Covered({}));  // an empty region: never matches
}

TEST_F(ShadowProverTest, CoversTakeFromTheEntryAndNameTheirRules) {
  CubeProver prover(lifter_, {Dports(1, 100)});
  prover.Cover(0, {Dports(1, 50)});
  EXPECT_TRUE(prover.Covered({Dports(20, 30)}));
  EXPECT_FALSE(prover.Covered({Dports(40, 60)}));
  prover.Cover(1, {Dports(45, 200)});
  EXPECT_TRUE(prover.Covered({Dports(40, 60)}));
  EXPECT_TRUE(prover.Exhausted());
  // Rule 1 took only 51..100: what it took is what names it.
  EXPECT_THAT(prover.CoveringRules({Dports(40, 60)}), ::testing::ElementsAre(0, 1));
  EXPECT_THAT(prover.CoveringRules({Dports(45, 50)}), ::testing::ElementsAre(0));
  EXPECT_THAT(prover.BlamedRules(), ::testing::ElementsAre(0, 1));
}

TEST_F(ShadowProverTest, PacketsHandedBackReachLaterRules) {
  CubeProver prover(lifter_, {Dports(1, 100)});
  std::vector<Cube> jumped = prover.Take(Dports(1, 10));
  ASSERT_EQ(jumped.size(), 1u);
  EXPECT_TRUE(prover.Covered({Dports(5, 5)}));
  prover.Readmit(std::move(jumped));
  EXPECT_FALSE(prover.Covered({Dports(5, 5)}));
  EXPECT_TRUE(prover.CoveringRules({Dports(5, 5)}).empty());  // nothing blamed
  EXPECT_EQ(prover.TakeRest().size(), 2u);
  EXPECT_TRUE(prover.Exhausted());
}

TEST(ShadowProverBoxes, AllPacketsEnterAndTheCoversHaveABudget) {
  const headerspace::Lifter<headerspace::PacketModel::kAllPackets5Tuple> boxes;
  headerspace::Box low;
  low.lo[3] = 0;
  low.hi[3] = 50;
  headerspace::Box high = low;
  high.lo[3] = 51;
  high.hi[3] = 100;
  headerspace::Box middle = low;
  middle.lo[3] = 40;
  middle.hi[3] = 60;

  headerspace::ShadowProver<headerspace::PacketModel::kAllPackets5Tuple> prover(boxes);
  EXPECT_FALSE(prover.Covered({middle}));
  prover.Cover(0, {low});
  prover.Cover(1, {high});
  EXPECT_TRUE(prover.Covered({middle}));

  headerspace::ShadowProver<headerspace::PacketModel::kAllPackets5Tuple> small(
      boxes, {.max_covers = 1, .piece_budget = 64});
  small.Cover(0, {low});
  small.Cover(1, {high});  // beyond max_covers: kept out
  EXPECT_FALSE(small.Covered({middle}));
  EXPECT_THAT(small.BlamedRules(), ::testing::ElementsAre(0));
}

}  // namespace
}  // namespace rulejit::testing
