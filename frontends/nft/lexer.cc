// Lexer for the nft language: words, strings, $vars, @sets, punctuation.
#include "frontends/nft/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "frontends/nft/limits.h"

namespace rulejit::frontends::nft {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == ':' || c == '-' || c == '/' || c == '*';
}

// Records the first lexical error; returns true (stop lexing).
bool Fail(LexError* bad, ir::SourceLoc loc, std::string message) {
  if (bad->loc.line == 0) *bad = {loc, std::move(message)};
  return true;
}

}  // namespace

char Lexer::next() {
  char c = text_[pos_++];
  if (c == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  return c;
}

std::string Lexer::LexString() {
  std::string out;
  next();  // opening quote
  while (!done() && peek() != '"' && peek() != '\n' && out.size() <= kMaxTokenBytes) {
    char c = next();
    if (c == '\\' && !done() && peek() != '\n') {
      char e = next();
      if (e == '*') out.push_back('\\');  // keep `\*`: a literal star
      out.push_back(e);
      continue;
    }
    out.push_back(c);
  }
  if (peek() == '"') next();
  return out;
}

// `$NAME` / `@NAME`: the name after the sigil.
void Lexer::LexName(Token* tok) {
  next();
  while (!done() &&
         (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.' ||
          peek() == '-' || peek() == '/') &&
         tok->text.size() <= kMaxTokenBytes) {
    tok->text.push_back(next());
  }
}

// The bytes before the cursor on its line are over kMaxLineBytes.
bool Lexer::LineTooLong() {
  if (col_ - 1 <= kMaxLineBytes) return false;
  ir::SourceLoc at = loc();
  at.col = kMaxLineBytes + 1;
  return Fail(&bad_, at, absl::StrCat("line longer than ", kMaxLineBytes, " bytes"));
}

bool Lexer::TokenTooLong(const Token& tok) {
  if (tok.text.size() <= kMaxTokenBytes) return false;
  return Fail(&bad_, tok.loc, absl::StrCat(tok.kind == Tok::kString ? "string" : "word",
                                           " longer than ", kMaxTokenBytes, " bytes"));
}

Token Lexer::Next() {
  while (!stopped_ && !done()) {
    if (LineTooLong()) break;
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\r') {
      next();
      space_ = true;
      continue;
    }
    if (c == '\\' && (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n'))) {
      next();
      if (peek() == '\r') next();
      next();
      space_ = true;
      continue;
    }
    if (c == '#') {
      while (!done() && peek() != '\n') next();
      continue;
    }
    Token tok;
    tok.loc = loc();
    tok.space_before = space_;
    space_ = false;
    if (c == '\n') {
      next();
      tok.kind = Tok::kNewline;
      space_ = true;
    } else if (c == '"') {
      tok.kind = Tok::kString;
      tok.text = LexString();
    } else if ((c == '$' || c == '@') &&
               (std::isalnum(static_cast<unsigned char>(peek(1))) || peek(1) == '_')) {
      tok.kind = c == '$' ? Tok::kVar : Tok::kSetRef;
      LexName(&tok);
    } else if (IsWordChar(c)) {
      tok.kind = Tok::kWord;
      while (!done() && IsWordChar(peek()) && tok.text.size() <= kMaxTokenBytes) {
        tok.text.push_back(next());
      }
    } else if (std::string_view("{}()[],;=!<>&|^+").find(c) != std::string_view::npos) {
      tok.kind = Tok::kPunct;
      tok.text.push_back(next());
      char n = peek();
      if ((c == '<' && (n == '=' || n == '<')) || (c == '>' && (n == '=' || n == '>')) ||
          (c == '=' && n == '=') || (c == '!' && n == '=')) {
        tok.text.push_back(next());
      }
    } else {
      Fail(&bad_, tok.loc, "unexpected character");  // lexing goes on
      next();
      continue;
    }
    if (TokenTooLong(tok)) break;
    return tok;
  }
  if (!stopped_) LineTooLong();  // a last line without a newline
  stopped_ = true;
  Token end;
  end.kind = Tok::kEnd;
  end.loc = loc();
  end.space_before = true;
  return end;
}

TokenStream::TokenStream(std::string_view text, int file) : lexer_(text, file) {
  Lexer count(text, file);
  do {
    end_ = count.Next();
    ++size_;
  } while (end_.kind != Tok::kEnd);
  error_ = count.error();
}

Token& TokenStream::Slot(size_t i) {
  std::unique_ptr<Token[]>& chunk = chunks_[i / kChunk];
  if (chunk == nullptr) {
    // Released (a parser bug: it said it would not look back) or not lexed.
    if (i < released_end_) std::abort();
    chunk = std::make_unique<Token[]>(kChunk);
  }
  return chunk[i % kChunk];
}

Token& TokenStream::operator[](size_t i) {
  if (i >= size_) std::abort();
  if (chunks_.size() <= (size_ - 1) / kChunk) chunks_.resize((size_ - 1) / kChunk + 1);
  while (lexed_ <= i) {
    Slot(lexed_) = lexer_.Next();
    ++lexed_;
  }
  return Slot(i);
}

void TokenStream::Insert(size_t i, const Token* toks, size_t n) {
  if (n == 0) return;
  (*this)[i];  // lexed through i
  size_ += n;
  chunks_.resize((size_ - 1) / kChunk + 1);
  for (size_t j = lexed_; j-- > i;) Slot(j + n) = std::move(Slot(j));
  for (size_t k = 0; k < n; ++k) Slot(i + k) = toks[k];
  lexed_ += n;
}

void TokenStream::Erase(size_t i) {
  (*this)[i];
  for (size_t j = i; j + 1 < lexed_; ++j) Slot(j) = std::move(Slot(j + 1));
  Slot(lexed_ - 1) = Token();
  --lexed_;
  --size_;
}

void TokenStream::Release(size_t from, size_t to) {
  to = std::min(to, lexed_);
  for (size_t c = (from + kChunk - 1) / kChunk; (c + 1) * kChunk <= to; ++c) {
    chunks_[c].reset();
    released_end_ = std::max(released_end_, (c + 1) * kChunk);
  }
}

}  // namespace rulejit::frontends::nft
