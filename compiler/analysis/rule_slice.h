// One rule (or a group of rules from one source line) compared with another
// in isolation: what the two match, and what they do when they match.
//
//   RuleSliceResult r = CompareRuleSlices(old_rs, old_refs, new_rs, new_refs);
//   if (!r.match_regions.empty()) ...   // they match different packets
//   if (r.verdict_differs) ...          // same packets, another verdict
//
// A slice is a ruleset of its own: the rules' table (family, name, sets,
// objects) with one base chain, at the hook of the rules' chain (forward for
// a user chain), policy accept, holding each rule's matches followed by
// `drop`. The matches are a rule's expressions up to its first statement
// (counter, log, nat, mark set, reject, a verdict, ...). DiffRulesets on the
// two slices gives the packets one group matches and the other does not,
// exactly, with a witness each. Stateful matches (limit, quota, hashlimit,
// recent) are left out of the slices when each rule has them after all its
// stateless matches and they are the same expressions on both sides: then
// they see the same packets and decide alike. The actions (the statements, counters left
// out, and the verdict) are compared structurally: a different verdict is
// a difference with a witness (a packet both match); other statements that
// differ in form only are reported as not proven, never as a difference.
// This is what the iptables-restore-translate audit (tests/kernel/txlate_audit.cc)
// runs on every rule of a dump against the tool's translation of it.
#ifndef RULEJIT_COMPILER_ANALYSIS_RULE_SLICE_H_
#define RULEJIT_COMPILER_ANALYSIS_RULE_SLICE_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/analysis/diff.h"

namespace rulejit::analysis {

struct RuleSliceResult {
  ir::Hook hook = ir::Hook::kForward;
  Space space;
  // Where exactly one side matches: the side that matches has verdict drop.
  std::vector<DiffRegion> match_regions;
  // Either side, or the search for a packet both match when the verdicts
  // differ (then nothing else is said).
  std::vector<InexactRule> inexact;
  bool verdict_differs = false;
  Point verdict_witness{};  // a packet both match, when verdict_differs
  std::string old_verdict, new_verdict;  // "accept", "jump CHAIN", "none", ...
  bool actions_differ_in_form = false;  // statements other than the verdict
  // A match after a statement in either rule (`meta mark set 1 meta mark
  // 1`): the slices, matches first, may not mean the rules.
  bool interleaved = false;
  // Proved the same: exact, same packets, same verdict, same statements.
  bool same() const {
    return inexact.empty() && match_regions.empty() && !verdict_differs &&
           !actions_differ_in_form && !interleaved;
  }
};

// The hook a rule of `chain` is compared at: its own for a base chain,
// forward for a user chain.
ir::Hook SliceHook(const ir::Chain& chain);

// The slice of rules `refs` (all of one table and chain) of `rs`.
ir::Ruleset SliceMatch(const ir::Ruleset& rs, const std::vector<ir::RuleRef>& refs,
                       ir::Hook hook);

// `old_refs` and `new_refs` must be non-empty; the hook is old's
// (SliceHook), or `hook` when given.
RuleSliceResult CompareRuleSlices(const ir::Ruleset& old_rs,
                                  const std::vector<ir::RuleRef>& old_refs,
                                  const ir::Ruleset& new_rs,
                                  const std::vector<ir::RuleRef>& new_refs,
                                  std::optional<ir::Hook> hook = std::nullopt);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_RULE_SLICE_H_
