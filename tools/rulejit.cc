// The `rulejit` command: picks the subcommand, parses its flags, runs it.
//
//   rulejit check FILE [--format F]
//   rulejit compile FILE [--emit ir] [--format F]
//   rulejit eval FILE PCAP [--hook H] [--iif IF] [--oif IF] [--explain]
//                          [--json] [--backend interp] [--format F]
//
// See commands.h for the exit codes and the per-subcommand files for what
// each one does.
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/commands.h"

namespace rulejit::tools {
namespace {

std::vector<Command> AllCommands() {
  return {CheckCommand(), CompileCommand(), EvalCommand(), DiffCommand(),
          BenchCommand(),
          RunCommand(), CtlCommand()};
}

void PrintUsage(std::ostream& os) {
  os << "usage: rulejit COMMAND ARGS...\n\ncommands:\n";
  for (const Command& command : AllCommands()) {
    os << "  rulejit " << command.synopsis << "\n      " << command.summary
       << "\n";
  }
  os << "\n--format iptables|iptables-nft|nft|classbench overrides the input"
        " format, which\nis otherwise detected from the file's content"
        " (iptables: as\niptables-legacy loads the dump; iptables-nft: as"
        " iptables-nft does).\n"
        "exit status: 0 ok, 1 bad input, 2 bad command line.\n";
}

int Main(const std::vector<std::string>& words) {
  if (words.empty()) {
    PrintUsage(std::cerr);
    return kExitUsage;
  }
  if (words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    PrintUsage(std::cout);
    return kExitOk;
  }
  for (const Command& command : AllCommands()) {
    if (command.name != words[0]) continue;
    std::vector<std::string> rest(words.begin() + 1, words.end());
    absl::StatusOr<Args> args = ParseArgs(command.spec, rest);
    if (!args.ok()) {
      UsageError(command.name, args.status().message(), std::cerr);
      std::cerr << "usage: rulejit " << command.synopsis << "\n";
      return kExitUsage;
    }
    return command.run(*args, Streams{std::cout, std::cerr});
  }
  std::cerr << "rulejit: error: unknown command '" << words[0] << "'\n";
  PrintUsage(std::cerr);
  return kExitUsage;
}

}  // namespace

int UsageError(absl::string_view command, absl::string_view message,
               std::ostream& err) {
  err << "rulejit " << command << ": error: " << message << "\n";
  return kExitUsage;
}

absl::StatusOr<std::optional<InputFormat>> FormatOption(const Args& args) {
  std::optional<std::string> name = args.value("format");
  if (!name) return std::nullopt;
  std::optional<InputFormat> format = FormatFromName(*name);
  if (!format) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown format '", *name, "' (expected iptables, nft or classbench)"));
  }
  return format;
}

}  // namespace rulejit::tools

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  return rulejit::tools::Main(words);
}
