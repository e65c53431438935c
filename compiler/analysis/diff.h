// The exact semantic difference of two rulesets at one hook: the regions of
// header space where their verdicts differ, each with a witness point and
// the deciding rule on each side.
//
//   DiffResult d = DiffRulesets(old_rs, new_rs, {.hook = ir::Hook::kInput});
//   if (!d.old_inexact.empty() || !d.new_inexact.empty()) ...  // can't say
//   for (const DiffRegion& r : d.regions)
//     DescribeCube(r.cube, d.space), DescribePoint(r.witness, d.space) ...
//
// Both rulesets are flattened over the same Space; every pair of decisions
// with different verdicts whose cubes intersect is a region (regions are
// disjoint). Each side's decisions with the same deciding rule, and then
// the regions with the same deciding rules, are coalesced where they
// differ in one dimension only (MergeAdjacent): fewer, larger cubes to
// intersect and to report. Decisions are compared through a CubeIndex, so
// only overlapping pairs are ever looked at.
#ifndef RULEJIT_COMPILER_ANALYSIS_DIFF_H_
#define RULEJIT_COMPILER_ANALYSIS_DIFF_H_

#include <vector>

#include "compiler/analysis/flatten.h"
#include "compiler/analysis/space.h"

namespace rulejit::analysis {

struct Side {
  ir::VerdictCode verdict = ir::VerdictCode::kAccept;
  ir::RuleRef rule;
};

struct DiffRegion {
  Cube cube;
  Point witness{};
  Side old_side;
  Side new_side;
};

struct DiffResult {
  Space space;
  std::vector<DiffRegion> regions;
  std::vector<InexactRule> old_inexact;
  std::vector<InexactRule> new_inexact;
  bool exact() const { return old_inexact.empty() && new_inexact.empty(); }
};

// `progress`, when set, is called now and then with the fraction done.
DiffResult DiffRulesets(const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                        const SpaceOptions& options,
                        const Progress& progress = {});

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_DIFF_H_
