// Difference of two flattened rulesets (see diff.h).
#include "compiler/analysis/diff.h"

#include <map>
#include <tuple>

#include "compiler/analysis/cube_index.h"

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

// Above this many regions with the same sides, they are left unmerged
// (merging is quadratic).
constexpr size_t kMergeMax = 2000;

// Merges regions with the same sides that differ in one dimension (their
// union is then a cube). Repeats until nothing merges.
void MergeGroup(std::vector<DiffRegion>& regions) {
  if (regions.size() > kMergeMax) return;
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

using SidesKey = std::tuple<int, int, int, int, int, int, int, int>;

SidesKey KeyOf(const DiffRegion& r) {
  return {static_cast<int>(r.old_side.verdict), r.old_side.rule.table,
          r.old_side.rule.chain, r.old_side.rule.rule,
          static_cast<int>(r.new_side.verdict), r.new_side.rule.table,
          r.new_side.rule.chain, r.new_side.rule.rule};
}

// MergeGroup over each group of regions with the same sides; keeps the
// order of first appearance.
void MergeRegions(std::vector<DiffRegion>& regions) {
  std::map<SidesKey, size_t> group_of;
  std::vector<std::vector<DiffRegion>> groups;
  for (DiffRegion& r : regions) {
    auto [it, fresh] = group_of.emplace(KeyOf(r), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(std::move(r));
  }
  regions.clear();
  for (auto& g : groups) {
    MergeGroup(g);
    for (DiffRegion& r : g) regions.push_back(std::move(r));
  }
}

}  // namespace

DiffResult DiffRulesets(const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                        const SpaceOptions& options, const Progress& progress) {
  DiffResult result;
  result.space = BuildSpace({&old_rs, &new_rs}, options);
  auto report = [&progress](int phase, double fraction) {
    if (progress) progress((phase + fraction) / 3);
  };
  Flattened a = FlattenHook(old_rs, options.hook, result.space,
                            [&](double f) { report(0, f); }, false);
  Flattened b = FlattenHook(new_rs, options.hook, result.space,
                            [&](double f) { report(1, f); }, false);
  result.old_inexact = std::move(a.inexact);
  result.new_inexact = std::move(b.inexact);
  if (!result.exact()) return result;
  // NEW's drop and accept decisions, indexed; each OLD decision meets the
  // ones of the other verdict.
  CubeIndex accepts, drops;
  std::vector<Side> by_id_accept, by_id_drop;
  for (Decision& y : b.decisions) {
    bool drop = y.verdict == ir::VerdictCode::kDrop;
    int id = (drop ? drops : accepts).Add(std::move(y.cube));
    auto& by_id = drop ? by_id_drop : by_id_accept;
    if (by_id.size() <= static_cast<size_t>(id)) by_id.resize(id + 1);
    by_id[id] = {y.verdict, y.rule};
  }
  b.decisions.clear();
  for (size_t i = 0; i < a.decisions.size(); ++i) {
    const Decision& x = a.decisions[i];
    if ((i & 1023) == 0) report(2, static_cast<double>(i) / a.decisions.size());
    bool drop = x.verdict == ir::VerdictCode::kDrop;
    const CubeIndex& other = drop ? accepts : drops;
    const auto& by_id = drop ? by_id_accept : by_id_drop;
    for (int id : other.Overlapping(x.cube)) {
      result.regions.push_back(
          {*Intersect(x.cube, other.at(id)), {}, {x.verdict, x.rule}, by_id[id]});
    }
  }
  report(2, 1);
  MergeRegions(result.regions);
  for (DiffRegion& r : result.regions) r.witness = PickPoint(r.cube);
  return result;
}

}  // namespace rulejit::analysis
