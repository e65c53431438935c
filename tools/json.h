// JSON output helpers shared by the subcommands that print --json.
#ifndef RULEJIT_TOOLS_JSON_H_
#define RULEJIT_TOOLS_JSON_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace rulejit::tools {

// A JSON string literal (quotes, backslashes and control bytes escaped).
inline std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, c));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_JSON_H_
