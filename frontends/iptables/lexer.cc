// Tokenizer for one iptables-save line.
//
// iptables-save quotes words that contain spaces (`--comment "a b"`,
// `--log-prefix "x: "`) with double quotes and escapes `"` and `\` inside
// them with a backslash; iptables-restore also accepts single quotes. A token
// may mix quoted and bare parts (`--comment="a b"`), as in a shell. Columns
// are byte offsets + 1, so diagnostics point at the token's first byte.
#include <string>

#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

bool TokenizeLine(std::string_view line, ir::SourceLoc line_loc,
                  ir::Diagnostics& diags, std::vector<Token>* out) {
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
      if (!closed) {
        ir::SourceLoc loc = line_loc;
        loc.col = static_cast<uint32_t>(open + 1);
        diags.Error(loc, "unterminated quoted string");
        return false;
      }
    }
    out->push_back(std::move(tok));
  }
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
