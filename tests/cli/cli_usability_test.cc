// The command as a user meets it (issue 25, item 4): "-" reads standard
// input, --version, `check --json` and `diff --json` diagnostics of one
// shape, `rulejit help COMMAND`, the man page and the bash completion
// generated from the same usage text, and the exit codes listed in one
// place.
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/cli_fixture.h"

namespace rulejit::testing {
namespace {

using ::testing::ElementsAre;
using Json = nlohmann::json;

class UsabilityTest : public CliTest {
 protected:
  // Runs the tool with `args`, standard input from `stdin_text`, in dir_.
  ToolResult RunWithStdin(const std::vector<std::string>& args, const std::string& stdin_text) {
    std::string in = Write("stdin.txt", stdin_text);
    std::string command = "cd " + ShellQuote(dir_) + " && " + ShellQuote(RULEJIT_TOOL);
    for (const std::string& arg : args) command += " " + ShellQuote(arg);
    std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    command += " <" + ShellQuote(in) + " >" + ShellQuote(out) + " 2>" + ShellQuote(err);
    int status = std::system(command.c_str());
    ToolResult result;
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    result.out = ReadAll(out);
    result.err = ReadAll(err);
    return result;
  }
};

// A rule that shadows the next one (line 6 is covered by line 5).
const std::string kShadowed = Dump("-A INPUT -p tcp -j DROP\n-A INPUT -p tcp --dport 22 -j ACCEPT\n");

// ---------------------------------------------------------------------------
// Standard input

TEST_F(UsabilityTest, CheckReadsStandardInput) {
  ToolResult r = RunWithStdin({"check", "-"}, ReadAll(kExampleRules));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("<stdin>: ok, 1 tables"));
}

TEST_F(UsabilityTest, StandardInputErrorsAreNamedStdin) {
  ToolResult r = RunWithStdin({"check", "-"}, Dump("-A INPUT --dprot 22 -j ACCEPT\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("<stdin>:5:"));
  EXPECT_THAT(r.err, HasSubstr("-A INPUT --dprot 22"));  // the quoted line
}

TEST_F(UsabilityTest, LintQuotesLinesOfStandardInput) {
  ToolResult r = RunWithStdin({"check", "-"}, kShadowed);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("<stdin>:6:1: warning: rule is shadowed"));
  EXPECT_THAT(r.err, HasSubstr("-A INPUT -p tcp --dport 22 -j ACCEPT"));
}

TEST_F(UsabilityTest, NftIncludesOfStandardInputResolveInCurrentDirectory) {
  Write("chains.nft", "chain input { type filter hook input priority 0; tcp dport 22 accept; }\n");
  ToolResult r = RunWithStdin({"check", "-"}, "table inet t {\n  include \"chains.nft\"\n}\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("<stdin>: ok, 1 tables, 1 chains, 1 rules"));
}

TEST_F(UsabilityTest, DiffReadsOneSideFromStandardInput) {
  std::string file = Write("same.ipt", kShadowed);
  ToolResult r = RunWithStdin({"diff", "-", file}, kShadowed);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("equivalent"));
}

TEST_F(UsabilityTest, StandardInputTwiceIsUsageError) {
  ToolResult r = RunWithStdin({"diff", "-", "-"}, kShadowed);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("standard input ('-') given more than once"));
}

TEST_F(UsabilityTest, EvalReadsPcapFromStandardInput) {
  ToolResult from_file = Run({"eval", kExampleRules, kExamplePcap});
  ToolResult from_stdin = RunWithStdin({"eval", kExampleRules, "-"}, ReadAll(kExamplePcap));
  EXPECT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, from_file.out);
  EXPECT_THAT(from_stdin.out, Not(IsEmpty()));
}

// ---------------------------------------------------------------------------
// --version

