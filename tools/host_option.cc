// See host_option.h.
#include "tools/host_option.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/walk.h"
#include "tools/load.h"

namespace rulejit::tools {

absl::StatusOr<std::shared_ptr<const HostModel>> LoadHostOption(
    const std::optional<std::string>& value) {
  if (!value) return std::shared_ptr<const HostModel>();
  absl::StatusOr<HostModel> host;
  if (*value == "local") {
    host = ReadLocalHost();
  } else {
    std::string error;
    std::optional<std::string> text = ReadFile(*value, error);
    if (!text) return absl::InvalidArgumentError(error);
    host = ParseHostJson(*text);
    if (!host.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(*value, ": ", host.status().message()));
    }
  }
  if (!host.ok()) return host.status();
  return std::make_shared<const HostModel>(*std::move(host));
}

bool ReadsSockets(const ir::Expr& e) {
  return std::holds_alternative<ir::Socket>(e) || std::holds_alternative<ir::Tproxy>(e);
}

const ir::Node* FirstHostRead(const ir::Ruleset& ruleset) {
  return ir::FirstNode(ruleset, [](const ir::Expr& e) {
    return std::holds_alternative<ir::Fib>(e) || ReadsSockets(e);
  });
}

absl::StatusOr<uint32_t> HostDeviceIndex(const HostModel& host, const std::string& name) {
  if (const HostInterface* dev = host.FindInterface(name)) return dev->index;
  std::vector<std::string> names;
  for (const HostInterface& i : host.interfaces) names.push_back(i.name);
  return absl::InvalidArgumentError(absl::StrCat("device '", name, "' is not on the host (it has ",
                                                 absl::StrJoin(names, ", "), ")"));
}

}  // namespace rulejit::tools
