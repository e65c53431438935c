// See socket_host.h.
#include "api/socket_host.h"

#include <string>
#include <variant>

#include "absl/strings/str_cat.h"

namespace rulejit {
namespace {

const ir::Node* FirstSocketLookup(const ir::Ruleset& ruleset) {
  for (const ir::Table& t : ruleset.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        for (const ir::Node& n : r.exprs) {
          if (std::holds_alternative<ir::Socket>(n.expr) ||
              std::holds_alternative<ir::Tproxy>(n.expr)) {
            return &n;
          }
        }
      }
    }
  }
  return nullptr;
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
