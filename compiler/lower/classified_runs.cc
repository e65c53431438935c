// classified runs: the long runs of liftable rules of every chain get a
// decision structure (compiler/classify), which answers "first matching
// rule of the run" in one lookup; the code then runs only that rule's
// action.
//
//   rule 0 .. rule 299   liftable (boxes)   ──▶ classified run [0, 300)
//   rule 300             not liftable       ──▶ linear
//
// A run is worth a classifier from LowerOptions::classify_min_rules rules
// on (the linear jit costs ~0.5-1 ns a rule, a lookup ~100-200 ns). Each
// rule's action starts where its lifted match ends (ir::MatchEnd):
// the classifier answered the expressions before it.
#include "compiler/classify/segments.h"
#include "compiler/lower/plan.h"
#include "ir/rule_shape.h"

namespace rulejit::lower {
namespace {

ClassifiedRun RunOf(const ir::Chain& chain, const classify::Segment& seg,
                    const classify::Classifier* classifier) {
  ClassifiedRun run{static_cast<uint32_t>(seg.begin), static_cast<uint32_t>(seg.end),
                    classifier, {}};
  for (size_t r = seg.begin; r < seg.end; ++r) {
    run.action_begin.push_back(static_cast<uint32_t>(ir::MatchEnd(chain.rules[r])));
  }
  return run;
}

absl::Status PlanChain(const ir::Table& table, const ir::Chain& chain,
                       const LowerOptions& options, Plan& plan, ChainPlan& chain_plan) {
  classify::ClassifierOptions classifier_options;
  classifier_options.lift = headerspace::BoxContextForChain(table, chain);
  for (const classify::Segment& seg : classify::SplitChain(chain, classifier_options.lift)) {
    if (!seg.liftable || seg.end - seg.begin < options.classify_min_rules) continue;
    absl::StatusOr<classify::Classifier> c =
        classify::Classifier::Build(chain, seg.begin, seg.end, classifier_options);
    if (!c.ok()) return c.status();
    if (c->stats().rules == 0) continue;  // only rules that never match (blanked)
    plan.classifiers.push_back(*std::move(c));
    chain_plan.classified.push_back(RunOf(chain, seg, &plan.classifiers.back()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PlanClassifiedRuns(const ir::Ruleset& ruleset, const LowerOptions& options,
                                Plan& plan) {
  if (!options.classify) return absl::OkStatus();
  absl::Status status;
  ForEachChain(ruleset, [&](int t, int c, const ir::Chain& chain) {
    if (!status.ok()) return;
    status = PlanChain(ruleset.tables[t], chain, options, plan,
                       plan.chains[plan.layout.ChainIndex(t, c)]);
  });
  return status;
}

}  // namespace rulejit::lower
