// See diagnostic_output.h.
#include "tools/diagnostic_output.h"

#include "absl/strings/str_cat.h"
#include "tools/json.h"

namespace rulejit::tools {

const char* SeverityName(ir::Severity severity) {
  switch (severity) {
    case ir::Severity::kError: return "error";
    case ir::Severity::kWarning: return "warning";
    case ir::Severity::kNote: return "note";
  }
  return "error";
}

void DiagnosticOutput::Add(const ir::Diagnostics& diags) {
  if (diags.all().empty()) return;
  if (!json_) {
    err_ << diags.Format();
    errors_ += diags.error_count();
    return;
  }
  const std::vector<std::string>& files = diags.file_names();
  for (const ir::Diagnostic& d : diags.all()) {
    const bool known = d.loc.file >= 0 && static_cast<size_t>(d.loc.file) < files.size();
    Add(ToolDiagnostic{.file = known ? files[d.loc.file] : "",
                       .line = d.loc.line,
                       .column = d.loc.col,
                       .severity = d.severity,
                       .message = d.message,
                       .hint = d.hint});
  }
}

void DiagnosticOutput::Add(ToolDiagnostic d) {
  if (d.severity == ir::Severity::kError) ++errors_;
  if (json_) {
    collected_.push_back(std::move(d));
    return;
  }
  err_ << d.file;
  if (d.line > 0) err_ << ":" << d.line << ":" << d.column;
  err_ << ": " << SeverityName(d.severity) << ": " << d.message << "\n";
  if (!d.hint.empty()) err_ << "hint: " << d.hint << "\n";
}

std::string DiagnosticOutput::JsonArray() const {
  std::string out = "[";
  for (size_t i = 0; i < collected_.size(); ++i) {
    const ToolDiagnostic& d = collected_[i];
    auto number = [](uint32_t n) { return n == 0 ? std::string("null") : absl::StrCat(n); };
    absl::StrAppend(&out, i ? "," : "", "{\"file\":", JsonString(d.file),
                    ",\"line\":", number(d.line), ",\"column\":", number(d.column),
                    ",\"severity\":\"", SeverityName(d.severity), "\",\"message\":",
                    JsonString(d.message), ",\"hint\":", JsonString(d.hint), "}");
  }
  return out + "]";
}

}  // namespace rulejit::tools
