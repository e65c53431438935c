// Small helpers the nft linearizer's files share (internal to
// frontends/nft): masks, operator mapping, key sizes.
#ifndef RULEJIT_FRONTENDS_NFT_LOWER_UTIL_H_
#define RULEJIT_FRONTENDS_NFT_LOWER_UTIL_H_

#include <vector>

#include "frontends/nft/ast.h"
#include "ir/util.h"

namespace rulejit::frontends::nft {

// The low `bits` bits set.
inline U128 BitsMask(uint32_t bits) {
  return bits >= 128 ? ~static_cast<U128>(0) : ((static_cast<U128>(1) << bits) - 1);
}

using ir::Pad4;  // `n` rounded up to whole 32-bit register words

inline ir::CmpOp ToCmp(ast::RelOp op) {
  switch (op) {
    case ast::RelOp::kNeq: return ir::CmpOp::kNeq;
    case ast::RelOp::kLt: return ir::CmpOp::kLt;
    case ast::RelOp::kGt: return ir::CmpOp::kGt;
    case ast::RelOp::kLte: return ir::CmpOp::kLte;
    case ast::RelOp::kGte: return ir::CmpOp::kGte;
    case ast::RelOp::kImplicit:
    case ast::RelOp::kEq:
    case ast::RelOp::kNot:
      return ir::CmpOp::kEq;
  }
  return ir::CmpOp::kEq;
}

inline bool IsOrdering(ast::RelOp op) {
  return op == ast::RelOp::kLt || op == ast::RelOp::kGt || op == ast::RelOp::kLte ||
         op == ast::RelOp::kGte;
}

// Does any element hold a range or a prefix (an interval set)?
inline bool HasRanges(const std::vector<Element>& elems) {
  for (const Element& e : elems) {
    for (const Item& it : e.key) {
      if (it.kind != Item::Kind::kValue) return true;
    }
  }
  return false;
}

// The key length of a set over `fields` as the match loads them.
inline uint32_t SetKeyLen(const std::vector<Field>& fields) {
  uint32_t key_len = 0;
  for (const Field& f : fields) {
    // A shifted-down bitfield is as wide as its value (ip6 dscp: 1 byte).
    uint32_t len = IsShiftedBitfield(f) ? (f.len_bits + 7) / 8 : f.LoadLen();
    key_len += fields.size() > 1 ? Pad4(len) : len;
  }
  return key_len;
}

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_LOWER_UTIL_H_
