// Lowering of the dynamic set statements (`add @s { ... }`, `update`,
// `delete`, meters) as nft's netlink_gen_dynset_stmt does it: the
// dependencies of every field first, then the key's parts into the
// registers from reg 1 (fields loaded, constants as immediates), the map
// data's parts from reg 2 on (or right after a longer key), then
//
//   [ dynset update reg_key 1 set s sreg_data 2 timeout 60000ms
//     expr [ limit rate 10/second burst 5 type packets flags 0x0 ] ]
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"
#include "ir/util.h"

namespace rulejit::frontends::nft {
namespace {

constexpr int kRegWords = 16;      // the register file, in 32-bit words
constexpr int kFirstDataWord = 4;  // nft puts map data in reg 2 at the earliest

int Words(const std::vector<ast::DynsetPart>& parts) {
  int words = 0;
  for (const ast::DynsetPart& p : parts) words += static_cast<int>(ir::Pad4(p.Len()) / 4);
  return words;
}

}  // namespace

void Linearizer::EmitDynsetParts(ir::Rule& rule, const std::vector<ast::DynsetPart>& parts,
                                 int word) {
  for (const ast::DynsetPart& p : parts) {
    const ir::Reg reg = ir::RegForWord(word);
    if (p.field) {
      // The set holds a bit field's value shifted down, as named sets do.
      EmitKeyFieldLoad(rule, *p.field, reg, /*shift_down=*/true, /*interval=*/false);
    } else {
      ir::Immediate imm;
      imm.dreg = reg;
      imm.data = p.constant;
      Emit(rule, imm, p.loc);
    }
    word += static_cast<int>(ir::Pad4(p.Len()) / 4);
  }
}

bool Linearizer::LowerDynset(ir::Rule& rule, const ast::Dynset& s) {
  for (const std::vector<ast::DynsetPart>* parts : {&s.key, &s.data}) {
    for (const ast::DynsetPart& p : *parts) {
      if (p.field && !EmitDeps(rule, *p.field)) return false;
    }
  }
  const int key_words = Words(s.key);
  const int data_word = std::max(kFirstDataWord, key_words);
  if (key_words > kRegWords || (!s.data.empty() && data_word + Words(s.data) > kRegWords)) {
    return Error(s.loc, "the key and data do not fit in the registers (64 bytes)");
  }
  EmitDynsetParts(rule, s.key, 0);
  ir::Dynset d;
  d.op = s.op;
  d.set = s.set;
  d.sreg_key = ir::RegForWord(0);
  d.timeout_ms = s.timeout_ms;
  d.exprs = s.exprs;
  if (!s.data.empty()) {
    EmitDynsetParts(rule, s.data, data_word);
    d.sreg_data = ir::RegForWord(data_word);
  }
  Emit(rule, d, s.loc);
  return true;
}

}  // namespace rulejit::frontends::nft
