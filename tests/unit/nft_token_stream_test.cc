// The nft token stream (frontends/nft/lexer.h): tokens lexed as the parser
// reaches them are the ones lexing the whole text gives; inserting,
// erasing and scanning ahead keep them so; and long element lists, whose
// consumed tokens are released a chunk at a time as they are parsed, still
// expand $variables, locate errors and keep every element (issue 26: a set
// of a million elements no longer holds three million tokens).
#include <string>
#include <vector>

#include "frontends/nft/lexer.h"
#include "gtest/gtest.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using frontends::nft::Lexer;
using frontends::nft::Tok;
using frontends::nft::Token;
using frontends::nft::TokenStream;

const char kText[] =
    "table ip t { # a comment\n"
    "  set s { type ipv4_addr; elements = { 10.0.0.1, $A, @b } }\n"
    "  chain c { ip saddr != 1.2.3.4 \\\n counter comment \"x \\\" y\" accept }\n"
    "}\n";

std::vector<Token> LexAll(std::string_view text) {
  Lexer lexer(text, 3);
  std::vector<Token> out;
  do {
    out.push_back(lexer.Next());
  } while (out.back().kind != Tok::kEnd);
  return out;
}

void ExpectSame(const Token& a, const Token& b, size_t i) {
  EXPECT_EQ(a.kind, b.kind) << i;
  EXPECT_EQ(a.text, b.text) << i;
  EXPECT_EQ(a.space_before, b.space_before) << i;
  EXPECT_EQ(a.loc.file, b.loc.file) << i;
  EXPECT_EQ(a.loc.line, b.loc.line) << i;
  EXPECT_EQ(a.loc.col, b.loc.col) << i;
}

TEST(NftTokenStream, LazyTokensAreTheLexersTokens) {
  const std::vector<Token> all = LexAll(kText);
  TokenStream s(kText, 3);
  EXPECT_EQ(s.error().loc.line, 0u);
  ASSERT_EQ(s.size(), all.size());
  ExpectSame(s.end_token(), all.back(), all.size());
  // Scanning ahead first lexes nothing into the stream and sees them all.
  size_t seen = 0;
  s.Scan(0, [&](const Token& t) {
    ExpectSame(t, all[seen], seen);
    return ++seen < 5;
  });
  EXPECT_EQ(seen, 5u);
  ExpectSame(s[2], all[2], 2);
  seen = 1;
  s.Scan(1, [&](const Token& t) {
    ExpectSame(t, all[seen], seen);
    ++seen;
    return true;
  });
  EXPECT_EQ(seen, all.size());
  for (size_t i = 0; i < all.size(); ++i) ExpectSame(s[i], all[i], i);
  std::vector<std::string> strings;
  for (const Token& t : all) {
    if (t.kind == Tok::kString) strings.push_back(t.text);
  }
  EXPECT_EQ(strings, std::vector<std::string>{"x \" y"});
}

TEST(NftTokenStream, InsertAndEraseMoveTheTokensAfter) {
  const std::vector<Token> all = LexAll(kText);
  TokenStream s(kText, 3);
  const Token extra{.kind = Tok::kWord, .text = "extra"};
  const Token two[] = {extra, extra};
  s.Insert(4, two, 2);
  ASSERT_EQ(s.size(), all.size() + 2);
  ExpectSame(s[3], all[3], 3);
  EXPECT_EQ(s[4].text, "extra");
  EXPECT_EQ(s[5].text, "extra");
  for (size_t i = 4; i < all.size(); ++i) ExpectSame(s[i + 2], all[i], i);
  s.Erase(4);
  s.Erase(4);
  ASSERT_EQ(s.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) ExpectSame(s[i], all[i], i);
}

TEST(NftTokenStream, ErrorsAreFoundUpFront) {
  TokenStream s("table ip t {\n}\n\x01\n", 0);
  EXPECT_EQ(s.error().loc.line, 3u);
  EXPECT_EQ(s.error().message, "unexpected character");
}