// The version of project() in the top CMakeLists.txt.
std::string ProjectVersion() {
  std::smatch m;
  std::string text = ReadAll(kSourceDir + "/CMakeLists.txt");
  if (!std::regex_search(text, m, std::regex(R"(project\(rulejit VERSION ([0-9.]+))"))) return "?";
  return m[1];
}

TEST_F(UsabilityTest, VersionIsTheProjectVersion) {
  ToolResult r = Run({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "rulejit " + ProjectVersion() + "\n");
}

// ---------------------------------------------------------------------------
// --json diagnostics

void ExpectDiagnosticShape(const Json& d) {
  for (const char* key : {"file", "line", "column", "severity", "message", "hint"}) {
    EXPECT_TRUE(d.contains(key)) << key << " in " << d.dump();
  }
}

TEST_F(UsabilityTest, CheckJsonOk) {
  ToolResult r = Run({"check", "--json", kExampleRules});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.err, IsEmpty());
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["file"], kExampleRules);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["tables"], 1);
  EXPECT_GT(j["rules"].get<int>(), 0);
  EXPECT_TRUE(j["diagnostics"].is_array());
}

TEST_F(UsabilityTest, CheckJsonErrorIsLocatedWithHint) {
  std::string path = Write("bad.ipt", Dump("-A INPUT -p tcp --dprot 22 -j ACCEPT\n"));
  ToolResult r = Run({"check", path, "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, IsEmpty());
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_FALSE(j.contains("rules"));
  ASSERT_GE(j["diagnostics"].size(), 1u);
  const Json& d = j["diagnostics"][0];
  ExpectDiagnosticShape(d);
  EXPECT_EQ(d["file"], path);
  EXPECT_EQ(d["line"], 5);
  EXPECT_GT(d["column"].get<int>(), 1);
  EXPECT_EQ(d["severity"], "error");
  EXPECT_THAT(d["message"].get<std::string>(), HasSubstr("--dprot"));
  EXPECT_THAT(d["hint"].get<std::string>(), HasSubstr("--dport"));
}

TEST_F(UsabilityTest, CheckJsonReportsShadowedRulesAsWarnings) {
  ToolResult r = RunWithStdin({"check", "-", "--json"}, kShadowed);
  EXPECT_EQ(r.exit_code, 0);
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["file"], "<stdin>");
  ASSERT_EQ(j["diagnostics"].size(), 1u) << r.out;
  const Json& d = j["diagnostics"][0];
  ExpectDiagnosticShape(d);
  EXPECT_EQ(d["severity"], "warning");
  EXPECT_EQ(d["line"], 6);
  EXPECT_EQ(d["column"], 1);
  EXPECT_THAT(d["message"].get<std::string>(), HasSubstr("rule is shadowed"));
}

TEST_F(UsabilityTest, CheckJsonUnreadableFileHasNoLine) {
  ToolResult r = Run({"check", "--json", dir_ + "/missing.ipt"});
  EXPECT_EQ(r.exit_code, 1);
  Json j = Json::parse(r.out);
  const Json& d = j["diagnostics"][0];
  ExpectDiagnosticShape(d);
  EXPECT_TRUE(d["line"].is_null());
  EXPECT_TRUE(d["column"].is_null());
  EXPECT_THAT(d["message"].get<std::string>(), HasSubstr("cannot open"));
}

TEST_F(UsabilityTest, DiffJsonErrorsHaveTheSameShape) {
  std::string bad = Write("bad.ipt", Dump("-A INPUT -p tcp --dprot 22 -j ACCEPT\n"));
  ToolResult r = Run({"diff", "--json", kExampleRules, bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, IsEmpty());
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["error"], true);
  ASSERT_GE(j["diagnostics"].size(), 1u);
  ExpectDiagnosticShape(j["diagnostics"][0]);
  EXPECT_EQ(j["diagnostics"][0]["file"], bad);
  EXPECT_EQ(j["diagnostics"][0]["line"], 5);
}

TEST_F(UsabilityTest, DiffJsonResultCarriesDiagnostics) {
  std::string file = Write("rules.ipt", kShadowed);
  ToolResult r = Run({"diff", "--json", file, file});
  EXPECT_EQ(r.exit_code, 0);
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["equivalent"], true);
  EXPECT_TRUE(j["diagnostics"].is_array());
}

