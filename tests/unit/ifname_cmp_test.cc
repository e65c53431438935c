// ir::WidenIfnameCompares (ir/ifname_cmp.h): iptables' `-i eth0` (an
// 8-byte compare) and nft's `iifname "eth0"` (16 bytes) become the same
// IR; a `+` wildcard, another name, a compare of a register that holds no
// name, and an ordering compare are left alone.
#include <string>

#include "gtest/gtest.h"
#include "ir/equal.h"
#include "ir/ifname_cmp.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::analysis::diff_test {
namespace {

ir::Ruleset IptInput(const std::string& match) {
  return Ipt(absl::StrCat("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT ", match, " -j DROP\nCOMMIT\n"));
}

ir::Ruleset NftInput(const std::string& match) {
  return Nft(InputChain(absl::StrCat("    ", match, " counter drop\n")));
}

// Whether the single rules of `a` and `b` are the same IR once widened,
// and how many compares were widened on each side.
bool SameOnceWidened(ir::Ruleset a, ir::Ruleset b, int* widened_a = nullptr) {
  int wa = ir::WidenIfnameCompares(a);
  ir::WidenIfnameCompares(b);
  if (widened_a != nullptr) *widened_a = wa;
  ir::TableSets sa(a.tables[0]), sb(b.tables[0]);
  return ir::SameExprs(sa, a.tables[0].chains[0].rules[0].exprs, sb,
                       b.tables[0].chains[0].rules[0].exprs);
}

TEST(IfnameCmpTest, IptablesAndNftNamesAreTheSameIr) {
  ir::Ruleset a = IptInput("-i eth0"), b = NftInput("iifname \"eth0\"");
  ir::TableSets sa(a.tables[0]), sb(b.tables[0]);
  // Other bytecode as read...
  ASSERT_FALSE(ir::SameExprs(sa, a.tables[0].chains[0].rules[0].exprs, sb,
                             b.tables[0].chains[0].rules[0].exprs));
  int widened = 0;
  EXPECT_TRUE(SameOnceWidened(a, b, &widened));  // ...the same once widened
  EXPECT_EQ(widened, 1);
  EXPECT_TRUE(SameOnceWidened(IptInput("! -i eth0"), NftInput("iifname != \"eth0\"")));
  EXPECT_TRUE(SameOnceWidened(IptInput("-i lo"), NftInput("iifname \"lo\"")));
  EXPECT_TRUE(SameOnceWidened(IptInput("-i abcdefghijklmno"), NftInput("iifname \"abcdefghijklmno\"")));
}

TEST(IfnameCmpTest, OtherNamesAndWildcardsStayApart) {
  EXPECT_FALSE(SameOnceWidened(IptInput("-i eth0"), NftInput("iifname \"eth1\"")));
  EXPECT_FALSE(SameOnceWidened(IptInput("-i eth0"), NftInput("iifname != \"eth0\"")));
  // eth+ is a 3-byte prefix compare on both sides already: nothing to widen,
  // and it must not become the name "eth".
  int widened = 0;
  EXPECT_TRUE(SameOnceWidened(IptInput("-i eth+"), NftInput("iifname \"eth*\""), &widened));
  EXPECT_EQ(widened, 0);
  EXPECT_FALSE(SameOnceWidened(IptInput("-i eth+"), NftInput("iifname \"eth\"")));
}

TEST(IfnameCmpTest, OnlyCompareOfANameJustLoaded) {
  // A mark compare whose data holds zero bytes is no name.
  ir::Ruleset mark = NftInput("meta mark 0x00000100");
  ir::Ruleset before = mark;
  EXPECT_EQ(ir::WidenIfnameCompares(mark), 0);
  ir::TableSets sa(mark.tables[0]), sb(before.tables[0]);
  EXPECT_TRUE(ir::SameExprs(sa, mark.tables[0].chains[0].rules[0].exprs, sb,
                            before.tables[0].chains[0].rules[0].exprs));
}

}  // namespace
}  // namespace rulejit::analysis::diff_test
