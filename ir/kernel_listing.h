// What the kernel holds, as `nft --debug=netlink list ruleset` prints it,
// read back onto rulejit's own reading of the same ruleset.
//
// The listing starts with every set that has elements, then every rule as
// its bytecode, then (after the first `table` line) the ruleset as text:
//
//   inet t @__set0
//           element 00001600  : 0 [end]
//   inet t c 4 3
//     [ payload load 2b @ transport header + 2 => reg 1 ]
//     [ lookup reg 1 set __set0 0x0 ]
//
// WithKernelBytecode keeps rulejit's tables, chains, hooks, policies and
// set declarations (the kernel's bytecode does not carry their types) and
// takes every rule's expressions and every set's elements from the
// kernel. So a `diff` of rulejit's reading against the result compares
// what rulejit compiled with what the kernel runs: a difference is a
// miscompile on one side (nft 1.0.6 merges `tcp sport != 22 tcp dport !=
// 80` into one 32-bit compare, which means "not both", not "neither").
#ifndef RULEJIT_IR_KERNEL_LISTING_H_
#define RULEJIT_IR_KERNEL_LISTING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/reader.h"

namespace rulejit::ir {

// One `element KEY [- KEY_END] : [DATA | VERDICT] FLAGS [end]` line.
struct ListedElement {
  Bytes key;                     // whole words, as printed
  std::optional<Bytes> key_end;  // pipapo intervals: the inclusive end
  Bytes data;                    // map data words
  std::optional<Verdict> verdict;
  uint32_t flags = 0;  // NFT_SET_ELEM_INTERVAL_END (1), NFT_SET_ELEM_CATCHALL (2)
  uint32_t line = 0;   // in the listing
};

struct ListedSet {
  Family family = Family::kIp;
  std::string table;
  std::string name;
  std::vector<ListedElement> elements;
};

struct KernelListing {
  std::vector<ListedSet> sets;
  std::vector<RuleBlock> rules;  // in listing order (chain by chain)
};

// Reads the bytecode part of the listing; errors are InvalidArgument
// "listing line N: ...".
absl::StatusOr<KernelListing> ParseKernelListing(std::string_view text);

// `ours` with each rule's expressions and each set's elements as the
// kernel holds them. Rules are matched chain by chain in order (nft makes
// one kernel rule of each rule it reads), anonymous sets by the order the
// two rules name them. Errors when the two cannot be matched, naming the
// rule.
absl::StatusOr<Ruleset> WithKernelBytecode(const Ruleset& ours, const KernelListing& kernel);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_KERNEL_LISTING_H_
