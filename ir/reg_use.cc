// Register reads per expression kind (see reg_use.h).
#include "ir/reg_use.h"

#include <variant>

namespace rulejit::ir {

uint32_t WordMask(Reg reg, uint32_t len) {
  int first = RegWord(reg);
  if (first < 0 || len == 0) return 0;
  uint32_t words = (len + 3) / 4;
  uint32_t mask = 0;
  for (uint32_t w = first; w < first + words && w < kRegWords; ++w) mask |= 1u << w;
  return mask;
}

namespace {

struct Reads {
  const Table& table;
  uint32_t operator()(const MetaSet& e) const { return WordMask(e.sreg, MetaKeyLen(e.key)); }
  uint32_t operator()(const CtSet& e) const { return WordMask(e.sreg, CtKeyLen(e.key)); }
  uint32_t operator()(const Bitwise& e) const {
    uint32_t reads = WordMask(e.sreg, e.len);
    if (IsRegisterBitwise(e.op)) reads |= WordMask(e.sreg2, e.len);
    return reads;
  }
  uint32_t operator()(const PayloadWrite& e) const { return WordMask(e.sreg, e.len); }
  uint32_t operator()(const ExthdrWrite& e) const { return WordMask(e.sreg, e.len); }
  uint32_t operator()(const Byteorder& e) const {
    // Size-2 elements step over whole words (see ir/expr_eval.cc).
    return WordMask(e.sreg, e.size == 2 ? e.len / 2 * 4 : e.len);
  }
  uint32_t operator()(const Cmp& e) const { return WordMask(e.sreg, e.data.size()); }
  uint32_t operator()(const Range& e) const { return WordMask(e.sreg, e.from.size()); }
  uint32_t operator()(const Lookup& e) const {
    const Set* set = table.FindSet(e.set);
    return set ? WordMask(e.sreg, set->key_len) : 0;
  }
  uint32_t operator()(const Queue& e) const {
    return e.sreg_qnum ? WordMask(*e.sreg_qnum, 4) : 0;
  }
  uint32_t operator()(const Nat& e) const {
    const uint32_t addr_len = e.family == Family::kIp6 ? 16 : 4;
    uint32_t mask = 0;
    if (e.addr_min) mask |= WordMask(*e.addr_min, addr_len);
    if (e.addr_max) mask |= WordMask(*e.addr_max, addr_len);
    if (e.proto_min) mask |= WordMask(*e.proto_min, 2);
    if (e.proto_max) mask |= WordMask(*e.proto_max, 2);
    return mask;
  }
  uint32_t operator()(const Tproxy& e) const {
    uint32_t mask = e.port ? WordMask(*e.port, 2) : 0;
    if (e.addr) mask |= WordMask(*e.addr, e.family == Family::kIp6 ? 16 : 4);
    return mask;
  }
  uint32_t operator()(const Dynset& e) const {
    const Set* set = table.FindSet(e.set);
    if (set == nullptr) return 0;
    uint32_t mask = WordMask(e.sreg_key, set->key_len);
    if (e.sreg_data) mask |= WordMask(*e.sreg_data, set->data_len);
    return mask;
  }
  uint32_t operator()(const Objref& e) const {
    const Set* set = e.sreg ? table.FindSet(e.set) : nullptr;
    return set ? WordMask(*e.sreg, set->key_len) : 0;
  }
  uint32_t operator()(const Hash& e) const {
    return e.symmetric ? 0 : WordMask(e.sreg, e.len);
  }
  template <typename T>
  uint32_t operator()(const T&) const { return 0; }  // loads, statements
};

}  // namespace

uint32_t WordsRead(const Expr& expr, const Table& table) {
  return std::visit(Reads{table}, expr);
}

}  // namespace rulejit::ir
