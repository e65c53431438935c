// Difference of two rulesets along a path (see path_diff.h).
#include "compiler/analysis/path_diff.h"

#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace rulejit::analysis {
namespace {

constexpr std::array<Dim, 4> kTranslated = {Dim::kSaddr, Dim::kDaddr, Dim::kSport, Dim::kDport};

Value Leaving(const PathOutcome& o, Dim d, const Point& witness) {
  return o.flow.rel[static_cast<int>(d)] == Rel::kConst
             ? o.flow.now.get(d).intervals().front().lo
             : witness[static_cast<int>(d)];
}

PathSide SideOf(const PathOutcome& o, const Point& witness) {
  PathSide s{.fate = o.fate, .trail = o.flow.trail, .why = o.why};
  s.saddr = Leaving(o, Dim::kSaddr, witness);
  s.daddr = Leaving(o, Dim::kDaddr, witness);
  s.sport = Leaving(o, Dim::kSport, witness);
  s.dport = Leaving(o, Dim::kDport, witness);
  return s;
}

// The packets of `region` that leave both sides with the same addresses
// and ports (a cube: each dimension is the origin's or a constant), or
// nullopt when none do.
std::optional<Cube> SameTranslation(const Cube& region, const PathOutcome& a,
                                    const PathOutcome& b) {
  Cube same = region;
  for (Dim d : kTranslated) {
    const Rel ra = a.flow.rel[static_cast<int>(d)];
    const Rel rb = b.flow.rel[static_cast<int>(d)];
    if (ra == Rel::kSame && rb == Rel::kSame) continue;
    if (ra == Rel::kConst && rb == Rel::kConst) {
      if (a.flow.now.get(d) != b.flow.now.get(d)) return std::nullopt;
      continue;
    }
    const PathOutcome& constant = ra == Rel::kConst ? a : b;
    same.set(d) = same.get(d).Intersect(constant.flow.now.get(d));
    if (same.get(d).empty()) return std::nullopt;
  }
  return same;
}

// What an outcome does with its packets: its fate, trail, the stack's
// reason, and how each translated dimension leaves.
std::string Signature(const PathOutcome& o) {
  std::string s = absl::StrCat(static_cast<int>(o.fate), ":", o.why);
  for (const HookStep& h : o.flow.trail) {
    absl::StrAppend(&s, ",", static_cast<int>(h.hook), "/", h.rule.table, "/", h.rule.chain, "/",
                    h.rule.rule);
  }
  for (Dim d : kTranslated) {
    if (o.flow.rel[static_cast<int>(d)] == Rel::kConst) {
      absl::StrAppend(&s, ";", static_cast<uint64_t>(o.flow.now.get(d).intervals().front().lo >> 64),
                      ".", static_cast<uint64_t>(o.flow.now.get(d).intervals().front().lo));
    } else {
      absl::StrAppend(&s, ";=");
    }
  }
  return s;
}

void NoteNotModelled(const std::vector<PathOutcome>& outcomes, bool old_side,
                     std::vector<NotModelled>& out) {
  std::set<std::tuple<int, int, int, std::string>> seen;
  for (const PathOutcome& o : outcomes) {
    if (o.fate != PathFate::kNotModelled) continue;
    auto key = std::make_tuple(o.where.table, o.where.chain, o.where.rule, o.why);
    if (!seen.insert(key).second) continue;
    out.push_back({old_side, o.where, o.why, PickPoint(o.flow.origin)});
  }
}

}  // namespace

PathDiffResult DiffPaths(const ir::Ruleset& old_rs, const ir::Ruleset& new_rs,
                         const PathOptions& options) {
  PathDiffResult result;
  result.spaces = std::make_unique<PathSpaces>(
      std::vector<const ir::Ruleset*>{&old_rs, &new_rs}, options);
  const std::vector<PathOutcome> a = WalkPath(old_rs, *result.spaces, options);
  const std::vector<PathOutcome> b = WalkPath(new_rs, *result.spaces, options);
  NoteNotModelled(a, true, result.not_modelled);
  NoteNotModelled(b, false, result.not_modelled);
  const Space& space = result.spaces->base();
  // Regions grouped by what both sides do with them (fates, trails, how
  // they translate), merged where they differ in one dimension.
  std::map<std::string, std::pair<std::tuple<size_t, size_t, bool>, std::vector<Cube>>> pieces;
  auto add = [&](size_t i, size_t j, bool translation, Cube c) {
    auto& group = pieces[absl::StrCat(Signature(a[i]), "|", Signature(b[j]), "|", translation)];
    if (group.second.empty()) group.first = {i, j, translation};
    group.second.push_back(std::move(c));
  };
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].fate == PathFate::kNotModelled) continue;
    for (size_t j = 0; j < b.size(); ++j) {
      if (b[j].fate == PathFate::kNotModelled || !Overlaps(a[i].flow.origin, b[j].flow.origin)) {
        continue;
      }
      Cube region = *Intersect(a[i].flow.origin, b[j].flow.origin);
      if (a[i].fate != b[j].fate) {
        add(i, j, false, std::move(region));
        continue;
      }
      if (a[i].fate == PathFate::kDropped) continue;
      std::optional<Cube> same = SameTranslation(region, a[i], b[j]);
      std::vector<Cube> differ = same ? Subtract(region, *same, space) : std::vector<Cube>{region};
      for (Cube& c : differ) add(i, j, true, std::move(c));
    }
  }
  for (auto& [signature, group] : pieces) {
    const auto [i, j, translation] = group.first;
    std::vector<Cube>& cubes = group.second;
    MergeAdjacent(cubes);
    for (Cube& c : cubes) {
      const Point w = PickPoint(c);
      result.regions.push_back({std::move(c), w, translation, SideOf(a[i], w), SideOf(b[j], w)});
    }
  }
  return result;
}

}  // namespace rulejit::analysis
