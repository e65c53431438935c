// End-to-end tests of the `rulejit` command: runs the built binary
// (RULEJIT_TOOL) on files in a temporary directory and checks exit codes,
// stdout and the exact `FILE:LINE:COL: error:` prefixes on stderr.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/support/shell.h"
#include "tests/cli/pcap_writer.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

struct ToolResult {
  int exit_code = -1;  // 128 + signal when the tool crashed
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "^PATH:LINE:COL: error: " as a regex with the path escaped.
std::string ErrorAt(const std::string& path, const std::string& line,
                    const std::string& col = "[0-9]+") {
  std::string escaped;
  for (char c : path) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos)
      escaped += '\\';
    escaped += c;
  }
  return escaped + ":" + line + ":" + col + ": error: ";
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/rulejit_cli_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // Runs the tool with `args` (in `cwd` when given).
  ToolResult Run(const std::vector<std::string>& args,
                 const std::string& cwd = "") {
    std::string command;
    if (!cwd.empty()) command = "cd " + ShellQuote(cwd) + " && ";
    command += ShellQuote(RULEJIT_TOOL);
    for (const std::string& arg : args) command += " " + ShellQuote(arg);
    std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    command += " >" + ShellQuote(out) + " 2>" + ShellQuote(err);
    int status = std::system(command.c_str());
    ToolResult result;
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
    result.out = ReadAll(out);
    result.err = ReadAll(err);
    return result;
  }

  std::string dir_;
};

const std::string kSourceDir = RULEJIT_SOURCE_DIR;
const std::string kExampleRules = kSourceDir + "/examples/firewall.ipt";
const std::string kExamplePcap = kSourceDir + "/examples/firewall.pcap";

// A minimal valid dump around the given body lines (line 1 is `*filter`,
// body starts at line 5).
std::string Dump(const std::string& body) {
  return "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
         ":OUTPUT ACCEPT [0:0]\n" +
         body + "COMMIT\n";
}

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

// ---------------------------------------------------------------------------
// compile

