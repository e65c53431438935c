// A set of cubes that finds the ones overlapping a query cube without
// scanning them all: what makes flattening and diffing 10000-rule rulesets
// fast (every rule asks which cubes of the packets still undecided it
// matches; most rules name specific addresses).
//
//   CubeIndex index;
//   for (Cube& c : region) index.Add(std::move(c));
//   for (int id : index.Overlapping(rule_cube)) {
//     Cube c = index.Take(id);   // split it, Add the pieces back ...
//   }
//
// How: each cube is filed under the bounding interval of its set in each
// indexed dimension (source and destination address unless the constructor
// names others), in a sorted map per length class (class c holds intervals shorter than
// 2^c). A query picks the dimension where it is narrowest (relative to the
// dimension's range), looks in each non-empty class of that dimension only
// at starts that can reach its own interval, then checks the whole cube.
#ifndef RULEJIT_COMPILER_HEADERSPACE_CUBE_INDEX_H_
#define RULEJIT_COMPILER_HEADERSPACE_CUBE_INDEX_H_

#include <array>
#include <cstddef>
#include <initializer_list>
#include <vector>

#include <utility>

#include "absl/container/btree_set.h"
#include "compiler/headerspace/cube.h"

namespace rulejit::headerspace {

class CubeIndex {
 public:
  CubeIndex() : CubeIndex({Dim::kSaddr, Dim::kDaddr}) {}
  // Indexed by these dimensions (at least one).
  explicit CubeIndex(std::initializer_list<Dim> dims)
      : CubeIndex(std::vector<Dim>(dims)) {}
  explicit CubeIndex(std::vector<Dim> dims);
  int Add(Cube cube);
  // Ids of the cubes that overlap `query`, in no particular order. Adds
  // to `*scanned` the number of cubes looked at to find them (the cost).
  std::vector<int> Overlapping(const Cube& query, size_t* scanned = nullptr) const;
  bool AnyOverlapping(const Cube& query) const;
  const Cube& at(int id) const { return cubes_[id]; }
  Cube Take(int id);  // removes the cube
  std::vector<Cube> TakeAll();
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

 private:
  static constexpr int kClasses = 129;
  struct Key {
    int length_class;
    Value lo;
  };
  static Key KeyOf(const Cube& cube, Dim dim);
  // Calls f(id) for candidates (bounding intervals overlap); f returns
  // false to stop.
  template <class F>
  void Candidates(const Cube& query, F f) const;

  std::vector<Cube> cubes_;
  std::vector<char> alive_;
  std::vector<int> free_;
  // (start, id): ordered by start, and one entry found exactly to take it
  // out (many cubes can share a start: a full dimension starts at 0).
  using ByStart = std::array<absl::btree_set<std::pair<Value, int>>, kClasses>;
  std::vector<Dim> dims_;
  std::vector<ByStart> by_start_;  // one per dims_
  size_t live_ = 0;
};

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_CUBE_INDEX_H_
