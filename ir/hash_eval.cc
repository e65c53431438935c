// nft_jhash_eval and nft_symhash_eval (see hash_eval.h).
#include "ir/hash_eval.h"

#include <cstring>

#include "ir/expr_eval.h"
#include "rulejit/jhash.h"

namespace rulejit::ir {

bool EvalHash(const Hash& e, const PacketMeta& meta, uint8_t* regs) {
  uint32_t h = meta.symhash;
  if (!e.symmetric) {
    const uint8_t* src = RegBytes(regs, e.sreg, e.len);
    if (src == nullptr || e.len == 0) return false;
    h = Jhash(src, e.len, e.seed ? *e.seed : meta.jhash_seed);
  }
  uint8_t* dst = RegBytes(regs, e.dreg, 4);
  if (dst == nullptr) return false;
  const uint32_t out = ReciprocalScale(h, e.mod) + e.offset;
  std::memcpy(dst, &out, 4);  // host order, as the kernel's u32 store
  return true;
}

}  // namespace rulejit::ir
