// The classifier's lookups with AVX2 (this file alone is compiled with
// -mavx2, see CMakeLists.txt; Classifier calls it only where the CPU has
// AVX2): a tree step is one 8-way compare, a leaf block's eight boxes are
// tested at once, a dimension per vector compare.
#include <immintrin.h>

#include "compiler/classify/classifier.h"
#include "compiler/classify/classifier_walk.h"

namespace rulejit::classify {
namespace {

struct Avx2Ops {
  [[gnu::always_inline]] static uint32_t Below(const Node& node, int32_t biased_value) {
    const __m256i t = _mm256_load_si256(reinterpret_cast<const __m256i*>(node.threshold));
    const auto below = static_cast<uint32_t>(_mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(biased_value), t))));
    return static_cast<uint32_t>(__builtin_ctz(~below));
  }

  // lo <= v <= lo + span exactly when (v - lo) mod 2^bits <= span, i.e.
  // max(v - lo, span) == span, unsigned.
  [[gnu::always_inline]] static uint32_t Hits(const LeafBlock& b, const LeafKey& k) {
    // Byte d of `in`: dimension d's mask (kSrcAddr..kProto in order).
    static_assert(kSrcAddr == 0 && kDstAddr == 1 && kSrcPort == 2 && kDstPort == 3 && kProto == 4);
    const uint64_t src = InRange32(k.addr[0], b.addr_lo[0], b.addr_span[0]);
    const uint64_t dst = InRange32(k.addr[1], b.addr_lo[1], b.addr_span[1]);
    const __m128i sp = InRange16(k.port[0], b.port_lo[0], b.port_span[0]);
    const __m128i dp = InRange16(k.port[1], b.port_lo[1], b.port_span[1]);
    // Source port in the low byte, destination port in the next.
    const auto ports = static_cast<uint64_t>(_mm_movemask_epi8(_mm_packs_epi16(sp, dp)));
    const __m128i plo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.proto_lo));
    const __m128i pspan = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.proto_span));
    const __m128i pd = _mm_sub_epi8(_mm_set1_epi8(static_cast<char>(k.proto)), plo);
    const uint64_t proto = static_cast<uint64_t>(
                               _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(pd, pspan), pspan))) &
                           0xff;
    return PassingBoxes(b, k, src | dst << 8 | ports << 16 | proto << 32);
  }

  [[gnu::always_inline]] static uint32_t InRange32(uint32_t v, const uint32_t* lo,
                                                   const uint32_t* span) {
    const __m256i l = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo));
    const __m256i s = _mm256_load_si256(reinterpret_cast<const __m256i*>(span));
    const __m256i d = _mm256_sub_epi32(_mm256_set1_epi32(static_cast<int>(v)), l);
    return static_cast<uint32_t>(_mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_max_epu32(d, s), s))));
  }
  // All ones in 16-bit lane j when box j's range holds v.
  [[gnu::always_inline]] static __m128i InRange16(uint16_t v, const uint16_t* lo,
                                                  const uint16_t* span) {
    const __m128i l = _mm_load_si128(reinterpret_cast<const __m128i*>(lo));
    const __m128i s = _mm_load_si128(reinterpret_cast<const __m128i*>(span));
    const __m128i d = _mm_sub_epi16(_mm_set1_epi16(static_cast<short>(v)), l);
    return _mm_cmpeq_epi16(_mm_max_epu16(d, s), s);
  }
};

}  // namespace

namespace avx2 {

uint32_t BestBox(const Classifier::Arrays& a, const Key& key, uint32_t* walked) {
  return classify::BestBox<Avx2Ops>(a, key, walked);
}

void FirstMatchBurst(const Classifier::Arrays& a, const Key* keys, uint32_t n, int* out) {
  classify::FirstMatchBurst<Avx2Ops>(a, keys, n, out);
}

}  // namespace avx2
}  // namespace rulejit::classify
