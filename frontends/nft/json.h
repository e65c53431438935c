// nft's machine interface as a ruleset format: the JSON `nft -j list
// ruleset` prints (libnftables-json(5), schema version 1), read by turning
// each object into the nft text `nft list ruleset` would print for it and
// handing that text to the nft frontend, so JSON and text share one
// lowering (and mean the same by construction of that one path).
//
//   ir::Diagnostics diags;
//   int file = diags.AddFile("listing.json", json_text);
//   absl::StatusOr<ir::Ruleset> rs = frontends::ParseNftJson(json_text, file, diags);
//
// Covered: tables, chains (base chain type/hook/priority/policy/device),
// rules (match, payload/meta/ct/fib/numgen/exthdr/... expressions,
// concatenations, prefixes, ranges, set literals, anonymous maps and
// verdict maps, verdicts, counter, log, limit, quota, nat, reject, mangle,
// set/map updates, object references), named sets and maps with elements
// and flags, and named objects. Anything else is an error located by the
// JSON path of the object (`nftables[12].rule.expr[2].match.left`); an
// error of the text frontend names the JSON path of the rule, set or chain
// its generated line came from, and points at that line in the generated
// text (registered in `diags` as "FILE (as nft)").
#ifndef RULEJIT_FRONTENDS_NFT_JSON_H_
#define RULEJIT_FRONTENDS_NFT_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends {

// True when the first character that is not white space is `{` or `[`:
// nft's text syntax never starts so.
bool LooksLikeNftJson(std::string_view text);

// The nft text of a JSON listing, and the JSON path of each text line
// (paths[i] is line i+1's). Errors go to `diags` at `file`, line 1.
struct NftJsonText {
  std::string text;
  std::vector<std::string> paths;
};
[[nodiscard]] absl::StatusOr<NftJsonText> NftJsonToText(std::string_view json,
                                                        int file,
                                                        ir::Diagnostics& diags);

// Reads a JSON listing as a ruleset (see above).
[[nodiscard]] absl::StatusOr<ir::Ruleset> ParseNftJson(std::string_view json,
                                                       int file,
                                                       ir::Diagnostics& diags);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_NFT_JSON_H_
