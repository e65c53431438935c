// What the compiled tiers cannot run (see capabilities.h).
#include "compiler/backend/common/capabilities.h"

#include <variant>

namespace rulejit::backend {
namespace {

// What the compiled tiers leave to the interpreter, by expression kind.
const char* InterpreterOnlyKind(const ir::Expr& e) {
  if (std::holds_alternative<ir::PayloadWrite>(e)) return "payload write";
  if (std::holds_alternative<ir::Queue>(e)) return "queue statement";
  if (std::holds_alternative<ir::Quota>(e)) return "quota statement";
  if (std::holds_alternative<ir::Nat>(e)) return "NAT statement";
  if (std::holds_alternative<ir::TcpMss>(e)) return "TCPMSS target";
  if (std::holds_alternative<ir::ChecksumFill>(e)) return "CHECKSUM target";
  if (std::holds_alternative<ir::Recent>(e)) return "recent match";
  if (std::holds_alternative<ir::Hashlimit>(e)) return "hashlimit match";
  if (const auto* t = std::get_if<ir::Tproxy>(&e); t != nullptr && t->else_drop) {
    return "TPROXY target";
  }
  if (std::holds_alternative<ir::FlowOffload>(e)) return "flow offload statement";
  if (std::holds_alternative<ir::Objref>(e)) return "named object reference";
  if (std::holds_alternative<ir::Numgen>(e)) return "numgen expression";
  if (std::holds_alternative<ir::ExthdrWrite>(e)) return "TCP option write";
  if (std::holds_alternative<ir::Rt>(e)) return "rt expression";
  if (std::holds_alternative<ir::Synproxy>(e)) return "synproxy statement";
  if (std::holds_alternative<ir::Dynset>(e)) return "dynamic set statement";
  return nullptr;
}

}  // namespace

const ir::Node* FirstInterpreterOnly(const ir::Ruleset& ruleset, std::string* what) {
  for (const ir::Table& t : ruleset.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        for (const ir::Node& n : r.exprs) {
          if (const char* kind = InterpreterOnlyKind(n.expr)) {
            if (what != nullptr) *what = kind;
            return &n;
          }
        }
      }
    }
  }
  return nullptr;
}

}  // namespace rulejit::backend
