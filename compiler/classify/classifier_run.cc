// Classifier lookup (the hot path; see classifier.h for the algorithm and
// classifier_walk.h for the walks): the SSE2 and scalar instance, and the
// table of every instruction set's walks that the classifier picks from.
// No allocation, no locks, only reads of the immutable arrays.
#include <emmintrin.h>

#include <array>
#include <string_view>

#include "compiler/classify/classifier.h"
#include "compiler/classify/classifier_walk.h"

namespace rulejit::classify {
namespace {

struct BaselineOps {
  // The thresholds below the value are a prefix (they are sorted; unused
  // slots are never below), so the count is the number of trailing ones of
  // the compare mask.
  [[gnu::always_inline]] static uint32_t Below(const Node& node, int32_t biased_value) {
    const __m128i v = _mm_set1_epi32(biased_value);
    const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(node.threshold));
    const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(node.threshold + 4));
    const uint32_t below = static_cast<uint32_t>(
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, lo))) |
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, hi))) << 4);
    return static_cast<uint32_t>(__builtin_ctz(~below));
  }

  // Range tests as one unsigned compare each: lo <= v <= lo + span exactly
  // when (v - lo) mod 2^bits <= span.
  [[gnu::always_inline]] static uint32_t Hits(const LeafBlock& b, const LeafKey& k) {
    uint32_t in[kDims] = {};
    for (int j = 0; j < Classifier::kBlock; ++j) {
      in[kSrcAddr] |= uint32_t{static_cast<uint32_t>(k.addr[0] - b.addr_lo[0][j]) <=
                               b.addr_span[0][j]} << j;
      in[kDstAddr] |= uint32_t{static_cast<uint32_t>(k.addr[1] - b.addr_lo[1][j]) <=
                               b.addr_span[1][j]} << j;
      in[kSrcPort] |= uint32_t{static_cast<uint16_t>(k.port[0] - b.port_lo[0][j]) <=
                               b.port_span[0][j]} << j;
      in[kDstPort] |= uint32_t{static_cast<uint16_t>(k.port[1] - b.port_lo[1][j]) <=
                               b.port_span[1][j]} << j;
      in[kProto] |= uint32_t{static_cast<uint8_t>(k.proto - b.proto_lo[j]) <= b.proto_span[j]}
                    << j;
    }
    uint64_t masks = 0;
    for (int d = 0; d < kDims; ++d) masks |= uint64_t{in[d]} << (8 * d);
    return PassingBoxes(b, k, masks);
  }
};

uint32_t BaselineBestBox(const Classifier::Arrays& a, const Key& key, uint32_t* walked) {
  return BestBox<BaselineOps>(a, key, walked);
}
void BaselineBurst(const Classifier::Arrays& a, const Key* keys, uint32_t n, int* out) {
  classify::FirstMatchBurst<BaselineOps>(a, keys, n, out);
}

// The one table of lookups by instruction set, indexed by Isa: what the
// CPU must have (__builtin_cpu_supports names; libgcc also checks that the
// OS saves the registers), and the two walks.
struct Walk {
  const char* name;
  std::array<const char*, 3> features;  // all needed; nullptr ends the list
  uint32_t (*best_box)(const Classifier::Arrays&, const Key&, uint32_t*);
  void (*burst)(const Classifier::Arrays&, const Key*, uint32_t, int*);
};
constexpr std::array<Walk, 3> kWalks = {{
    {"baseline", {nullptr}, BaselineBestBox, BaselineBurst},
    {"avx2", {"avx2", nullptr}, avx2::BestBox, avx2::FirstMatchBurst},
    {"avx512", {"avx512f", "avx512vl", "avx512bw"}, avx512::BestBox, avx512::FirstMatchBurst},
}};

const Walk& WalkOf(Isa isa) { return kWalks[static_cast<size_t>(isa)]; }

bool Supports(const char* feature) {
  // __builtin_cpu_supports takes only a literal name: one branch per name
  // the table uses.
  const std::string_view f = feature;
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  return false;
}

}  // namespace

const char* IsaName(Isa isa) { return WalkOf(isa).name; }

bool CpuHas(Isa isa) {
  __builtin_cpu_init();
  for (const char* feature : WalkOf(isa).features) {
    if (feature == nullptr) break;
    if (!Supports(feature)) return false;
  }
  return true;
}

Isa BestIsaUpTo(Isa max) {
  for (int i = static_cast<int>(max); i > 0; --i) {
    if (CpuHas(static_cast<Isa>(i))) return static_cast<Isa>(i);
  }
  return Isa::kBaseline;
}

int Classifier::FirstMatch(const Key& key) const {
  const uint32_t best = WalkOf(isa_).best_box(arrays(), key, nullptr);
  return best == kNone ? -1 : rule_ids_[best];
}

uint32_t Classifier::TreesWalked(const Key& key) const {
  uint32_t walked = 0;
  BestBox<BaselineOps>(arrays(), key, &walked);
  return walked;
}

void Classifier::FirstMatchBurst(const Key* keys, uint32_t n, int* out) const {
  if (n == 1) {  // one walk alone: the single lookup prunes and sets up less
    out[0] = FirstMatch(keys[0]);
    return;
  }
  WalkOf(isa_).burst(arrays(), keys, n, out);
}

size_t Classifier::memory_bytes() const {
  return trees_.size() * sizeof(Tree) + nodes_.size() * sizeof(Node) +
         leaf_blocks_.size() * sizeof(LeafBlock) + rule_ids_.size() * sizeof(int32_t);
}

}  // namespace rulejit::classify
