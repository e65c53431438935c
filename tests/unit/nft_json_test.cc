// The nft JSON reader (frontends/nft/json.h): what text a listing becomes,
// that the format is detected, and that what it cannot read is an error at
// the JSON path of the object (never dropped).
#include <string>

#include "frontends/frontend.h"
#include "frontends/nft/json.h"
#include "gtest/gtest.h"
#include "ir/diag.h"

namespace rulejit::frontends {
namespace {

// A listing of one table, its base chain and `rules` (JSON rule objects).
std::string Listing(const std::string& rules) {
  return R"({"nftables": [{"metainfo": {"json_schema_version": 1}},
    {"table": {"family": "inet", "name": "f", "handle": 1}},
    {"set": {"family": "inet", "name": "ok", "table": "f", "type": ["inet_proto", "inet_service"],
             "handle": 2, "flags": ["interval"], "elem": [{"concat": ["tcp", {"range": [20, 22]}]}]}},
    {"chain": {"family": "inet", "table": "f", "name": "in", "handle": 3, "type": "filter",
               "hook": "input", "prio": 0, "policy": "drop"}})" +
         rules + "]}";
}

TEST(NftJson, ListingBecomesNftText) {
  ir::Diagnostics diags;
  int file = diags.AddFile("l.json", "");
  absl::StatusOr<NftJsonText> text = NftJsonToText(Listing(R"(,
    {"rule": {"family": "inet", "table": "f", "chain": "in", "handle": 4, "expr": [
      {"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": ["established", "related"]}},
      {"match": {"op": "==", "left": {"&": [{"payload": {"protocol": "tcp", "field": "flags"}},
                                            ["syn", "ack"]]}, "right": "syn"}},
      {"counter": {"packets": 3, "bytes": 180}},
      {"limit": {"rate": 10, "burst": 5, "per": "second"}},
      {"accept": null}]}})"),
                                                   file, diags);
  ASSERT_TRUE(text.ok()) << diags.Format();
  EXPECT_EQ(text->text,
            "table inet f {\n"
            "\tset ok { type inet_proto . inet_service; flags interval; elements = { tcp . 20-22 }; }\n"
            "\tchain in {\n"
            "\t\ttype filter hook input priority 0; policy drop;\n"
            "\t\tct state established,related tcp flags & (syn | ack) == syn counter "
            "limit rate 10/second burst 5 packets accept\n"
            "\t}\n"
            "}\n");
  EXPECT_EQ(text->paths[4], "nftables[4].rule");
}

TEST(NftJson, DetectedAndRead) {
  ir::Diagnostics diags;
  const std::string json = Listing(R"(,
    {"rule": {"family": "inet", "table": "f", "chain": "in", "handle": 4, "expr": [
      {"match": {"op": "==", "left": {"concat": [{"meta": {"key": "l4proto"}},
                 {"payload": {"protocol": "th", "field": "dport"}}]}, "right": "@ok"}},
      {"accept": null}]}})");
  EXPECT_EQ(DetectFormat(json), InputFormat::kNft);
  std::optional<ir::Ruleset> rs = ParseRuleset(json, "l.json", std::nullopt, diags);
  ASSERT_TRUE(rs) << diags.Format();
  ASSERT_EQ(rs->tables.size(), 1u);
  EXPECT_EQ(rs->tables[0].chains[0].rules.size(), 1u);
}

TEST(NftJson, UnreadableStatementIsLocatedByItsPath) {
  ir::Diagnostics diags;
  const std::string json = Listing(R"(,
    {"rule": {"family": "inet", "table": "f", "chain": "in", "handle": 4, "expr": [
      {"xt": {"type": "match", "name": "conntrack"}}, {"accept": null}]}})");
  EXPECT_FALSE(ParseRuleset(json, "l.json", std::nullopt, diags));
  EXPECT_NE(diags.Format().find("nftables[4].rule.expr[0].xt"), std::string::npos) << diags.Format();
}

TEST(NftJson, UnknownMemberIsAnError) {
  ir::Diagnostics diags;
  const std::string json = Listing(R"(,
    {"rule": {"family": "inet", "table": "f", "chain": "in", "handle": 4, "newthing": 1,
              "expr": [{"accept": null}]}})");
  EXPECT_FALSE(ParseRuleset(json, "l.json", std::nullopt, diags));
  EXPECT_NE(diags.Format().find("nftables[4].rule.newthing: unknown rule member"), std::string::npos)
      << diags.Format();
}

TEST(NftJson, TextFrontendErrorNamesTheJsonPath) {
  ir::Diagnostics diags;
  const std::string json = Listing(R"(,
    {"rule": {"family": "inet", "table": "f", "chain": "in", "handle": 4, "expr": [
      {"match": {"op": "==", "left": {"meta": {"key": "nosuchkey"}}, "right": 1}}]}})");
  EXPECT_FALSE(ParseRuleset(json, "l.json", std::nullopt, diags));
  EXPECT_NE(diags.Format().find("nftables[4].rule: "), std::string::npos) << diags.Format();
}

TEST(NftJson, NotAListing) {
  ir::Diagnostics diags;
  EXPECT_FALSE(ParseRuleset("{\"nftables\": 3}", "l.json", std::nullopt, diags));
  EXPECT_FALSE(ParseRuleset("{\"nftables\": [", "l.json", std::nullopt, diags));
}

// Hostile depth: 100,000 nested operands (the reader copied and walked
// them recursively and ran out of stack) is a located error; operands
// nested 100 deep (two JSON levels each), within the bound, still read.
TEST(NftJson, DeepNestingIsRefusedNotACrash) {
  auto rule_nested = [](int depth) {
    std::string right;
    for (int i = 0; i < depth; ++i) right += R"({"|": [)";
    right += "1";
    for (int i = 0; i < depth; ++i) right += ", 2]}";
    return Listing(R"(,
    {"rule": {"family": "inet", "table": "f", "chain": "in", "handle": 4, "expr": [
      {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": )" + right + "}}]}}");
  };
  ir::Diagnostics deep;
  EXPECT_FALSE(ParseRuleset(rule_nested(100000), "l.json", std::nullopt, deep));
  EXPECT_NE(deep.Format().find("JSON nested deeper than 256 levels"), std::string::npos)
      << deep.Format().substr(0, 300);
  ir::Diagnostics ok;
  EXPECT_TRUE(ParseRuleset(rule_nested(100), "l.json", std::nullopt, ok)) << ok.Format().substr(0, 500);
}

}  // namespace
}  // namespace rulejit::frontends
