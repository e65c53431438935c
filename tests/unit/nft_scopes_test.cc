// `define`, `redefine`, `undefine` and `include` in nft's scopes: at the top
// level and inside table, chain and set blocks (OpenWrt fw4 writes its
// defines and its `include "/etc/nftables.d/*.nft"` inside the table).
// Each case was checked with nft 1.0.6 (`nft -c -f` in a namespace).
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using nft_test::Parse;

// The printed rules of the first chain of table `t`.
std::string Rules(const ir::Ruleset& rs, size_t table = 0) {
  std::string out;
  const ir::Table& t = rs.tables.at(table);
  for (const ir::Rule& r : t.chains.at(0).rules) out += ir::PrintRule(t, t.chains.at(0), r);
  return out;
}

TEST(NftScopes, DefineInsideTableAndChain) {
  auto r = Parse(
      "table inet t {\n define ports = { 22, 80 }\n define e = {  }\n"
      " chain c {\n  define p = 443\n  tcp dport $ports accept\n  tcp dport $p accept\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  EXPECT_EQ(r->rs->tables.at(0).chains.at(0).rules.size(), 2u);
}

TEST(NftScopes, ATableDefineEndsWithTheTable) {
  ExpectError("table inet t {\n define x = 1\n}\ntable inet u {\n chain c {\n  tcp dport $x\n }\n}\n",
              6, 13, "undefined variable '$x'");
  // A chain's define is not seen by its sibling chain.
  ExpectError("table inet t {\n chain c {\n  define y = 2\n }\n chain d {\n  tcp dport $y\n }\n}\n",
              6, 13, "undefined variable '$y'");
}

TEST(NftScopes, DefineIsNotSeenBeforeItsLine) {
  ExpectError("table inet t {\n chain c {\n  tcp dport $x accept\n }\n define x = 1\n}\n", 3, 13,
              "undefined variable '$x'");
}

TEST(NftScopes, RedefinitionIsAnErrorInEveryEnclosingScope) {
  ExpectError("define x = 1\ndefine x = 2\n", 2, 8, "redefinition of symbol 'x'");
  ExpectError("define x = 1\ntable inet t {\n define x = 2\n}\n", 3, 9,
              "redefinition of symbol 'x'");
  // Sibling tables may each define it.
  auto r = Parse(
      "table inet t {\n define x = 1\n chain c {\n  tcp dport $x\n }\n}\n"
      "table inet u {\n define x = 2\n chain c {\n  tcp dport $x\n }\n}\n");
  EXPECT_TRUE(r->rs.ok()) << r->diags.Format();
}

TEST(NftScopes, RedefineShadowsInsideTheBlockOnly) {
  auto r = Parse(
      "define x = 1\ntable inet t {\n redefine x = 2\n chain c {\n  tcp dport $x\n }\n}\n"
      "table inet u {\n chain c {\n  tcp dport $x\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  auto r2 = Parse("table inet t {\n chain c {\n  tcp dport 2\n }\n}\ntable inet u {\n chain c {\n"
                  "  tcp dport 1\n }\n}\n");
  ASSERT_TRUE(r2->rs.ok());
  EXPECT_EQ(Rules(*r->rs, 0), Rules(*r2->rs, 0));
  EXPECT_EQ(Rules(*r->rs, 1), Rules(*r2->rs, 1));
}

TEST(NftScopes, UndefineThenDefineAgain) {
  auto r = Parse("define x = 1\nundefine x\ndefine x = 3\nundefine never_defined\n"
                 "table inet t {\n chain c {\n  tcp dport $x\n }\n}\n");
  EXPECT_TRUE(r->rs.ok()) << r->diags.Format();
}

TEST(NftScopes, DefineInsideASetBlock) {
  auto r = Parse("table inet t {\n set s {\n  define z = 1\n  type inet_service\n"
                 "  elements = { $z }\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  EXPECT_EQ(r->rs->tables.at(0).sets.at(0).elements.size(), 1u);
}

TEST(NftScopes, IncludeGlobInsideTableAndChain) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "nft_scopes_inc";
  std::filesystem::create_directories(dir / "d");
  std::ofstream(dir / "d" / "b.nft") << "chain b {\n tcp dport $p accept\n}\n";
  std::ofstream(dir / "d" / "a.nft") << "define p = 22\n";
  std::ofstream(dir / "rule.nft") << "udp dport 53 accept\n";
  auto r = Parse("table inet t {\n include \"d/*.nft\"\n include \"none/*.nft\"\n"
                 " chain c {\n  include \"rule.nft\"\n }\n}\n",
                 dir.string());
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  ASSERT_EQ(t.chains.size(), 2u);
  EXPECT_EQ(t.chains[0].name, "b");  // a.nft's define came first, in name order
  EXPECT_EQ(t.chains[0].rules.size(), 1u);
  EXPECT_EQ(t.chains[1].rules.size(), 1u);
}

TEST(NftScopes, IncludeOfAMissingFileIsALocatedError) {
  ExpectError("table inet t {\n include \"/nonexistent/rulejit/foo.nft\"\n}\n", 2, 2,
              "cannot open include file");
  // A glob that matches nothing is fine, as in nft.
  EXPECT_TRUE(Parse("include \"/nonexistent/rulejit/*.nft\"\n")->rs.ok());
}

}  // namespace
}  // namespace rulejit
