// Tokenizer for one iptables-save line.
//
// iptables-save quotes words that contain spaces (`--comment "a b"`,
// `--log-prefix "x: "`) with double quotes and escapes `"` and `\` inside
// them with a backslash; iptables-restore also accepts single quotes. A token
// may mix quoted and bare parts (`--comment="a b"`), as in a shell. Columns
// are byte offsets + 1, so diagnostics point at the token's first byte.
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "frontends/iptables/limits.h"

namespace rulejit::frontends::iptables_internal {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

bool TokenizeLine(std::string_view line, ir::SourceLoc line_loc,
                  ir::Diagnostics& diags, std::vector<Token>* out) {
  auto error = [&](size_t col, std::string msg, std::string hint = "") {
    ir::SourceLoc loc = line_loc;
    loc.col = static_cast<uint32_t>(col);
    diags.Error(loc, std::move(msg), std::move(hint));
    return false;
  };
  if (line.size() > kMaxLineBytes) {
    return error(kMaxLineBytes + 1, absl::StrCat("line longer than ", kMaxLineBytes, " bytes"),
                 "iptables-restore reads lines into a 10240-byte buffer and would cut this one "
                 "in two");
  }
  size_t i = 0;
  while (i < line.size()) {
    if (IsSpace(line[i])) {
      ++i;
      continue;
    }
    Token tok;
    tok.col = static_cast<uint32_t>(i + 1);
    while (i < line.size() && !IsSpace(line[i])) {
      const char c = line[i];
      if (c != '"' && c != '\'') {
        tok.text += c;
        ++i;
        continue;
      }
      // A quoted part: up to the matching quote.
      const size_t open = i++;
      tok.quoted = true;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == c) {
          closed = true;
          ++i;
          break;
        }
        if (c == '"' && line[i] == '\\' && i + 1 < line.size()) ++i;
        tok.text += line[i++];
      }
      if (!closed) return error(open + 1, "unterminated quoted string");
    }
    if (tok.text.size() > kMaxParamBytes) {
      return error(tok.col, absl::StrCat("word longer than ", kMaxParamBytes, " bytes"),
                   "iptables-restore refuses it: \"Parameter too long!\"");
    }
    if (out->size() == kMaxArgs) {
      return error(tok.col, absl::StrCat("more than ", kMaxArgs, " words on one line"),
                   "iptables-restore refuses it: \"Parser cannot handle more arguments\"");
    }
    out->push_back(std::move(tok));
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
