// See load.h.
#include "tools/load.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/classbench/classbench.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "ir/diag.h"
#include "ir/verifier.h"

namespace rulejit::tools {
namespace {

// The first line that is not blank and not a `#` comment, with its 1-based
// number; {"", 0} if there is none.
std::pair<absl::string_view, uint32_t> FirstMeaningfulLine(
    absl::string_view text) {
  uint32_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (stripped.empty() || stripped[0] == '#') continue;
    return {stripped, number};
  }
  return {"", 0};
}

// The line's first word: up to the first blank.
absl::string_view FirstWord(absl::string_view line) {
  size_t end = line.find_first_of(" \t");
  return end == absl::string_view::npos ? line : line.substr(0, end);
}

bool LooksLikeIptablesSave(absl::string_view line) {
  if (line[0] == '*' || line[0] == ':') return true;
  absl::string_view word = FirstWord(line);
  return word == "-A" || word == "-N" || word == "-P" || word == "-I";
}

bool LooksLikeNft(absl::string_view line) {
  absl::string_view word = FirstWord(line);
  for (absl::string_view keyword :
       {"table", "flush", "define", "add", "include", "create", "insert",
        "delete", "destroy", "redefine", "undefine"}) {
    if (word == keyword) return true;
  }
  return false;
}

// The directory part of `path` ("" for a bare name): where nft includes
// are looked up.
std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The frontend's result; a failure without a diagnostic (a frontend bug)
// still gets one, so the command never exits 1 silently.
std::optional<ir::Ruleset> Unwrap(absl::StatusOr<ir::Ruleset> parsed, int file,
                                  ir::Diagnostics& diags) {
  if (parsed.ok()) return *std::move(parsed);
  if (!diags.has_errors()) {
    diags.Error({file, 1, 1}, std::string(parsed.status().message()));
  }
  return std::nullopt;
}

std::optional<ir::Ruleset> ParseWith(InputFormat format,
                                     const std::string& text,
                                     const std::string& path, int file,
                                     ir::Diagnostics& diags) {
  switch (format) {
    case InputFormat::kIptables:
      return Unwrap(frontends::ParseIptablesSave(text, file, diags), file,
                    diags);
    case InputFormat::kIptablesNft:
      return Unwrap(frontends::ParseIptablesSave(text, file, diags,
                                                 frontends::IpVersion::kAuto,
                                                 frontends::IptablesFlavor::kNft),
                    file, diags);
    case InputFormat::kNft:
      return Unwrap(frontends::ParseNft(text, file, diags, DirectoryOf(path)),
                    file, diags);
    case InputFormat::kClassbench:
      return Unwrap(frontends::ParseClassBench(text, file, diags), file, diags);
  }
  return std::nullopt;
}

}  // namespace

const char* FormatName(InputFormat format) {
  switch (format) {
    case InputFormat::kIptables:
      return "iptables";
    case InputFormat::kIptablesNft:
      return "iptables-nft";
    case InputFormat::kNft:
      return "nft";
    case InputFormat::kClassbench:
      return "classbench";
  }
  return "?";
}

std::optional<InputFormat> FormatFromName(absl::string_view name) {
  if (name == "iptables") return InputFormat::kIptables;
  if (name == "iptables-nft") return InputFormat::kIptablesNft;
  if (name == "nft") return InputFormat::kNft;
  if (name == "classbench") return InputFormat::kClassbench;
  return std::nullopt;
}

std::optional<InputFormat> DetectFormat(absl::string_view text) {
  auto [line, number] = FirstMeaningfulLine(text);
  if (number == 0) return std::nullopt;
  if (line[0] == '@') return InputFormat::kClassbench;
  if (LooksLikeIptablesSave(line)) return InputFormat::kIptables;
  if (LooksLikeNft(line)) return InputFormat::kNft;
  return std::nullopt;
}

std::optional<std::string> ReadFile(const std::string& path,
                                    std::string& error) {
  // A directory opens fine as a stream and then reads as empty.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    error = absl::StrCat(path, ": error: cannot read: is a directory");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = absl::StrCat(path, ": error: cannot open: ", std::strerror(errno));
    return std::nullopt;
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    error = absl::StrCat(path, ": error: cannot read: ", std::strerror(errno));
    return std::nullopt;
  }
  return std::move(content).str();
}

std::optional<LoadedRuleset> LoadRuleset(const std::string& path,
                                         std::optional<InputFormat> forced,
                                         std::ostream& err) {
  std::string read_error;
  std::optional<std::string> text = ReadFile(path, read_error);
  if (!text) {
    err << read_error << "\n";
    return std::nullopt;
  }
  ir::Diagnostics diags;
  int file = diags.AddFile(path, *text);
  std::optional<InputFormat> format = forced ? forced : DetectFormat(*text);
  std::optional<ir::Ruleset> ruleset;
  if (!format) {
    uint32_t line = std::max<uint32_t>(FirstMeaningfulLine(*text).second, 1);
    diags.Error({file, line, 1}, "cannot tell the input format",
                "use --format iptables|iptables-nft|nft|classbench");
  } else {
    ruleset = ParseWith(*format, *text, path, file, diags);
  }
  if (ruleset) {
    // Ruleset::Where names files through `files`; fill it if the frontend
    // left it empty.
    if (ruleset->files.empty()) ruleset->files = diags.file_names();
    ir::Verify(*ruleset, diags);
  }
  if (!diags.all().empty()) err << diags.Format();
  if (diags.has_errors() || !ruleset) return std::nullopt;
  return LoadedRuleset{*format, *std::move(ruleset)};
}

std::unique_ptr<const Program> CompileOrReport(absl::string_view command,
                                               ir::Ruleset ruleset,
                                               const CompileOptions& options,
                                               std::ostream& err) {
  absl::StatusOr<std::unique_ptr<const Program>> program =
      Program::Compile(std::move(ruleset), options);
  if (program.ok()) return *std::move(program);
  err << "rulejit " << command << ": error: " << program.status().message() << "\n";
  return nullptr;
}

}  // namespace rulejit::tools
