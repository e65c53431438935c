// VerifyPlan: what the backends assume of a plan, checked (see plan.h).
// A plan BuildPlan made always passes; the check guards the decisions
// against each other (a set run inside a classified run would be compiled
// twice) and hand-made plans in tests.
#include "absl/strings/str_cat.h"
#include "compiler/lower/plan.h"
#include "compiler/lower/rule_action.h"

namespace rulejit::lower {
namespace {

absl::Status Broken(uint32_t chain_index, const std::string& what) {
  return absl::InternalError(absl::StrCat("plan: chain #", chain_index, ": ", what));
}

// Runs sorted, disjoint and within the chain's rules.
template <typename Run>
bool InOrder(const std::vector<Run>& runs, size_t rules) {
  uint32_t next = 0;
  for (const Run& run : runs) {
    if (run.begin < next || run.begin >= run.end || run.end > rules) return false;
    next = run.end;
  }
  return true;
}

absl::Status VerifyClassified(const ChainPlan& chain_plan, const ir::Chain& chain,
                              uint32_t index) {
  if (!InOrder(chain_plan.classified, chain.rules.size())) {
    return Broken(index, "classified runs out of order or out of the chain");
  }
  for (const ClassifiedRun& run : chain_plan.classified) {
    if (run.classifier == nullptr) return Broken(index, "classified run without a classifier");
    if (run.action_begin.size() != run.end - run.begin) {
      return Broken(index, "classified run without an action start per rule");
    }
    for (uint32_t r = run.begin; r < run.end; ++r) {
      if (run.action_begin[r - run.begin] != ActionBegin(chain.rules[r])) {
        return Broken(index, absl::StrCat("rule ", r, ": action start is not where its match ends"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status VerifySetRuns(const ChainPlan& chain_plan, const ir::Chain& chain, uint32_t index) {
  if (!InOrder(chain_plan.set_runs, chain.rules.size())) {
    return Broken(index, "set runs out of order or out of the chain");
  }
  for (const SetRun& run : chain_plan.set_runs) {
    for (const ClassifiedRun& c : chain_plan.classified) {
      if (c.begin < run.end && run.begin < c.end) {
        return Broken(index, "set run inside a classified run");
      }
    }
    for (uint32_t r = run.begin; r < run.end; ++r) {
      if (run.node >= chain.rules[r].exprs.size()) {
        return Broken(index, absl::StrCat("rule ", r, ": set run expression out of the rule"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyChain(const Plan& plan, const ir::Ruleset& ruleset, int t, int c) {
  const ir::Chain& chain = ruleset.tables[t].chains[c];
  const uint32_t index = plan.layout.ChainIndex(t, c);
  const ChainPlan& chain_plan = plan.chains[index];
  if (chain_plan.inline_at_jumps && chain.base) return Broken(index, "a base chain inlined");
  if (absl::Status s = VerifyClassified(chain_plan, chain, index); !s.ok()) return s;
  return VerifySetRuns(chain_plan, chain, index);
}

absl::Status VerifyDirect(const Plan& plan, const ir::Ruleset& ruleset) {
  for (const std::optional<DirectVerdicts>& direct : plan.direct) {
    if (!direct) continue;
    const ir::RuleRef ref = direct->chain;
    const uint32_t index = plan.layout.ChainIndex(ref.table, ref.chain);
    const std::vector<ClassifiedRun>& runs = plan.chains[index].classified;
    const size_t rules = ruleset.tables[ref.table].chains[ref.chain].rules.size();
    if (runs.size() != 1 || runs[0].begin != 0 || runs[0].end != rules ||
        runs[0].classifier != direct->classifier || direct->verdicts.size() != rules ||
        direct->counted.size() != rules) {
      return Broken(index, "direct verdicts over a chain that is not one classified run");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyPlan(const Plan& plan, const ir::Ruleset& ruleset) {
  if (plan.chains.size() != plan.layout.chain_count) {
    return absl::InternalError("plan: not one chain plan per chain");
  }
  absl::Status status;
  ForEachChain(ruleset, [&](int t, int c, const ir::Chain&) {
    if (status.ok()) status = VerifyChain(plan, ruleset, t, c);
  });
  if (!status.ok()) return status;
  if (plan.shared_loads.size() > kMaxSharedLoads) {
    return absl::InternalError("plan: more shared loads than the backend keeps");
  }
  for (const SharedLoad& load : plan.shared_loads) {
    if (load.len != 1 && load.len != 2 && load.len != 4) {
      return absl::InternalError("plan: a shared load of other than 1, 2 or 4 bytes");
    }
  }
  if (plan.direct.size() != static_cast<size_t>(kHookCount)) {
    return absl::InternalError("plan: direct verdicts not per hook");
  }
  return VerifyDirect(plan, ruleset);
}

}  // namespace rulejit::lower
