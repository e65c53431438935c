// nft script commands around table blocks, as `nft -f` runs them (each
// case was checked with nft -c / nft -f in a namespace): a bare `table`
// declares, `flush table` empties every chain of its rules but keeps the
// chains and the sets with their elements, and flushing a table that does
// not exist is an error.
#include <string>

#include "api/internal.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"

namespace rulejit {
namespace {

TEST(NftCommands, BareTableThenFlushThenBlock) {
  auto rs = ParseRuleset(
      "table inet fw4\nflush table inet fw4\n\n"
      "table inet fw4 {\n set s { type ipv4_addr; elements = { 1.2.3.4 }; }\n"
      " chain c {\n  type filter hook input priority 0;\n  ip saddr @s drop\n }\n}\n",
      "fw4.nft");
  ASSERT_TRUE(rs.ok()) << rs.status();
  const ir::Ruleset& ir = IrOf(*rs);
  ASSERT_EQ(ir.tables.size(), 1u);
  EXPECT_EQ(ir.tables[0].chains.at(0).rules.size(), 1u);
}

TEST(NftCommands, FlushTableKeepsChainsAndSets) {
  auto rs = ParseRuleset(
      "table ip t {\n set s { type ipv4_addr; elements = { 1.2.3.4 }; }\n"
      " chain c {\n  type filter hook input priority 0;\n  ip saddr @s drop\n }\n}\n"
      "flush table ip t\n",
      "flush.nft");
  ASSERT_TRUE(rs.ok()) << rs.status();
  const ir::Table& t = IrOf(*rs).tables.at(0);
  ASSERT_EQ(t.chains.size(), 1u);
  EXPECT_TRUE(t.chains[0].rules.empty());
  ASSERT_EQ(t.sets.size(), 1u);
  EXPECT_EQ(t.sets[0].elements.size(), 1u);
}

TEST(NftCommands, FlushOfAMissingTableIsAnError) {
  auto rs = ParseRuleset("flush table ip t\n", "missing.nft");
  ASSERT_FALSE(rs.ok());
  EXPECT_NE(std::string(rs.status().message()).find("1:13: error: no table 't' in family ip"),
            std::string::npos)
      << rs.status();
}

}  // namespace
}  // namespace rulejit
