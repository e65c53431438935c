// The `rulejit` command: picks the subcommand, parses its flags, runs it.
//
//   rulejit COMMAND ARGS...     (commands.h lists them, help.cc prints them)
//   rulejit help [COMMAND]      the usage text, or one command's page
//   rulejit help --man          the man page (troff), rulejit.1 at build time
//   rulejit help --bash-completion
//   rulejit --version
//   rulejit --max-memory MIB COMMAND ARGS...   (memory_limit.h)
//
// See commands.h for the exit codes and the per-subcommand files for what
// each one does.
#include <algorithm>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "rulejit/rulejit_c.h"
#include "tools/commands.h"
#include "tools/help.h"
#include "tools/memory_limit.h"

namespace rulejit::tools {
namespace {

// `rulejit help [COMMAND | --man | --bash-completion]`.
int Help(const std::vector<std::string>& words) {
  if (words.size() == 1) {
    PrintUsage(std::cout);
    return kExitOk;
  }
  if (words.size() == 2 && words[1] == "--man") {
    PrintManPage(std::cout);
    return kExitOk;
  }
  if (words.size() == 2 && words[1] == "--bash-completion") {
    PrintBashCompletion(std::cout);
    return kExitOk;
  }
  for (const Command& command : AllCommands()) {
    if (words.size() == 2 && command.name == words[1]) {
      PrintCommandHelp(command, std::cout);
      return kExitOk;
    }
  }
  std::cerr << "rulejit help: error: unknown command '" << words[1] << "'\n";
  PrintUsage(std::cerr);
  return kExitUsage;
}

// Runs `command` on `rest`; an allocation that fails (under --max-memory, or
// on a machine without overcommit) is a clear error, not an abort.
int RunCommand(const Command& command, const Args& args, std::optional<uint64_t> max_mib) {
  try {
    return command.run(args, Streams{std::cout, std::cerr});
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "rulejit " << command.name << ": error: " << OutOfMemoryMessage(max_mib) << "\n";
    return kExitInputError;
  }
}

int Main(std::vector<std::string> words) {
  std::optional<uint64_t> max_mib;
  if (absl::Status taken = TakeMaxMemory(words, &max_mib); !taken.ok()) {
    std::cerr << "rulejit: error: " << taken.message() << "\n";
    return kExitUsage;
  }
  if (max_mib) {
    if (absl::Status limited = LimitMemory(*max_mib); !limited.ok()) {
      std::cerr << "rulejit: error: " << limited.message() << "\n";
      return kExitUsage;
    }
  }
  if (words.empty()) {
    PrintUsage(std::cerr);
    return kExitUsage;
  }
  if (words[0] == "--help" || words[0] == "-h" || words[0] == "help") return Help(words);
  if (words[0] == "--version" || words[0] == "version") {
    std::cout << "rulejit " << rulejit_version() << "\n";
    return kExitOk;
  }
  for (const Command& command : AllCommands()) {
    if (command.name != words[0]) continue;
    std::vector<std::string> rest(words.begin() + 1, words.end());
    absl::StatusOr<Args> args = ParseArgs(command.spec, rest);
    // Standard input can be read once.
    if (args.ok() && std::count(rest.begin(), rest.end(), "-") > 1) {
      args = absl::InvalidArgumentError("standard input ('-') given more than once");
    }
    if (!args.ok()) {
      UsageError(command.name, args.status().message(), std::cerr);
      std::cerr << "usage: rulejit " << command.synopsis << "\n";
      return kExitUsage;
    }
    return RunCommand(command, *args, max_mib);
  }
  std::cerr << "rulejit: error: unknown command '" << words[0] << "'\n";
  PrintUsage(std::cerr);
  return kExitUsage;
}

}  // namespace

std::vector<Command> AllCommands() {
  return {CheckCommand(), CompileCommand(), EvalCommand(), DiffCommand(),
          TranslateCommand(), BenchCommand(), RunCommand(), CtlCommand()};
}

int UsageError(absl::string_view command, absl::string_view message,
               std::ostream& err) {
  err << "rulejit " << command << ": error: " << message << "\n";
  return kExitUsage;
}

absl::StatusOr<LoadInput> FormatOption(const Args& args) {
  LoadInput input;
  input.ipset_path = args.value("ipset").value_or("");
  std::optional<std::string> name = args.value("format");
  if (!name) return input;
  input.format = FormatFromName(*name);
  if (!input.format) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown format '", *name, "' (expected iptables, nft or classbench)"));
  }
  return input;
}

}  // namespace rulejit::tools

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  return rulejit::tools::Main(words);
}
