// What the kernel refuses in a concatenated interval set (nft_set_pipapo's
// insert), element by element in the order nft sends them, which for nft
// 1.0.6 is the order written:
//   - a new element whose start key falls inside an earlier element is
//     refused ("File exists"), unless it repeats that element exactly
//     (same start and end), which `add` ignores if its data is the same;
//   - otherwise one whose end key falls inside an earlier element is
//     refused too.
// So an element may contain an earlier one if its first and last keys
// (the corners) lie outside it, never start or end inside it.
// nft itself does not check concatenations (its own overlap check is for
// single-field intervals, Linearizer::CheckOverlaps), so without this
// rulejit would accept sets the kernel refuses.
#ifndef RULEJIT_FRONTENDS_NFT_CONCAT_OVERLAP_H_
#define RULEJIT_FRONTENDS_NFT_CONCAT_OVERLAP_H_

#include <cstddef>
#include <optional>

#include "ir/ir.h"

namespace rulejit::frontends::nft {

struct ConcatClash {
  size_t element = 0;  // the refused element (index in set.elements)
  size_t earlier = 0;  // the earlier element it starts or ends inside
  bool same_key_other_data = false;  // an exact repeat whose data differs
  bool too_costly = false;  // the check's budget ran out (element: where)
};

// The first element of set.elements[before..] the kernel refuses, if any.
// For a set that is not a concatenated interval set, none.
std::optional<ConcatClash> FindConcatClash(const ir::Set& set, size_t before);

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_CONCAT_OVERLAP_H_
