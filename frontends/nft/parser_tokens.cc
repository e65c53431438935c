// The nft parser's token cursor: `$var` expansion (bounded, so that
// definitions that refer to each other cannot grow without end), peeking,
// accepting and expecting words and punctuation, statement and block ends,
// and the error messages that say what was expected.
#include "frontends/nft/parser.h"

#include "absl/strings/str_cat.h"
#include "frontends/nft/limits.h"

namespace rulejit::frontends::nft {

// ---------------------------------------------------------------------------
// Tokens

bool Parser::ExpandVar() {
  while (pos_ < toks_.size() && toks_[pos_].kind == Tok::kVar) {
    Token var = toks_[pos_];
    const std::vector<Token>* value = LookupDefine(var.text);
    if (value == nullptr) {
      std::vector<std::string_view> names;
      for (const Scope& scope : scopes_) {
        for (const auto& [n, _] : scope) names.push_back(n);
      }
      Error(var.loc, absl::StrCat("undefined variable '$", var.text, "'"),
            ir::DidYouMean(var.text, names));
      toks_[pos_].kind = Tok::kEnd;
      return false;
    }
    expanded_tokens_ += value->size();
    if (++expansions_ > kMaxExpansions || expanded_tokens_ > kMaxExpandedTokens) {
      Error(var.loc, absl::StrCat("too many variable expansions (over ", kMaxExpansions,
                                  ", or over ", kMaxExpandedTokens, " tokens)"));
      toks_[pos_].kind = Tok::kEnd;
      return false;
    }
    SpliceAtCursor(value->data(), value->size());
    if (!value->empty()) toks_[pos_].space_before = var.space_before;
  }
  return true;
}

// The consumed tokens are not looked at again, except the last two (error
// messages point at the previous token, CloseBlock asks what it was). So
// when there is room, those two move back (or forward) over older consumed
// tokens and the replacement is written in place: the rest of the file does
// not move, and a file that expands or splits a token per element or per
// rule stays linear. Near the start of the file it is an ordinary insert.
void Parser::SpliceAtCursor(const Token* repl, size_t n) {
  constexpr size_t kKept = 2;
  // (Or they were released.)
  if (pos_ < kKept || pos_ + 1 < n + kKept || pos_ + 1 - n - kKept < toks_.released_end()) {
    if (n == 0) {
      toks_.Erase(pos_);
    } else {
      toks_[pos_] = repl[0];
      toks_.Insert(pos_ + 1, repl + 1, n - 1);
    }
    return;
  }
  const size_t first = pos_ + 1 - n;  // where repl[0] goes
  if (first > pos_) {  // n == 0: the kept tokens move forward, the last first
    for (size_t i = kKept; i-- > 0;) toks_[first - kKept + i] = std::move(toks_[pos_ - kKept + i]);
  } else if (first < pos_) {
    for (size_t i = 0; i < kKept; ++i) toks_[first - kKept + i] = std::move(toks_[pos_ - kKept + i]);
  }
  for (size_t i = 0; i < n; ++i) toks_[first + i] = repl[i];
  pos_ = first;
}

void Parser::ReleaseConsumed(size_t floor) {
  size_t to = pos_ > 2 ? pos_ - 2 : 0;
  for (const PendingBinding& b : bindings_) to = std::min(to, b.body);
  toks_.Release(floor, to);
}

Parser::Nesting::Nesting(Parser& parser, ir::SourceLoc loc) : parser_(parser) {
  ok_ = ++parser_.nesting_ <= kMaxNesting ||
        parser_.Error(loc, absl::StrCat("nested deeper than ", kMaxNesting, " levels of '{' or '('"));
}

const Token& Parser::Peek() {
  ExpandVar();
  if (sink_.failed) return toks_.end_token();
  return toks_[pos_];
}

// Look-ahead does not expand variables: a $var is just "not a keyword".
const Token& Parser::PeekAt(size_t ahead) {
  Peek();
  return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
}

Token Parser::Next() {
  Token t = Peek();
  if (!sink_.failed && pos_ + 1 < toks_.size()) ++pos_;
  return t;
}

bool Parser::AtWord(std::string_view w) {
  const Token& t = Peek();
  return t.kind == Tok::kWord && t.text == w;
}

bool Parser::AtPunct(std::string_view p) {
  const Token& t = Peek();
  return t.kind == Tok::kPunct && t.text == p;
}

bool Parser::AcceptWord(std::string_view w) {
  if (!AtWord(w)) return false;
  Next();
  return true;
}

bool Parser::AcceptPunct(std::string_view p) {
  if (!AtPunct(p)) return false;
  Next();
  return true;
}

bool Parser::ExpectPunct(std::string_view p) {
  if (AcceptPunct(p)) return true;
  return ErrorUnexpected(absl::StrCat("'", std::string(p), "'"));
}

bool Parser::ExpectWord(std::string* out, std::string_view what) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return ErrorUnexpected(what);
  *out = Next().text;
  return true;
}

