// Difference of two flattened rulesets (see diff.h).
#include "compiler/analysis/diff.h"

#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "compiler/analysis/cube_index.h"

namespace rulejit::analysis {
namespace {

// Hash of a cube's sets except dimension `skip`.
size_t HashExcept(const Cube& cube, int skip) {
  size_t h = 0;
  for (int d = 0; d < kDims; ++d) {
    if (d == skip) continue;
    for (const Interval& iv : cube.get(static_cast<Dim>(d)).intervals()) {
      h = absl::HashOf(h, static_cast<uint64_t>(iv.lo), static_cast<uint64_t>(iv.lo >> 64),
                       static_cast<uint64_t>(iv.hi), static_cast<uint64_t>(iv.hi >> 64), d);
    }
  }
  return h;
}

bool EqualExcept(const Cube& a, const Cube& b, int skip) {
  for (int d = 0; d < kDims; ++d) {
    if (d != skip && !(a.get(static_cast<Dim>(d)) == b.get(static_cast<Dim>(d)))) {
      return false;
    }
  }
  return true;
}

// Merges regions (all with the same sides) that differ in one dimension
// only: their union is then a cube. One pass per dimension groups the
// regions by their other dimensions (hashed), repeated until nothing
// merges; linear in the number of regions per pass.
void MergeGroup(std::vector<DiffRegion>& regions) {
  bool merged = true;
  while (merged) {
    merged = false;
    for (int d = 0; d < kDims; ++d) {
      const Dim dim = static_cast<Dim>(d);
      absl::flat_hash_map<size_t, std::vector<size_t>> by_rest;
      std::vector<bool> gone(regions.size(), false);
      for (size_t i = 0; i < regions.size(); ++i) {
        std::vector<size_t>& same = by_rest[HashExcept(regions[i].cube, d)];
        bool absorbed = false;
        for (size_t k : same) {
          if (!EqualExcept(regions[k].cube, regions[i].cube, d)) continue;
          regions[k].cube.set(dim) =
              regions[k].cube.get(dim).Union(regions[i].cube.get(dim));
          gone[i] = absorbed = merged = true;
          break;
        }
        if (!absorbed) same.push_back(i);
      }
      size_t kept = 0;
      for (size_t i = 0; i < regions.size(); ++i) {
        if (gone[i]) continue;
        if (kept != i) regions[kept] = std::move(regions[i]);
        ++kept;
      }
      regions.resize(kept);
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
