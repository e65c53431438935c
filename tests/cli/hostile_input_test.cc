// Untrusted rulesets must never crash `rulejit check` (issue 26): every
// bound of frontends/nft/limits.h and frontends/iptables/limits.h is a
// located error (FILE:LINE:COL, exit 1) one step past it, and the deepest
// or largest input it allows still checks (so that the bound is also safe
// under ASan, whose frames are larger: these tests run in that build too).
// The big inputs are generated here, not kept as files.
#include <string>

#include "tests/cli/cli_fixture.h"

namespace rulejit::testing {
namespace {

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// A set whose elements are nested `depth` braces deep (the outer `{` of
// `elements = {` is the first).
std::string NestedSet(size_t depth) {
  return "table ip t {\n  set s {\n    type ipv4_addr\n    elements = " + Repeat("{", depth) +
         "1.2.3.4" + Repeat("}", depth) + "\n  }\n}\n";
}

// A rule `before` + `depth` parentheses around `inner` + `after`.
std::string NestedParens(const std::string& before, const std::string& inner, size_t depth,
                         const std::string& after) {
  return "table ip t {\n  chain c {\n    type filter hook input priority 0;\n    " + before +
         Repeat("(", depth) + inner + Repeat(")", depth) + after + "\n  }\n}\n";
}

class HostileInputTest : public CliTest {
 protected:
  // `rulejit check` of `text` fails with exactly one located error that
  // says `message`, at LINE:COL.
  void ExpectRefused(const std::string& name, const std::string& text, const std::string& line,
                     const std::string& col, const std::string& message) {
    const std::string path = Write(name, text);
    ToolResult r = Run({"check", path});
    EXPECT_EQ(r.exit_code, 1) << r.err.substr(0, 2000);
    EXPECT_THAT(r.err, StartsWith(path + ":" + line + ":" + col + ": error: "))
        << r.err.substr(0, 2000);
    EXPECT_THAT(r.err.substr(0, 2000), HasSubstr(message));
  }
  void ExpectAccepted(const std::string& name, const std::string& text) {
    ToolResult r = Run({"check", Write(name, text)});
    EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  }
};

// The issue's reproducer: 100,000 `{` used to overflow the stack (SIGSEGV).
TEST_F(HostileInputTest, HundredThousandBracesAreALocatedError) {
  // Column of the 1,001st `{`: "    elements = " is 15 bytes.
  ExpectRefused("braces.nft", NestedSet(100000), "4", "1016",
                "nested deeper than 1000 levels");
}

TEST_F(HostileInputTest, DeepestAllowedSetNestingChecks) {
  ExpectAccepted("braces1000.nft", NestedSet(1000));
  ExpectRefused("braces1001.nft", NestedSet(1001), "4", "1016", "nested deeper than 1000");
}

TEST_F(HostileInputTest, NestedAnonymousSetInARule) {
  const std::string rule = "table ip t {\n  chain c {\n    ip saddr " + Repeat("{ ", 100000) +
                           "1.2.3.4" + Repeat(" }", 100000) + " accept\n  }\n}\n";
  // "    ip saddr " is 13 bytes, each level 2: the 1,001st `{` is at 14 + 2000.
  ExpectRefused("anon.nft", rule, "3", "2014", "nested deeper than 1000");
}

TEST_F(HostileInputTest, NestedParenthesesInAMask) {
  ExpectAccepted("mask1000.nft", NestedParens("tcp flags & ", "syn", 1000, " == syn accept"));
  // "    tcp flags & " is 16 bytes: the 1,001st `(` is at column 1017.
  ExpectRefused("mask.nft", NestedParens("tcp flags & ", "syn", 100000, " == syn accept"), "4", "1017",
                "nested deeper than 1000");
}

TEST_F(HostileInputTest, NestedParenthesesInAValueExpression) {
  ExpectAccepted("mark1000.nft", NestedParens("meta mark set ", "1", 1000, " accept"));
  ExpectRefused("mark.nft", NestedParens("meta mark set ", "1", 100000, " accept"), "4", "1019",
                "nested deeper than 1000");
}

TEST_F(HostileInputTest, WordAndStringLength) {
  const std::string name = Repeat("x", 64 * 1024);
  ExpectAccepted("word64k.nft", "define " + name + " = 1\n");
  ExpectRefused("word.nft", "define " + name + "y = 1\n", "1", "8",
                "word longer than 65536 bytes");
  ExpectRefused("string.nft",
                "table ip t {\n  chain c {\n    comment \"" + name + "y\"\n  }\n}\n", "3",
                "13", "string longer than 65536 bytes");
}

TEST_F(HostileInputTest, LineLength) {
  const std::string comment = "#" + Repeat("x", 64 * 1024 * 1024 - 1);
  ExpectAccepted("line64m.nft", comment + "\n");
  ExpectRefused("line.nft", comment + "xx\n", "1", "67108865", "line longer than 67108864 bytes");
}

// Each definition holds ten of the one before (expanded where it is
// defined): a short file grows exponentially, and stops at the token bound.
TEST_F(HostileInputTest, DefineExpansionTokensAreBounded) {
  std::string text = "define d0 = { " + Repeat("1.2.3.4, ", 499) + "1.2.3.4 }\n";
  for (int i = 1; i <= 3; ++i) {
    const std::string prev = "$d" + std::to_string(i - 1);
    text += "define d" + std::to_string(i) + " = { " + Repeat(prev + ", ", 9) + prev + " }\n";
  }
  text += "table ip t {\n  set s {\n    type ipv4_addr\n    elements = $d3\n  }\n}\n";
  // The tokens of d1 and d2 and nine copies of d2 in d3 fit; the tenth
  // (line 4, column 15 + 9 * 5) does not.
  ExpectRefused("expand.nft", text, "4", "60", "too many variable expansions");
}

// A chain of definitions, each the one before: one expansion each.
TEST_F(HostileInputTest, DefineExpansionCountIsBounded) {
  std::string text = "define d0 = 1.2.3.4\n";
  for (int i = 1; i <= 100001; ++i) {
    text += "define d" + std::to_string(i) + " = $d" + std::to_string(i - 1) + "\n";
  }
  ExpectRefused("chain.nft", text, "100002", "18", "too many variable expansions (over 100000");
}

TEST_F(HostileInputTest, IncludeDepth) {
  ExpectRefused("self.nft", "include \"self.nft\"\n", "1", "1",
                "includes nested too deeply (max 16)");
}

// Four files per level, six levels: 4^6 files (glob fan-out) is past the
// bound long before the depth bound.
TEST_F(HostileInputTest, IncludedFileCount) {
  for (int level = 1; level <= 6; ++level) {
    for (int i = 0; i < 4; ++i) {
      Write("l" + std::to_string(level) + "_" + std::to_string(i) + ".nft",
            level == 6 ? "\n" : "include \"l" + std::to_string(level + 1) + "_*.nft\"\n");
    }
  }
  const std::string path = Write("fan.nft", "include \"l1_*.nft\"\n");
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  // Three whole subtrees (1 + 4 + ... + 4^5 = 1,365 files each) and
  // l1_3.nft make 4,096 included files: l1_3's own include is one too many.
  EXPECT_THAT(r.err, StartsWith(dir_ + "/l1_3.nft:1:1: error: more than 4096 included files"));
}

// The shadowed-rule analysis of a rule that looks up a huge set costs more
// than everything else `check` does: skipped, with a note, as for many rules.
TEST_F(HostileInputTest, CheckSkipsAnalysisOfHugeSets) {
  std::string elements;
  for (int i = 0; i <= 100000; ++i) {
    elements += "10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." +
                std::to_string(i & 255) + ",\n";
  }
  const std::string path = Write(
      "big.nft", "table ip t {\n  set s {\n    type ipv4_addr\n    elements = {\n" + elements +
                     "    }\n  }\n  chain c {\n    type filter hook input priority 0;\n"
                     "    ip saddr @s drop\n  }\n}\n");
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(r.err, path + ": note: 100001 set elements: shadowed-rule analysis skipped "
                          "(--lint runs it)\n");
}

// iptables-restore's own bounds (frontends/iptables/limits.h).
TEST_F(HostileInputTest, IptablesLineLength) {
  // iptables-legacy-restore 1.8.9 reads the first whole and cuts the
  // second: "Couldn't load target `ACCEP'".
  auto line = [](size_t size) {
    return "-A INPUT" + Repeat(" ", size - 18) + " -j ACCEPT\n";
  };
  ExpectAccepted("line10239.ipt", Dump(line(10239)));
  ExpectRefused("line10240.ipt", Dump(line(10240)), "5", "10240", "line longer than 10239 bytes");
}

TEST_F(HostileInputTest, IptablesParameterLength) {
  const std::string comment = Repeat("c", 255);
  ExpectAccepted("param.ipt", Dump("-A INPUT -m comment --comment " + comment + " -j ACCEPT\n"));
  ExpectRefused("param1024.ipt",
                Dump("-A INPUT -m comment --comment " + Repeat("c", 1024) + " -j ACCEPT\n"), "5",
                "31", "word longer than 1023 bytes");
}

TEST_F(HostileInputTest, IptablesArgumentCount) {
  // 9 + 4 * 60 + 2 = 251 words: iptables-legacy-restore 1.8.9 takes them,
  // and refuses one more.
  const std::string body = "-A INPUT -p tcp -m tcp ! -s 1.2.3.4" +
                           Repeat(" -m comment --comment x", 60);
  ExpectAccepted("args251.ipt", Dump(body + " -j ACCEPT\n"));
  const std::string path = Write("args252.ipt", Dump(body + " -j ACCEPT -f\n"));
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(path + ":5:"));
  EXPECT_THAT(r.err, HasSubstr("more than 251 words on one line"));
}

TEST_F(HostileInputTest, InputFileSize) {
  ToolResult r = Run({"check", "/dev/zero", "--format", "nft"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/dev/zero: error: larger than 256 MiB"));
}

// A pcap whose record claims more bytes than any snapshot length.
TEST_F(HostileInputTest, BogusPcapRecord) {
  std::string pcap("\xd4\xc3\xb2\xa1\x02\x00\x04\x00", 8);
  pcap += std::string(8, '\0');
  pcap += std::string("\xff\xff\x00\x00\x01\x00\x00\x00", 8);  // snaplen 65535, Ethernet
  pcap += std::string(8, '\0');                                  // ts
  pcap += std::string("\x00\x00\x00\x7f\x00\x00\x00\x7f", 8);   // caplen, len 2^31-ish
  pcap += "short";
  ToolResult r = Run({"eval", kExampleRules, Write("bogus.pcap", pcap)});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("error"));
}

}  // namespace
}  // namespace rulejit::testing
