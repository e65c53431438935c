// Whether regions of one projection are covered by a union of others: the
// region minus each cover in turn, kept as disjoint pieces, with a budget
// on the pieces. Shared by the box and cube projections (box.h, cube.h).
//
//   bool covered = CoveredByUnion(std::vector<Box>{box}, covers, 64,
//       [](const Box& a, const Box& b) { return a.Intersects(b); },
//       [](const Box& piece, const Box& cut, std::vector<Box>& out) { ... });
//
// "Covered" is exact; "not covered" may be a miss when the pieces would
// exceed `piece_budget`.
#ifndef RULEJIT_COMPILER_HEADERSPACE_COVER_H_
#define RULEJIT_COMPILER_HEADERSPACE_COVER_H_

#include <cstddef>
#include <vector>

namespace rulejit::headerspace {

// `region` (disjoint pieces) minus every cover of `covers`, in order.
// overlaps(a, b): whether a ∩ b is non-empty; subtract(piece, cut, out):
// appends piece \ cut (cut overlaps piece) to out as disjoint pieces.
template <class R, class Overlaps, class Subtract>
bool CoveredByUnion(std::vector<R> pieces, const std::vector<R>& covers,
                    size_t piece_budget, Overlaps overlaps, Subtract subtract) {
  if (pieces.empty()) return true;
  // A one-piece region: the pieces stay inside it, so a cover missing it
  // misses them all, and most covers do: this test is the whole cost of
  // most calls.
  const bool one = pieces.size() == 1;
  const R whole = pieces.front();
  std::vector<R> next;
  for (const R& cover : covers) {
    if (one && !overlaps(cover, whole)) continue;
    next.clear();
    for (const R& piece : pieces) {
      if (overlaps(cover, piece)) {
        subtract(piece, cover, next);
      } else {
        next.push_back(piece);
      }
    }
    if (next.size() > piece_budget) return false;
    pieces.swap(next);
    if (pieces.empty()) return true;
  }
  return false;
}

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_COVER_H_
