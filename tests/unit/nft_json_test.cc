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

// {"flush": {"ruleset": null}} as nft -j -f runs it: whatever came before
// is gone (a leading one is what `nft -j -f` users write first); with a
// family, only that family's tables go; a flush of anything else is
// refused at its path.
TEST(NftJson, FlushRulesetDropsWhatCameBefore) {
  auto read = [](const std::string& json, ir::Diagnostics& diags) {
    return NftJsonToText(json, diags.AddFile("l.json", ""), diags);
  };
  const std::string table_ip = R"({"table": {"family": "ip", "name": "old"}})";
  std::string body = Listing("");
  body = body.substr(body.find("{\"table\""));  // the objects after metainfo, and "]}"
  ir::Diagnostics d1;
  absl::StatusOr<NftJsonText> leading =
      read(R"({"nftables": [{"metainfo": {"json_schema_version": 1}}, {"flush": {"ruleset": null}}, )" + body, d1);
  ASSERT_TRUE(leading.ok()) << d1.Format();
  EXPECT_EQ(leading->text.substr(0, 15), "table inet f {\n");

  ir::Diagnostics d2;
  absl::StatusOr<NftJsonText> middle =
      read(R"({"nftables": [)" + table_ip + R"(, {"flush": {"ruleset": null}}, )" + body, d2);
  ASSERT_TRUE(middle.ok()) << d2.Format();
  EXPECT_EQ(middle->text.find("table ip old"), std::string::npos) << middle->text;

  ir::Diagnostics d3;
  absl::StatusOr<NftJsonText> family = read(
      R"({"nftables": [)" + table_ip + R"(, {"table": {"family": "inet", "name": "keep"}},
          {"flush": {"ruleset": {"family": "ip"}}}, )" + body, d3);
  ASSERT_TRUE(family.ok()) << d3.Format();
  EXPECT_EQ(family->text.find("table ip old"), std::string::npos) << family->text;
  EXPECT_NE(family->text.find("table inet keep {"), std::string::npos) << family->text;

  ir::Diagnostics d4;
  EXPECT_FALSE(read(R"({"nftables": [{"flush": {"table": {"family": "ip", "name": "x"}}}]})", d4).ok());
  EXPECT_NE(d4.Format().find("nftables[0].flush: a flush of something other than the ruleset"),
            std::string::npos) << d4.Format();
}

// A ct helper or expectation without "l3proto" (nft's parser_json.c sends
// none, and the kernel takes the table's family): the text without one,
// read as the same object as the text says.
TEST(NftJson, CtHelperWithoutL3protoIsTheTablesFamily) {
  const std::string json = R"({"nftables": [{"table": {"family": "ip", "name": "t"}},
    {"ct helper": {"family": "ip", "table": "t", "name": "ftp", "type": "ftp", "protocol": "tcp"}},
    {"ct helper": {"family": "ip", "table": "t", "name": "ftp6", "type": "ftp", "protocol": "tcp",
                   "l3proto": "ip6"}}]})";
  ir::Diagnostics diags;
  absl::StatusOr<NftJsonText> text = NftJsonToText(json, diags.AddFile("l.json", ""), diags);
  ASSERT_TRUE(text.ok()) << diags.Format();
  EXPECT_EQ(text->text,
            "table ip t {\n"
            "\tct helper ftp { type \"ftp\" protocol tcp; }\n"
            "\tct helper ftp6 { type \"ftp\" protocol tcp; l3proto ip6; }\n"
            "}\n");
  ir::Diagnostics d2;
  std::optional<ir::Ruleset> rs = ParseRuleset(json, "l.json", std::nullopt, d2);
  ASSERT_TRUE(rs) << d2.Format();
  ASSERT_EQ(rs->tables[0].objects.size(), 2u);
  EXPECT_EQ(rs->tables[0].objects[0].l3proto, 0);
  EXPECT_EQ(rs->tables[0].objects[1].l3proto, 10);
}

}  // namespace
}  // namespace rulejit::frontends
