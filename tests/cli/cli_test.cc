// End-to-end tests of the `rulejit` command line and its `check`
// subcommand: runs the built binary (RULEJIT_TOOL, cli_fixture.h) on files in
// a temporary directory and checks exit codes, stdout and the exact
// `FILE:LINE:COL: error:` prefixes on stderr. `compile`, `eval` and `bench`
// have files of their own beside this one.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"

namespace rulejit::testing {
namespace {

// ---------------------------------------------------------------------------
// Command line

TEST_F(CliTest, NoArgumentsPrintsUsage) {
  ToolResult r = Run({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: rulejit"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, HelpGoesToStdout) {
  ToolResult r = Run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("rulejit check FILE"));
  EXPECT_THAT(r.out, HasSubstr("rulejit eval FILE PCAP"));
}

TEST_F(CliTest, UnknownSubcommandIsUsageError) {
  ToolResult r = Run({"frobnicate", kExampleRules});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              StartsWith("rulejit: error: unknown command 'frobnicate'"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, UnknownFlagIsUsageError) {
  ToolResult r = Run({"check", kExampleRules, "--frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(
      r.err, StartsWith("rulejit check: error: unknown option '--frobnicate'"));
  EXPECT_THAT(r.err, HasSubstr("usage: rulejit check FILE"));
}

TEST_F(CliTest, MissingPositionalIsUsageError) {
  ToolResult r = Run({"eval", kExampleRules});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("rulejit eval: error: missing PCAP"));
}

TEST_F(CliTest, ExtraPositionalIsUsageError) {
  ToolResult r = Run({"check", kExampleRules, "other"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unexpected argument 'other'"));
}

TEST_F(CliTest, FlagWithoutValueIsUsageError) {
  ToolResult r = Run({"check", kExampleRules, "--format"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("option '--format' needs a value"));
}

TEST_F(CliTest, UnknownFormatNameIsUsageError) {
  ToolResult r = Run({"check", kExampleRules, "--format=xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown format 'xml'"));
}

// ---------------------------------------------------------------------------
// check

TEST_F(CliTest, CheckExamplePrintsSummary) {
  ToolResult r = Run({"check", kExampleRules});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kExampleRules + ": ok, 1 tables, 5 chains, 12 rules\n");
  EXPECT_THAT(r.err, IsEmpty());
}

TEST_F(CliTest, CheckWarnsAboutShadowedRuleAndLintAboutRedundant) {
  std::string path = Write("shadow.ipt",
                           "*filter\n:INPUT DROP [0:0]\n"
                           "-A INPUT -s 10.0.0.0/8 -j ACCEPT\n"
                           "-A INPUT -s 10.1.0.0/16 -p tcp --dport 22 -j DROP\n"
                           "-A INPUT -p udp -j DROP\n"
                           "COMMIT\n");
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, StartsWith(path + ":4:1: warning: rule is shadowed: no packet that "
                                       "reaches it matches it (covered by " + path + ":3)\n"
                                       "-A INPUT -s 10.1.0.0/16"));
  EXPECT_THAT(r.err, Not(HasSubstr("redundant")));

  ToolResult lint = Run({"check", "--lint", path});
  EXPECT_EQ(lint.exit_code, 0) << lint.err;
  EXPECT_THAT(lint.err, HasSubstr(path + ":5:1: warning: rule is redundant: removing it "
                                         "changes no verdict"));
}

TEST_F(CliTest, CheckForcedFormatAgrees) {
  ToolResult r = Run({"check", "--format", "iptables", kExampleRules});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(CliTest, CheckMissingFile) {
  std::string path = dir_ + "/nope.ipt";
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(path + ": error: cannot open"));
}

TEST_F(CliTest, CheckDirectoryIsAnError) {
  ToolResult r = Run({"check", dir_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(dir_ + ": error: cannot read: is a directory"));
}

TEST_F(CliTest, CheckForcedWrongFormatFails) {
  ToolResult r = Run({"check", kExampleRules, "--format", "nft"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              MatchesRegex(ErrorAt(kExampleRules, "[0-9]+") + "(.|\n)*"));
}

TEST_F(CliTest, CheckDetectsNftAfterComments) {
  std::string path =
      Write("r.conf",
            "#!/usr/sbin/nft -f\n\nflush ruleset\n"
            "table ip t {\n  chain c {\n    tcp dport 22 accept\n  }\n}\n");
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, path + ": ok, 1 tables, 1 chains, 1 rules\n");
}

TEST_F(CliTest, CheckUndetectableFormat) {
  std::string path = Write("x.rules", "\n# a comment\nallow everything\n");
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              StartsWith(path + ":3:1: error: cannot tell the input format"));
  EXPECT_THAT(r.err, HasSubstr("hint: use --format"));
}

// iptables-save prints nothing on a host without tables; the kernel's
// loaders take an empty file.
TEST_F(CliTest, CheckEmptyFileIsAnEmptyRuleset) {
  for (const char* text : {"", "\n# nothing here\n\n"}) {
    std::string path = Write("empty.rules", text);
    ToolResult r = Run({"check", path});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, path + ": ok, 0 tables, 0 chains, 0 rules\n");
  }
}

TEST_F(CliTest, CheckClassbenchRules) {
  std::string path =
      Write("acl", "@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t22 : 22\t0x06/0xFF\t\n");
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string bad = Write("bad", "@10.0.0.0/8 0.0.0.0/0 0 : 65535 30 : 22 0x06/0xFF\n");
  r = Run({"check", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(bad + ":1:33: error: port range is empty"));
}

TEST_F(CliTest, CheckTruncatedDumpWithoutCommit) {
  std::string path =
      Write("t.ipt", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\n");
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  // Reported at the `*filter` that never got its COMMIT.
  EXPECT_THAT(r.err, StartsWith(path + ":1:1: error: "));
  EXPECT_THAT(r.err, HasSubstr("COMMIT"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, CheckTruncatedRuleLine) {
  std::string path = Write("t.ipt", Dump("-A INPUT -p tcp -m tcp --dport\n"));
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  // At the option left without its value.
  EXPECT_THAT(r.err, StartsWith(path + ":5:24: error: "));
  EXPECT_THAT(r.err, HasSubstr("--dport"));
}

TEST_F(CliTest, CheckUnknownOptionPointsAtIt) {
  std::string line = "-A INPUT -p tcp -m tcp --dprot 22 -j ACCEPT";
  std::string path = Write("t.ipt", Dump(line + "\n"));
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  std::string col = std::to_string(line.find("--dprot") + 1);
  EXPECT_THAT(r.err, StartsWith(path + ":5:" + col + ": error: "));
  EXPECT_THAT(r.err, HasSubstr("--dprot"));
}

TEST_F(CliTest, CheckUnknownJumpTarget) {
  std::string path =
      Write("t.ipt", Dump("-A INPUT -j ACCEPT\n-A INPUT -j NOSUCH\n"));
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(path + ":6:13: error: "));  // at NOSUCH
  EXPECT_THAT(r.err, HasSubstr("NOSUCH"));
}

TEST_F(CliTest, CheckAppendToUnknownChain) {
  std::string path = Write("t.ipt", Dump("-A NOSUCH -j ACCEPT\n"));
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(path + ":5:4: error: "));  // at NOSUCH
}

TEST_F(CliTest, CheckDuplicateChain) {
  std::string path = Write("t.ipt", Dump(":FOO - [0:0]\n:FOO - [0:0]\n"));
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  // At the second declaration's name.
  EXPECT_THAT(r.err, StartsWith(path + ":6:2: error: "));
  EXPECT_THAT(r.err, HasSubstr("FOO"));
}

TEST_F(CliTest, CheckJumpLoop) {
  std::string path =
      Write("t.ipt", Dump(":A - [0:0]\n:B - [0:0]\n-A INPUT -j A\n"
                          "-A A -j B\n-A B -j A\n"));
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  // At the target of the jump that closes the loop (`-A B -j A`).
  EXPECT_THAT(r.err, StartsWith(path + ":9:9: error: "));
  EXPECT_THAT(r.err, HasSubstr("loop"));
}

TEST_F(CliTest, CheckBinaryGarbageDoesNotCrash) {
  static constexpr char kGarbage[] =
      "*filter\n-A INPUT \x01\xff\xfe\0\x80 -j\n";
  std::string garbage(kGarbage, sizeof(kGarbage) - 1);
  std::string path = Write("t.ipt", garbage);
  ToolResult r = Run({"check", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, MatchesRegex(ErrorAt(path, "[0-9]+") + "(.|\n)*"));
}

}  // namespace
}  // namespace rulejit::testing
