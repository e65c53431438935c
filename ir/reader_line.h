// The IR reader's one-line parser, shared by ir/reader.cc (ParseExprLine)
// and ir/reader_block.cc (ParseRuleBlock). Internal to ir/.
#ifndef RULEJIT_IR_READER_LINE_H_
#define RULEJIT_IR_READER_LINE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "ir/ir.h"

namespace rulejit::ir::reader_internal {

struct LineResult {
  std::optional<Expr> expr;
  size_t column = 0;  // of the error, or of '[' on success
  std::string error;
};

// One `[ ... ]` line, surrounding blanks ignored: the expression, or the
// column and message of the first mismatch.
LineResult ParseLine(std::string_view line);

}  // namespace rulejit::ir::reader_internal

#endif  // RULEJIT_IR_READER_LINE_H_
