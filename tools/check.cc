// `rulejit check FILE [--format F]`: parse and verify, nothing more.
//
// On success prints one summary line to stdout:
//   FILE: ok, 1 tables, 5 chains, 12 rules
// On any error the located diagnostics go to stderr and the exit is 1.
#include "absl/strings/str_format.h"
#include "tools/commands.h"

namespace rulejit::tools {
namespace {

struct Counts {
  size_t tables = 0;
  size_t chains = 0;
  size_t rules = 0;
};

Counts CountRuleset(const ir::Ruleset& ruleset) {
  Counts counts;
  counts.tables = ruleset.tables.size();
  for (const ir::Table& table : ruleset.tables) {
    counts.chains += table.chains.size();
    for (const ir::Chain& chain : table.chains) {
      counts.rules += chain.rules.size();
    }
  }
  return counts;
}

int RunCheck(const Args& args, Streams io) {
  absl::StatusOr<std::optional<InputFormat>> format = FormatOption(args);
  if (!format.ok())
    return UsageError("check", format.status().message(), io.err);
  const std::string& path = args.positional(0);
  std::optional<LoadedRuleset> loaded = LoadRuleset(path, *format, io.err);
  if (!loaded) return kExitInputError;
  Counts counts = CountRuleset(loaded->ruleset);
  io.out << absl::StrFormat("%s: ok, %d tables, %d chains, %d rules\n", path,
                            counts.tables, counts.chains, counts.rules);
  return kExitOk;
}

}  // namespace

Command CheckCommand() {
  return Command{
      .name = "check",
      .synopsis = "check FILE [--format F]",
      .summary = "parse and verify FILE; located errors on stderr",
      .spec = {.flags = {{"format", true}}, .positionals = {"FILE"}},
      .run = RunCheck,
  };
}

}  // namespace rulejit::tools
