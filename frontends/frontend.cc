// See frontend.h.
#include "frontends/frontend.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "frontends/classbench/classbench.h"
#include "frontends/iptables/ipset.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/json.h"
#include "frontends/nft/nft.h"
#include "ir/unmodelled.h"
#include "ir/verifier.h"

namespace rulejit::frontends {
namespace {

// The first line that is not blank and not a `#` comment, with its 1-based
// number; {"", 0} if there is none.
std::pair<absl::string_view, uint32_t> FirstMeaningfulLine(
    absl::string_view text) {
  uint32_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (stripped.empty() || stripped[0] == '#') continue;
    return {stripped, number};
  }
  return {"", 0};
}

// The line's first word: up to the first blank.
absl::string_view FirstWord(absl::string_view line) {
  size_t end = line.find_first_of(" \t");
  return end == absl::string_view::npos ? line : line.substr(0, end);
}

bool LooksLikeIptablesSave(absl::string_view line) {
  if (line[0] == '*' || line[0] == ':') return true;
  absl::string_view word = FirstWord(line);
  return word == "-A" || word == "-N" || word == "-P" || word == "-I";
}

bool LooksLikeNft(absl::string_view line) {
  absl::string_view word = FirstWord(line);
  for (absl::string_view keyword :
       {"table", "flush", "define", "add", "include", "create", "insert",
        "delete", "destroy", "redefine", "undefine"}) {
    if (word == keyword) return true;
  }
  return false;
}

absl::string_view AbslView(std::string_view text) {
  return {text.data(), text.size()};
}

// The directory part of `path` ("" for a bare name): where nft includes
// are looked up.
std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The frontend's result; a failure without a diagnostic (a frontend bug)
// still gets one, so a caller never fails silently.
std::optional<ir::Ruleset> Unwrap(absl::StatusOr<ir::Ruleset> parsed, int file,
                                  ir::Diagnostics& diags) {
  if (parsed.ok()) return *std::move(parsed);
  if (!diags.has_errors()) {
    diags.Error({file, 1, 1}, std::string(parsed.status().message()));
  }
  return std::nullopt;
}

std::optional<ir::Ruleset> ParseWith(InputFormat format, std::string_view text,
                                     const std::string& name, int file,
                                     ir::Diagnostics& diags, const Ipsets* ipsets) {
  switch (format) {
    case InputFormat::kIptables:
      return Unwrap(ParseIptablesSave(text, file, diags, IpVersion::kAuto,
                                      IptablesFlavor::kLegacy, ipsets),
                    file, diags);
    case InputFormat::kIptablesNft:
      return Unwrap(ParseIptablesSave(text, file, diags, IpVersion::kAuto,
                                      IptablesFlavor::kNft, ipsets),
                    file, diags);
    case InputFormat::kNft:
      // nft's JSON (`nft -j list ruleset`) is the nft format too.
      if (LooksLikeNftJson(text)) return Unwrap(ParseNftJson(text, file, diags), file, diags);
      return Unwrap(ParseNft(text, file, diags, DirectoryOf(name)), file, diags);
    case InputFormat::kClassbench:
      return Unwrap(ParseClassBench(text, file, diags), file, diags);
  }
  return std::nullopt;
}

}  // namespace

const char* FormatName(InputFormat format) {
  switch (format) {
    case InputFormat::kIptables:
      return "iptables";
    case InputFormat::kIptablesNft:
      return "iptables-nft";
    case InputFormat::kNft:
      return "nft";
    case InputFormat::kClassbench:
      return "classbench";
  }
  return "?";
}

std::optional<InputFormat> FormatFromName(std::string_view name) {
  for (InputFormat f : {InputFormat::kIptables, InputFormat::kIptablesNft,
                        InputFormat::kNft, InputFormat::kClassbench}) {
    if (name == FormatName(f)) return f;
  }
  return std::nullopt;
}

std::optional<InputFormat> DetectFormat(std::string_view text) {
  auto [line, number] = FirstMeaningfulLine(AbslView(text));
  // Nothing but blanks and comments: an empty ruleset (what iptables-save
  // prints on a host without tables; nft -f and iptables-restore load it).
  if (number == 0) return InputFormat::kNft;
  if (line[0] == '@') return InputFormat::kClassbench;
  if (LooksLikeNftJson(text)) return InputFormat::kNft;
  if (LooksLikeIptablesSave(line)) return InputFormat::kIptables;
  if (LooksLikeNft(line)) return InputFormat::kNft;
  return std::nullopt;
}

std::optional<ir::Ruleset> ParseRuleset(std::string_view text,
                                        const std::string& name,
                                        std::optional<InputFormat> forced,
                                        ir::Diagnostics& diags,
                                        InputFormat* format,
                                        const IpsetInput* ipset_input) {
  return ParseRulesetText(std::string(text), name, forced, diags, format, ipset_input);
}

std::optional<ir::Ruleset> ParseRulesetText(std::string owned_text, const std::string& name,
                                            std::optional<InputFormat> forced,
                                            ir::Diagnostics& diags,
                                            InputFormat* format,
                                            const IpsetInput* ipset_input) {
  int file = diags.AddFile(name, std::move(owned_text));
  std::string_view text = diags.text(file);
  Ipsets ipsets;
  if (ipset_input != nullptr) {
    const int ipset_file = diags.AddFile(ipset_input->name, ipset_input->text);
    if (!ParseIpsetSave(ipset_input->text, ipset_file, diags, &ipsets)) return std::nullopt;
  }
  std::optional<InputFormat> chosen = forced ? forced : DetectFormat(text);
  if (!chosen) {
    uint32_t line =
        std::max<uint32_t>(FirstMeaningfulLine(AbslView(text)).second, 1);
    diags.Error({file, line, 1}, "cannot tell the input format",
                "use --format iptables|iptables-nft|nft|classbench");
    return std::nullopt;
  }
  if (format) *format = *chosen;
  if (ipset_input != nullptr && *chosen != InputFormat::kIptables &&
      *chosen != InputFormat::kIptablesNft) {
    diags.Error({file, 1, 1}, "ipsets are given, but this is not an iptables dump",
                "ipset contents are for iptables' -m set; nft rulesets declare their own sets");
    return std::nullopt;
  }
  std::optional<ir::Ruleset> ruleset =
      ParseWith(*chosen, text, name, file, diags, ipset_input ? &ipsets : nullptr);
  if (!ruleset) return std::nullopt;
  // Ruleset::Where names files through `files`; fill it if the frontend
  // left it empty.
  if (ruleset->files.empty()) ruleset->files = diags.file_names();
  if (ir::Verify(*ruleset, diags)) ir::CheckModelled(*ruleset, diags);
  if (diags.has_errors()) return std::nullopt;
  return ruleset;
}

}  // namespace rulejit::frontends
