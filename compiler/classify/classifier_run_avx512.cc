// The classifier's lookups with AVX-512 (F, VL and BW; this file alone is
// compiled with those, see CMakeLists.txt; the walk table in
// classifier_run.cc calls it only where the CPU has all three): a tree step
// is one 8-way compare straight into a mask register, and a leaf block's
// eight boxes are tested in three compares: both addresses in one 16-lane
// compare, both ports in one, the protocol in one. The masks need no
// movemask and combine as plain integers.
#include <immintrin.h>

#include "compiler/classify/classifier.h"
#include "compiler/classify/classifier_walk.h"

namespace rulejit::classify {
namespace {

struct Avx512Ops {
  [[gnu::always_inline]] static uint32_t Below(const Node& node, int32_t biased_value) {
    const __m256i t = _mm256_load_si256(reinterpret_cast<const __m256i*>(node.threshold));
    const uint32_t below = _mm256_cmpgt_epi32_mask(_mm256_set1_epi32(biased_value), t);
    return static_cast<uint32_t>(__builtin_ctz(~below));
  }

  // lo <= v <= lo + span exactly when (v - lo) mod 2^bits <= span, unsigned.
  // The block stores each field's two dimensions (source, destination)
  // back to back, so one compare covers both: bits 0-7 are the first
  // dimension's boxes, bits 8-15 the second's.
  [[gnu::always_inline]] static uint32_t Hits(const LeafBlock& b, const LeafKey& k) {
    static_assert(kSrcAddr == 0 && kDstAddr == 1 && kSrcPort == 2 && kDstPort == 3 && kProto == 4);
    static_assert(sizeof b.addr_lo == 64 && sizeof b.port_lo == 32);
    const __m512i addr = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_set1_epi32(static_cast<int>(k.addr[0]))),
        _mm256_set1_epi32(static_cast<int>(k.addr[1])), 1);
    const uint64_t addrs = _mm512_cmple_epu32_mask(
        _mm512_sub_epi32(addr, _mm512_load_si512(b.addr_lo)), _mm512_load_si512(b.addr_span));
    const __m256i port = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_set1_epi16(static_cast<short>(k.port[0]))),
        _mm_set1_epi16(static_cast<short>(k.port[1])), 1);
    const uint64_t ports = _mm256_cmple_epu16_mask(
        _mm256_sub_epi16(port, _mm256_load_si256(reinterpret_cast<const __m256i*>(b.port_lo))),
        _mm256_load_si256(reinterpret_cast<const __m256i*>(b.port_span)));
    const __m128i pd = _mm_sub_epi8(_mm_set1_epi8(static_cast<char>(k.proto)),
                                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.proto_lo)));
    const uint64_t proto =
        _mm_cmple_epu8_mask(pd, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.proto_span))) &
        0xff;
    // Every field present (the common key): a box passes when it has
    // values in every dimension and each range holds the field, an AND of
    // the masks' halves (shorter than PassingBoxes' byte reduction).
    if (k.absent == 0) {
      return static_cast<uint32_t>(addrs & addrs >> 8 & ports & ports >> 8 & proto &
                                   b.present_all);
    }
    return PassingBoxes(b, k, addrs | ports << 16 | proto << 32);
  }
};

}  // namespace

namespace avx512 {

uint32_t BestBox(const Classifier::Arrays& a, const Key& key, uint32_t* walked) {
  return classify::BestBox<Avx512Ops>(a, key, walked);
}

void FirstMatchBurst(const Classifier::Arrays& a, const Key* keys, uint32_t n, int* out) {
  classify::FirstMatchBurst<Avx512Ops>(a, keys, n, out);
}

}  // namespace avx512
}  // namespace rulejit::classify
