// The structure-aware ruleset mutator (see ruleset_mutator.h).
#include "tests/fuzz/ruleset_mutator.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace rulejit::testing {
namespace {

constexpr size_t kMaxWordsPerClass = 4096;
constexpr size_t kMaxLines = 4096;
constexpr size_t kMaxLearntLine = 400;

bool IsPunct(char c) { return std::string_view("{}();,=[]<>!@$&|^~").find(c) != std::string_view::npos; }
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A run of non-blank, non-punctuation characters, by what it looks like.
TokenClass ClassOfRun(std::string_view run) {
  if (run.size() > 1 && run[0] == '-' && (std::isalpha(static_cast<unsigned char>(run[1])) || run[1] == '-')) {
    return TokenClass::kOption;
  }
  bool digits = true, hex = run.size() > 2 && run[0] == '0' && (run[1] == 'x' || run[1] == 'X');
  bool addressy = false;
  for (char c : run) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!std::isdigit(u)) digits = false;
    if (c == '.' || c == ':' || c == '/') addressy = true;
  }
  if (digits || hex) return TokenClass::kNumber;
  if (addressy && std::isxdigit(static_cast<unsigned char>(run[0]))) return TokenClass::kAddress;
  return TokenClass::kWord;
}

// Positions of the tokens that start each line (0 and every token after a
// newline), plus tokens.size() at the end.
std::vector<size_t> LineStarts(const std::vector<Token>& tokens) {
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].cls == TokenClass::kNewline) starts.push_back(i + 1);
  }
  if (starts.back() != tokens.size()) starts.push_back(tokens.size());
  return starts;
}

size_t TotalSize(const std::vector<Token>& tokens) {
  size_t n = 0;
  for (const Token& t : tokens) n += t.text.size();
  return n;
}

const char* const kNumberEdges[] = {
    "0", "1", "-1", "7", "8", "15", "16", "31", "32", "33", "63", "64", "127", "128", "129", "255",
    "256", "1023", "1024", "65535", "65536", "2147483647", "2147483648", "4294967295",
    "4294967296", "9223372036854775807", "18446744073709551615", "18446744073709551616",
    "99999999999999999999999999999", "0x0", "0xff", "0xffff", "0xffffffff", "0xffffffffffffffff",
    "0x10000000000000000"};

}  // namespace

std::vector<Token> Tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    size_t j = i + 1;
    TokenClass cls;
    if (c == '\n') {
      cls = TokenClass::kNewline;
    } else if (IsBlank(c)) {
      while (j < text.size() && IsBlank(text[j])) ++j;
      cls = TokenClass::kSpace;
    } else if (c == '"') {
      while (j < text.size() && text[j] != '"' && text[j] != '\n') ++j;
      if (j < text.size() && text[j] == '"') ++j;
      cls = TokenClass::kString;
    } else if (IsPunct(c)) {
      cls = TokenClass::kPunct;
    } else {
      while (j < text.size() && !IsBlank(text[j]) && text[j] != '\n' && text[j] != '"' && !IsPunct(text[j])) ++j;
      cls = ClassOfRun(text.substr(i, j - i));
    }
    tokens.push_back(Token{cls, std::string(text.substr(i, j - i))});
    i = j;
  }
  return tokens;
}

void RulesetMutator::Learn(std::string_view text) {
  auto add = [](std::vector<std::string>& pool, size_t cap, std::string s) {
    if (std::find(pool.begin(), pool.end(), s) != pool.end()) return;
    if (pool.size() < cap) {
      pool.push_back(std::move(s));
    } else {
      pool[std::hash<std::string>{}(s) % cap] = std::move(s);  // keeps learning when full
    }
  };
  std::vector<Token> tokens = Tokenize(text);
  for (const Token& t : tokens) {
    if (t.cls == TokenClass::kSpace || t.cls == TokenClass::kNewline) continue;
    add(words_[static_cast<int>(t.cls)], kMaxWordsPerClass, t.text);
  }
  std::vector<size_t> starts = LineStarts(tokens);
  for (size_t l = 0; l + 1 < starts.size(); ++l) {
    std::string line;
    for (size_t i = starts[l]; i < starts[l + 1]; ++i) line += tokens[i].text;
    if (line.size() > 1 && line.size() <= kMaxLearntLine) add(lines_, kMaxLines, std::move(line));
  }
}

size_t RulesetMutator::vocabulary_size() const {
  size_t n = lines_.size();
  for (const auto& pool : words_) n += pool.size();
  return n;
}

const std::string* RulesetMutator::Pick(TokenClass cls, Rng& rng) const {
  const std::vector<std::string>& pool = words_[static_cast<int>(cls)];
  if (pool.empty()) return nullptr;
  return &pool[rng() % pool.size()];
}

std::string RulesetMutator::Mutate(std::string_view text, uint32_t seed, size_t max_size) {
  Rng rng(seed);
  std::vector<Token> tokens = Tokenize(text);
  // Mostly one edit, at times up to four: each edit is likelier to break
  // the ruleset than to keep it loadable.
  int edits = rng() % 4 == 0 ? 2 + rng() % 3 : 1;
  for (int e = 0; e < edits; ++e) Edit(tokens, rng, max_size);
  std::string out;
  for (const Token& t : tokens) out += t.text;
  if (out.size() > max_size) out.resize(max_size);
  return out;
}

