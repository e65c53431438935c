// Classifier lookup (the hot path; see classifier.h for the algorithm).
// No allocation, no locks, only reads of the immutable arrays.
#include <emmintrin.h>

#include <climits>

#include "compiler/classify/classifier.h"

namespace rulejit::classify {

[[gnu::always_inline]] inline Classifier::LeafKey Classifier::ToLeafKey(const Key& key) {
  LeafKey k{};
  for (int d = 0; d < kDims; ++d) {
    if (key.v[d] <= FieldMax(d)) k.present |= 1u << d;
  }
  auto field = [&](int d) { return key.v[d] <= FieldMax(d) ? key.v[d] : 0; };
  k.addr[0] = static_cast<uint32_t>(field(kSrcAddr));
  k.addr[1] = static_cast<uint32_t>(field(kDstAddr));
  k.port[0] = static_cast<uint16_t>(field(kSrcPort));
  k.port[1] = static_cast<uint16_t>(field(kDstPort));
  k.proto = static_cast<uint8_t>(field(kProto));
  return k;
}

// Range tests as one unsigned compare each: lo <= v <= lo + span exactly
// when (v - lo) mod 2^bits <= span. A dimension passes when the field is
// present and in range (and the box has values there), or absent and the
// box holds absent fields.
[[gnu::always_inline]] inline bool Classifier::Holds(const LeafEntry& e, const LeafKey& k) {
  const uint32_t in =
      static_cast<uint32_t>(static_cast<uint32_t>(k.addr[0] - e.addr_lo[0]) <= e.addr_span[0]) |
      static_cast<uint32_t>(static_cast<uint32_t>(k.addr[1] - e.addr_lo[1]) <= e.addr_span[1])
          << 1 |
      static_cast<uint32_t>(static_cast<uint16_t>(k.port[0] - e.port_lo[0]) <= e.port_span[0])
          << 2 |
      static_cast<uint32_t>(static_cast<uint16_t>(k.port[1] - e.port_lo[1]) <= e.port_span[1])
          << 3 |
      static_cast<uint32_t>(static_cast<uint8_t>(k.proto - e.proto_lo) <= e.proto_span) << 4;
  const uint32_t pass = (in & e.present_ok & k.present) | (e.absent_ok & ~uint32_t{k.present});
  return pass == (1u << kDims) - 1;
}

uint32_t Classifier::ScanLeaf(const Node& leaf, const LeafKey& key, uint32_t best) const {
  const LeafEntry* entry = leaf_entries_.data() + leaf.entries;
  // Entries come in priority order and end with index kNone.
  for (uint32_t i = 0; entry[i].index < best; ++i) {
    if (Holds(entry[i], key)) return entry[i].index;
  }
  return kNone;
}

uint32_t Classifier::ExactStep(const Node& node, const uint64_t* walk_key) {
  const uint64_t v = walk_key[node.dim];
  uint32_t below = 0;
  for (uint32_t i = 0; i < node.used; ++i) {
    below += (static_cast<uint32_t>(node.threshold[i]) ^ 0x80000000u) < v ? 1 : 0;
  }
  return node.child + below;
}

namespace {

// The same step for a key whose fields all fit 32 bits, biased like the
// thresholds: the thresholds below the value are a prefix (they are
// sorted; unused slots are never below), so the count is the number of
// trailing ones of the compare mask.
[[gnu::always_inline]] inline uint32_t FastStep(const int32_t* threshold, uint32_t child,
                                                int32_t biased_value) {
  const __m128i v = _mm_set1_epi32(biased_value);
  const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(threshold));
  const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(threshold + 4));
  const uint32_t below = static_cast<uint32_t>(
      _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, lo))) |
      _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, hi))) << 4);
  return child + static_cast<uint32_t>(__builtin_ctz(~below));
}

}  // namespace