// The IR of a small dump, written out by hand from iptables-nft's lowering
// (l4proto first, then the masked source, then the port; counter; verdict).
TEST_F(CliTest, CompileEmitIrPrintsTheIr) {
  std::string path =
      Write("small.ipt",
            "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n"
            ":OUTPUT ACCEPT [0:0]\n:WEB - [0:0]\n"
            "-A INPUT -s 10.0.0.0/10 -p tcp -m tcp --dport 22 -j ACCEPT\n"
            "-A INPUT -p tcp -j WEB\n"
            "-A WEB -p tcp -m tcp --dport 443 -j ACCEPT\n"
            "COMMIT\n");
  const std::string expected =
      "# table ip filter\n"
      "# chain INPUT type filter hook input priority 0 policy drop\n"
      "ip filter INPUT\n"
      "  [ meta load l4proto => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00000006 ]\n"
      "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
      "  [ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]\n"
      "  [ cmp eq reg 1 0x0000000a ]\n"
      "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00001600 ]\n"
      "  [ counter pkts 0 bytes 0 ]\n"
      "  [ immediate reg 0 accept ]\n"
      "\n"
      "ip filter INPUT\n"
      "  [ meta load l4proto => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00000006 ]\n"
      "  [ counter pkts 0 bytes 0 ]\n"
      "  [ immediate reg 0 jump -> WEB ]\n"
      "\n"
      "# chain FORWARD type filter hook forward priority 0 policy accept\n"
      "# chain OUTPUT type filter hook output priority 0 policy accept\n"
      "# chain WEB\n"
      "ip filter WEB\n"
      "  [ meta load l4proto => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00000006 ]\n"
      "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
      "  [ cmp eq reg 1 0x0000bb01 ]\n"
      "  [ counter pkts 0 bytes 0 ]\n"
      "  [ immediate reg 0 accept ]\n"
      "\n";
  // As iptables-nft loads the dump: its exact bytecode.
  ToolResult r = Run({"compile", path, "--emit", "ir", "--format", "iptables-nft"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected);
  // --emit ir is the default.
  EXPECT_EQ(Run({"compile", path, "--format", "iptables-nft"}).out, expected);
  // As iptables-legacy loads it (the default): the tcp matches refuse
  // non-first fragments, so each such rule checks the fragment offset first.
  const std::string not_fragment =
      "  [ payload load 2b @ network header + 6 => reg 1 ]\n"
      "  [ bitwise reg 1 = ( reg 1 & 0x0000ff1f ) ^ 0x00000000 ]\n"
      "  [ cmp eq reg 1 0x00000000 ]\n";
  std::string legacy = expected;
  for (const char* before : {"  [ payload load 2b @ transport header + 2 => reg 1 ]\n  [ cmp eq reg 1 0x00001600 ]",
                             "  [ payload load 2b @ transport header + 2 => reg 1 ]\n  [ cmp eq reg 1 0x0000bb01 ]"}) {
    legacy.insert(legacy.find(before), not_fragment);
  }
  EXPECT_EQ(Run({"compile", path}).out, legacy);
}

TEST_F(CliTest, CompileOptIrFusesTheSeedCase) {
  std::string path = Write("seed.ipt", Dump("-A INPUT ! -s 10.0.0.0/10 -j DROP\n"));
  ToolResult r = Run({"compile", path, "--emit", "opt-ir"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[ fused payload 4b @ network header + 12 & 0x0000c0ff "
                               "neq 0x0000000a ]"));
  // Turned off, the three nf_tables expressions stay.
  r = Run({"compile", path, "--emit", "opt-ir", "--no-pass", "fold-masked-compare"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("fused")));
  EXPECT_THAT(r.out, HasSubstr("[ cmp neq reg 1 0x0000000a ]"));
}

TEST_F(CliTest, CompileDumpAfterShowsBeforeAndAfter) {
  std::string path = Write("seed.ipt", Dump("-A INPUT ! -s 10.0.0.0/10 -j DROP\n"));
  ToolResult r = Run({"compile", path, "--emit", "opt-ir", "--dump-after",
                      "fold-masked-compare"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("=== before fold-masked-compare"));
  EXPECT_THAT(r.err, HasSubstr("=== after fold-masked-compare"));
  EXPECT_THAT(r.err, HasSubstr("[ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]"));
  r = Run({"compile", path, "--dump-after", "no-such-pass"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown pass 'no-such-pass'"));
}

TEST_F(CliTest, CompileEmitAsmPrintsMachineCode) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "asm"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("push rbx"));
  EXPECT_THAT(r.out, HasSubstr("ret"));
  r = Run({"compile", kExampleRules, "--emit", "asm", "--backend", "interp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, IsEmpty());
}

// --emit llvm-ir: the module as emitted (helper calls, one function per
// chain) and after O2 (the INPUT body inlined into its entry, no dead blocks).
TEST_F(CliTest, CompileEmitLlvmIrShowsBeforeAndAfterOptimisation) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "llvm-ir"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t after = r.out.find("; ==== LLVM IR after optimisation (O2, host CPU)");
  ASSERT_NE(after, std::string::npos) << r.out;
  ASSERT_THAT(r.out, StartsWith("; ==== LLVM IR as emitted\n"));
  const std::string before_text = r.out.substr(0, after);
  const std::string after_text = r.out.substr(after);
  EXPECT_THAT(before_text, HasSubstr("define internal i32 @body.filter.INPUT(ptr"));
  EXPECT_THAT(before_text, HasSubstr("define internal i32 @body.filter.SSH_IN(ptr"));
  EXPECT_THAT(before_text, HasSubstr("call i32 @body.filter.SSH_IN(ptr"));
  EXPECT_THAT(before_text, HasSubstr("call i32 @rulejit_ct_load(ptr"));
  EXPECT_THAT(before_text, HasSubstr("dead"));
  EXPECT_THAT(after_text, HasSubstr("i32 @entry.0(ptr"));
  EXPECT_THAT(after_text, HasSubstr("call i32 @rulejit_ct_load(ptr"));
  // The optimizer drops the blocks after verdicts and inlines the body
  // that only its entry calls.
  EXPECT_THAT(after_text, Not(HasSubstr("dead")));
  EXPECT_THAT(after_text, Not(HasSubstr("@body.filter.INPUT(")));
  // Only the llvm tier has LLVM IR.
  r = Run({"compile", kExampleRules, "--emit", "llvm-ir", "--backend", "jit"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--emit llvm-ir needs --backend llvm"));
}

// --emit llvm-asm: LLVM's machine code (AT&T syntax), with the helper calls.
TEST_F(CliTest, CompileEmitLlvmAsmPrintsMachineCode) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "llvm-asm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nentry.0:"));
  EXPECT_THAT(r.out, HasSubstr("rulejit_ct_load"));
  EXPECT_THAT(r.out, HasSubstr("retq"));
  EXPECT_THAT(r.out, Not(HasSubstr("push rbx")));  // not asmjit's listing
  r = Run({"compile", kExampleRules, "--emit", "llvm-asm", "--backend", "interp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, CompileUnknownEmitIsUsageError) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "bytecode"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown --emit 'bytecode'"));
}

TEST_F(CliTest, CompileBadInputFails) {
  std::string path = Write("t.ipt", Dump("-A INPUT -j NOSUCH\n"));
  ToolResult r = Run({"compile", path, "--emit", "ir"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, IsEmpty());
}

// ---------------------------------------------------------------------------
// eval

TEST_F(CliTest, EvalExampleMatchesExpectedVerdicts) {
  ToolResult r = Run({"eval", "examples/firewall.ipt", "examples/firewall.pcap",
                      "--hook", "input", "--iif", "eth0", "--explain"},
                     kSourceDir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ReadAll(kSourceDir + "/examples/expected_verdicts.txt"));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST_F(CliTest, EvalEveryBackendGivesTheExpectedVerdicts) {
  for (const char* backend : {"interp", "jit", "llvm", "auto"}) {
    ToolResult r = Run({"eval", "examples/firewall.ipt", "examples/firewall.pcap", "--hook",
                        "input", "--iif", "eth0", "--explain", "--backend", backend},
                       kSourceDir);
    EXPECT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(r.out, ReadAll(kSourceDir + "/examples/expected_verdicts.txt")) << backend;
  }
}

TEST_F(CliTest, QueueIsAVerdictAndInterpreterFallbackIsVisible) {
  std::string rules = Write("q.nft",
                            "table ip t {\n  chain c {\n    type filter hook input priority 0;\n"
                            "    ip protocol tcp quota 1 mbytes\n"
                            "    ip protocol tcp queue num 3 bypass\n  }\n}\n");
  ToolResult c = Run({"compile", rules, "--emit", "opt-ir"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("q.nft:4: quota statement"));
  EXPECT_THAT(c.err, HasSubstr("runs in the interpreter"));
  EXPECT_THAT(c.out, HasSubstr("[ queue num 3 bypass ]"));
  for (const char* backend : {"interp", "jit"}) {
    ToolResult r = Run({"eval", rules, kExamplePcap, "--iif", "eth0", "--backend", backend});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int queued = 0;
    for (const std::string& line : Lines(r.out)) queued += line.ends_with(" queue");
    EXPECT_GT(queued, 0) << backend << "\n" << r.out;
  }
}

// examples/expected_verdicts.txt without the third word (the deciding
// rule): "<index> <verdict>".
std::vector<std::string> ExpectedVerdicts() {
  std::vector<std::string> lines = Lines(ReadAll(kSourceDir + "/examples/expected_verdicts.txt"));
  for (std::string& line : lines) line = line.substr(0, line.rfind(' '));
  return lines;
}

TEST_F(CliTest, EvalWithoutExplainPrintsIndexAndVerdict) {
  ToolResult r = Run({"eval", kExampleRules, kExamplePcap, "--iif", "eth0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), ExpectedVerdicts());
}

// The example is an INPUT ruleset: along the input path (prerouting, then
// input) every frame ends as at the input hook alone, accepted ones
// delivered.
TEST_F(CliTest, EvalAlongTheInputPathAgreesWithTheInputHook) {
  ToolResult r = Run({"eval", kExampleRules, kExamplePcap, "--path", "input", "--iif", "eth0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected = ExpectedVerdicts();
  for (std::string& line : expected) {
    if (absl::EndsWith(line, " accept")) line += " delivered";
  }
  EXPECT_EQ(Lines(r.out), expected);
}

TEST_F(CliTest, PathFlagsAreChecked) {
  EXPECT_EQ(Run({"eval", kExampleRules, kExamplePcap, "--path", "input", "--hook", "input"})
                .exit_code, 2);
  EXPECT_EQ(Run({"eval", kExampleRules, kExamplePcap, "--path", "sideways"}).exit_code, 2);
  EXPECT_EQ(Run({"eval", kExampleRules, kExamplePcap, "--write-pcap", "/dev/null"}).exit_code, 2);
  ToolResult bench = Run({"bench", kExampleRules, "--trace", kExamplePcap, "--path", "input",
                          "--iif", "eth0", "--backend", "interp"});
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_THAT(bench.out, HasSubstr("(not checked along the path)"));
}

TEST_F(CliTest, EvalJsonLinesParseAndAgreeWithExplain) {
  ToolResult r = Run({"eval", "examples/firewall.ipt", "examples/firewall.pcap",
                      "--iif", "eth0", "--json"},
                     kSourceDir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected =
      Lines(ReadAll(kSourceDir + "/examples/expected_verdicts.txt"));
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), expected.size());
  const std::regex object(
      R"re(\{"index":([0-9]+),"verdict":"(accept|drop)","rule":"([^"\\]*)"\})re");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, object)) << lines[i];
    EXPECT_EQ(m[1].str() + " " + m[2].str() + " " + m[3].str(), expected[i]);
  }
}

// A host with eth0 (10.0.0.1/24) and lo: `fib daddr type local` drops what
// is addressed to the host itself, on every tier; without --host the rule
// has no answer and eval says so.
TEST_F(CliTest, EvalFibAsksTheHostGivenWithHost) {
  std::string rules = Write("fib.nft",
                            "table ip t {\n  chain c {\n    type filter hook input priority 0;\n"
                            "    fib daddr type local drop\n  }\n}\n");
  std::string host = Write(
      "host.json",
      R"({"addr":[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],)"
      R"("addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8}]},)"
      R"({"ifindex":2,"ifname":"eth0","flags":["UP"],)"
      R"("addr_info":[{"family":"inet","local":"10.0.0.1","prefixlen":24}]}]})");
  std::string pcap = Write(
      "two.pcap",
      PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{.src = "10.0.0.9", .dst = "10.0.0.1"}),
                                BuildFrame(FrameSpec{.src = "10.0.0.9", .dst = "10.0.0.2"})}));
  for (const char* backend : {"interp", "jit", "llvm"}) {
    ToolResult r = Run({"eval", rules, pcap, "--iif", "eth0", "--host", host, "--backend",
                        backend});
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(r.out, "0 drop\n1 accept\n") << backend;
  }
  ToolResult none = Run({"eval", rules, pcap, "--iif", "eth0"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("fib.nft:4: error: this rule asks the host"));
  EXPECT_THAT(none.out, IsEmpty());
  ToolResult unknown = Run({"eval", rules, pcap, "--iif", "wlan0", "--host", host});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("device 'wlan0' is not on the host (it has lo, eth0)"));
}

TEST_F(CliTest, EvalMalformedPcapIsAnError) {
  std::string pcap = Write("bad.pcap", "this is not a pcap file at all, sorry");
  ToolResult r = Run({"eval", kExampleRules, pcap});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(pcap + ": error: "));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, EvalTruncatedPcapReportsAfterTheGoodFrames) {
  std::string whole = ReadAll(kExamplePcap);
  ASSERT_GT(whole.size(), 200u);
  // File header (24) + frame 0 (16 + its bytes) + half of frame 1's header.
  uint32_t frame0 = static_cast<uint8_t>(whole[24 + 8]) |
                    static_cast<uint8_t>(whole[24 + 9]) << 8;
  std::string pcap = Write("cut.pcap", whole.substr(0, 24 + 16 + frame0 + 20));
  ToolResult r = Run({"eval", kExampleRules, pcap, "--iif", "eth0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "0 accept\n");
  EXPECT_THAT(r.err, StartsWith(pcap + ": error: frame 1: "));
}

TEST_F(CliTest, EvalUnsupportedLinkType) {
  std::string pcap = Write("wifi.pcap", PcapBytes(kLinkIeee80211, {{1, 2, 3}}));
  ToolResult r = Run({"eval", kExampleRules, pcap});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unsupported link type 105"));
}

TEST_F(CliTest, EvalShortFramesDoNotCrash) {
  // Frames cut inside the Ethernet, IP and TCP headers: parsed as far as
  // they go; loads past the end never match.
  std::vector<uint8_t> syn = BuildFrame(FrameSpec{.src = "198.51.100.7",
                                                  .dst = "10.0.0.1",
                                                  .proto = 6,
                                                  .sport = 1,
                                                  .dport = 80});
  std::vector<std::vector<uint8_t>> frames;
  for (size_t len : {0, 5, 14, 20, 33, 34}) {
    frames.emplace_back(syn.begin(), syn.begin() + len);
  }
  std::string pcap = Write("short.pcap", PcapBytes(kLinkEthernet, frames));
  ToolResult r =
      Run({"eval", kExampleRules, pcap, "--iif", "eth0", "--explain"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Without a whole IPv4 header the ip table never sees the frame (no
  // base chain runs: the kernel's default accept); with the IP header but
  // no TCP bytes conntrack has no ports, calls it INVALID, and line 14 drops.
  EXPECT_EQ(r.out,
            "0 accept policy\n1 accept policy\n2 accept policy\n"
            "3 accept policy\n4 accept policy\n5 drop " +
                kExampleRules + ":14\n");
}

TEST_F(CliTest, EvalRandomFramesDoNotCrash) {
  // Random bytes behind a valid IPv4 or IPv6 Ethernet header, fixed seed.
  std::mt19937 rng(20261202);
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> frame = BuildFrame(FrameSpec{});
    frame.resize(14);
    frame[12] = i % 2 ? 0x86 : 0x08;
    frame[13] = i % 2 ? 0xdd : 0x00;
    size_t len = rng() % 120;
    for (size_t j = 0; j < len; ++j)
      frame.push_back(static_cast<uint8_t>(rng()));
    if (len > 0) frame[14] = i % 2 ? 0x60 : 0x45;  // plausible version/IHL
    frames.push_back(frame);
  }
  std::string pcap = Write("random.pcap", PcapBytes(kLinkEthernet, frames));
  for (const char* hook : {"input", "output", "forward"}) {
    ToolResult r = Run({"eval", kExampleRules, pcap, "--hook", hook, "--json"});
    EXPECT_EQ(r.exit_code, 0) << hook << r.err;
    EXPECT_EQ(Lines(r.out).size(), frames.size()) << hook;
  }
}

TEST_F(CliTest, EvalInterfaceNameDecides) {
  std::string rules = Write("t.ipt", Dump("-A INPUT -i eth1 -j DROP\n"));
  std::string pcap =
      Write("one.pcap", PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{})}));
  EXPECT_EQ(Run({"eval", rules, pcap, "--iif", "eth1", "--explain"}).out,
            "0 drop " + rules + ":5\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--iif", "eth0", "--explain"}).out,
            "0 accept policy\n");
}

