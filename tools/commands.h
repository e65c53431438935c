// The subcommands of the `rulejit` command, as a table the dispatcher in
// rulejit.cc walks. Each subcommand lives in its own file (check.cc,
// compile.cc, eval.cc) and exposes one function returning its Command.
//
// Exit codes, the same for every subcommand (and listed by `rulejit help`
// and the man page from kExitStatusText below):
//   0  success (diff: equivalent)
//   1  the input is bad: located diagnostics were printed (diff: the
//      rulesets differ; ctl: the server answered with an error)
//   2  the command line is bad (diff: also no verdict: bad input, or rules
//      not reasoned about exactly)
//   3  something the command needs is unavailable (run: an interface or
//      the control socket can't be opened; ctl: no server to talk to)
#ifndef RULEJIT_TOOLS_COMMANDS_H_
#define RULEJIT_TOOLS_COMMANDS_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/args.h"
#include "tools/load.h"

namespace rulejit::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnavailable = 3;
// diff keeps diff(1)'s meaning: 0 same, 1 different, 2 trouble.
inline constexpr int kExitDifferent = 1;
inline constexpr int kExitDiffError = 2;

// The exit codes above as the help text and the man page list them, one
// "CODE  MEANING" line each.
inline constexpr absl::string_view kExitStatusText =
    "0  success (diff: the rulesets are equivalent)\n"
    "1  bad input, located diagnostics printed (diff: the rulesets differ; ctl: the\n"
    "   server answered with an error)\n"
    "2  bad command line (diff: no verdict: bad input, or rules not reasoned about\n"
    "   exactly)\n"
    "3  unavailable: run can't open an interface or its control socket; ctl finds no\n"
    "   running `rulejit run`\n";

struct Streams {
  std::ostream& out;
  std::ostream& err;
};

// One worked example of `rulejit help COMMAND` and the man page.
struct Example {
  absl::string_view command;  // "iptables-save | rulejit check -"
  absl::string_view what;     // what it does, one or two sentences
};

// The one source of the usage text: `rulejit --help`, `rulejit help
// COMMAND`, the man page and the bash completion are all printed from it
// (tools/help.cc).
struct Command {
  absl::string_view name;
  absl::string_view synopsis;  // e.g. "check FILE [--format F]"
  absl::string_view summary;   // one line for the usage text
  ArgSpec spec;
  int (*run)(const Args& args, Streams io);
  // A paragraph or more for `rulejit help COMMAND` (blank line: new
  // paragraph), and examples.
  absl::string_view description = "";
  std::vector<Example> examples = {};
};

Command CheckCommand();
Command CompileCommand();
Command EvalCommand();
Command DiffCommand();
Command TranslateCommand();
Command RunCommand();
Command CtlCommand();
Command BenchCommand();
// Every subcommand, in the order the usage text lists them.
std::vector<Command> AllCommands();

// Prints "rulejit NAME: error: MESSAGE" and returns kExitUsage.
int UsageError(absl::string_view command, absl::string_view message,
               std::ostream& err);

// The values of --format (no format when absent: detect from content; an
// error status for an unknown name) and --ipset FILE.
absl::StatusOr<LoadInput> FormatOption(const Args& args);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_COMMANDS_H_
