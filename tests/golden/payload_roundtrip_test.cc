// Golden test: the IR text form against the nftables test corpus.
//
// For every `[ ... ]` line of every nftables-py/**/*.payload* file: if
// ParseExprLine accepts it, PrintExpr must give back the identical line
// (MIR-style round trip), and for the expression kinds the IR covers every
// line must be accepted. Per-kind counts are printed. A second test reads
// whole rule blocks with ParseRuleBlock and prints them back with PrintRule.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "tests/support/files.h"

namespace rulejit::ir {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "nftables-py";

std::vector<fs::path> PayloadFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kCorpus)) {
    if (entry.is_regular_file() &&
        entry.path().filename().string().find(".payload") != std::string::npos) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

using ::rulejit::testing::ReadFile;

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && absl::ascii_isspace(s[b])) ++b;
  while (e > b && absl::ascii_isspace(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

// The IR's kinds are named by the expression and, for payload/meta/ct, the
// operation (for rt also the key: only tcpmss is modelled). `bitwise` with
// a second register operand (`( reg 1 | reg 2 )`, a newer kernel form) is
// counted as a kind of its own.
std::string KindOf(const std::string& line) {
  std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (words.size() < 2) return "?";
  const std::string& name = words[1];
  if ((name == "payload" || name == "meta" || name == "ct" ||
       name == "exthdr") && words.size() > 2) {
    return name + " " + words[2];
  }
  if (name == "rt" && words.size() > 3 && words[3] == "tcpmss") return "rt load tcpmss";
  if (name == "bitwise" && words.size() > 9 && words[9] == "reg") {
    return "bitwise (register operand)";
  }
  return name;
}

const std::set<std::string> kCoveredKinds = {
    "payload load", "meta load", "meta set", "ct load",   "ct set",
    "bitwise",      "byteorder", "cmp",      "range",     "lookup",
    "immediate",    "counter",   "limit",    "log",       "reject",
    "notrack",      "exthdr load", "payload write", "queue", "quota",
    "nat",          "masq",      "redir",     "bitwise (register operand)", "fib",
    "objref",       "numgen",    "hash",         "exthdr write", "rt load tcpmss", "synproxy",
    "dynset",       "socket",    "tproxy"};

struct KindCount {
  int accepted = 0;
  int total = 0;
};

TEST(PayloadRoundTrip, EveryAcceptedLinePrintsBackIdentically) {
  std::vector<fs::path> files = PayloadFiles();
  ASSERT_GT(files.size(), 50u) << "corpus not found under " << kCorpus;
  std::map<std::string, KindCount> counts;
  int mismatches = 0, uncovered_rejects = 0;
  for (const fs::path& file : files) {
    std::string text = ReadFile(file);
    int line_no = 0;
    for (absl::string_view raw : absl::StrSplit(text, '\n')) {
      ++line_no;
      std::string line = Trim(std::string_view(raw.data(), raw.size()));
      if (line.empty() || line[0] != '[') continue;
      std::string kind = KindOf(line);
      KindCount& count = counts[kind];
      ++count.total;
      absl::StatusOr<Expr> expr = ParseExprLine(line);
      std::string where = file.lexically_relative(kCorpus).string() + ":" +
                          std::to_string(line_no);
      if (!expr.ok()) {
        if (kCoveredKinds.count(kind) && ++uncovered_rejects <= 20) {
          ADD_FAILURE() << where << ": covered kind '" << kind
                        << "' rejected: " << expr.status().message() << "\n  "
                        << line;
        }
        continue;
      }
      ++count.accepted;
      std::string printed = PrintExpr(*expr);
      if (printed != line && ++mismatches <= 20) {
        ADD_FAILURE() << where << ": round trip differs\n  corpus:  " << line
                      << "\n  printed: " << printed;
      }
    }
  }
  int accepted = 0, total = 0;
  std::cout << "kind                          accepted / total\n";
  for (const auto& [kind, c] : counts) {
    std::cout << (kCoveredKinds.count(kind) ? "  " : "- ") << kind
              << std::string(28 - std::min<size_t>(28, kind.size()), ' ')
              << c.accepted << " / " << c.total << "\n";
    accepted += c.accepted;
    total += c.total;
  }
  std::cout << "all lines: " << accepted << " / " << total
            << " accepted (- = kinds the IR does not model)\n";
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(uncovered_rejects, 0);
  for (const std::string& kind : kCoveredKinds) {
    EXPECT_GT(counts[kind].total, 0) << "no corpus lines of kind " << kind;
    EXPECT_EQ(counts[kind].accepted, counts[kind].total) << kind;
  }
  // Nothing outside the IR may be silently accepted.
  for (const auto& [kind, c] : counts) {
    if (!kCoveredKinds.count(kind)) {
      EXPECT_EQ(c.accepted, 0) << kind;
    }
  }
}

// Rule blocks ("FAMILY TABLE CHAIN" then expression lines) whose
// expressions are all in the IR read back into a Rule that PrintRule prints
// as the same block.
TEST(PayloadRoundTrip, RuleBlocksReadAndPrintBack) {
  int blocks = 0, checked = 0;
  for (const fs::path& file : PayloadFiles()) {
    std::string text = ReadFile(file);
    std::vector<std::string> lines = absl::StrSplit(text, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string header = Trim(lines[i]);
      // A header is a non-comment, non-set line followed by `[` lines.
      if (header.empty() || header[0] == '#' || header[0] == '[' ||
          header[0] == '_' || absl::StartsWith(header, "element") ||
          i + 1 >= lines.size() || Trim(lines[i + 1]).rfind("[", 0) != 0) {
        continue;
      }
      std::string block = header + "\n", expected = header + "\n";
      bool covered = true;
      size_t j = i + 1;
      for (; j < lines.size() && Trim(lines[j]).rfind("[", 0) == 0; ++j) {
        std::string line = Trim(lines[j]);
        block += lines[j] + "\n";
        expected += "  " + line + "\n";
        covered = covered && ParseExprLine(line).ok();
      }
      ++blocks;
      std::vector<std::string> words = absl::StrSplit(header, ' ', absl::SkipEmpty());
      if (!covered || words.size() != 3) continue;
      ++checked;
      absl::StatusOr<RuleBlock> rb = ParseRuleBlock(block, -1, i + 1);
      ASSERT_TRUE(rb.ok()) << file << ":" << i + 1 << ": " << rb.status();
      EXPECT_EQ(rb->rule.exprs.size(), j - i - 1);
      Table table;
      table.family = rb->family;
      table.name = rb->table;
      Chain chain;
      chain.name = rb->chain;
      EXPECT_EQ(PrintRule(table, chain, rb->rule), expected) << file << ":" << i + 1;
      // Locations point at the '[' of each line.
      if (!rb->rule.exprs.empty()) {
        EXPECT_EQ(rb->rule.exprs[0].loc.line, i + 2);
      }
    }
  }
  std::cout << checked << " of " << blocks
            << " rule blocks use only IR expressions and were read back\n";
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace rulejit::ir
