// Cubes indexed by their source address bounds (see cube_index.h).
#include "compiler/analysis/cube_index.h"

namespace rulejit::analysis {
namespace {

// Number of significant bits of v (0 for 0).
int BitWidth(Value v) {
  int n = 0;
  if (v >> 64) {
    n = 64;
    v >>= 64;
  }
  uint64_t low = static_cast<uint64_t>(v);
  return low == 0 ? n : n + 64 - __builtin_clzll(low);
}

}  // namespace

CubeIndex::Key CubeIndex::KeyOf(const Cube& cube) {
  const IntervalSet::Intervals& ivs = cube.get(Dim::kSaddr).intervals();
  Value lo = ivs.front().lo, hi = ivs.back().hi;
  return {BitWidth(hi - lo), lo};
}

int CubeIndex::Add(Cube cube) {
  Key key = KeyOf(cube);
  int id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    cubes_[id] = std::move(cube);
    alive_[id] = 1;
  } else {
    id = static_cast<int>(cubes_.size());
    cubes_.push_back(std::move(cube));
    alive_.push_back(1);
  }
  by_start_[key.length_class].emplace(key.lo, id);
  ++live_;
  return id;
}

template <class F>
void CubeIndex::Candidates(const Cube& query, F f) const {
  const IntervalSet::Intervals& ivs = query.get(Dim::kSaddr).intervals();
  if (ivs.empty()) return;
  const Value lo = ivs.front().lo, hi = ivs.back().hi;
  for (int c = 0; c < kClasses; ++c) {
    const auto& map = by_start_[c];
    if (map.empty()) continue;
    // Intervals of class c are shorter than 2^c: those starting at or
    // before lo - 2^c end before lo.
    Value span = c >= 128 ? kValueMax : (Value{1} << c);
    Value from = lo > span ? lo - span + 1 : 0;
    for (auto it = map.lower_bound(from); it != map.end() && it->first <= hi; ++it) {
      if (!f(it->second)) return;
    }
  }
}

std::vector<int> CubeIndex::Overlapping(const Cube& query) const {
  std::vector<int> out;
  Candidates(query, [&](int id) {
    if (Overlaps(cubes_[id], query)) out.push_back(id);
    return true;
  });
  return out;
}

bool CubeIndex::AnyOverlapping(const Cube& query) const {
  bool found = false;
  Candidates(query, [&](int id) {
    found = Overlaps(cubes_[id], query);
    return !found;
  });
  return found;
}

Cube CubeIndex::Take(int id) {
  Key key = KeyOf(cubes_[id]);
  auto& map = by_start_[key.length_class];
  for (auto it = map.lower_bound(key.lo); it != map.end() && it->first == key.lo; ++it) {
    if (it->second == id) {
      map.erase(it);
      break;
    }
  }
  alive_[id] = 0;
  free_.push_back(id);
  --live_;
  return std::move(cubes_[id]);
}

std::vector<Cube> CubeIndex::TakeAll() {
  std::vector<Cube> out;
  out.reserve(live_);
  for (size_t i = 0; i < cubes_.size(); ++i) {
    if (alive_[i]) out.push_back(std::move(cubes_[i]));
  }
  cubes_.clear();
  alive_.clear();
  free_.clear();
  for (auto& map : by_start_) map.clear();
  live_ = 0;
  return out;
}

}  // namespace rulejit::analysis
