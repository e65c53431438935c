// Inside api/ only: ParseRuleset with its diagnostics kept as data (file,
// line, column, message, hint) rather than formatted into a Status, for
// the C API's structured rulejit_error. The public ParseRuleset is this
// plus Diagnostics::Format.
#ifndef RULEJIT_API_PARSE_DIAGNOSED_H_
#define RULEJIT_API_PARSE_DIAGNOSED_H_

#include <optional>
#include <string>
#include <string_view>

#include "ir/diag.h"
#include "rulejit/rulejit.h"

namespace rulejit {

// The parsed ruleset, or nullopt with the errors in `diags`.
std::optional<Ruleset> ParseRulesetDiagnosed(std::string_view text, const std::string& name,
                                             const ParseOptions& options,
                                             ir::Diagnostics& diags);

}  // namespace rulejit

#endif  // RULEJIT_API_PARSE_DIAGNOSED_H_
