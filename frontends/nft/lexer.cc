// Lexer for the nft language: words, strings, $vars, @sets, punctuation.
#include "frontends/nft/lexer.h"

#include <cctype>

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
  while (!cur.done() && cur.peek() != '"' && cur.peek() != '\n') {
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

}  // namespace

std::vector<Token> Lex(std::string_view text, int file, ir::SourceLoc* bad) {
  std::vector<Token> out;
  Cursor cur(text, file);
  bool space = true;
  while (!cur.done()) {
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
              cur.peek() == '/')) {
        tok.text.push_back(cur.next());
      }
    } else if (IsWordChar(c)) {
      tok.kind = Tok::kWord;
      while (!cur.done() && IsWordChar(cur.peek())) tok.text.push_back(cur.next());
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
      if (bad != nullptr && bad->line == 0) *bad = tok.loc;
      cur.next();
      continue;
    }
    out.push_back(std::move(tok));
  }
  Token end;
  end.kind = Tok::kEnd;
  end.loc = cur.loc();
  end.space_before = true;
  out.push_back(end);
  return out;
}

}  // namespace rulejit::frontends::nft
