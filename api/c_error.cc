// The C API's errors (rulejit_error, rulejit_c.h): how failures become
// one, the accessors a C caller reads it with, and the text-buffer copy
// the one-call functions use. A parse failure keeps every diagnostic
// located (file, line, column, message, hint); other failures are one
// unlocated message.
#include <new>

#include "absl/strings/str_cat.h"
#include "api/c_internal.h"

namespace rulejit::c_api {
namespace {

int32_t SeverityOf(ir::Severity severity) {
  switch (severity) {
    case ir::Severity::kError: return RULEJIT_SEVERITY_ERROR;
    case ir::Severity::kWarning: return RULEJIT_SEVERITY_WARNING;
    case ir::Severity::kNote: return RULEJIT_SEVERITY_NOTE;
  }
  return RULEJIT_SEVERITY_ERROR;
}

int Store(rulejit_error** error, rulejit_error made) {
  if (error != nullptr) *error = new (std::nothrow) rulejit_error(std::move(made));
  return made.code;
}

}  // namespace

int Fail(rulejit_error** error, int32_t code, const std::string& message) {
  rulejit_error made;
  made.code = code;
  made.text = absl::StrCat("error: ", message, "\n");
  made.items.emplace_back().message = message;
  return Store(error, std::move(made));
}

int FailStatus(rulejit_error** error, const absl::Status& status) {
  int32_t code = RULEJIT_ECOMPILE;
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded: code = RULEJIT_ETIMEDOUT; break;
    case absl::StatusCode::kFailedPrecondition: code = RULEJIT_ENOTSUP; break;
    case absl::StatusCode::kResourceExhausted: code = RULEJIT_ENOMEM; break;
    default: break;
  }
  return Fail(error, code, std::string(status.message()));
}

int FailDiagnostics(rulejit_error** error, int32_t code, const ir::Diagnostics& diags) {
  rulejit_error made;
  made.code = code;
  made.text = diags.Format();
  const std::vector<std::string>& files = diags.file_names();
  for (const ir::Diagnostic& d : diags.all()) {
    const bool known = d.loc.file >= 0 && static_cast<size_t>(d.loc.file) < files.size();
    made.items.push_back({.file = known ? files[d.loc.file] : "",
                          .line = d.loc.line,
                          .column = d.loc.col,
                          .message = d.message,
                          .hint = d.hint,
                          .severity = SeverityOf(d.severity)});
  }
  if (made.items.empty()) made.items.emplace_back().message = "invalid input";
  return Store(error, std::move(made));
}

void WriteText(const std::string& text, char* buf, size_t len) {
  if (buf == nullptr || len == 0) return;
  const size_t n = std::min(text.size(), len - 1);
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
}

int64_t CopyOut(const std::string& text, char* buf, size_t len) {
  WriteText(text, buf, len);
  return static_cast<int64_t>(text.size());
}

}  // namespace rulejit::c_api

namespace {

const rulejit_error::Item* ItemOf(const rulejit_error* error, size_t i) {
  if (error == nullptr || i >= error->items.size()) return nullptr;
  return &error->items[i];
}

}  // namespace

extern "C" {

int32_t rulejit_error_code(const rulejit_error* error) {
  return error == nullptr ? RULEJIT_EINVAL : error->code;
}
const char* rulejit_error_text(const rulejit_error* error) {
  return error == nullptr ? "" : error->text.c_str();
}
size_t rulejit_error_count(const rulejit_error* error) {
  return error == nullptr ? 0 : error->items.size();
}
const char* rulejit_error_file(const rulejit_error* error, size_t i) {
  const rulejit_error::Item* item = ItemOf(error, i);
  return item ? item->file.c_str() : "";
}
uint32_t rulejit_error_line(const rulejit_error* error, size_t i) {
  const rulejit_error::Item* item = ItemOf(error, i);
  return item ? item->line : 0;
}
uint32_t rulejit_error_column(const rulejit_error* error, size_t i) {
  const rulejit_error::Item* item = ItemOf(error, i);
  return item ? item->column : 0;
}
const char* rulejit_error_message(const rulejit_error* error, size_t i) {
  const rulejit_error::Item* item = ItemOf(error, i);
  return item ? item->message.c_str() : "";
}
const char* rulejit_error_hint(const rulejit_error* error, size_t i) {
  const rulejit_error::Item* item = ItemOf(error, i);
  return item ? item->hint.c_str() : "";
}
int32_t rulejit_error_severity(const rulejit_error* error, size_t i) {
  const rulejit_error::Item* item = ItemOf(error, i);
  return item ? item->severity : RULEJIT_SEVERITY_ERROR;
}
void rulejit_error_free(rulejit_error* error) { delete error; }

}  // extern "C"
