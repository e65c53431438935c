// See load.h.
#include "tools/load.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "ir/diag.h"

namespace rulejit::tools {

namespace {

// Reads `in` to its end, bounded by kMaxInputBytes. `size_hint`: the
// file's size when known (read into one buffer of that size, not one grown
// by doubling: a 20 MB ruleset then costs 20 MB, not up to 48).
std::optional<std::string> ReadStream(std::istream& in, std::string& reason,
                                      uintmax_t size_hint = 0) {
  std::string content;
  content.reserve(std::min<uintmax_t>(size_hint, kMaxInputBytes + 1));
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    content.append(buf, static_cast<size_t>(in.gcount()));
    if (content.size() > kMaxInputBytes) {
      reason = absl::StrCat("larger than ", kMaxInputBytes >> 20, " MiB");
      return std::nullopt;
    }
  }
  if (in.bad()) {
    reason = absl::StrCat("cannot read: ", std::strerror(errno));
    return std::nullopt;
  }
  return content;
}

std::optional<std::string> ReadStdin(std::string& reason) {
  static std::optional<std::string> content;
  static std::string failure;
  static bool read = false;
  if (!read) {
    read = true;
    content = ReadStream(std::cin, failure);
  }
  if (!content) reason = failure;
  return content;
}

}  // namespace

std::string DisplayName(const std::string& path) {
  return path == kStdinArgument ? std::string(kStdinName) : path;
}

std::optional<std::string> ReadFileOrReason(const std::string& path,
                                            std::string& reason) {
  if (path == kStdinArgument || path == kStdinName) return ReadStdin(reason);
  // A directory opens fine as a stream and then reads as empty.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    reason = "cannot read: is a directory";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    reason = absl::StrCat("cannot open: ", std::strerror(errno));
    return std::nullopt;
  }
  const uintmax_t size = std::filesystem::file_size(path, ignored);
  return ReadStream(in, reason, size == static_cast<uintmax_t>(-1) ? 0 : size);
}

std::optional<std::string> ReadFile(const std::string& path,
                                    std::string& error) {
  std::string reason;
  std::optional<std::string> content = ReadFileOrReason(path, reason);
  if (!content) error = absl::StrCat(DisplayName(path), ": error: ", reason);
  return content;
}

std::optional<LoadedRuleset> LoadRuleset(const std::string& path,
                                         const LoadInput& input,
                                         std::ostream& err) {
  DiagnosticOutput diags(/*json=*/false, err);
  return LoadRuleset(path, input, diags);
}

std::optional<LoadedRuleset> LoadRuleset(const std::string& path,
                                         const LoadInput& input,
                                         DiagnosticOutput& out) {
  const std::string name = DisplayName(path);
  std::string reason;
  std::optional<std::string> text = ReadFileOrReason(path, reason);
  if (!text) {
    out.Add(ToolDiagnostic{.file = name, .message = reason, .hint = ""});
    return std::nullopt;
  }
  std::optional<frontends::IpsetInput> ipsets;
  if (!input.ipset_path.empty()) {
    ipsets.emplace();
    ipsets->name = DisplayName(input.ipset_path);
    std::optional<std::string> ipset_text = ReadFileOrReason(input.ipset_path, reason);
    if (!ipset_text) {
      out.Add(ToolDiagnostic{.file = ipsets->name, .message = reason, .hint = ""});
      return std::nullopt;
    }
    ipsets->text = *std::move(ipset_text);
  }
  ir::Diagnostics diags;
  InputFormat format = InputFormat::kIptables;
  std::optional<ir::Ruleset> ruleset = frontends::ParseRulesetText(
      *std::move(text), name, input.format, diags, &format, ipsets ? &*ipsets : nullptr);
  out.Add(diags);
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
