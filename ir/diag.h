// Diagnostics: located user errors and warnings.
//
// Frontends and the verifier report user mistakes here, with a position, the
// offending source line and a caret, and optionally a "did you mean" hint:
//
//   rules.ipt:12:5: error: unknown option '--dprot'
//   -A INPUT --dprot 22 -j ACCEPT
//            ^
//   hint: did you mean '--dport'?
//
// Broken internal invariants are not diagnostics; they are CHECK failures.
#ifndef RULEJIT_IR_DIAG_H_
#define RULEJIT_IR_DIAG_H_

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace rulejit::ir {

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLoc loc;
  std::string message;
  std::string hint;  // optional "did you mean ..." text
};

class Diagnostics {
 public:
  // `files` names SourceLoc::file indexes; `sources` holds each file's text
  // (may be shorter than files, then no source line is shown).
  Diagnostics() = default;

  void Error(SourceLoc loc, std::string message, std::string hint = "");
  void Warning(SourceLoc loc, std::string message, std::string hint = "");

  bool has_errors() const { return errors_ > 0; }
  int error_count() const { return errors_; }
  const std::vector<Diagnostic>& all() const { return diags_; }

  // Registers the text of a file so messages can quote the line; returns the
  // index to use in SourceLoc::file.
  int AddFile(std::string name, std::string text);
  // The text registered as `file`: stable while the Diagnostics lives
  // (later AddFile calls move no earlier text), so a parser may read it.
  std::string_view text(int file) const { return texts_[file]; }
  const std::vector<std::string>& file_names() const { return names_; }

  // "FILE:LINE:COL: error: MESSAGE\n<line>\n<caret>\nhint: ...\n" for all.
  std::string Format() const;
  std::string Format(const Diagnostic& d) const;
  // First error as an InvalidArgument status (message = formatted first line),
  // or OK when there are no errors.
  absl::Status ToStatus() const;

 private:
  std::vector<Diagnostic> diags_;
  std::vector<std::string> names_;
  std::deque<std::string> texts_;  // a deque: text(file) views stay valid
  int errors_ = 0;
};

// The candidate closest to `word` by edit distance, or "" if none is close.
std::string DidYouMean(std::string_view word,
                       const std::vector<std::string_view>& candidates);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_DIAG_H_
