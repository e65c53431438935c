// Rule shape queries (see rule_shape.h).
#include "ir/rule_shape.h"

#include <variant>

namespace rulejit::ir {

bool IsMatchExpr(const Expr& e) {
  return std::holds_alternative<PayloadLoad>(e) || std::holds_alternative<MetaLoad>(e) ||
         std::holds_alternative<Bitwise>(e) || std::holds_alternative<Cmp>(e) ||
         std::holds_alternative<Range>(e) || std::holds_alternative<FusedCmp>(e);
}

size_t MatchEnd(const Rule& rule) {
  size_t i = 0;
  while (i < rule.exprs.size() && IsMatchExpr(rule.exprs[i].expr)) ++i;
  return i;
}


bool EndsChain(VerdictCode code) {
  switch (code) {
    case VerdictCode::kAccept:
    case VerdictCode::kDrop:
    case VerdictCode::kReturn:
    case VerdictCode::kGoto:
      return true;
    default:
      return false;
  }
}

bool EndsChain(const Rule& rule) {
  for (const Node& node : rule.exprs) {
    if (std::holds_alternative<Reject>(node.expr)) return true;
    if (const auto* imm = std::get_if<Immediate>(&node.expr)) {
      if (imm->dreg == kVerdictReg) return EndsChain(imm->verdict.code);
    }
  }
  return false;
}

bool HasVerdict(const Rule& rule) {
  for (const Node& node : rule.exprs) {
    if (std::holds_alternative<Reject>(node.expr)) return true;
    if (const auto* imm = std::get_if<Immediate>(&node.expr)) {
      if (imm->dreg == kVerdictReg) return true;
    }
  }
  return false;
}

// A whitelist, so that an expression kind added later (a payload write, a
// new statement) counts as changing state until someone says otherwise.
bool ChangesStateOrJumps(const Rule& rule) {
  for (const Node& node : rule.exprs) {
    const Expr& e = node.expr;
    if (const auto* imm = std::get_if<Immediate>(&e)) {
      if (imm->dreg == kVerdictReg && imm->verdict.code == VerdictCode::kJump) {
        return true;
      }
      continue;
    }
    if (const auto* lookup = std::get_if<Lookup>(&e)) {
      if (lookup->dreg && *lookup->dreg == kVerdictReg) return true;  // a vmap
      continue;
    }
    const bool reads_only =
        std::holds_alternative<PayloadLoad>(e) || std::holds_alternative<MetaLoad>(e) ||
        std::holds_alternative<CtLoad>(e) || std::holds_alternative<Bitwise>(e) ||
        std::holds_alternative<Byteorder>(e) || std::holds_alternative<Cmp>(e) ||
        std::holds_alternative<Range>(e) || std::holds_alternative<FusedCmp>(e) ||
        std::holds_alternative<Counter>(e) || std::holds_alternative<Log>(e) ||
        std::holds_alternative<Reject>(e);
    if (!reads_only) return true;
  }
  return false;
}

}  // namespace rulejit::ir
