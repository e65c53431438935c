// Where a subcommand's diagnostics go: as text to the error stream (the
// located `FILE:LINE:COL: error: ...` form of ir/diag.h), or, with --json,
// collected and printed as one JSON array in the command's JSON document on
// stdout. Every diagnostic has the same shape in JSON, for `check --json`
// and `diff --json` alike:
//   {"file":"rules.ipt","line":12,"column":5,"severity":"error",
//    "message":"unknown option '--dprot'","hint":"did you mean '--dport'?"}
// line and column are null when unknown (an unreadable file), hint is ""
// when there is none.
#ifndef RULEJIT_TOOLS_DIAGNOSTIC_OUTPUT_H_
#define RULEJIT_TOOLS_DIAGNOSTIC_OUTPUT_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/diag.h"

namespace rulejit::tools {

struct ToolDiagnostic {
  std::string file;
  uint32_t line = 0;    // 0: unknown
  uint32_t column = 0;  // 0: unknown
  ir::Severity severity = ir::Severity::kError;
  std::string message;
  std::string hint;
};

class DiagnosticOutput {
 public:
  // Text to `err`, or collected for JSON when `json`.
  DiagnosticOutput(bool json, std::ostream& err) : json_(json), err_(err) {}

  bool json() const { return json_; }
  // All diagnostics of `diags`, located in its files.
  void Add(const ir::Diagnostics& diags);
  // One diagnostic; as text "FILE[:LINE:COL]: SEVERITY: MESSAGE".
  void Add(ToolDiagnostic d);
  bool has_errors() const { return errors_ > 0; }
  // The collected diagnostics as a JSON array (empty when text).
  std::string JsonArray() const;

 private:
  bool json_;
  std::ostream& err_;
  std::vector<ToolDiagnostic> collected_;
  int errors_ = 0;
};

const char* SeverityName(ir::Severity severity);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_DIAGNOSTIC_OUTPUT_H_