// One edit. Growth edits stay within max_size; the others shrink or keep
// the size about the same.
void RulesetMutator::Edit(std::vector<Token>& tokens, Rng& rng, size_t max_size) {
  const size_t size = TotalSize(tokens);
  const size_t room = size < max_size ? max_size - size : 0;
  auto any_token = [&]() -> size_t { return tokens.empty() ? 0 : rng() % tokens.size(); };
  auto content_token = [&]() -> long {
    for (int tries = 0; tries < 16 && !tokens.empty(); ++tries) {
      size_t i = rng() % tokens.size();
      if (tokens[i].cls != TokenClass::kSpace && tokens[i].cls != TokenClass::kNewline) return static_cast<long>(i);
    }
    return -1;
  };
  std::vector<size_t> starts = LineStarts(tokens);
  const size_t lines = starts.size() - 1;
  auto line_tokens = [&](size_t l) {
    return std::vector<Token>(tokens.begin() + starts[l], tokens.begin() + starts[l + 1]);
  };
  switch (rng() % 13) {
    case 0: case 1: case 2: {  // a token for another of its class
      long i = content_token();
      if (i < 0) return;
      if (const std::string* w = Pick(tokens[i].cls, rng)) tokens[i].text = *w;
      return;
    }
    case 3: {  // a token for one of any class
      long i = content_token();
      TokenClass cls = static_cast<TokenClass>(2 + rng() % (kTokenClasses - 2));
      if (i < 0) return;
      if (const std::string* w = Pick(cls, rng)) tokens[i] = Token{cls, *w};
      return;
    }
    case 4: {  // a number at an edge
      std::vector<size_t> numbers;
      for (size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].cls == TokenClass::kNumber) numbers.push_back(i);
      }
      if (numbers.empty()) return;
      tokens[numbers[rng() % numbers.size()]].text = kNumberEdges[rng() % std::size(kNumberEdges)];
      return;
    }
    case 5: {  // a line twice
      if (lines == 0) return;
      size_t l = rng() % lines;
      std::vector<Token> line = line_tokens(l);
      if (TotalSize(line) > room) return;
      tokens.insert(tokens.begin() + starts[l], line.begin(), line.end());
      return;
    }
    case 6: {  // a line dropped
      if (lines == 0) return;
      size_t l = rng() % lines;
      tokens.erase(tokens.begin() + starts[l], tokens.begin() + starts[l + 1]);
      return;
    }
    case 7: {  // two lines swapped
      if (lines < 2) return;
      size_t a = rng() % lines, b = rng() % lines;
      if (a > b) std::swap(a, b);
      if (a == b) return;
      std::vector<Token> la = line_tokens(a), lb = line_tokens(b);
      tokens.erase(tokens.begin() + starts[b], tokens.begin() + starts[b + 1]);
      tokens.insert(tokens.begin() + starts[b], la.begin(), la.end());
      tokens.erase(tokens.begin() + starts[a], tokens.begin() + starts[a + 1]);
      tokens.insert(tokens.begin() + starts[a], lb.begin(), lb.end());
      return;
    }
    case 8: {  // a line from another ruleset
      if (lines_.empty()) return;
      const std::string& line = lines_[rng() % lines_.size()];
      if (line.size() + 1 > room) return;
      std::vector<Token> spliced = Tokenize(line);
      if (spliced.empty() || spliced.back().cls != TokenClass::kNewline) spliced.push_back(Token{TokenClass::kNewline, "\n"});
      size_t at = starts[rng() % starts.size()];
      tokens.insert(tokens.begin() + at, spliced.begin(), spliced.end());
      return;
    }
    case 9: {  // a token dropped, or a vocabulary word put in
      if (rng() % 2 && !tokens.empty()) {
        tokens.erase(tokens.begin() + any_token());
        return;
      }
      TokenClass cls = static_cast<TokenClass>(2 + rng() % (kTokenClasses - 2));
      const std::string* w = Pick(cls, rng);
      if (!w || w->size() + 1 > room) return;
      size_t at = any_token();
      tokens.insert(tokens.begin() + at, {Token{cls, *w}, Token{TokenClass::kSpace, " "}});
      return;
    }
    case 10: {  // a stretch nested in braces or parentheses, deeply at times
      if (tokens.empty()) return;
      size_t depth = rng() % 4 == 0 ? 1 + rng() % 20000 : 1 + rng() % 8;
      depth = std::min(depth, room / 2);
      if (depth == 0) return;
      const bool paren = rng() % 2;
      size_t a = any_token(), b = any_token();
      if (a > b) std::swap(a, b);
      tokens.insert(tokens.begin() + b, depth, Token{TokenClass::kPunct, paren ? ")" : "}"});
      tokens.insert(tokens.begin() + a, depth, Token{TokenClass::kPunct, paren ? "(" : "{"});
      return;
    }
    case 11: {  // a token repeated into a long list (element lists, long lines)
      long i = content_token();
      if (i < 0) return;
      const std::string item = tokens[i].text + ", ";
      size_t count = std::min<size_t>(rng() % 4 == 0 ? 1 + rng() % 100000 : 1 + rng() % 64, room / item.size());
      std::vector<Token> list;
      for (size_t k = 0; k < count; ++k) {
        list.push_back(tokens[i]);
        list.push_back(Token{TokenClass::kPunct, ","});
        list.push_back(Token{TokenClass::kSpace, " "});
      }
      tokens.insert(tokens.begin() + i, list.begin(), list.end());
      return;
    }
    default: {  // a line repeated many times (long chains)
      if (lines == 0) return;
      std::vector<Token> line = line_tokens(rng() % lines);
      size_t bytes = std::max<size_t>(1, TotalSize(line));
      size_t count = std::min<size_t>(1 + rng() % 2000, room / bytes);
      for (size_t k = 0; k < count; ++k) tokens.insert(tokens.end(), line.begin(), line.end());
      return;
    }
  }
}

}  // namespace rulejit::testing
