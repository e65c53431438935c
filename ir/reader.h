// The IR reader: the inverse of ir/printer.h.
//
// Parses the `[ ... ]` lines `nft --debug=netlink` prints (and PrintExpr
// writes) back into expressions, so the text form round-trips:
// PrintExpr(*ParseExprLine(s)) == s for every line the reader accepts (less
// surrounding blanks; an anonymous set named `__set1` prints as nft prints
// it, `__set%d`; tests/fuzz/ir_line_fuzz checks both). The
// grammar is the printer's exact spelling (single spaces, `0x%08x` data
// words); anything else is rejected with the column where it went wrong:
//
//   auto expr = ParseExprLine("[ cmp eq reg 1 0x0000000a ]");
//   auto bad  = ParseExprLine("[ cmp eq reg 1 0xa ]");
//   // bad.status(): "column 16: expected a data word 0x%08x, found '0xa'"
//
// Data read from text is whole words (the text does not say how many bytes
// of the last word are used); ParseRuleBlock trims a compare's data to the
// length of the value the rule loaded into that register when the padding is
// zero, so a block read back means what nft meant.
#ifndef RULEJIT_IR_READER_H_
#define RULEJIT_IR_READER_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace rulejit::ir {

// One `[ ... ]` line; leading/trailing whitespace is ignored. Errors are
// InvalidArgument "column N: ..." (column 1-based within `line`).
absl::StatusOr<Expr> ParseExprLine(std::string_view line);

// A rule block as in the payload files:
//
//   ip test-ip4 input
//     [ payload load 4b @ network header + 12 => reg 1 ]
//     [ cmp eq reg 1 0x0100000a ]
//
// Blank lines and `#` comment lines are skipped. Nodes get SourceLoc
// {file, first_line + i, column}. Errors are InvalidArgument
// "LINE:COL: error: ..." with LINE counted from `first_line`.
struct RuleBlock {
  Family family = Family::kIp;
  std::string table;
  std::string chain;
  Rule rule;
};
absl::StatusOr<RuleBlock> ParseRuleBlock(std::string_view text, int file = -1,
                                         uint32_t first_line = 1);

// The family nft names `name` (ip, ip6, inet, netdev, bridge, arp).
std::optional<Family> FamilyFromName(std::string_view name);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_READER_H_