// ---------------------------------------------------------------------------
// help, man page, completion, exit codes

TEST_F(UsabilityTest, HelpCommandShowsSynopsisAndExamples) {
  ToolResult r = Run({"help", "check"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, StartsWith("usage: rulejit check FILE"));
  EXPECT_THAT(r.out, HasSubstr("\nexamples:\n  rulejit check rules.ipt\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  iptables-save | rulejit check -\n"));
  for (const char* command : {"compile", "eval", "diff", "bench", "run", "ctl"}) {
    ToolResult c = Run({"help", command});
    EXPECT_EQ(c.exit_code, 0) << command;
    EXPECT_THAT(c.out, HasSubstr("examples:")) << command;
  }
  ToolResult unknown = Run({"help", "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, StartsWith("rulejit help: error: unknown command 'frobnicate'"));
}

TEST_F(UsabilityTest, UsageListsTheExitCodes) {
  ToolResult r = Run({"--help"});
  EXPECT_THAT(r.out, HasSubstr("exit status:\n  0  success"));
  EXPECT_THAT(r.out, HasSubstr("\n  2  bad command line"));
  EXPECT_THAT(r.out, HasSubstr("\n  3  unavailable"));
}

TEST_F(UsabilityTest, ManPageIsGeneratedFromTheUsageText) {
  ToolResult r = Run({"help", "--man"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr(".TH RULEJIT 1"));
  EXPECT_THAT(r.out, HasSubstr(".SH EXIT STATUS"));
  for (const char* command : {"check", "compile", "eval", "diff", "bench", "run", "ctl"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string(".SS ") + command + "\n")) << command;
  }
  EXPECT_THAT(r.out, HasSubstr("iptables\\-save | rulejit check \\-"));
  // The build wrote the same page, and man can lay it out.
  EXPECT_EQ(ReadAll(std::string(RULEJIT_BINARY_DIR) + "/rulejit.1"), r.out);
  ShellResult man = RunShell("command -v man >/dev/null || exit 77; MANWIDTH=80 man -l " +
                             ShellQuote(std::string(RULEJIT_BINARY_DIR) + "/rulejit.1") +
                             " 2>&1 | col -b");
  if (man.exit_code != 77) {
    EXPECT_EQ(man.exit_code, 0) << man.output;
    EXPECT_THAT(man.output, HasSubstr("EXIT STATUS"));
  }
}

// Completes `words` (the last is the word under the cursor) with the
// generated completion script.
std::string Complete(const std::vector<std::string>& words) {
  std::string array;
  for (const std::string& w : words) array += " " + ShellQuote(w);
  ShellResult r = RunShell(
      "bash -c " +
      ShellQuote("source " + std::string(RULEJIT_BINARY_DIR) + "/rulejit.bash-completion && " +
                 "COMP_WORDS=(" + array + ") && COMP_CWORD=" +
                 std::to_string(words.size() - 1) +
                 " && _rulejit && echo \"${COMPREPLY[*]}\""));
  return r.output;
}

TEST_F(UsabilityTest, BashCompletionCompletesCommandsFlagsAndValues) {
  EXPECT_EQ(Complete({"rulejit", "ch"}), "check\n");
  EXPECT_EQ(Complete({"rulejit", "check", "--j"}), "--json\n");
  EXPECT_EQ(Complete({"rulejit", "diff", "--format", "ipt"}), "iptables iptables-nft\n");
  EXPECT_EQ(Complete({"rulejit", "help", "di"}), "diff\n");
}

}  // namespace
}  // namespace rulejit::testing
