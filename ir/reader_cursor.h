// The IR reader's cursor over one `[ ... ]` line, and the table of the
// statement parsers (ir/reader_stmt.cc), shared by ir/reader.cc. Internal
// to ir/.
//
// A Cursor walks one line, consuming the printer's literal spelling piece
// by piece; the first mismatch records its column and message and turns
// every later call into a no-op, so each per-kind parser reads straight
// through like the printf it inverts.
#ifndef RULEJIT_IR_READER_CURSOR_H_
#define RULEJIT_IR_READER_CURSOR_H_

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace rulejit::ir::reader_internal {

// Abseil here is built with its own string_view; Abseil string functions
// take that type, so std::string_view arguments go through this.
inline absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

class Cursor {
 public:
  Cursor(std::string_view text, size_t column_base)
      : text_(text), base_(column_base) {}

  bool failed() const { return error_.has_value(); }
  size_t error_column() const { return error_col_; }
  const std::string& error() const { return *error_; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  std::string_view Rest() const { return text_.substr(pos_); }
  size_t Column() const { return base_ + pos_ + 1; }
  void Skip(size_t n) { pos_ = std::min(text_.size(), pos_ + n); }

  // Records the first error only, at the current column.
  void Fail(std::string message) {
    if (failed()) return;
    error_ = std::move(message);
    error_col_ = Column();
  }

  // What comes next, for messages: the next token or "end of line".
  std::string Found() const {
    if (AtEnd()) return "end of line";
    std::string_view rest = Rest();
    return absl::StrCat("'", Sv(rest.substr(0, rest.find(' '))), "'");
  }

  bool Peek(std::string_view lit) const {
    return !failed() && Rest().substr(0, lit.size()) == lit;
  }

  bool TryLiteral(std::string_view lit) {
    if (!Peek(lit)) return false;
    pos_ += lit.size();
    return true;
  }

  void Literal(std::string_view lit) {
    if (failed() || TryLiteral(lit)) return;
    Fail(absl::StrCat("expected '", Sv(lit), "', found ", Found()));
  }

  // Characters up to the next space (or end); must be non-empty.
  std::string_view Token(std::string_view what) {
    if (failed()) return {};
    std::string_view rest = Rest();
    size_t n = std::min(rest.find(' '), rest.size());
    if (n == 0) {
      Fail(absl::StrCat("expected ", Sv(what), ", found ", Found()));
      return {};
    }
    pos_ += n;
    return rest.substr(0, n);
  }

  // A canonical decimal number <= max.
  uint64_t Number(std::string_view what,
                  uint64_t max = std::numeric_limits<uint32_t>::max()) {
    if (failed()) return 0;
    std::string_view rest = Rest();
    size_t n = 0;
    while (n < rest.size() && absl::ascii_isdigit(rest[n])) ++n;
    if (n == 0 || (n > 1 && rest[0] == '0')) {
      Fail(absl::StrCat("expected ", Sv(what), " (a decimal number), found ",
                        Found()));
      return 0;
    }
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t digit = rest[i] - '0';
      if (digit > max || value > (max - digit) / 10) {
        Fail(absl::StrCat(Sv(what), " is out of range (at most ", max, ")"));
        return 0;
      }
      value = value * 10 + digit;
    }
    pos_ += n;
    return value;
  }

  // A lowercase hexadecimal number of at most 8 digits, the "0x" read
  // already, without leading zeros (as printf's %x).
  uint64_t HexNumber(std::string_view what) {
    if (failed()) return 0;
    std::string_view rest = Rest();
    size_t n = 0;
    uint64_t value = 0;
    for (; n < rest.size() && n < 9; ++n) {
      const char ch = rest[n];
      const int digit = absl::ascii_isdigit(ch)    ? ch - '0'
                        : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
                                                   : -1;
      if (digit < 0) break;
      value = value << 4 | static_cast<uint64_t>(digit);
    }
    if (n == 0 || n > 8 || (n > 1 && rest[0] == '0')) {
      Fail(absl::StrCat("expected ", Sv(what), " (0x and at most 8 hex digits), found ", Found()));
      return 0;
    }
    pos_ += n;
    return value;
  }

  Reg Register() { return static_cast<Reg>(Number("a register number", 255)); }

  // "0x%08x" (lowercase) as 4 little-endian bytes appended to `out`.
  void DataWord(Bytes& out) {
    if (failed()) return;
    std::string_view rest = Rest();
    bool ok = rest.size() >= 10 && rest.substr(0, 2) == "0x" &&
              (rest.size() == 10 || rest[10] == ' ');
    uint32_t word = 0;
    for (size_t i = 2; ok && i < 10; ++i) {
      char ch = rest[i];
      int digit = absl::ascii_isdigit(ch)             ? ch - '0'
                  : (ch >= 'a' && ch <= 'f')          ? ch - 'a' + 10
                                                      : -1;
      ok = digit >= 0;
      word = (word << 4) | static_cast<uint32_t>(digit < 0 ? 0 : digit);
    }
    if (!ok) {
      Fail(absl::StrCat("expected a data word 0x%08x, found ", Found()));
      return;
    }
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(word >> (8 * i)));
    pos_ += 10;
  }

  // One or more "0x%08x " pieces (each followed by a space, as printed).
  Bytes DataPieces() {
    Bytes out;
    do {
      DataWord(out);
      Literal(" ");
    } while (!failed() && Peek("0x"));
    return out;
  }

 private:
  std::string_view text_;
  size_t base_;  // columns of leading whitespace trimmed off
  size_t pos_ = 0;
  std::optional<std::string> error_;
  size_t error_col_ = 0;
};

// Reads the body of one expression kind (after its name).
using BodyParser = Expr (*)(Cursor&);

// The parsers of ir/reader_stmt.cc (log, reject, exthdr, queue, quota,
// nat, masq, redir, fib, tcpmss, recent, checksum, flow_offload, objref,
// numgen, notrack) by libnftnl name; null for other names.
BodyParser StatementParserFor(std::string_view name);
// Any expression's body parser, by name (reader.cc), or null.
BodyParser ExprParserFor(std::string_view name);

}  // namespace rulejit::ir::reader_internal

#endif  // RULEJIT_IR_READER_CURSOR_H_
