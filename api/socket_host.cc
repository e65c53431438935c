// See socket_host.h.
#include "api/socket_host.h"

#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "ir/walk.h"

namespace rulejit {
namespace {

const ir::Node* FirstSocketLookup(const ir::Ruleset& ruleset) {
  return ir::FirstNode(ruleset, [](const ir::Expr& e) {
    return std::holds_alternative<ir::Socket>(e) || std::holds_alternative<ir::Tproxy>(e);
  });
}

}  // namespace

absl::Status CheckSocketHost(const ir::Ruleset& ruleset, const HostModel& host) {
  if (host.sockets_listed) return absl::OkStatus();
  const ir::Node* n = FirstSocketLookup(ruleset);
  if (n == nullptr) return absl::OkStatus();
  const std::string where = ruleset.Where(n->loc);
  return absl::InvalidArgumentError(absl::StrCat(
      where.empty() ? "" : where + ": ",
      std::holds_alternative<ir::Tproxy>(n->expr) ? "tproxy" : "socket",
      ": the host model lists no sockets, so it cannot say which socket the kernel finds "
      "(give a \"sockets\" list in the host JSON)"));
}

}  // namespace rulejit
