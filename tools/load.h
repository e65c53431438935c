// Loading a ruleset file for the `rulejit` subcommands.
//
// Reads FILE ("-": standard input, named "<stdin>" in diagnostics; its nft
// includes resolve against the current directory), picks the frontend from the content (or from --format), parses
// and verifies (frontends/frontend.h). Every problem is printed to the error
// stream as a located diagnostic (`FILE:LINE:COL: error: ...` with the source
// line and a caret); on any error nothing is returned, so no command ever
// runs half a ruleset.
#ifndef RULEJIT_TOOLS_LOAD_H_
#define RULEJIT_TOOLS_LOAD_H_

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "frontends/frontend.h"
#include "ir/ir.h"
#include "rulejit/rulejit.h"
#include "tools/diagnostic_output.h"

namespace rulejit::tools {

using frontends::DetectFormat;
using frontends::FormatFromName;
using frontends::FormatName;
using frontends::InputFormat;

// What loading reads beside FILE: --format, and --ipset FILE (`ipset save`
// output for an iptables dump's -m set; frontends/iptables/ipset.h).
struct LoadInput {
  std::optional<InputFormat> format;
  std::string ipset_path;  // "": none given
  LoadInput(std::optional<InputFormat> f = std::nullopt) : format(f) {}  // NOLINT: implicit
};

struct LoadedRuleset {
  InputFormat format = InputFormat::kIptables;
  ir::Ruleset ruleset;  // verified; `files` names the loaded file
};

// Reads, parses and verifies `path`. Prints diagnostics (errors and
// warnings) to `err`; returns nullopt if there was any error.
std::optional<LoadedRuleset> LoadRuleset(const std::string& path,
                                         const LoadInput& input,
                                         std::ostream& err);
// The same, with the diagnostics going to `diags` (text or JSON).
std::optional<LoadedRuleset> LoadRuleset(const std::string& path,
                                         const LoadInput& input,
                                         DiagnosticOutput& diags);

// Compiles a loaded ruleset; on failure prints "rulejit COMMAND: error: ..."
// to `err` and returns null (the caller exits with kExitInputError).
std::unique_ptr<const Program> CompileOrReport(absl::string_view command,
                                               ir::Ruleset ruleset,
                                               const CompileOptions& options,
                                               std::ostream& err);

// Inputs are untrusted: a file over this (or a device such as /dev/zero)
// is an error, not a read without end. The nft frontend's includes have
// the same bound.
inline constexpr size_t kMaxInputBytes = size_t{256} << 20;

// The name standard input goes by: the file argument "-" reads it, and
// diagnostics name it "<stdin>".
inline constexpr absl::string_view kStdinArgument = "-";
inline constexpr absl::string_view kStdinName = "<stdin>";
// "<stdin>" for "-", else `path`.
std::string DisplayName(const std::string& path);

// The whole content of a file, or nullopt (with `error` set to
// "PATH: error: ...") if unreadable or over kMaxInputBytes. "-" (or
// "<stdin>") is standard input, read once and kept, so a second read (a
// diagnostic quoting its lines) sees the same text.
std::optional<std::string> ReadFile(const std::string& path,
                                    std::string& error);
// The same with `error` the bare reason ("cannot open: No such file ...").
std::optional<std::string> ReadFileOrReason(const std::string& path,
                                            std::string& reason);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_LOAD_H_