// Names may be written bare or quoted.
bool Parser::ExpectName(std::string* out, std::string_view what) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord && t.kind != Tok::kString) {
    return ErrorUnexpected(what);
  }
  if (t.kind == Tok::kWord && IsReservedWord(t.text)) {
    return Error(t.loc, absl::StrCat("'", t.text, "' is a keyword of nft's grammar, not a ",
                                     std::string(what)),
                 "nft refuses it here (a syntax error): choose another name");
  }
  *out = Next().text;
  return true;
}

// nft 1.0.6 names tables, chains, sets, maps, flowtables and objects where
// it declares or commands them, and chains in jumps, with a bare word
// only: `chain "c"`, `jump "c"` are syntax errors there.
bool Parser::ExpectIdentifier(std::string* out, std::string_view what) {
  if (Peek().kind == Tok::kString) {
    return Error(Peek().loc, absl::StrCat("a quoted ", std::string(what), ": nft 1.0.6 takes a "
                                          "bare name here"),
                 "drop the quotes");
  }
  return ExpectName(out, what);
}

bool Parser::AtStmtEnd() {
  const Token& t = Peek();
  return t.kind == Tok::kNewline || t.kind == Tok::kEnd ||
         (t.kind == Tok::kPunct && (t.text == ";" || t.text == "}"));
}

bool Parser::AtBlockClose() {
  const Token& t = Peek();
  return t.kind == Tok::kPunct && t.text == "}";
}

bool Parser::CloseBlock(bool items_end_with_separator) {
  auto separator = [](const Token& t) {
    return t.kind == Tok::kNewline || t.kind == Tok::kEnd ||
           (t.kind == Tok::kPunct && t.text == ";");
  };
  const bool after_separator =
      pos_ > 0 && (separator(toks_[pos_ - 1]) ||
                   (toks_[pos_ - 1].kind == Tok::kPunct && toks_[pos_ - 1].text == "{"));
  if (items_end_with_separator && !after_separator) {
    return Error(Peek().loc, "expected newline or ';' before '}'");
  }
  Next();
  if (!separator(Peek())) return ErrorUnexpected("newline or ';' after '}'");
  return true;
}

void Parser::SkipNewlines() {
  while (!sink_.failed && Peek().kind == Tok::kNewline) Next();
}

// Skips newlines and semicolons; false at end of input.
bool Parser::SkipSeparators() {
  while (!sink_.failed) {
    const Token& t = Peek();
    if (t.kind == Tok::kNewline || (t.kind == Tok::kPunct && t.text == ";")) {
      Next();
      continue;
    }
    return t.kind != Tok::kEnd;
  }
  return false;
}

bool Parser::Error(ir::SourceLoc loc, std::string msg, std::string hint) {
  return sink_.Error(loc, std::move(msg), std::move(hint));
}

bool Parser::ErrorUnexpected(std::string_view what) {
  const Token& t = Peek();
  std::string got;
  switch (t.kind) {
    case Tok::kNewline: got = "end of line"; break;
    case Tok::kEnd: got = "end of input"; break;
    case Tok::kString: got = absl::StrCat("\"", t.text, "\""); break;
    default: got = absl::StrCat("'", t.text, "'"); break;
  }
  return Error(t.loc, absl::StrCat("expected ", std::string(what), ", got ", got));
}

}  // namespace rulejit::frontends::nft
