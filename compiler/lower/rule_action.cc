// A classified rule's action (see rule_action.h).
#include "compiler/lower/rule_action.h"

#include <variant>

#include "ir/rule_shape.h"

namespace rulejit::lower {

size_t ActionBegin(const ir::Rule& rule) { return ir::MatchEnd(rule); }

std::optional<VerdictAction> VerdictOnlyAction(const ir::Rule& rule) {
  size_t at = ActionBegin(rule);
  if (at >= rule.exprs.size()) return std::nullopt;
  const bool counted = std::holds_alternative<ir::Counter>(rule.exprs[at].expr);
  if (counted) ++at;
  if (at + 1 != rule.exprs.size()) return std::nullopt;
  const auto* imm = std::get_if<ir::Immediate>(&rule.exprs[at].expr);
  if (imm == nullptr || imm->dreg != ir::kVerdictReg) return std::nullopt;
  return VerdictAction{imm->verdict.code, counted};
}

std::optional<ir::VerdictCode> BareVerdict(const ir::Rule& rule) {
  const std::optional<VerdictAction> action = VerdictOnlyAction(rule);
  if (!action || action->counted) return std::nullopt;
  return action->verdict;
}

}  // namespace rulejit::lower
