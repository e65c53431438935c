// Running shell commands from tests: quoting and capturing output.
#ifndef RULEJIT_TESTS_SUPPORT_SHELL_H_
#define RULEJIT_TESTS_SUPPORT_SHELL_H_

#include <string>

namespace rulejit::testing {

// `word` as one single-quoted shell word.
std::string ShellQuote(const std::string& word);

struct ShellResult {
  int exit_code = -1;  // 128 + signal when the command was killed
  std::string output;  // stdout and stderr, interleaved
};

// Runs `command` with /bin/sh, stderr merged into stdout.
ShellResult RunShell(const std::string& command);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_SHELL_H_
