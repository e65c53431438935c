// One rule decompiled to nft statements (emit/nft_rule.cc), and what the
// rules of a table tell about their named sets' types (the set
// declarations, printed before the chains, need them).
#ifndef RULEJIT_EMIT_NFT_RULE_H_
#define RULEJIT_EMIT_NFT_RULE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "emit/nft_value.h"
#include "ir/ir.h"

namespace rulejit::emit {

// A named set's key fields and map data as its users read them.
struct SetShape {
  std::vector<Value> keys;          // one per concatenated field
  std::optional<Value> data;        // maps with data values
};
using SetShapes = std::map<std::string, SetShape>;

// A rule decompiled: its nft text and the same statements as libnftables
// JSON (the "expr" array), or why they have no JSON form (json_gap).
struct RuleText {
  std::string text;
  Json expr;
  std::string json_gap;
};

// The rule's statements as one line of nft (no indentation), or an error
// saying why it has no exact nft form. Records the shapes of the named
// sets it uses in `shapes`.
absl::StatusOr<RuleText> PrintRule(const ir::Table& table, const ir::Rule& rule,
                                   SetShapes& shapes);

// The elements of `set` as "a, b-c, d . e : f", keys and data read with
// `shape` (empty when the set has none). With `json`, also their JSON
// (an array; null when some element has none).
absl::StatusOr<std::string> PrintElements(const ir::Set& set, const SetShape& shape,
                                          Json* json = nullptr);
// A verdict as libnftables JSON ({"accept": null}, {"jump": {"target": N}}).
Json VerdictJson(const ir::Verdict& v);
// The name nft gets for `name` (Ident without quotes).
std::string JsonName(const std::string& name);
// A verdict as nft writes it ("accept", "jump NAME").
std::string VerdictText(const ir::Verdict& v);
// NAME, or "NAME" when it is not an nft identifier.
std::string Ident(const std::string& name);

}  // namespace rulejit::emit

#endif  // RULEJIT_EMIT_NFT_RULE_H_
