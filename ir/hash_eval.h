// nft's hash expression (nft_hash.c): jhash of register bytes and the
// symmetric flow hash, scaled to a modulus.
#ifndef RULEJIT_IR_HASH_EVAL_H_
#define RULEJIT_IR_HASH_EVAL_H_

#include <cstdint>

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// reciprocal_scale(value, mod): value * mod / 2^32, the kernel's way of
// scaling a 32-bit hash or random draw to 0..mod-1.
inline uint32_t ReciprocalScale(uint32_t value, uint32_t mod) {
  return static_cast<uint32_t>((static_cast<uint64_t>(value) * mod) >> 32);
}

// Writes the hash into `e.dreg` of `regs` (kRegBytes); false when a
// register range lies outside them (the verifier refuses such rules).
bool EvalHash(const Hash& e, const PacketMeta& meta, uint8_t* regs);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_HASH_EVAL_H_
