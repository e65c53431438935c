// A small argv parser for the subcommands of the `rulejit` command.
//
// Each subcommand declares the flags it knows (with or without a value) and
// how many positional arguments it takes; Parse rejects anything else, so a
// typo such as `--hok input` is a usage error instead of being ignored.
// Flags may come before, between or after positionals, as `--flag value` or
// `--flag=value`; `--` ends flag parsing.
#ifndef RULEJIT_TOOLS_ARGS_H_
#define RULEJIT_TOOLS_ARGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rulejit::tools {

struct FlagSpec {
  absl::string_view name;  // without the leading "--"
  bool takes_value = false;
};

struct ArgSpec {
  std::vector<FlagSpec> flags;
  // Names, for messages. Trailing names in brackets ("[FILE]") may be left
  // out (Args::positional_count says how many were given).
  std::vector<absl::string_view> positionals;
};

class Args {
 public:
  const std::string& positional(size_t i) const { return positionals_[i]; }
  size_t positional_count() const { return positionals_.size(); }
  bool has(absl::string_view flag) const { return values_.contains(flag); }
  // The flag's value, or `fallback` when the flag was not given.
  std::string value_or(absl::string_view flag, std::string fallback) const;
  std::optional<std::string> value(absl::string_view flag) const;

 private:
  friend absl::StatusOr<Args> ParseArgs(const ArgSpec& spec,
                                        const std::vector<std::string>& argv);
  std::vector<std::string> positionals_;
  absl::flat_hash_map<std::string, std::string> values_;  // switches map to ""
};

// Parses `argv` (the words after the subcommand name). Errors are
// InvalidArgument with a one-line message meant for the user.
absl::StatusOr<Args> ParseArgs(const ArgSpec& spec,
                               const std::vector<std::string>& argv);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_ARGS_H_
