// Difference of two flattened rulesets (see diff.h).
#include "compiler/analysis/diff.h"

#include <map>
#include <tuple>

namespace rulejit::analysis {
namespace {

using SidesKey = std::tuple<int, int, int, int, int, int, int, int>;

SidesKey KeyOf(const DiffRegion& r) {
  return {static_cast<int>(r.old_side.verdict), r.old_side.rule.table,
          r.old_side.rule.chain, r.old_side.rule.rule,
          static_cast<int>(r.new_side.verdict), r.new_side.rule.table,
          r.new_side.rule.chain, r.new_side.rule.rule};
}

// MergeAdjacent over each group of regions with the same sides; keeps the
// order of first appearance.
void MergeRegions(std::vector<DiffRegion>& regions) {
  std::map<SidesKey, size_t> group_of;
  std::vector<std::vector<Cube>> groups;
  std::vector<const DiffRegion*> first;
  for (const DiffRegion& r : regions) {
    auto [it, fresh] = group_of.emplace(KeyOf(r), groups.size());
    if (fresh) {
      groups.emplace_back();
      first.push_back(&r);
    }
    groups[it->second].push_back(r.cube);
  }
  std::vector<DiffRegion> out;
  for (size_t g = 0; g < groups.size(); ++g) {
    MergeAdjacent(groups[g]);
    for (Cube& c : groups[g]) {
      out.push_back({std::move(c), {}, first[g]->old_side, first[g]->new_side});
    }
  }
  regions = std::move(out);
}

// The same for one side's decisions (same verdict and deciding rule):
// fewer, larger cubes to intersect.
void MergeDecisions(std::vector<Decision>& decisions) {
  std::map<std::tuple<int, int, int, int>, size_t> group_of;
  std::vector<std::vector<Cube>> groups;
  std::vector<std::pair<ir::VerdictCode, ir::RuleRef>> sides;
  for (Decision& d : decisions) {
    auto [it, fresh] = group_of.emplace(
        std::make_tuple(static_cast<int>(d.verdict), d.rule.table, d.rule.chain, d.rule.rule),
        groups.size());
    if (fresh) {
      groups.emplace_back();
      sides.emplace_back(d.verdict, d.rule);
    }
    groups[it->second].push_back(std::move(d.cube));
  }
  decisions.clear();
  for (size_t g = 0; g < groups.size(); ++g) {
    MergeAdjacent(groups[g]);
    for (Cube& c : groups[g]) decisions.push_back({std::move(c), sides[g].first, sides[g].second});
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
  MergeDecisions(a.decisions);
  MergeDecisions(b.decisions);
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
