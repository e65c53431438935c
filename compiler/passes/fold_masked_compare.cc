// fold-masked-compare: one masked compare instead of load, mask, compare.
//
//   [ payload load 4b @ network header + 12 => reg 1 ]
//   [ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]     ──▶
//   [ cmp neq reg 1 0x0000000a ]
//       [ fused payload 4b @ network header + 12 & 0x0000c0ff neq 0x0000000a ]
//
// (the seed case `! -s 10.0.0.0/10`), and likewise load + cmp without a mask.
// The backends emit the fused form as mov / and / cmp / jcc with the value
// in a machine register instead of the VM register file.
//
// Assumes: a verified ruleset (every register a rule reads was written
// earlier in the same rule, so registers carry nothing from rule to rule).
// Fuses only when
//   - the bitwise (if any) reads and writes the load's register, masks
//     exactly the load's words and xors with zero;
//   - the cmp reads the load's register and no more bytes than the load
//     wrote (its zero-padded words);
//   - no later expression of the rule reads any word the load wrote.
// Guarantees: the same verdicts for every packet; the fused node writes no
// register, which is why the last condition is needed.
#include <optional>
#include <variant>

#include "compiler/passes/passes.h"
#include "ir/reg_use.h"
#include "ir/util.h"

namespace rulejit::passes {
namespace {

bool AllZero(const ir::Bytes& bytes) {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

// The mask as the fused node keeps it (whole words), if `bitwise` is a pure
// mask of the load's register.
std::optional<ir::Bytes> MaskOf(const ir::Bitwise& b, const ir::PayloadLoad& load) {
  if (b.op != ir::BitwiseOp::kMaskXor || b.sreg != load.dreg || b.dreg != load.dreg ||
      ir::Pad4(b.len) != ir::Pad4(load.len) || !AllZero(b.xor_)) {
    return std::nullopt;
  }
  ir::Bytes mask(ir::Pad4(load.len), 0);
  for (uint32_t i = 0; i < b.len && i < b.mask.size(); ++i) mask[i] = b.mask[i];
  return mask;
}

// Tries to fuse exprs[i..]; returns how many nodes were consumed (0: none).
size_t TryFuse(const ir::Table& table, const std::vector<ir::Node>& exprs, size_t i,
               ir::Node& out) {
  const auto* load = std::get_if<ir::PayloadLoad>(&exprs[i].expr);
  if (load == nullptr || i + 1 >= exprs.size()) return 0;
  size_t next = i + 1;
  std::optional<ir::Bytes> mask;
  if (const auto* b = std::get_if<ir::Bitwise>(&exprs[next].expr)) {
    mask = MaskOf(*b, *load);
    if (!mask) return 0;
    if (++next >= exprs.size()) return 0;
  }
  const auto* cmp = std::get_if<ir::Cmp>(&exprs[next].expr);
  if (cmp == nullptr || cmp->sreg != load->dreg || cmp->data.empty() ||
      cmp->data.size() > ir::Pad4(load->len)) {
    return 0;
  }
  const uint32_t written = ir::WordMask(load->dreg, load->len);
  for (size_t j = next + 1; j < exprs.size(); ++j) {
    if (ir::WordsRead(exprs[j].expr, table) & written) return 0;  // still live
  }
  out.expr = ir::FusedCmp{*load, mask.value_or(ir::Bytes{}), cmp->op, cmp->data};
  out.loc = exprs[i].loc;
  return next - i + 1;
}

void FoldRule(const ir::Table& table, ir::Rule& rule) {
  std::vector<ir::Node> folded;
  folded.reserve(rule.exprs.size());
  for (size_t i = 0; i < rule.exprs.size();) {
    ir::Node fused;
    size_t used = TryFuse(table, rule.exprs, i, fused);
    if (used > 0) {
      folded.push_back(std::move(fused));
      i += used;
    } else {
      folded.push_back(rule.exprs[i++]);
    }
  }
  rule.exprs = std::move(folded);
}

}  // namespace

void FoldMaskedCompare(ir::Ruleset& ruleset) {
  for (ir::Table& table : ruleset.tables) {
    for (ir::Chain& chain : table.chains) {
      for (ir::Rule& rule : chain.rules) FoldRule(table, rule);
    }
  }
}

}  // namespace rulejit::passes
