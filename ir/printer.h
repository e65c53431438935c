// The IR's text form: exactly the lines `nft --debug=netlink` prints, as in
// ../shared/corpus/nftables-py/*.t.payload:
//
//   ip test-ip4 input
//     [ payload load 4b @ network header + 12 => reg 1 ]
//     [ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]
//     [ cmp eq reg 1 0x0000000a ]
//
// Data words are the register bytes read as host-endian (little-endian) u32,
// printed as 0x%08x; a trailing partial word is zero-padded.
#ifndef RULEJIT_IR_PRINTER_H_
#define RULEJIT_IR_PRINTER_H_

#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"

#include "ir/ir.h"

namespace rulejit::ir {

// "[ payload load 4b @ network header + 12 => reg 1 ]" (no indent, no newline)
std::string PrintExpr(const Expr& expr);
// "network" for PayloadBase::kNetwork, as `@ network header` prints it.
const char* PayloadBaseName(PayloadBase base);
// True for the names of anonymous sets ("__set12", "__map3",
// "__objmap0"), which the kernel numbers per batch.
bool IsAnonymousSetName(std::string_view name);
// "second", "minute", "hour", "day", "week" for a limit's period, else null.
const char* LimitUnitName(uint64_t seconds);
// "0x0000000a 0x00000000" for the given bytes.
std::string PrintData(const Bytes& bytes);
// The block for one rule: "FAMILY TABLE CHAIN\n" then "  [ ... ]\n" per expr.
std::string PrintRule(const Table& table, const Chain& chain, const Rule& rule);
// The anonymous/named sets a rule uses, in the payload files' form:
//   "__set%d test-ip4 3\n__set%d test-ip4 0\n\telement 00000020  : 0 [end]..."
std::string PrintSet(const Table& table, const Set& set);
// The whole ruleset: for every table, chain header lines and rule blocks.
std::string PrintRuleset(const Ruleset& ruleset);
// The same, handed to `sink` in pieces of about 64 KiB: the text of a
// million-element set is ~50 MB that need not be held at once.
void PrintRuleset(const Ruleset& ruleset, absl::FunctionRef<void(std::string_view)> sink);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_PRINTER_H_
