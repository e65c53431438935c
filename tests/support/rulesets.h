// Rulesets from nft text for tests: parsed, with a test failure naming the
// diagnostics when the text does not parse.
#ifndef RULEJIT_TESTS_SUPPORT_RULESETS_H_
#define RULEJIT_TESTS_SUPPORT_RULESETS_H_

#include <string>

#include "ir/ir.h"

namespace rulejit::testing {

// The ruleset of nft `text` (file `name` in diagnostics); empty after a
// failed expectation when it does not parse.
ir::Ruleset NftRuleset(const std::string& text, const std::string& name = "t.nft");

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_RULESETS_H_
