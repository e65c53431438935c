// Widening interface-name compares to IFNAMSIZ (ifname_cmp.h).
#include "ir/ifname_cmp.h"

#include <algorithm>
#include <variant>

namespace rulejit::ir {
namespace {

constexpr size_t kIfNameSize = 16;  // IFNAMSIZ

bool IsNameKey(MetaKey key) {
  return key == MetaKey::kIifName || key == MetaKey::kOifName || key == MetaKey::kBriIifName ||
         key == MetaKey::kBriOifName;
}

// The register the expression loads an interface name into, if it does.
std::optional<Reg> NameLoad(const Expr& expr) {
  const auto* load = std::get_if<MetaLoad>(&expr);
  if (load == nullptr || !IsNameKey(load->key)) return std::nullopt;
  return load->dreg;
}

int WidenRule(Rule& rule) {
  int widened = 0;
  for (size_t i = 1; i < rule.exprs.size(); ++i) {
    std::optional<Reg> reg = NameLoad(rule.exprs[i - 1].expr);
    auto* cmp = std::get_if<Cmp>(&rule.exprs[i].expr);
    if (!reg || cmp == nullptr || cmp->sreg != *reg) continue;
    if (cmp->op != CmpOp::kEq && cmp->op != CmpOp::kNeq) continue;
    if (cmp->data.size() >= kIfNameSize ||
        std::find(cmp->data.begin(), cmp->data.end(), 0) == cmp->data.end()) {
      continue;
    }
    cmp->data.resize(kIfNameSize, 0);
    ++widened;
  }
  return widened;
}

}  // namespace

int WidenIfnameCompares(Ruleset& ruleset) {
  int widened = 0;
  for (Table& table : ruleset.tables) {
    for (Chain& chain : table.chains) {
      for (Rule& rule : chain.rules) widened += WidenRule(rule);
    }
  }
  return widened;
}

}  // namespace rulejit::ir
