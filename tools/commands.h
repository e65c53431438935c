// The subcommands of the `rulejit` command, as a table the dispatcher in
// rulejit.cc walks. Each subcommand lives in its own file (check.cc,
// compile.cc, eval.cc) and exposes one function returning its Command.
//
// Exit codes are shared by all subcommands:
//   0  success
//   1  the input is bad (located diagnostics were printed)
//   2  the command line is bad, or asks for something not available yet
#ifndef RULEJIT_TOOLS_COMMANDS_H_
#define RULEJIT_TOOLS_COMMANDS_H_

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/args.h"
#include "tools/load.h"

namespace rulejit::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1;
inline constexpr int kExitUsage = 2;

struct Streams {
  std::ostream& out;
  std::ostream& err;
};

struct Command {
  absl::string_view name;
  absl::string_view synopsis;  // e.g. "check FILE [--format F]"
  absl::string_view summary;   // one line for the usage text
  ArgSpec spec;
  int (*run)(const Args& args, Streams io);
};

Command CheckCommand();
Command CompileCommand();
Command EvalCommand();
Command DiffCommand();
Command RunCommand();
Command CtlCommand();
Command BenchCommand();

// Prints "rulejit NAME: error: MESSAGE" and returns kExitUsage.
int UsageError(absl::string_view command, absl::string_view message,
               std::ostream& err);

// The value of --format: nullopt when absent (detect from content), an
// error status for an unknown name.
absl::StatusOr<std::optional<InputFormat>> FormatOption(const Args& args);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_COMMANDS_H_
