// Diagnostics sink: collects located errors and formats them with the source
// line and a caret, nftables-style.
#include "ir/diag.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace rulejit::ir {
namespace {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

// Line `line` (1-based) of `text`, without its newline; "" if out of range.
std::string_view LineOf(std::string_view text, uint32_t line) {
  if (line == 0) return "";
  size_t start = 0;
  for (uint32_t i = 1; i < line; ++i) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return "";
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  return text.substr(start, end - start);
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

void Diagnostics::Error(SourceLoc loc, std::string message, std::string hint) {
  diags_.push_back({Severity::kError, loc, std::move(message), std::move(hint)});
  ++errors_;
}

void Diagnostics::Warning(SourceLoc loc, std::string message,
                          std::string hint) {
  diags_.push_back(
      {Severity::kWarning, loc, std::move(message), std::move(hint)});
}

int Diagnostics::AddFile(std::string name, std::string text) {
  names_.push_back(std::move(name));
  texts_.push_back(std::move(text));
  return static_cast<int>(names_.size()) - 1;
}

std::string Diagnostics::Format(const Diagnostic& d) const {
  const bool known_file =
      d.loc.file >= 0 && static_cast<size_t>(d.loc.file) < names_.size();
  std::string out = known_file ? names_[d.loc.file] : "<input>";
  if (d.loc.line > 0) absl::StrAppend(&out, ":", d.loc.line);
  if (d.loc.col > 0) absl::StrAppend(&out, ":", d.loc.col);
  absl::StrAppend(&out, ": ", SeverityName(d.severity), ": ", d.message, "\n");
  if (known_file) {
    std::string_view line = LineOf(texts_[d.loc.file], d.loc.line);
    size_t col = d.loc.col;
    // A line too long to show whole (a megabyte of set elements, a hostile
    // input) is shown around the column, "..." marking what is cut.
    constexpr size_t kMaxShown = 1024, kAround = 200;
    std::string before, after;
    if (line.size() > kMaxShown) {
      const size_t at = col > 0 ? std::min<size_t>(col - 1, line.size()) : 0;
      const size_t start = at > kAround ? at - kAround : 0;
      if (start > 0) before = "...";
      if (start + 2 * kAround < line.size()) after = "...";
      line = line.substr(start, 2 * kAround);
      if (col > 0) col -= start;
    }
    if (!line.empty()) {
      absl::StrAppend(&out, before, std::string(line), after, "\n");
      if (col > 0 && col <= line.size() + 1) {
        std::string caret(before.size(), ' ');
        // Keep tabs so the caret lines up under the same column.
        for (size_t i = 0; i + 1 < col; ++i) {
          caret += line[i] == '\t' ? '\t' : ' ';
        }
        absl::StrAppend(&out, caret, "^\n");
      }
    }
  }
  if (!d.hint.empty()) absl::StrAppend(&out, "hint: ", d.hint, "\n");
  return out;
}

std::string Diagnostics::Format() const {
  std::string out;
  for (const Diagnostic& d : diags_) out += Format(d);
  return out;
}

absl::Status Diagnostics::ToStatus() const {
  for (const Diagnostic& d : diags_) {
    if (d.severity != Severity::kError) continue;
    std::string text = Format(d);
    return absl::InvalidArgumentError(text.substr(0, text.find('\n')));
  }
  return absl::OkStatus();
}

std::string DidYouMean(std::string_view word,
                       const std::vector<std::string_view>& candidates) {
  std::string_view best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (std::string_view c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return std::string(best);
}

}  // namespace rulejit::ir
