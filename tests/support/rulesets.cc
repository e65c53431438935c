// Rulesets from nft text for tests (see rulesets.h).
#include "tests/support/rulesets.h"

#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"

namespace rulejit::testing {

ir::Ruleset NftRuleset(const std::string& text, const std::string& name) {
  ir::Diagnostics diags;
  int file = diags.AddFile(name, text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags);
  EXPECT_TRUE(rs.ok()) << diags.Format() << "\n" << text;
  return rs.ok() ? *std::move(rs) : ir::Ruleset{};
}

}  // namespace rulejit::testing
