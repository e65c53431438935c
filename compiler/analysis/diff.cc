// Difference of two flattened rulesets (see diff.h).
#include "compiler/analysis/diff.h"

namespace rulejit::analysis {
namespace {

bool SameRef(const ir::RuleRef& a, const ir::RuleRef& b) {
  return a.table == b.table && a.chain == b.chain && a.rule == b.rule;
}

bool SameSides(const DiffRegion& a, const DiffRegion& b) {
  return a.old_side.verdict == b.old_side.verdict &&
         a.new_side.verdict == b.new_side.verdict &&
         SameRef(a.old_side.rule, b.old_side.rule) &&
         SameRef(a.new_side.rule, b.new_side.rule);
}

// The one dimension in which two cubes differ, or -1 (none or several).
int OnlyDifferingDim(const Cube& a, const Cube& b) {
  int found = -1;
  for (int d = 0; d < kDims; ++d) {
    if (a.get(static_cast<Dim>(d)) == b.get(static_cast<Dim>(d))) continue;
    if (found >= 0) return -1;
    found = d;
  }
  return found;
}

// Merges regions with the same sides that differ in one dimension (their
// union is then a cube). Repeats until nothing merges.
void MergeRegions(std::vector<DiffRegion>& regions) {
  bool merged = true;
  while (merged) {
    merged = false;
    for (size_t i = 0; i < regions.size() && !merged; ++i) {
      for (size_t j = i + 1; j < regions.size(); ++j) {
        if (!SameSides(regions[i], regions[j])) continue;
        int d = OnlyDifferingDim(regions[i].cube, regions[j].cube);
        if (d < 0) continue;
        Dim dim = static_cast<Dim>(d);
        regions[i].cube.set(dim) =
            regions[i].cube.get(dim).Union(regions[j].cube.get(dim));
        regions.erase(regions.begin() + j);
        merged = true;
        break;
      }
    }
  }
}

}  // namespace

DiffResult DiffRulesets(const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                        const SpaceOptions& options) {
  DiffResult result;
  result.space = BuildSpace({&old_rs, &new_rs}, options);
  Flattened a = FlattenHook(old_rs, options.hook, result.space);
  Flattened b = FlattenHook(new_rs, options.hook, result.space);
  result.old_inexact = std::move(a.inexact);
  result.new_inexact = std::move(b.inexact);
  if (!result.exact()) return result;
  for (const Decision& x : a.decisions) {
    for (const Decision& y : b.decisions) {
      if (x.verdict == y.verdict) continue;
      std::optional<Cube> both = Intersect(x.cube, y.cube);
      if (!both) continue;
      result.regions.push_back(
          {*both, {}, {x.verdict, x.rule}, {y.verdict, y.rule}});
    }
  }
  MergeRegions(result.regions);
  for (DiffRegion& r : result.regions) r.witness = PickPoint(r.cube);
  return result;
}

}  // namespace rulejit::analysis