// The conntrack sysctls are explicit: a bare ACK starts a flow under
// nf_conntrack_tcp_loose=1 (the kernel's default) and is INVALID under 0.
TEST_F(CliTest, EvalConntrackSysctlsAreFlags) {
  std::string rules = Write("t.ipt", Dump("-A INPUT -m conntrack --ctstate INVALID -j DROP\n"));
  std::string pcap = Write(
      "ack.pcap", PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{.tcp_flags = 0x10})}));
  EXPECT_EQ(Run({"eval", rules, pcap}).out, "0 accept\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--sysctl", "nf_conntrack_tcp_loose=0"}).out, "0 drop\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--path", "input", "--sysctl",
                 "net.netfilter.nf_conntrack_tcp_loose=0,nf_conntrack_udp_timeout=5"})
                .out,
            "0 drop\n");
  ToolResult bad = Run({"eval", rules, pcap, "--sysctl", "nf_conntrack_frobnicate=1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown 'nf_conntrack_frobnicate'"));
  EXPECT_EQ(Run({"eval", rules, pcap, "--sysctl", "nf_conntrack_tcp_loose=yes"}).exit_code, 2);
}

// --ct shows what conntrack made of each packet, at one hook and along
// the path: a query is new, its answer established in the reply direction,
// an unasked answer new in its own right.
TEST_F(CliTest, EvalCtShowsEachPacketsConntrackState) {
  std::string rules = Write("ct.nft", R"(table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established accept
    ct state new udp dport 53 accept
  }
}
)");
  const FrameSpec query{.proto = 17, .sport = 4000, .dport = 53};
  const FrameSpec answer{.src = "10.0.0.2", .dst = "10.0.0.1", .proto = 17, .sport = 53,
                         .dport = 4000};
  const FrameSpec stray{.src = "10.0.0.2", .dst = "10.0.0.1", .proto = 17, .sport = 53,
                        .dport = 4001};
  std::string pcap = Write("ct.pcap", PcapBytes(kLinkEthernet, {BuildFrame(query), BuildFrame(answer),
                                                                BuildFrame(stray)}));
  EXPECT_EQ(Run({"eval", rules, pcap, "--hook", "forward", "--ct"}).out,
            "0 accept ct=new\n1 accept ct=established,reply\n2 drop ct=new\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--path", "forward", "--oif", "eth1", "--ct"}).out,
            "0 accept forwarded ct=new\n1 accept forwarded ct=established,reply\n"
            "2 drop ct=new\n");
  EXPECT_THAT(Run({"eval", rules, pcap, "--hook", "forward", "--ct", "--json"}).out,
              HasSubstr(R"("ct":"established,reply")"));
}

