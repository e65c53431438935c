// lookup3's mixing as the kernel's jhash and jhash2 use it (see
// rulejit/jhash.h).
#include "rulejit/jhash.h"

#include <cstring>

namespace rulejit {
namespace {

constexpr uint32_t kJhashInitval = 0xdeadbeef;

uint32_t Rol(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

void Mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  a -= c; a ^= Rol(c, 4);  c += b;
  b -= a; b ^= Rol(a, 6);  a += c;
  c -= b; c ^= Rol(b, 8);  b += a;
  a -= c; a ^= Rol(c, 16); c += b;
  b -= a; b ^= Rol(a, 19); a += c;
  c -= b; c ^= Rol(b, 4);  b += a;
}

void Final(uint32_t& a, uint32_t& b, uint32_t& c) {
  c ^= b; c -= Rol(b, 14);
  a ^= c; a -= Rol(c, 11);
  b ^= a; b -= Rol(a, 25);
  c ^= b; c -= Rol(b, 16);
  a ^= c; a -= Rol(c, 4);
  b ^= a; b -= Rol(a, 14);
  c ^= b; c -= Rol(b, 24);
}

}  // namespace

uint32_t Jhash(const uint8_t* key, uint32_t length, uint32_t initval) {
  uint32_t a = kJhashInitval + length + initval;
  uint32_t b = a, c = a;
  while (length > 12) {
    a += LoadLe32(key);
    b += LoadLe32(key + 4);
    c += LoadLe32(key + 8);
    Mix(a, b, c);
    length -= 12;
    key += 12;
  }
  if (length == 0) return c;
  // The last 1..12 bytes, zero-padded, little-endian into a, b, c.
  uint8_t tail[12] = {};
  std::memcpy(tail, key, length);
  a += LoadLe32(tail);
  b += LoadLe32(tail + 4);
  c += LoadLe32(tail + 8);
  Final(a, b, c);
  return c;
}

uint32_t Jhash2(const uint32_t* k, uint32_t length, uint32_t initval) {
  uint32_t a = kJhashInitval + (length << 2) + initval;
  uint32_t b = a, c = a;
  while (length > 3) {
    a += k[0];
    b += k[1];
    c += k[2];
    Mix(a, b, c);
    length -= 3;
    k += 3;
  }
  switch (length) {
    case 3: c += k[2]; [[fallthrough]];
    case 2: b += k[1]; [[fallthrough]];
    case 1: a += k[0]; Final(a, b, c); break;
    default: break;
  }
  return c;
}

}  // namespace rulejit