TEST(NftTokenStream, ReleaseFreesWholeChunksOnly) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "w" + std::to_string(i) + "\n";
  TokenStream s(text, 0);
  ASSERT_EQ(s.size(), 4001u);
  EXPECT_EQ(s[1500].text, "w750");
  s.Release(10, 1000);  // chunks of 256: [256, 768) go
  EXPECT_EQ(s.released_end(), 768u);
  EXPECT_EQ(s[254].text, "w127");
  EXPECT_EQ(s[768].text, "w384");
  s.Release(0, 100000);  // nothing past what is lexed
  EXPECT_EQ(s.released_end(), 1280u);
  EXPECT_EQ(s[4000].kind, Tok::kEnd);
}

std::string Addr(int i) {
  return "10." + std::to_string((i >> 16) & 255) + "." + std::to_string((i >> 8) & 255) + "." +
         std::to_string(i & 255);
}

// A set of `n` elements, every 100th a $variable of two more (a splice of
// five tokens where the consumed tokens before it were released), element
// `bad` (if any) a prefix the set cannot hold.
std::string LongList(int n, int bad = -1) {
  std::string text = "define V = { 11.0.0.1, 11.0.0.2 }\ntable ip t {\n set s {\n  type ipv4_addr\n"
                     "  elements = {\n";
  for (int i = 0; i < n; ++i) {
    text += i == bad ? std::string("   10.0.0.0/8") : "   " + Addr(i);
    if (i % 100 == 50) text += ", $V";
    text += i + 1 < n ? ",\n" : "\n";
  }
  return text + "  }\n }\n chain c {\n  ip saddr @s accept\n }\n}\n";
}

TEST(NftTokenStream, ReleasedListsKeepEveryElement) {
  auto r = nft_test::Parse(LongList(20000));
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Set& set = r->rs->tables.at(0).sets.at(0);
  ASSERT_EQ(set.elements.size(), 20000u + 2 * 200);
  EXPECT_EQ(set.elements.back().loc.line, 5u + 20000u);
  EXPECT_EQ(set.elements.back().key, (ir::Bytes{10, 0, 0x4e, 0x1f}));  // 19999
}

TEST(NftTokenStream, ErrorPastReleasedTokensIsLocated) {
  // Element i is on line 6 + i, indented by 3; the $V after it follows ", ".
  nft_test::ExpectError(LongList(20000, 15000), 15006, 4,
                        "set 's' needs 'flags interval' for ranges");
  auto undefined = LongList(20000);
  undefined.replace(undefined.rfind("$V"), 2, "$W");
  nft_test::ExpectError(undefined, 6 + 19950, 3 + Addr(19950).size() + 3,
                        "undefined variable '$W'");
}

// Tables, chains and the file let go of the tokens of each item parsed:
// rules after thousands of others still see defines from before them, bind
// chains and locate errors.
TEST(NftTokenStream, ReleasedRulesKeepTheirMeaning) {
  std::string text = "define P = 22\ntable ip t {\n chain c {\n";
  for (int i = 0; i < 3000; ++i) text += "  ip saddr " + Addr(i) + " tcp dport $P accept\n";
  text += "  ip daddr 1.2.3.4 jump { counter; ip saddr 5.6.7.8 drop; }\n";
  text += " }\n}\nadd rule ip t c tcp dport $P drop\n";
  auto r = nft_test::Parse(text);
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  ASSERT_EQ(t.chains.size(), 2u);
  EXPECT_EQ(t.chains[0].rules.size(), 3002u);
  EXPECT_EQ(t.chains[1].rules.size(), 2u);
  nft_test::ExpectError(text + "add rule ip t c tcp dport $Q drop\n", 3008, 27,
                        "undefined variable '$Q'");
}

}  // namespace
}  // namespace rulejit
