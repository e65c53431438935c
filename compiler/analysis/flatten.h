// Flattening one hook of a ruleset into an ordered decision list: the
// header space cut into cubes, each with the final verdict and the rule
// that decided it, exactly as the reference interpreter would.
//
//   Flattened f = FlattenHook(ruleset, ir::Hook::kInput, space);
//   if (!f.inexact.empty()) ...   // rules reached that can't be lifted
//   for (const Decision& d : f.decisions) ...  // disjoint, cover the space
//
// Semantics (ir/interp.h): base chains of tables that see the packet's
// family (ip: IPv4, ip6: IPv6, inet: both) in priority order; accept goes on with the next base chain, drop (and
// reject) is final; jump pushes (at most 16 deep, then drop), goto
// replaces, return and the end of a chain pop, the base chain's policy
// decides what falls off its end; no base chain: accept. `meta mark set`
// and `ct mark set` (to a constant, or from a mark through a mask) are
// carried to the later rules and base chains that read the marks
// (mark_now.h): the walk's pieces each know what the marks are now as a
// function of the arriving packet's. Rules that can't
// be lifted are reported when some packet reaches them; they are then
// treated as never matching, so the decisions are only meaningful when
// `inexact` is empty.
#ifndef RULEJIT_COMPILER_ANALYSIS_FLATTEN_H_
#define RULEJIT_COMPILER_ANALYSIS_FLATTEN_H_

#include <functional>
#include <string>
#include <vector>

#include "compiler/analysis/mark_now.h"
#include "compiler/analysis/space.h"
#include "ir/interp.h"
#include "ir/ir.h"

namespace rulejit::analysis {

struct Decision {
  Cube cube;
  ir::VerdictCode verdict = ir::VerdictCode::kAccept;  // accept or drop
  ir::RuleRef rule;  // as ir::EvalResult::decided_by
  // The marks as the cube's packets leave the chain (mark_now.h): an
  // accepted packet carries them to the hook's next base chain.
  Now now;
};

struct InexactRule {
  ir::RuleRef rule;  // rule == -1: the chain itself (e.g. a netdev hook)
  std::string reason;
};

// What the walk saw at one rule, for the shadowed-rule analysis (lint.h):
// `matched` and `covered_by` are the shadowed-rule prover's answers for
// the walks of the rule's chain (space.h: ShadowProver).
struct RuleReach {
  ir::RuleRef rule;
  // Some packet reached the rule on a path with only exact rules before it
  // (`certain`), or after an inexact one, whose effect is unknown.
  bool reached_certain = false;
  bool reached_uncertain = false;
  bool matched = false;  // some packet that reached it matches it
  // Earlier rules of the same chain whose decided packets overlap the
  // rule's match: what shadows it when nothing reaching it matches.
  std::vector<ir::RuleRef> covered_by;
  // A walk of its chain ended before the rule because earlier rules
  // (`covered_by` then lists them) had decided every packet.
  bool passed_over = false;
};

// Appends `rule` to `rules` unless it is there already.
void AddRuleOnce(std::vector<ir::RuleRef>& rules, const ir::RuleRef& rule);

struct Flattened {
  std::vector<Decision> decisions;
  std::vector<InexactRule> inexact;
  // Exact rules some packet reached, and rules a walk of their chain never
  // got to (passed_over).
  std::vector<RuleReach> reach;
};

// Called now and then with the fraction of the work done (0..1).
using Progress = std::function<void(double)>;

// `progress`: called with the fraction of the top-level rules walked.
// `record_reach`: fill Flattened::reach (lint needs it, diff doesn't).
Flattened FlattenHook(const ir::Ruleset& ruleset, ir::Hook hook,
                      const Space& space, const Progress& progress = {},
                      bool record_reach = true);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_FLATTEN_H_
