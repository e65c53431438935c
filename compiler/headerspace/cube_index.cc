// Cubes indexed by their source address bounds (see cube_index.h).
#include "compiler/headerspace/cube_index.h"

#include <utility>

namespace rulejit::headerspace {
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

// The width of the dimension's values, for comparing how narrow a query
// is in each (addresses: IPv6 when the query reaches past 2^32).
double Range(Dim dim, Value hi) {
  switch (dim) {
    case Dim::kSaddr:
    case Dim::kDaddr: return hi >> 32 ? 0x1p128 : 0x1p32;
    case Dim::kSport:
    case Dim::kDport: return 65536.0;
    default: return static_cast<double>(hi) + 1;
  }
}

}  // namespace

CubeIndex::CubeIndex(std::vector<Dim> dims)
    : dims_(std::move(dims)), by_start_(dims_.size()) {}

CubeIndex::Key CubeIndex::KeyOf(const Cube& cube, Dim dim) {
  const IntervalSet::Intervals& ivs = cube.get(dim).intervals();
  Value lo = ivs.front().lo, hi = ivs.back().hi;
  return {BitWidth(hi - lo), lo};
}

int CubeIndex::Add(Cube cube) {
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
  for (size_t i = 0; i < dims_.size(); ++i) {
    Key key = KeyOf(cubes_[id], dims_[i]);
    by_start_[i][key.length_class].emplace(key.lo, id);
  }
  ++live_;
  return id;
}

template <class F>
void CubeIndex::Candidates(const Cube& query, F f) const {
  // The dimension where the query is narrowest for its range.
  size_t best = 0;
  double best_fraction = 2;
  for (size_t i = 0; i < dims_.size(); ++i) {
    const IntervalSet::Intervals& ivs = query.get(dims_[i]).intervals();
    if (ivs.empty()) return;
    const Value width = ivs.back().hi - ivs.front().lo;
    const double fraction = static_cast<double>(width) / Range(dims_[i], ivs.back().hi);
    if (fraction < best_fraction) {
      best = i;
      best_fraction = fraction;
    }
  }
  const IntervalSet::Intervals& ivs = query.get(dims_[best]).intervals();
  const Value lo = ivs.front().lo, hi = ivs.back().hi;
  for (int c = 0; c < kClasses; ++c) {
    const auto& map = by_start_[best][c];
    if (map.empty()) continue;
    // Intervals of class c are shorter than 2^c: those starting at or
    // before lo - 2^c end before lo.
    Value span = c >= 128 ? kValueMax : (Value{1} << c);
    Value from = lo > span ? lo - span + 1 : 0;
    for (auto it = map.lower_bound({from, 0}); it != map.end() && it->first <= hi; ++it) {
      if (!f(it->second)) return;
    }
  }
}

std::vector<int> CubeIndex::Overlapping(const Cube& query, size_t* scanned) const {
  std::vector<int> out;
  size_t n = 0;
  Candidates(query, [&](int id) {
    ++n;
    if (Overlaps(cubes_[id], query)) out.push_back(id);
    return true;
  });
  if (scanned) *scanned += n;
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
  for (size_t i = 0; i < dims_.size(); ++i) {
    Key key = KeyOf(cubes_[id], dims_[i]);
    by_start_[i][key.length_class].erase({key.lo, id});
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
  for (auto& index : by_start_) {
    for (auto& map : index) map.clear();
  }
  live_ = 0;
  return out;
}

}  // namespace rulejit::headerspace
