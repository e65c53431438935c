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

// (Laid out small, 48 bytes: a set of a million elements lexes to three
// million tokens, all held while the file is parsed.)
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

// Splits `text` into tokens; comments (`#` to end of line) are dropped,
// backslash-newline joins lines. The first error, if any, goes to `bad`.
std::vector<Token> Lex(std::string_view text, int file, LexError* bad);

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_LEXER_H_
