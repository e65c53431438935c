// Loading a ruleset file for the `rulejit` subcommands.
//
// Reads FILE, picks the frontend from the content (or from --format), parses
// and verifies. Every problem is printed to the error stream as a located
// diagnostic (`FILE:LINE:COL: error: ...` with the source line and a caret);
// on any error nothing is returned, so no command ever runs half a ruleset.
//
// Content detection looks at the first line that is neither blank nor a
// `#` comment:
//   `*filter` `*raw` ... `:CHAIN` `-A` `-N` `-P` `-I`   -> iptables-save
//   `table` `flush` `define` `add` `include` ...          -> nft
//   `@a.b.c.d/n ...`                                      -> ClassBench
#ifndef RULEJIT_TOOLS_LOAD_H_
#define RULEJIT_TOOLS_LOAD_H_

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "ir/ir.h"
#include "rulejit/rulejit.h"

namespace rulejit::tools {

// kIptables: an iptables-save dump as iptables-legacy-restore loads it;
// kIptablesNft: as iptables-nft-restore loads it (they differ on non-first
// fragments, see frontends::IptablesFlavor). Detection picks kIptables.
enum class InputFormat { kIptables, kNft, kClassbench, kIptablesNft };

const char* FormatName(InputFormat format);
// "iptables" | "iptables-nft" | "nft" | "classbench"; nullopt otherwise.
std::optional<InputFormat> FormatFromName(absl::string_view name);
// The format the text looks like, or nullopt when it looks like none.
std::optional<InputFormat> DetectFormat(absl::string_view text);

struct LoadedRuleset {
  InputFormat format = InputFormat::kIptables;
  ir::Ruleset ruleset;  // verified; `files` names the loaded file
};

// Reads, parses and verifies `path`. Prints diagnostics (errors and
// warnings) to `err`; returns nullopt if there was any error.
std::optional<LoadedRuleset> LoadRuleset(const std::string& path,
                                         std::optional<InputFormat> forced,
                                         std::ostream& err);

// Compiles a loaded ruleset; on failure prints "rulejit COMMAND: error: ..."
// to `err` and returns null (the caller exits with kExitInputError).
std::unique_ptr<const Program> CompileOrReport(absl::string_view command,
                                               ir::Ruleset ruleset,
                                               const CompileOptions& options,
                                               std::ostream& err);

// The whole content of a file, or nullopt (with `error` set) if unreadable.
std::optional<std::string> ReadFile(const std::string& path,
                                    std::string& error);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_LOAD_H_
