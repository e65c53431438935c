// Lifting rules into header space: each rule becomes one cube (the packets
// it matches) and the verdict it gives them, or the reason it can't be
// reasoned about exactly.
//
//   Space space = BuildSpace({&old_rs, &new_rs}, {.hook = ir::Hook::kInput});
//   Lifter lifter(ruleset, space);
//   LiftedRule r = lifter.Lift(table_index, rule);
//   if (!r.exact) report(r.reason);
//
// How: registers are tracked symbolically within a rule (which dimension a
// register holds, through which loads, masks, byte-order changes). Each
// consumer (cmp, range, set lookup, fused compare) is then turned into an
// interval set of its dimension by running the kernel's own expression
// code (ir/expr_eval.h) on probe packets built from dimension values:
//   - when the value reaches the compare monotonically (a load of the
//     field's leading bytes, masks of leading ones), a binary search finds
//     the interval ends exactly;
//   - otherwise, for dimensions of at most 2^16 values, every value is
//     probed;
//   - interface names are compared only for (in)equality and exact-key
//     lookups, over a domain that holds one value per class of names those
//     comparisons can tell apart (see BuildSpace).
// Anything else (other header bytes, lengths, limits, meta mark set, maps,
// concatenations, registers carried over from an earlier rule) is not exact.
#ifndef RULEJIT_COMPILER_ANALYSIS_LIFT_H_
#define RULEJIT_COMPILER_ANALYSIS_LIFT_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/analysis/header_space.h"
#include "ir/ir.h"

namespace rulejit::analysis {

struct SpaceOptions {
  ir::Hook hook = ir::Hook::kInput;
  std::optional<std::string> iif;  // fixes the input device name
  std::optional<std::string> oif;
};

// The domains for comparing `rulesets` at a hook: interface-name classes
// from every name the rulesets compare against.
Space BuildSpace(const std::vector<const ir::Ruleset*>& rulesets,
                 const SpaceOptions& options);

struct LiftedRule {
  bool exact = true;
  std::string reason;  // why not, when !exact
  std::optional<Cube> match;  // nullopt: the rule never matches
  // The rule's verdict: kContinue when it has none (e.g. a counter only).
  ir::VerdictCode verdict = ir::VerdictCode::kContinue;
  std::string target;  // jump/goto
};

class Lifter {
 public:
  // `ruleset` and `space` must outlive the lifter.
  Lifter(const ir::Ruleset& ruleset, const Space& space, ir::Hook hook);
  LiftedRule Lift(int table, const ir::Rule& rule) const;

 private:
  const ir::Ruleset& ruleset_;
  const Space& space_;
  ir::Hook hook_;
};

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_LIFT_H_
