// Box covers and printing (see box.h).
#include "compiler/headerspace/box.h"

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/cover.h"

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
  return CoveredByUnion(
      std::vector<Box>{box}, covers, piece_budget,
      [](const Box& a, const Box& b) { return a.Intersects(b); }, AppendDifference);
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