// The same packets as Ethernet frames and as bare IP (DLT_RAW) get the same
// verdicts at the output hook, where the link header is dropped.
TEST_F(CliTest, EvalOutputHookRawAndEthernetAgree) {
  std::string rules = Write(
      "t.ipt", Dump("-A OUTPUT -o eth0 -p tcp -m tcp --dport 25 -j DROP\n"));
  std::vector<std::vector<uint8_t>> eth, raw;
  for (uint16_t port : {80, 25, 443}) {
    FrameSpec spec{.src = "10.0.0.1",
                   .dst = "198.51.100.7",
                   .proto = 6,
                   .sport = 40000,
                   .dport = port};
    eth.push_back(BuildFrame(spec));
    spec.ethernet = false;
    raw.push_back(BuildFrame(spec));
  }
  std::string eth_pcap = Write("eth.pcap", PcapBytes(kLinkEthernet, eth));
  std::string raw_pcap = Write("raw.pcap", PcapBytes(kLinkRaw, raw));
  const std::string expected = "0 accept\n1 drop\n2 accept\n";
  ToolResult from_eth =
      Run({"eval", rules, eth_pcap, "--hook", "output", "--oif", "eth0"});
  ToolResult from_raw =
      Run({"eval", rules, raw_pcap, "--hook", "output", "--oif", "eth0"});
  EXPECT_EQ(from_eth.exit_code, 0) << from_eth.err;
  EXPECT_EQ(from_eth.out, expected);
  EXPECT_EQ(from_raw.out, expected);
}

