// Parsing nft text in unit tests (nft_parser_test.cc, nft_scopes_test.cc,
// ...): the result keeps its Diagnostics alive, and an expected error is
// checked at its line and column; compiling it for a backend and
// classifying a frame.
#ifndef RULEJIT_TESTS_UNIT_NFT_TEST_UTIL_H_
#define RULEJIT_TESTS_UNIT_NFT_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "frontends/nft/nft.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "rulejit/rulejit.h"

namespace rulejit::nft_test {

struct Result {
  absl::StatusOr<ir::Ruleset> rs;
  ir::Diagnostics diags;
};

// Parses `text` as file "t.nft" (includes relative to `dir`).
inline std::unique_ptr<Result> Parse(const std::string& text, const std::string& dir = "") {
  auto r = std::make_unique<Result>();
  const int file = r->diags.AddFile("t.nft", text);
  r->rs = frontends::ParseNft(text, file, r->diags, dir);
  return r;
}

// Expects the first error at line:col, its message containing `msg` and
// its hint `hint`.
inline void ExpectError(const std::string& text, uint32_t line, uint32_t col,
                        const std::string& msg, const std::string& hint = "") {
  auto r = Parse(text);
  ASSERT_FALSE(r->rs.ok()) << text;
  EXPECT_EQ(r->rs.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(r->diags.has_errors());
  const ir::Diagnostic& d = r->diags.all().front();
  EXPECT_EQ(d.loc.line, line) << r->diags.Format();
  EXPECT_EQ(d.loc.col, col) << r->diags.Format();
  EXPECT_THAT(d.message, ::testing::HasSubstr(msg)) << r->diags.Format();
  if (!hint.empty()) EXPECT_THAT(d.hint, ::testing::HasSubstr(hint)) << r->diags.Format();
}

// The printed rules of the first chain of the first table of `text`, or
// "ERROR: " and the diagnostics.
inline std::string PrintedRules(const std::string& text) {
  auto r = Parse(text);
  if (!r->rs.ok()) return "ERROR: " + r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  std::string out;
  for (const ir::Rule& rule : t.chains.at(0).rules) out += ir::PrintRule(t, t.chains.at(0), rule);
  return out;
}

// Each line reads back (ir/reader.h) into an expression that prints as it.
inline void ExpectReadsBack(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    absl::StatusOr<ir::Expr> e = ir::ParseExprLine(line);
    ASSERT_TRUE(e.ok()) << line << ": " << e.status();
    EXPECT_EQ(ir::PrintExpr(*e), line);
  }
}

// `text` compiled for `backend`; null, with a test failure, when it does
// not build.
inline std::unique_ptr<const Program> CompileFor(const std::string& text, Backend backend) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "t.nft");
  EXPECT_TRUE(rs.ok()) << rs.status();
  if (!rs.ok()) return nullptr;
  CompileOptions options;
  options.backend = backend;
  auto program = Program::Compile(*std::move(rs), options);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return nullptr;
  return *std::move(program);
}

// The verdict `program` gives `frame` at `hook`.
inline Verdict VerdictOf(const Program& program, Hook hook, const std::vector<uint8_t>& frame,
                         const PacketMeta& meta, RunState* state = nullptr) {
  return program.Classify(hook, frame.data(), static_cast<uint32_t>(frame.size()), meta, state)
      .verdict;
}

}  // namespace rulejit::nft_test

#endif  // RULEJIT_TESTS_UNIT_NFT_TEST_UTIL_H_
