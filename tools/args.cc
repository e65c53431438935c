// See args.h.
#include "tools/args.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace rulejit::tools {
namespace {

const FlagSpec* FindFlag(const ArgSpec& spec, absl::string_view name) {
  for (const FlagSpec& flag : spec.flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

}  // namespace

std::string Args::value_or(absl::string_view flag, std::string fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::move(fallback) : it->second;
}

std::optional<std::string> Args::value(absl::string_view flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<Args> ParseArgs(const ArgSpec& spec,
                               const std::vector<std::string>& argv) {
  Args args;
  bool flags_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    absl::string_view word = argv[i];
    if (flags_done || word.size() < 2 || word.substr(0, 2) != "--") {
      // "-x" is never a positional: short options do not exist, so it is
      // a typo; a lone "-" is kept as a (file name) positional.
      if (!flags_done && word.size() > 1 && word[0] == '-') {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option '", word, "'"));
      }
      args.positionals_.emplace_back(word);
      continue;
    }
    if (word == "--") {
      flags_done = true;
      continue;
    }
    absl::string_view name = word.substr(2);
    std::optional<std::string> inline_value;
    if (size_t eq = name.find('='); eq != absl::string_view::npos) {
      inline_value = std::string(name.substr(eq + 1));
      name = name.substr(0, eq);
    }
    const FlagSpec* flag = FindFlag(spec, name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '--", name, "'"));
    }
    if (args.values_.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '--", name, "' given twice"));
    }
    std::string value;
    if (flag->takes_value) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < argv.size()) {
        value = argv[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("option '--", name, "' needs a value"));
      }
    } else if (inline_value) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '--", name, "' takes no value"));
    }
    args.values_.emplace(std::string(name), std::move(value));
  }
  const size_t most = spec.positionals.size();
  size_t least = 0;
  while (least < most && !absl::StartsWith(spec.positionals[least], "[")) {
    ++least;
  }
  if (args.positionals_.size() < least) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing ", spec.positionals[args.positionals_.size()]));
  }
  if (args.positionals_.size() > most) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument '", args.positionals_[most], "'"));
  }
  return args;
}

}  // namespace rulejit::tools