TEST_F(CliTest, EvalLinuxCookedCapture) {
  std::string rules =
      Write("t.ipt", Dump("-A INPUT -p tcp -m tcp --dport 22 -j DROP\n"));
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t port : {22, 80}) {
    std::vector<uint8_t> frame = {0, 0, 0, 1, 0, 6, 2,    0,
                                  0, 0, 0, 1, 0, 0, 0x08, 0x00};
    std::vector<uint8_t> ip =
        BuildFrame(FrameSpec{.dport = port, .ethernet = false});
    frame.insert(frame.end(), ip.begin(), ip.end());
    frames.push_back(frame);
  }
  std::string pcap = Write("sll.pcap", PcapBytes(113, frames));
  ToolResult r = Run({"eval", rules, pcap});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0 drop\n1 accept\n");
}

TEST_F(CliTest, EvalHookChecks) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--hook", "ingress"}, "hook ingress is not evaluated for iptables dumps"},
           {{"--host", "/nonexistent/host.json"}, "/nonexistent/host.json: error: cannot open"},
           {{"--hook", "sideways"}, "unknown hook 'sideways'"},
           {{"--backend", "tcc"}, "unknown --backend 'tcc' (expected interp, jit, llvm or auto)"},
           {{"--oif", "eth0"}, "--oif has no meaning at hook input"},
           {{"--iif", "a-very-long-interface-name"}, "longer than 15 bytes"},
       }) {
    std::vector<std::string> args = {"eval", kExampleRules, kExamplePcap};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ToolResult r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_THAT(r.out, IsEmpty());
  }
}