uint32_t Classifier::BestBox(const Key& key, uint32_t* walked) const {
  const Node* nodes = nodes_.data();
  uint64_t walk_key[kDims + 1];
  for (int d = 0; d < kDims; ++d) walk_key[d] = key.v[d];
  walk_key[kLeafDim] = 0;
  const LeafKey leaf_key = ToLeafKey(key);
  uint32_t best = kNone;
  for (const Tree& t : trees_) {
    if (t.first_box >= best) break;  // no rule of this tree can come first
    if (walked) ++*walked;
    uint32_t n = t.root;
    while (nodes[n].dim != kLeafDim) {
      n = nodes[n].first < best ? ExactStep(nodes[n], walk_key) : kEmptyLeaf;
    }
    const uint32_t found = ScanLeaf(nodes[n], leaf_key, best);
    if (found < best) best = found;
  }
  return best;
}

int Classifier::FirstMatch(const Key& key) const {
  const uint32_t best = BestBox(key, nullptr);
  return best == kNone ? -1 : rule_ids_[best];
}

uint32_t Classifier::TreesWalked(const Key& key) const {
  uint32_t walked = 0;
  BestBox(key, &walked);
  return walked;
}

// Eight packets walk each tree together, one node per round, so that
// their loads are in flight at once; a packet on a leaf stays there (its
// child is itself), so a round has no branch per packet. A packet without
// an address (its absent value does not fit 32 bits) takes FirstMatch.
void Classifier::FirstMatchBurst(const Key* keys, uint32_t n, int* out) const {
  constexpr uint32_t kLanes = 8;
  const Node* nodes = nodes_.data();
  for (uint32_t base = 0; base < n; base += kLanes) {
    const uint32_t lanes = n - base < kLanes ? n - base : kLanes;
    uint32_t best[kLanes];
    int32_t walk_key[kLanes][kDims + 1];
    LeafKey leaf_keys[kLanes];
    bool exact[kLanes];
    for (uint32_t l = 0; l < lanes; ++l) {
      const Key& key = keys[base + l];
      exact[l] = key.v[kSrcAddr] > FieldMax(kSrcAddr) || key.v[kDstAddr] > FieldMax(kDstAddr);
      best[l] = exact[l] ? 0 : kNone;  // an exact lane skips the walk
      for (int d = 0; d < kDims; ++d) {
        walk_key[l][d] = static_cast<int32_t>(static_cast<uint32_t>(key.v[d]) ^ 0x80000000u);
      }
      walk_key[l][kLeafDim] = INT32_MIN;  // 0, biased
      leaf_keys[l] = ToLeafKey(key);
    }
    for (const Tree& t : trees_) {
      uint32_t at[kLanes];
      bool any = false;
      for (uint32_t l = 0; l < lanes; ++l) {
        const bool walks = t.first_box < best[l];
        at[l] = walks ? t.root : kEmptyLeaf;
        any |= walks;
      }
      if (!any) break;
      bool all_leaves = false;
      while (!all_leaves) {
        all_leaves = true;
        for (uint32_t l = 0; l < lanes; ++l) {
          const Node& node = nodes[at[l]];
          all_leaves &= node.dim == kLeafDim;
          const uint32_t next = FastStep(node.threshold, node.child, walk_key[l][node.dim]);
          at[l] = node.first < best[l] ? next : kEmptyLeaf;
        }
      }
      // Every lane's leaf loads before any is scanned (a leaf scan waits on
      // its first box otherwise, lane after lane).
      for (uint32_t l = 0; l < lanes; ++l) {
        const LeafEntry* entry = leaf_entries_.data() + nodes[at[l]].entries;
        __builtin_prefetch(entry);
        __builtin_prefetch(entry + 2);
      }
      for (uint32_t l = 0; l < lanes; ++l) {
        const uint32_t found = ScanLeaf(nodes[at[l]], leaf_keys[l], best[l]);
        if (found < best[l]) best[l] = found;
      }
    }
    for (uint32_t l = 0; l < lanes; ++l) {
      out[base + l] = exact[l]         ? FirstMatch(keys[base + l])
                      : best[l] == kNone ? -1
                                         : rule_ids_[best[l]];
    }
  }
}

size_t Classifier::memory_bytes() const {
  return trees_.size() * sizeof(Tree) + nodes_.size() * sizeof(Node) +
         leaf_entries_.size() * sizeof(LeafEntry) + rule_ids_.size() * sizeof(int32_t);
}

}  // namespace rulejit::classify
