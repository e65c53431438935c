// Lexer for the nft language: words, strings, $vars, @sets, punctuation.
#include "frontends/nft/lexer.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "frontends/nft/limits.h"

namespace rulejit::frontends::nft {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == ':' || c == '-' || c == '/' || c == '*';
}

// Cursor over the text that keeps line and column up to date.
class Cursor {
 public:
  Cursor(std::string_view text, int file) : text_(text), file_(file) {}
  bool done() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  char next() {
    char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  ir::SourceLoc loc() const { return {file_, line_, col_}; }
  uint32_t col() const { return col_; }

 private:
  std::string_view text_;
  int file_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 1;
};

std::string LexString(Cursor& cur) {
  std::string out;
  cur.next();  // opening quote
  while (!cur.done() && cur.peek() != '"' && cur.peek() != '\n' &&
         out.size() <= kMaxTokenBytes) {
    char c = cur.next();
    if (c == '\\' && !cur.done() && cur.peek() != '\n') {
      char e = cur.next();
      if (e == '*') out.push_back('\\');  // keep `\*`: a literal star
      out.push_back(e);
      continue;
    }
    out.push_back(c);
  }
  if (cur.peek() == '"') cur.next();
  return out;
}

// Records the first lexical error; returns true (stop lexing).
bool Fail(LexError* bad, ir::SourceLoc loc, std::string message) {
  if (bad->loc.line == 0) *bad = {loc, std::move(message)};
  return true;
}

// The bytes before the cursor on its line are over kMaxLineBytes.
bool LineTooLong(const Cursor& cur, LexError* bad) {
  if (cur.col() - 1 <= kMaxLineBytes) return false;
  ir::SourceLoc loc = cur.loc();
  loc.col = kMaxLineBytes + 1;
  return Fail(bad, loc, absl::StrCat("line longer than ", kMaxLineBytes, " bytes"));
}

bool TokenTooLong(const Token& tok, LexError* bad) {
  if (tok.text.size() <= kMaxTokenBytes) return false;
  return Fail(bad, tok.loc, absl::StrCat(tok.kind == Tok::kString ? "string" : "word",
                                         " longer than ", kMaxTokenBytes, " bytes"));
}

// At least as many as the tokens of `text`: the places a token can start
// (a word character after a non-word one, punctuation, a newline, a quote,
// `$` or `@`), plus the end token. Reserving it keeps a file of millions of
// tokens from growing its vector by doubling (half again as much, and twice
// as much while it moves); pages reserved for tokens that comments or
// strings only seemed to start are never touched, so never resident.
size_t TokenBound(std::string_view text) {
  size_t n = 1;
  bool in_word = false;
  for (char c : text) {
    const bool word = IsWordChar(c);
    n += (word && !in_word) ||
         std::string_view("{}()[],;=!<>&|^+\n\"$@").find(c) != std::string_view::npos;
    in_word = word;
  }
  return n;
}

}  // namespace

std::vector<Token> Lex(std::string_view text, int file, LexError* bad) {
  std::vector<Token> out;
  out.reserve(TokenBound(text));
  Cursor cur(text, file);
  bool space = true;
  *bad = LexError{};
  while (!cur.done()) {
    if (LineTooLong(cur, bad)) break;
    char c = cur.peek();
    if (c == ' ' || c == '\t' || c == '\r') {
      cur.next();
      space = true;
      continue;
    }
    if (c == '\\' && (cur.peek(1) == '\n' ||
                      (cur.peek(1) == '\r' && cur.peek(2) == '\n'))) {
      cur.next();
      if (cur.peek() == '\r') cur.next();
      cur.next();
      space = true;
      continue;
    }
    if (c == '#') {
      while (!cur.done() && cur.peek() != '\n') cur.next();
      continue;
    }
    Token tok;
    tok.loc = cur.loc();
    tok.space_before = space;
    space = false;
    if (c == '\n') {
      cur.next();
      tok.kind = Tok::kNewline;
      space = true;
    } else if (c == '"') {
      tok.kind = Tok::kString;
      tok.text = LexString(cur);
    } else if ((c == '$' || c == '@') &&
               (std::isalnum(static_cast<unsigned char>(cur.peek(1))) ||
                cur.peek(1) == '_')) {
      tok.kind = c == '$' ? Tok::kVar : Tok::kSetRef;
      cur.next();
      while (!cur.done() &&
             (std::isalnum(static_cast<unsigned char>(cur.peek())) ||
              cur.peek() == '_' || cur.peek() == '.' || cur.peek() == '-' ||
              cur.peek() == '/') && tok.text.size() <= kMaxTokenBytes) {
        tok.text.push_back(cur.next());
      }
    } else if (IsWordChar(c)) {
      tok.kind = Tok::kWord;
      while (!cur.done() && IsWordChar(cur.peek()) && tok.text.size() <= kMaxTokenBytes) {
        tok.text.push_back(cur.next());
      }
    } else if (std::string_view("{}()[],;=!<>&|^+").find(c) !=
               std::string_view::npos) {
      tok.kind = Tok::kPunct;
      tok.text.push_back(cur.next());
      char n = cur.peek();
      if ((c == '<' && (n == '=' || n == '<')) ||
          (c == '>' && (n == '=' || n == '>')) || (c == '=' && n == '=') ||
          (c == '!' && n == '=')) {
        tok.text.push_back(cur.next());
      }
    } else {
      if (bad->loc.line == 0) *bad = {tok.loc, "unexpected character"};  // lexing goes on
      cur.next();
      continue;
    }
    if (TokenTooLong(tok, bad)) break;
    out.push_back(std::move(tok));
  }
  LineTooLong(cur, bad);  // a last line without a newline
  Token end;
  end.kind = Tok::kEnd;
  end.loc = cur.loc();
  end.space_before = true;
  out.push_back(end);
  return out;
}

}  // namespace rulejit::frontends::nft