TEST_F(CliTest, EvalBadRulesetPrintsNoVerdicts) {
  std::string rules = Write("t.ipt", Dump("-A INPUT -j NOSUCH\n"));
  ToolResult r = Run({"eval", rules, kExamplePcap});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, MatchesRegex(ErrorAt(rules, "5") + "(.|\n)*"));
}

// pkttype comes from the destination MAC: broadcast, multicast, else host.
TEST_F(CliTest, EvalPkttypeFromDestinationMac) {
  std::string rules = Write(
      "t.ipt", Dump("-A INPUT -m pkttype --pkt-type broadcast -j DROP\n"
                    "-A INPUT -m pkttype --pkt-type multicast -j REJECT\n"));
  FrameSpec broadcast{.proto = 17, .dport = 137};
  broadcast.dst_mac = "ff:ff:ff:ff:ff:ff";
  FrameSpec multicast{.dst = "224.0.0.251", .proto = 17, .dport = 5353};
  multicast.dst_mac = "01:00:5e:00:00:fb";
  std::string pcap = Write(
      "m.pcap",
      PcapBytes(kLinkEthernet, {BuildFrame(broadcast), BuildFrame(multicast),
                                BuildFrame(FrameSpec{})}));
  ToolResult r = Run({"eval", rules, pcap, "--explain"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0 drop " + rules + ":5\n1 drop " + rules +
                       ":6\n2 accept policy\n");
}

// nft input: detected from content, any hook (here prerouting).
TEST_F(CliTest, EvalNftRuleset) {
  std::string rules =
      Write("t.nft",
            "table inet t {\n"
            "  chain c {\n"
            "    type filter hook prerouting priority 0; policy accept;\n"
            "    ip saddr 192.0.2.66 drop\n"
            "    tcp dport 22 drop\n"
            "  }\n"
            "}\n");
  std::string pcap = Write(
      "n.pcap",
      PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{.dport = 22}),
                                BuildFrame(FrameSpec{.dport = 80}),
                                BuildFrame(FrameSpec{.src = "192.0.2.66"})}));
  ToolResult r =
      Run({"eval", rules, pcap, "--hook", "prerouting", "--explain"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0 drop " + rules + ":5\n1 accept policy\n2 drop " + rules +
                       ":4\n");
}

