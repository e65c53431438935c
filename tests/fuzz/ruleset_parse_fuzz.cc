// libFuzzer target: any text through every frontend (iptables-save, nft,
// ClassBench, and format detection), then, when it parses, through the
// compiler. Nothing may crash, hang or leak; errors must be located.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/internal.h"
#include "frontends/frontend.h"
#include "ir/diag.h"
#include "rulejit/rulejit.h"

namespace {

void ParseAs(std::string_view text, std::optional<rulejit::frontends::InputFormat> format) {
  rulejit::ir::Diagnostics diags;
  std::optional<rulejit::ir::Ruleset> rs =
      rulejit::frontends::ParseRuleset(text, "fuzz", format, diags);
  // A failure always says where.
  if (!rs && diags.all().empty()) std::abort();
  if (!rs) return;
  rulejit::CompileOptions options;
  options.classify_min_rules = 1;
  (void)rulejit::Program::Compile(rulejit::RulesetOf(*std::move(rs)), options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using rulejit::frontends::InputFormat;
  ParseAs(text, std::nullopt);
  ParseAs(text, InputFormat::kIptables);
  ParseAs(text, InputFormat::kNft);
  ParseAs(text, InputFormat::kClassbench);
  return 0;
}
