// One entry point for every frontend: tell the input format from the text,
// parse it with the right frontend, verify the result.
//
//   ir::Diagnostics diags;
//   std::optional<ir::Ruleset> rs =
//       frontends::ParseRuleset(text, "rules.nft", std::nullopt, diags);
//   if (!rs) std::cerr << diags.Format();
//
// Content detection looks at the first line that is neither blank nor a
// `#` comment:
//   `*filter` `*raw` ... `:CHAIN` `-A` `-N` `-P` `-I`   -> iptables-save
//   `table` `flush` `define` `add` `include` ...          -> nft
//   `@a.b.c.d/n ...`                                      -> ClassBench
#ifndef RULEJIT_FRONTENDS_FRONTEND_H_
#define RULEJIT_FRONTENDS_FRONTEND_H_

#include <optional>
#include <string>
#include <string_view>

#include "ir/diag.h"
#include "ir/ir.h"
#include "rulejit/types.h"

namespace rulejit::frontends {

// kIptables: an iptables-save dump as iptables-legacy-restore loads it;
// kIptablesNft: as iptables-nft-restore loads it (they differ on non-first
// fragments, see frontends::IptablesFlavor). Detection picks kIptables.
// The public rulejit::InputFormat (rulejit/types.h).
using InputFormat = rulejit::InputFormat;

const char* FormatName(InputFormat format);
// "iptables" | "iptables-nft" | "nft" | "classbench"; nullopt otherwise.
std::optional<InputFormat> FormatFromName(std::string_view name);
// The format the text looks like, or nullopt when it looks like none (text
// of blanks and comments alone is an empty nft ruleset).
std::optional<InputFormat> DetectFormat(std::string_view text);

// The ipsets an iptables dump's `-m set` names: `ipset save` output
// (frontends/iptables/ipset.h) and its name in diagnostics.
struct IpsetInput {
  std::string name;
  std::string text;
};

// Parses `text` (named `name` in diagnostics; nft includes are looked up
// next to it) as `forced`, or as the detected format, and verifies it.
// Every problem goes to `diags` as a located diagnostic; on any error the
// result is nullopt, so nothing half-parsed escapes. `format`, when given,
// receives the format used.
std::optional<ir::Ruleset> ParseRuleset(std::string_view text,
                                        const std::string& name,
                                        std::optional<InputFormat> forced,
                                        ir::Diagnostics& diags,
                                        InputFormat* format = nullptr,
                                        const IpsetInput* ipsets = nullptr);
// The same, taking the text rather than copying it into `diags` (a
// ruleset file of a million set elements is 20 MB: one copy, not two).
std::optional<ir::Ruleset> ParseRulesetText(std::string text, const std::string& name,
                                            std::optional<InputFormat> forced,
                                            ir::Diagnostics& diags,
                                            InputFormat* format = nullptr,
                                            const IpsetInput* ipsets = nullptr);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_FRONTEND_H_
