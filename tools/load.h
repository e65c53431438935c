// Loading a ruleset file for the `rulejit` subcommands.
//
// Reads FILE, picks the frontend from the content (or from --format), parses
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

namespace rulejit::tools {

using frontends::DetectFormat;
using frontends::FormatFromName;
using frontends::FormatName;
using frontends::InputFormat;

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

// Inputs are untrusted: a file over this (or a device such as /dev/zero)
// is an error, not a read without end. The nft frontend's includes have
// the same bound.
inline constexpr size_t kMaxInputBytes = size_t{256} << 20;

// The whole content of a file, or nullopt (with `error` set) if unreadable
// or over kMaxInputBytes.
std::optional<std::string> ReadFile(const std::string& path,
                                    std::string& error);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_LOAD_H_