// ---------------------------------------------------------------------------
// bench

TEST_F(CliTest, BenchClassBenchTraceHasNoMismatches) {
  const std::string shared = RULEJIT_SHARED_DIR;
  for (const char* backend : {"interp", "jit", "llvm"}) {
    ToolResult r = Run({"bench", shared + "/classbench/acl1_100", "--trace",
                        shared + "/classbench/acl1_100_trace", "--backend", backend, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The last line is one JSON object with the documented keys.
    std::string last = r.out.substr(r.out.rfind('{'));
    for (const char* key : {"\"packets\":", "\"mpps\":", "\"ns_per_packet\":", "\"build_ms\":",
                            "\"memory_bytes\":", "\"mismatches\":0}"}) {
      EXPECT_THAT(last, HasSubstr(key)) << backend;
    }
    EXPECT_THAT(r.out, HasSubstr(std::string("backend ") + backend));
  }
}

TEST_F(CliTest, BenchCountsMismatches) {
  // The trace claims rule 1 for a packet that only rule 2 matches.
  std::string rules = Write("rules", "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n"
                                     "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n");
  std::string trace = Write("trace", "167772161 1 1 2 6 1\n"    // 10.0.0.1 tcp: rule 1
                                     "3232235777 1 1 2 17 1\n"  // 192.168.1.1 udp: rule 2
                                     "3232235777 1 1 2 17 2\n");
  ToolResult r = Run({"bench", rules, "--trace", trace, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"mismatches\":1}"));
  EXPECT_EQ(Run({"bench", rules}).exit_code, 2);  // --trace is required
}

}  // namespace
}  // namespace rulejit::testing
