// Whitespace words of one line with their columns, for the line-based
// inputs (ClassBench files, `ipset save` output) whose diagnostics point at
// a word.
#ifndef RULEJIT_FRONTENDS_LINE_WORDS_H_
#define RULEJIT_FRONTENDS_LINE_WORDS_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace rulejit::frontends {

struct LineWord {
  std::string_view text;  // points into the line
  uint32_t col = 1;       // 1-based
};

// Splits at spaces, tabs and carriage returns (a CRLF file's lines end in
// '\r'); empty words are not returned.
std::vector<LineWord> SplitLineWords(std::string_view line);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_LINE_WORDS_H_
