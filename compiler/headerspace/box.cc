// Box printing for diagnostics and tests (see box.h).
#include "compiler/headerspace/box.h"

#include "absl/strings/str_cat.h"

namespace rulejit::headerspace {
namespace {

// Appends the parts of `piece` outside `cut` (which intersects it) to
// `out`: per dimension, the slice below and the slice above the cut, then
// the piece narrowed to the cut's extent in that dimension.
void AppendDifference(Box piece, const Box& cut, std::vector<Box>& out) {
  for (int d = 0; d < kBoxDims; ++d) {
    if (piece.lo[d] < cut.lo[d]) {
      Box below = piece;
      below.hi[d] = cut.lo[d] - 1;
      out.push_back(below);
      piece.lo[d] = cut.lo[d];
    }
    if (piece.hi[d] > cut.hi[d]) {
      Box above = piece;
      above.lo[d] = cut.hi[d] + 1;
      out.push_back(above);
      piece.hi[d] = cut.hi[d];
    }
  }
}

}  // namespace

bool CoveredByUnion(const Box& box, const std::vector<Box>& covers, size_t piece_budget) {
  if (box.Empty()) return true;
  std::vector<Box> pieces = {box}, next;
  for (const Box& cover : covers) {
    // Pieces lie inside `box`: a cover missing it misses them all, and
    // most covers do, so this test is the whole cost of most calls.
    if (!cover.Intersects(box)) continue;
    next.clear();
    for (const Box& piece : pieces) {
      if (cover.Intersects(piece)) {
        AppendDifference(piece, cover, next);
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

std::string BoxToString(const Box& box) {
  static const char* kNames[kBoxDims] = {"sa", "da", "sp", "dp", "pr"};
  std::string out;
  for (int d = 0; d < kBoxDims; ++d) {
    if (d) out += ' ';
    absl::StrAppend(&out, kNames[d], "=[", box.lo[d], ",", box.hi[d], "]");
  }
  return out;
}

}  // namespace rulejit::headerspace
