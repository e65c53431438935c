// `--emit nft`: an ir::Ruleset printed back as an nft script.
//
// The IR is nf_tables bytecode, so printing it is decompiling: each rule's
// expressions are walked with what every register holds (an nft
// expression such as `ip saddr` or `@nh,96,32`), and every expression that
// consumes a register (cmp, range, lookup, set statements, NAT) becomes an
// nft statement over it. Fields get their nft names only where nft would
// generate the same bytecode (a `tcp dport` needs the rule to have checked
// `meta l4proto tcp` first, else nft would add that check); everything else
// prints in nft's raw forms (`@nh,96,32 0x0a000001`, `meta ...`), so every
// rule prints as something that means the same. What has no nft form (the
// iptables-only matches: recent, hashlimit, string, time, TCPMSS ...) is an
// error naming the rule (`FILE:LINE`) and why: never a guess.
#ifndef RULEJIT_EMIT_NFT_PRINT_H_
#define RULEJIT_EMIT_NFT_PRINT_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace rulejit::emit {

// The whole ruleset as an nft script (`flush ruleset` first), or an
// InvalidArgument error "FILE:LINE: rule ...: why" for the first rule that
// cannot be printed exactly.
absl::StatusOr<std::string> PrintNft(const ir::Ruleset& ruleset);

// `--emit nft-json`: the same ruleset as libnftables JSON (the schema of
// `nft -j list ruleset`, loadable with `nft -j -f`), made from the same
// decompilation as PrintNft, so the two say the same; refuses what
// PrintNft refuses, and located, what has no JSON form yet.
absl::StatusOr<std::string> PrintNftJson(const ir::Ruleset& ruleset);

}  // namespace rulejit::emit

#endif  // RULEJIT_EMIT_NFT_PRINT_H_
