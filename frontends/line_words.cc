// Whitespace words of one line (see line_words.h).
#include "frontends/line_words.h"

namespace rulejit::frontends {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::vector<LineWord> SplitLineWords(std::string_view line) {
  std::vector<LineWord> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (i > start) words.push_back({line.substr(start, i - start), static_cast<uint32_t>(start + 1)});
  }
  return words;
}

}  // namespace rulejit::frontends
