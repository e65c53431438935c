// Overlapping intervals, as nft 1.0.6 treats them (checked with `nft -c -f`
// and `nft --debug=netlink`): an anonymous set, or a named set with
// auto-merge, merges touching and overlapping intervals (xray's reserved
// ranges list 255.255.255.255/32 inside 240.0.0.0/4); a named set without
// auto-merge refuses them ("conflicting intervals specified").
#include <string>

#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using nft_test::Parse;

TEST(NftIntervalMerge, AnonymousSetsMergeOverlaps) {
  auto r = Parse("table ip t {\n chain c {\n"
                 "  ip daddr { 240.0.0.0/4, 255.255.255.255/32, 10.0.0.0/8, 10.1.0.0/16 } return\n"
                 "  ip daddr { 10.0.0.1-10.0.0.5, 10.0.0.3-10.0.0.9 } return\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  ASSERT_EQ(t.sets.size(), 2u);
  // The elements nft sends: 10.0.0.0/8 and 240.0.0.0/4; 10.0.0.1-10.0.0.9.
  auto elements = [&](const ir::Set& s) {
    const std::string printed = ir::PrintSet(t, s);
    return printed.substr(printed.find('\t'));
  };
  EXPECT_EQ(elements(t.sets[0]),
            "\telement 00000000  : 1 [end]\telement 0000000a  : 0 [end]\t"
            "element 0000000b  : 1 [end]\telement 000000f0  : 0 [end]\n");
  EXPECT_EQ(elements(t.sets[1]),
            "\telement 00000000  : 1 [end]\telement 0100000a  : 0 [end]\t"
            "element 0a00000a  : 1 [end]\n");
}

TEST(NftIntervalMerge, NamedSetsMergeOnlyWithAutoMerge) {
  EXPECT_TRUE(Parse("table ip t {\n set s {\n  type ipv4_addr; flags interval; auto-merge\n"
                    "  elements = { 240.0.0.0/4, 255.255.255.255/32 }\n }\n}\n")
                  ->rs.ok());
  ExpectError("table ip t {\n set s {\n  type ipv4_addr; flags interval\n"
              "  elements = { 240.0.0.0/4, 255.255.255.255/32 }\n }\n}\n",
              4, 29, "interval overlaps another element of set 's'");
}

}  // namespace
}  // namespace rulejit
