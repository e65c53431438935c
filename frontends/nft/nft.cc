// Public entry points of the nft frontend.
#include "frontends/nft/nft.h"

#include "absl/strings/str_cat.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends {
namespace {

absl::Status Failed(ir::Diagnostics& diags) {
  absl::Status s = diags.ToStatus();
  if (s.ok()) return absl::InvalidArgumentError("nft: parse failed");
  return s;
}

}  // namespace

absl::StatusOr<ir::Ruleset> ParseNft(std::string_view text, int file,
                                     ir::Diagnostics& diags,
                                     std::string_view base_dir) {
  ir::Ruleset rs;
  rs.files = diags.file_names();
  nft::Parser parser(diags, file, text, std::string(base_dir), 0);
  if (!parser.ParseFile(rs) || diags.has_errors()) return Failed(diags);
  rs.files = diags.file_names();
  uint64_t handle = 1;
  for (ir::Table& t : rs.tables) {
    for (ir::Chain& c : t.chains) {
      for (ir::Rule& r : c.rules) r.handle = handle++;
    }
  }
  return rs;
}

absl::Status ParseNftRule(ir::Table& table, std::string_view chain,
                          std::string_view rule_text, int file,
                          ir::Diagnostics& diags) {
  nft::Parser parser(diags, file, rule_text, "", 0);
  if (!parser.ParseRuleOnly(table, chain) || diags.has_errors()) return Failed(diags);
  return absl::OkStatus();
}

absl::Status ParseNftSetDecl(ir::Table& table, std::string_view name,
                             std::string_view decl, int file,
                             ir::Diagnostics& diags) {
  nft::Parser parser(diags, file, decl, "", 0);
  if (!parser.ParseSetDeclOnly(table, name) || diags.has_errors()) return Failed(diags);
  return absl::OkStatus();
}

absl::Status ParseNftSetElements(ir::Table& table, std::string_view name,
                                 std::string_view elements, int file,
                                 ir::Diagnostics& diags) {
  nft::Parser parser(diags, file, elements, "", 0);
  if (!parser.ParseElementsOnly(table, name) || diags.has_errors()) return Failed(diags);
  return absl::OkStatus();
}

}  // namespace rulejit::frontends
