// Lexer for the nft language (internal to frontends/nft).
//
// nft's own lexer is context dependent (`25:accept`, `ca:fe::1`, `1.2.3.4/24`,
// `1-5` all lex differently depending on what the parser expects). We keep
// the lexer simple instead: a *word* is a maximal run of characters that may
// appear in names, numbers, addresses, prefixes and ranges
// (letters, digits, `_ . : - / *`), and the parser, which knows the type of
// the value it wants, splits words further (see values.h).
#ifndef RULEJIT_FRONTENDS_NFT_LEXER_H_
#define RULEJIT_FRONTENDS_NFT_LEXER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace rulejit::frontends::nft {

enum class Tok {
  kWord,     // ip, saddr, 22, 10.0.0.0/8, ::1, ca:fe:..., 1-5, frag-off
  kString,   // "text" (text holds the unescaped contents)
  kVar,      // $NAME (text holds NAME)
  kSetRef,   // @NAME (text holds NAME)
  kPunct,    // { } ( ) [ ] , ; = ! < > <= >= == != & | ^ << >> +
  kNewline,  // end of a line (a statement separator)
  kEnd,
};

// (Laid out small, 48 bytes. A set of a million elements lexes to three
// million tokens; TokenStream holds only those the parser has not let go.)
struct Token {
  Tok kind = Tok::kEnd;
  bool space_before = false;  // whitespace between this and the previous token
  ir::SourceLoc loc;
  std::string text;
};

// The first lexical error: a character that starts no token (lexing goes
// on), or a token or line over its limit (limits.h; lexing stops there).
struct LexError {
  ir::SourceLoc loc;  // line 0: none
  std::string message;
};

// Splits a text into tokens one at a time; comments (`#` to end of line)
// are dropped, backslash-newline joins lines. After the last token (kEnd,
// at the end of the text or where an error stopped lexing) it gives kEnd
// again. Copying a Lexer copies its position (a look-ahead that keeps
// nothing).
class Lexer {
 public:
  Lexer(std::string_view text, int file) : text_(text), file_(file) {}
  Token Next();
  const LexError& error() const { return bad_; }  // the first, if any

 private:
  bool done() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  char next();
  ir::SourceLoc loc() const { return {file_, line_, col_}; }
  std::string LexString();
  void LexName(Token* tok);
  bool LineTooLong();
  bool TokenTooLong(const Token& tok);

  std::string_view text_;
  int file_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 1;
  bool space_ = true;     // whitespace since the last token
  bool stopped_ = false;  // kEnd given
  LexError bad_;
};

// The tokens of a text as the parser sees them: indexed from 0 to size()-1
// (the last one kEnd), lexed as the parser reaches them rather than all at
// once, so that what the file holds is never all in memory as tokens:
// Release frees the tokens of a consumed range, a chunk at a time. (The
// text is lexed once up front without keeping anything, for the first
// error and the count.) The text must outlive the stream.
class TokenStream {
 public:
  TokenStream(std::string_view text, int file);
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;

  const LexError& error() const { return error_; }
  size_t size() const { return size_; }
  // Token `i` (< size()), lexed up to it if need be. The reference lives
  // until the token is released or tokens are inserted or erased before it.
  Token& operator[](size_t i);
  const Token& end_token() const { return end_; }  // the last one
  // Inserts `n` tokens before token `i` / erases token `i`; both move the
  // tokens lexed after it, which are few (the parser's look-ahead).
  void Insert(size_t i, const Token* toks, size_t n);
  void Erase(size_t i);
  // Frees the tokens in whole chunks inside [from, to): the parser never
  // looks at them again. Below released_end() no token may be written.
  void Release(size_t from, size_t to);
  size_t released_end() const { return released_end_; }
  // Calls `fn` with the tokens from `i` on until it returns false or the
  // last token has been seen; the ones not lexed yet are lexed by a copy of
  // the lexer and kept nowhere.
  template <typename Fn>
  void Scan(size_t i, Fn fn);

 private:
  static constexpr size_t kChunk = 256;
  Token& Slot(size_t i);

  std::vector<std::unique_ptr<Token[]>> chunks_;
  Lexer lexer_;
  LexError error_;
  Token end_;
  size_t size_ = 0;
  size_t lexed_ = 0;  // tokens [0, lexed_) are in chunks_ (or released)
  size_t released_end_ = 0;
};

template <typename Fn>
void TokenStream::Scan(size_t i, Fn fn) {
  for (; i < lexed_; ++i) {
    if (!fn(static_cast<const Token&>(Slot(i)))) return;
  }
  if (lexed_ >= size_) return;
  Lexer ahead = lexer_;
  for (size_t j = lexed_; j < size_; ++j) {
    const Token t = ahead.Next();
    if (!fn(t)) return;
  }
}

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_LEXER_H_
