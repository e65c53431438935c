// Rule effects (see rule_effects.h).
#include "compiler/passes/rule_effects.h"

#include <variant>

namespace rulejit::passes {

bool EndsChain(const ir::Rule& rule) {
  for (const ir::Node& node : rule.exprs) {
    if (std::holds_alternative<ir::Reject>(node.expr)) return true;
    if (const auto* imm = std::get_if<ir::Immediate>(&node.expr)) {
      if (imm->dreg != ir::kVerdictReg) continue;
      switch (imm->verdict.code) {
        case ir::VerdictCode::kAccept:
        case ir::VerdictCode::kDrop:
        case ir::VerdictCode::kReturn:
        case ir::VerdictCode::kGoto:
          return true;
        default:
          return false;
      }
    }
  }
  return false;
}

// A whitelist, so that an expression kind added later (a payload write, a
// new statement) counts as changing state until someone says otherwise.
bool ChangesStateOrJumps(const ir::Rule& rule) {
  for (const ir::Node& node : rule.exprs) {
    const ir::Expr& e = node.expr;
    if (const auto* imm = std::get_if<ir::Immediate>(&e)) {
      if (imm->dreg == ir::kVerdictReg && imm->verdict.code == ir::VerdictCode::kJump) {
        return true;
      }
      continue;
    }
    if (const auto* lookup = std::get_if<ir::Lookup>(&e)) {
      if (lookup->dreg && *lookup->dreg == ir::kVerdictReg) return true;  // a vmap
      continue;
    }
    const bool reads_only =
        std::holds_alternative<ir::PayloadLoad>(e) || std::holds_alternative<ir::MetaLoad>(e) ||
        std::holds_alternative<ir::CtLoad>(e) || std::holds_alternative<ir::Bitwise>(e) ||
        std::holds_alternative<ir::Byteorder>(e) || std::holds_alternative<ir::Cmp>(e) ||
        std::holds_alternative<ir::Range>(e) || std::holds_alternative<ir::FusedCmp>(e) ||
        std::holds_alternative<ir::Counter>(e) || std::holds_alternative<ir::Log>(e) ||
        std::holds_alternative<ir::Reject>(e);
    if (!reads_only) return true;
  }
  return false;
}

}  // namespace rulejit::passes
