// direct verdicts: a hook whose one base chain is a single classified run
// of accepts and drops (a large flat ACL) is answered from a table.
//
//   hook forward: chain FORWARD = classified run [0, n), every rule
//   `... [counter] accept|drop`  ──▶ verdict[rule], counted[rule], policy
//
// The compiled chain would only ask the classifier, count and return the
// rule's verdict (or the policy), so the burst path does exactly that
// without entering chain code. A rule emptied by a pass is never the
// classifier's answer; its slot holds a placeholder.
#include "compiler/lower/plan.h"
#include "compiler/lower/rule_action.h"
#include "ir/hook_order.h"

namespace rulejit::lower {
namespace {

// The table for `ref`'s rules, when every rule's action is a verdict.
std::optional<DirectVerdicts> VerdictsOf(const ir::Chain& chain) {
  DirectVerdicts direct;
  for (const ir::Rule& rule : chain.rules) {
    if (rule.exprs.empty()) {
      direct.verdicts.push_back(ir::VerdictCode::kAccept);
      direct.counted.push_back(false);
      continue;
    }
    const std::optional<VerdictAction> action = VerdictOnlyAction(rule);
    if (!action ||
        (action->verdict != ir::VerdictCode::kAccept && action->verdict != ir::VerdictCode::kDrop)) {
      return std::nullopt;
    }
    direct.verdicts.push_back(action->verdict);
    direct.counted.push_back(action->counted);
  }
  return direct;
}

std::optional<DirectVerdicts> ForHook(const ir::Ruleset& ruleset, const Plan& plan,
                                      const std::vector<ir::RuleRef>& chains) {
  if (chains.size() != 1) return std::nullopt;
  const ir::RuleRef ref = chains.front();
  const ir::Chain& chain = ruleset.tables[ref.table].chains[ref.chain];
  const std::vector<ClassifiedRun>& runs =
      plan.chains[plan.layout.ChainIndex(ref.table, ref.chain)].classified;
  if (runs.size() != 1 || runs[0].begin != 0 || runs[0].end != chain.rules.size()) {
    return std::nullopt;
  }
  std::optional<DirectVerdicts> direct = VerdictsOf(chain);
  if (!direct) return std::nullopt;
  direct->chain = ref;
  direct->classifier = runs[0].classifier;
  direct->rule_base = plan.layout.RuleId(ref.table, ref.chain, 0);
  direct->policy_id = plan.layout.PolicyId(ref.table, ref.chain);
  direct->policy = chain.base->policy == ir::VerdictCode::kDrop ? ir::VerdictCode::kDrop
                                                                 : ir::VerdictCode::kAccept;
  return direct;
}

}  // namespace

void PlanDirectVerdicts(const ir::Ruleset& ruleset, Plan& plan) {
  plan.direct.clear();
  for (int h = 0; h < kHookCount; ++h) {
    plan.direct.push_back(ForHook(ruleset, plan, ir::BaseChainsAt(ruleset, static_cast<ir::Hook>(h))));
  }
}

}  // namespace rulejit::lower
