// Unit tests for ir/equal.h: expressions and rules are the same when they
// do the same, an anonymous set by its elements (the printed form, which
// shows every anonymous set as `__set%d`, took two different rules for
// one), a named set by its name; position and location never count; the
// hash agrees with equality.
#include "ir/equal.h"

#include <random>
#include <string>

#include "api/internal.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tests/support/ir_gen.h"

namespace rulejit::ir {
namespace {

// The one table of an nft ruleset whose forward chain is `rules`.
Ruleset Parse(const std::string& rules) {
  absl::StatusOr<rulejit::Ruleset> rs = rulejit::ParseRuleset(
      "table ip t {\n set named_a { type ipv4_addr; elements = { 10.0.0.1 }; }\n"
      " set named_b { type ipv4_addr; elements = { 10.0.0.1 }; }\n"
      " chain forwarding {\n  type filter hook forward priority 0; policy drop;\n" +
          rules + " }\n}\n",
      "equal.nft");
  EXPECT_TRUE(rs.ok()) << rs.status();
  return rs.ok() ? IrOf(*rs) : Ruleset{};
}

// Whether rules a and b of the chain are the same, checking that the hash
// agrees.
bool Same(const Ruleset& rs, size_t a, size_t b) {
  const Table& table = rs.tables.at(0);
  const Chain& chain = table.chains.at(0);
  const TableSets sets(table);
  const RuleKey ka(sets, chain, chain.rules.at(a));
  const RuleKey kb(sets, chain, chain.rules.at(b));
  const bool same = ka == kb;
  EXPECT_EQ(same, SameExprs(sets, chain.rules[a].exprs, sets, chain.rules[b].exprs));
  if (same) {
    EXPECT_EQ(absl::HashOf(ka), absl::HashOf(kb));
    EXPECT_EQ(HashExprs(sets, chain.rules[a].exprs), HashExprs(sets, chain.rules[b].exprs));
  }
  return same;
}

TEST(RuleKey, AnonymousSetsWithOtherElementsDiffer) {
  Ruleset rs = Parse("  tcp dport { 1, 2 } accept\n  tcp dport { 3, 4 } accept\n");
  const Table& t = rs.tables[0];
  // What the old printed identity saw: one text for both.
  EXPECT_EQ(PrintRule(t, t.chains[0], t.chains[0].rules[0]),
            PrintRule(t, t.chains[0], t.chains[0].rules[1]));
  EXPECT_FALSE(Same(rs, 0, 1));
}

TEST(RuleKey, AnonymousSetsWithTheSameElementsAreTheSame) {
  // One rule on two lines: two anonymous sets (__set0, __set1), one content.
  Ruleset rs = Parse("  tcp dport { 1, 2 } accept\n  tcp dport { 1, 2 } accept\n");
  const Table& t = rs.tables[0];
  ASSERT_EQ(t.sets.size(), 4u);
  EXPECT_NE(t.chains[0].rules[0].loc.line, t.chains[0].rules[1].loc.line);
  EXPECT_TRUE(Same(rs, 0, 1));
}

TEST(RuleKey, AnonymousSetsOfAnotherKindDiffer) {
  // Same elements, but an interval set against a plain one.
  Ruleset rs = Parse("  tcp dport { 1, 2 } accept\n  tcp dport { 1-2 } accept\n");
  EXPECT_FALSE(Same(rs, 0, 1));
}

TEST(RuleKey, NamedSetsAreKnownByName) {
  Ruleset rs = Parse(
      "  ip saddr @named_a accept\n  ip saddr @named_b accept\n"
      "  ip saddr @named_a accept\n  ip saddr { 10.0.0.1 } accept\n");
  EXPECT_FALSE(Same(rs, 0, 1));  // same elements, other names
  EXPECT_TRUE(Same(rs, 0, 2));
  EXPECT_FALSE(Same(rs, 0, 3));  // named against anonymous
}

TEST(RuleKey, VerdictAndExpressionsCount) {
  Ruleset rs = Parse(
      "  tcp dport 22 accept\n  tcp dport 22 drop\n  tcp dport 23 accept\n"
      "  udp dport 22 accept\n  tcp dport 22 accept comment \"other line\"\n");
  EXPECT_FALSE(Same(rs, 0, 1));
  EXPECT_FALSE(Same(rs, 0, 2));
  EXPECT_FALSE(Same(rs, 0, 3));
  EXPECT_TRUE(Same(rs, 0, 4));
}

TEST(RuleKey, TableAndChainCount) {
  absl::StatusOr<rulejit::Ruleset> parsed = rulejit::ParseRuleset(
      "table ip t {\n chain a {\n  tcp dport 22 accept\n }\n"
      " chain b {\n  tcp dport 22 accept\n }\n}\n"
      "table ip u {\n chain a {\n  tcp dport 22 accept\n }\n}\n"
      "table ip6 t {\n chain a {\n  tcp dport 22 accept\n }\n}\n",
      "tables.nft");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Ruleset* rs = &IrOf(*parsed);
  std::vector<TableSets> sets;
  for (const Table& table : rs->tables) sets.emplace_back(table);
  auto key = [&](size_t t, size_t c) {
    return RuleKey(sets[t], rs->tables[t].chains[c], rs->tables[t].chains[c].rules[0]);
  };
  EXPECT_FALSE(key(0, 0) == key(0, 1));  // other chain
  EXPECT_FALSE(key(0, 0) == key(1, 0));  // other table
  EXPECT_FALSE(key(0, 0) == key(2, 0));  // other family
  EXPECT_TRUE(key(0, 0) == key(0, 0));
}

TEST(RuleKey, RulesetsCompareAcrossCopies) {
  // A reload: the same text parsed twice gives the same identities.
  const std::string text = "  tcp dport { 1, 2 } counter accept\n";
  Ruleset a = Parse(text), b = Parse(text);
  const TableSets sa(a.tables[0]), sb(b.tables[0]);
  EXPECT_TRUE(RuleKey(sa, a.tables[0].chains[0], a.tables[0].chains[0].rules[0]) ==
              RuleKey(sb, b.tables[0].chains[0], b.tables[0].chains[0].rules[0]));
}

TEST(RuleKey, HashAgreesWithEqualityOnGeneratedRulesets) {
  size_t equal_pairs = 0;
  for (int seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    Ruleset rs = testing::RandomIrRuleset(rng);
    for (const Table& table : rs.tables) {
      const TableSets sets(table);
      for (const Chain& chain : table.chains) {
        for (const Rule& a : chain.rules) {
          for (const Rule& b : chain.rules) {
            if (!SameExprs(sets, a.exprs, sets, b.exprs)) continue;
            ++equal_pairs;
            EXPECT_EQ(absl::HashOf(RuleKey(sets, chain, a)), absl::HashOf(RuleKey(sets, chain, b)));
            for (size_t i = 0; i < a.exprs.size(); ++i) {
              EXPECT_EQ(HashExpr(sets, a.exprs[i].expr), HashExpr(sets, b.exprs[i].expr));
            }
          }
        }
      }
    }
  }
  EXPECT_GT(equal_pairs, 0u);
}

TEST(SameExpr, LookupsAndPlainExpressions) {
  Table table;
  table.sets.push_back({.name = "__set0", .flags = kSetAnonymous | kSetConstant, .key_len = 2});
  table.sets[0].elements.push_back({.key = {0, 22}});
  table.sets.push_back(table.sets[0]);
  table.sets[1].name = "__set1";
  table.sets[1].elements[0].loc.line = 7;  // where an element came from never counts
  const TableSets sets(table);
  const Expr l0 = Lookup{.sreg = 1, .set = "__set0"};
  const Expr l1 = Lookup{.sreg = 1, .set = "__set1"};
  const Expr l1_inverted = Lookup{.sreg = 1, .set = "__set1", .invert = true};
  const Expr missing = Lookup{.sreg = 1, .set = "nowhere"};
  EXPECT_TRUE(SameExpr(sets, l0, sets, l1));
  EXPECT_EQ(HashExpr(sets, l0), HashExpr(sets, l1));
  EXPECT_FALSE(l0 == l1);  // the structs' own == knows the set by name
  EXPECT_FALSE(SameExpr(sets, l0, sets, l1_inverted));
  EXPECT_FALSE(SameExpr(sets, l0, sets, missing));
  EXPECT_TRUE(SameExpr(sets, missing, sets, missing));
  const Expr cmp = Cmp{.op = CmpOp::kEq, .sreg = 1, .data = {0, 22}};
  const Expr other = Cmp{.op = CmpOp::kEq, .sreg = 1, .data = {0, 23}};
  EXPECT_TRUE(SameExpr(sets, cmp, sets, cmp));
  EXPECT_FALSE(SameExpr(sets, cmp, sets, other));
  EXPECT_FALSE(SameExpr(sets, cmp, sets, l0));
}

}  // namespace
}  // namespace rulejit::ir
