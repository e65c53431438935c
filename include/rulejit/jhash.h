// The kernel's Jenkins hashes (include/linux/jhash.h: Bob Jenkins' lookup3
// on a little-endian machine): what nft's `jhash` expression computes over
// register bytes, and what NAT's port choice and others compute over
// 32-bit words.
#ifndef RULEJIT_JHASH_H_
#define RULEJIT_JHASH_H_

#include <cstdint>

namespace rulejit {

// jhash(key, length, initval): `length` bytes from `key`.
uint32_t Jhash(const uint8_t* key, uint32_t length, uint32_t initval);

// jhash2(k, length, initval): `length` 32-bit words from `k`.
uint32_t Jhash2(const uint32_t* k, uint32_t length, uint32_t initval);

}  // namespace rulejit

#endif  // RULEJIT_JHASH_H_
