// See load.h.
#include "tools/load.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "ir/diag.h"

namespace rulejit::tools {

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
  std::string content;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    content.append(buf, static_cast<size_t>(in.gcount()));
    if (content.size() > kMaxInputBytes) {
      error = absl::StrCat(path, ": error: larger than ", kMaxInputBytes >> 20, " MiB");
      return std::nullopt;
    }
  }
  if (in.bad()) {
    error = absl::StrCat(path, ": error: cannot read: ", std::strerror(errno));
    return std::nullopt;
  }
  return content;
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
  InputFormat format = InputFormat::kIptables;
  std::optional<ir::Ruleset> ruleset =
      frontends::ParseRuleset(*text, path, forced, diags, &format);
  if (!diags.all().empty()) err << diags.Format();
  if (!ruleset) return std::nullopt;
  return LoadedRuleset{format, *std::move(ruleset)};
}

std::unique_ptr<const Program> CompileOrReport(absl::string_view command,
                                               ir::Ruleset ruleset,
                                               const CompileOptions& options,
                                               std::ostream& err) {
  absl::StatusOr<std::unique_ptr<const Program>> program =
      Program::Compile(RulesetOf(std::move(ruleset)), options);
  if (program.ok()) return *std::move(program);
  err << "rulejit " << command << ": error: " << program.status().message() << "\n";
  return nullptr;
}

}  // namespace rulejit::tools
