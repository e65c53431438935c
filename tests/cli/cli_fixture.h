// The fixture the `rulejit` command's end-to-end tests share (cli_test.cc,
// cli_compile_test.cc, cli_eval_test.cc, cli_bench_test.cc, one file per
// subcommand): runs the built binary (RULEJIT_TOOL) on files in a temporary
// directory and hands back its exit code, stdout and stderr, plus helpers
// for the exact `FILE:LINE:COL: error:` prefixes and small dumps.
#ifndef RULEJIT_TESTS_CLI_CLI_FIXTURE_H_
#define RULEJIT_TESTS_CLI_CLI_FIXTURE_H_

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/shell.h"

namespace rulejit::testing {

// The matchers the CLI tests check output with.
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

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "^PATH:LINE:COL: error: " as a regex with the path escaped.
inline std::string ErrorAt(const std::string& path, const std::string& line,
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

inline const std::string kSourceDir = RULEJIT_SOURCE_DIR;
inline const std::string kExampleRules = kSourceDir + "/examples/firewall.ipt";
inline const std::string kExamplePcap = kSourceDir + "/examples/firewall.pcap";

// A minimal valid dump around the given body lines (line 1 is `*filter`,
// body starts at line 5).
inline std::string Dump(const std::string& body) {
  return "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
         ":OUTPUT ACCEPT [0:0]\n" +
         body + "COMMIT\n";
}

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_CLI_CLI_FIXTURE_H_
