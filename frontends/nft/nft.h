// The nft frontend: the nftables language as `nft -f` reads it and
// `nft list ruleset` prints it, lowered to IR the way nft itself lowers it
// (so ir::PrintRule reproduces `nft --debug=netlink`).
//
//   ir::Diagnostics diags;
//   int file = diags.AddFile("rules.nft", text);
//   absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags);
//   if (!rs.ok()) std::cerr << diags.Format();
//
// Supported: tables (ip ip6 inet netdev), base and regular chains, sets and
// maps (named, anonymous, interval, concatenated), `define`, `include`,
// command forms (`add`/`insert`/`flush ruleset`), payload/meta/ct matches
// with nft's implicit dependencies, and the statements counter, log, limit,
// meta/ct set, notrack, reject and verdicts. Anything else is a located
// "unsupported ..." error; on any error the result is InvalidArgument.
#ifndef RULEJIT_FRONTENDS_NFT_NFT_H_
#define RULEJIT_FRONTENDS_NFT_NFT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends {

// Parses a whole nft file. `file` is the index diags.AddFile returned for
// `text`; `base_dir` resolves relative `include "..."` paths.
[[nodiscard]] absl::StatusOr<ir::Ruleset> ParseNft(std::string_view text,
                                                    int file,
                                                    ir::Diagnostics& diags,
                                                    std::string_view base_dir = "");

// Parses one rule (the text after `add rule FAMILY TABLE CHAIN`) and appends
// it to `chain` of `table`; anonymous sets it needs are added to the table.
// Used by the conformance runner. On error nothing is appended.
[[nodiscard]] absl::Status ParseNftRule(ir::Table& table,
                                        std::string_view chain,
                                        std::string_view rule_text, int file,
                                        ir::Diagnostics& diags);

// Parses a set declaration body as the conformance files write it
// (`type ipv4_addr flags interval`, `typeof ...`, `type dscp : mark` for
// a map) and adds set `name`.
[[nodiscard]] absl::Status ParseNftSetDecl(ir::Table& table,
                                           std::string_view name,
                                           std::string_view decl, int file,
                                           ir::Diagnostics& diags);

// Adds elements (`192.168.3.4, 10.0.0.0/8`) to the named set of `table`.
[[nodiscard]] absl::Status ParseNftSetElements(ir::Table& table,
                                               std::string_view name,
                                               std::string_view elements,
                                               int file,
                                               ir::Diagnostics& diags);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_NFT_NFT_H_
