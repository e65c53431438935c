// Pieces both code generators (asmjit, llvm) share: how constants split
// into machine-sized chunks, the values compares use, chain targets and
// verdict-map codes. Keeping them here keeps the two tiers computing the same program.
#ifndef RULEJIT_COMPILER_BACKEND_COMMON_EMIT_UTIL_H_
#define RULEJIT_COMPILER_BACKEND_COMMON_EMIT_UTIL_H_

#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/backend/common/jit_helpers.h"
#include "compiler/lower/plan.h"
#include "compiler/lower/rule_action.h"
#include "ir/ir.h"
#include "ir/util.h"

namespace rulejit::backend {

using lower::ActionBegin;
using lower::BareVerdict;
using lower::ClassifiedRun;
using lower::ForEachChain;
using lower::Layout;

// Splits `len` bytes into 8/4/2/1-byte chunks: fn(offset, size).
template <typename Fn>
void ForEachChunk(uint32_t len, Fn fn) {
  uint32_t off = 0;
  for (uint32_t size : {8u, 4u, 2u, 1u}) {
    while (len - off >= size) {
      fn(off, size);
      off += size;
    }
  }
}

// `size` bytes as a little-endian integer (how a load sees them).
inline uint64_t ChunkValue(const uint8_t* bytes, uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, bytes, size);
  return v;
}

// Big-endian value of `size` (1, 2 or 4) bytes: memcmp order as an integer.
inline uint32_t BigEndianValue(const uint8_t* bytes, uint32_t size) {
  return ir::BigEndian<uint32_t>(bytes, size);
}

// Mask and xor of word `w` of a mask/xor bitwise (bytes past len: zero).
inline void BitwiseWord(const ir::Bitwise& e, uint32_t w, uint32_t* mask, uint32_t* xr) {
  uint8_t m[4] = {}, x[4] = {};
  for (uint32_t b = 0; b < 4 && w * 4 + b < e.len; ++b) {
    if (w * 4 + b < e.mask.size()) m[b] = e.mask[w * 4 + b];
    if (w * 4 + b < e.xor_.size()) x[b] = e.xor_[w * 4 + b];
  }
  *mask = static_cast<uint32_t>(ChunkValue(m, 4));
  *xr = static_cast<uint32_t>(ChunkValue(x, 4));
}

// A fused compare's load as a `width`-byte integer keeps only the compared
// bytes, under the mask: the AND operand.
// Whether a backend compiles the fused compare inline (loads of 1, 2, 4 or
// 8 bytes; ordered compares of 1, 2 or 4), else through the helper.
inline bool FusedCmpInline(const ir::FusedCmp& e) {
  const uint32_t len = e.load.len;
  const uint32_t cmp_len = e.data.size();
  const bool ordered = e.op != ir::CmpOp::kEq && e.op != ir::CmpOp::kNeq;
  return (len == 1 || len == 2 || len == 4 || len == 8) &&
         (!ordered || cmp_len == 1 || cmp_len == 2 || cmp_len == 4);
}

inline uint64_t FusedKeepBits(const ir::FusedCmp& e, uint32_t width) {
  uint8_t keep[8] = {};
  for (uint32_t i = 0; i < width; ++i) {
    uint8_t m = e.mask.empty() ? 0xff : (i < e.mask.size() ? e.mask[i] : 0);
    keep[i] = i < e.data.size() ? m : 0;
  }
  return ChunkValue(keep, width);
}

// Global index of chain `name` in table `table` (the verifier guarantees
// it exists; `fallback` otherwise).
inline uint32_t TargetChainIndex(const ir::Ruleset& ruleset, const Layout& layout, int table,
                                 const std::string& name, uint32_t fallback) {
  const auto& chains = ruleset.tables[table].chains;
  for (size_t c = 0; c < chains.size(); ++c) {
    if (chains[c].name == name) return layout.ChainIndex(table, static_cast<int>(c));
  }
  return fallback;
}

// A verdict map element's verdict as JitContext::verdict_reg holds it.
inline uint32_t EncodeVmapVerdict(const ir::Ruleset& ruleset, const Layout& layout, int table,
                                  const ir::Verdict& v) {
  auto target = [&] { return TargetChainIndex(ruleset, layout, table, v.chain, 0) << 8; };
  switch (v.code) {
    case ir::VerdictCode::kAccept: return kVmapAccept;
    case ir::VerdictCode::kDrop: return kVmapDrop;
    case ir::VerdictCode::kReturn: return kVmapReturn;
    case ir::VerdictCode::kJump: return kVmapJump | target();
    case ir::VerdictCode::kGoto: return kVmapGoto | target();
    default: return kVmapContinue;
  }
}

// The operand of set lookup `e` (table `table`), kept in `lookups`, its
// set's index in `indexes`; verdict maps get their elements' verdicts.
inline JitLookupOp& MakeLookupOp(const ir::Ruleset& ruleset, const Layout& layout, int table,
                                 const ir::Lookup& e, std::deque<ir::SetIndex>& indexes,
                                 std::deque<JitLookupOp>& lookups) {
  const ir::Set* set = ruleset.tables[table].FindSet(e.set);
  JitLookupOp& op = lookups.emplace_back();
  op.expr = &e;
  op.set = set;
  op.index = &indexes.emplace_back(*set);
  if (e.dreg && *e.dreg == ir::kVerdictReg) {
    for (const ir::SetElement& el : set->elements) {
      op.verdicts.push_back(
          EncodeVmapVerdict(ruleset, layout, table, el.verdict.value_or(ir::Verdict{})));
    }
  }
  return op;
}

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_COMMON_EMIT_UTIL_H_
