// BuildPlan: takes the plan's decisions in order (see plan.h).
//
//   layout ─ classified runs ─ inline-chains ─ merge-set-runs ─ share-loads
//     ─ direct verdicts ──▶ Plan
//
// Classified runs come first: set runs keep out of them, and the direct
// verdicts read them. The three named decisions can be turned off and
// dumped like passes (--no-pass NAME, --dump-after NAME).
#include <algorithm>

#include "compiler/lower/plan.h"

namespace rulejit::lower {
namespace {

struct Decision {
  DecisionInfo info;
  void (*take)(const ir::Ruleset& ruleset, Plan& plan);
};

const std::vector<Decision>& Decisions() {
  static const std::vector<Decision> kDecisions = {
      {{"inline-chains", "compile small regular chains into the rules that jump to them"},
       &PlanInlineChains},
      {{"merge-set-runs",
        "runs of rules alike but for one equality's constant become one lookup"},
       &PlanSetRuns},
      {{"share-loads", "load each header field several rules read once per packet (asmjit)"},
       &PlanSharedLoads},
  };
  return kDecisions;
}

bool Disabled(const LowerOptions& options, const char* name) {
  const auto& off = options.disabled;
  return std::find(off.begin(), off.end(), name) != off.end();
}

}  // namespace

const std::vector<DecisionInfo>& AllDecisions() {
  static const std::vector<DecisionInfo> kInfos = [] {
    std::vector<DecisionInfo> infos;
    for (const Decision& d : Decisions()) infos.push_back(d.info);
    return infos;
  }();
  return kInfos;
}

bool IsDecisionName(const std::string& name) {
  const auto& all = AllDecisions();
  return std::any_of(all.begin(), all.end(),
                     [&](const DecisionInfo& d) { return name == d.name; });
}

absl::StatusOr<Plan> BuildPlan(const ir::Ruleset& ruleset, const LowerOptions& options) {
  Plan plan(ruleset);
  if (absl::Status s = PlanClassifiedRuns(ruleset, options, plan); !s.ok()) return s;
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    if (plan.chains[c].classified.empty()) continue;
    plan.first_classified_rule_base = plan.layout.rule_base[c];
    break;
  }
  for (const Decision& decision : Decisions()) {
    if (Disabled(options, decision.info.name)) continue;
    const bool dump = options.dump && options.dump_after == decision.info.name;
    const std::string before = dump ? PrintPlan(plan, ruleset) : "";
    decision.take(ruleset, plan);
    if (dump) options.dump(before, PrintPlan(plan, ruleset));
  }
  PlanDirectVerdicts(ruleset, plan);
  return plan;
}

size_t Plan::ClassifiedRules() const {
  size_t rules = 0;
  for (const ChainPlan& chain : chains) {
    for (const ClassifiedRun& run : chain.classified) rules += run.end - run.begin;
  }
  return rules;
}

size_t Plan::ClassifierBytes() const {
  size_t bytes = 0;
  for (const classify::Classifier& c : classifiers) bytes += c.memory_bytes();
  return bytes;
}

}  // namespace rulejit::lower
