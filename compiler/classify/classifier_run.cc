// Classifier lookup (the hot path; see classifier.h for the algorithm).
// No allocation, no locks, only reads of the immutable arrays.
#include "compiler/classify/classifier.h"

namespace rulejit::classify {

uint32_t Classifier::ScanLeaf(const Node& leaf, const Key& key) const {
  const LeafEntry* entry = leaf_boxes_.data() + leaf.child;
  const uint32_t count = static_cast<uint32_t>(leaf.threshold);
  for (uint32_t i = 0; i < count; ++i) {
    if (entry[i].box.Contains(key)) return entry[i].index;
  }
  return kNone;
}

uint32_t Classifier::Walk(uint32_t n, const Key& key) const {
  const Node* nodes = nodes_.data();
  while (nodes[n].dim != kLeaf) {
    n = nodes[n].child + (key.v[nodes[n].dim] > nodes[n].threshold ? 1 : 0);
  }
  return ScanLeaf(nodes[n], key);
}

int Classifier::FirstMatch(const Key& key) const {
  uint32_t best = kNone;
  for (const Tree& t : trees_) {
    if (t.first_box >= best) break;  // no rule of this tree can come first
    const uint32_t found = Walk(t.root, key);
    if (found < best) best = found;
  }
  return best == kNone ? -1 : rule_ids_[best];
}

void Classifier::FirstMatchBurst(const Key* keys, uint32_t n, int* out) const {
  constexpr uint32_t kLanes = 8;
  const Node* nodes = nodes_.data();
  for (uint32_t base = 0; base < n; base += kLanes) {
    const uint32_t lanes = n - base < kLanes ? n - base : kLanes;
    uint32_t best[kLanes];
    for (uint32_t l = 0; l < lanes; ++l) best[l] = kNone;
    for (const Tree& t : trees_) {
      uint32_t at[kLanes];
      bool any = false;
      for (uint32_t l = 0; l < lanes; ++l) {
        at[l] = t.first_box < best[l] ? t.root : kNone;
        any |= at[l] != kNone;
      }
      if (!any) break;
      // Walk all lanes one level at a time until every lane sits on a
      // leaf, so the loads of different packets are in flight together.
      bool moving = true;
      while (moving) {
        moving = false;
        for (uint32_t l = 0; l < lanes; ++l) {
          if (at[l] == kNone) continue;
          const Node& node = nodes[at[l]];
          if (node.dim == kLeaf) continue;
          at[l] = node.child + (keys[base + l].v[node.dim] > node.threshold ? 1 : 0);
          moving = true;
        }
      }
      for (uint32_t l = 0; l < lanes; ++l) {
        if (at[l] == kNone) continue;
        const uint32_t found = ScanLeaf(nodes[at[l]], keys[base + l]);
        if (found < best[l]) best[l] = found;
      }
    }
    for (uint32_t l = 0; l < lanes; ++l) {
      out[base + l] = best[l] == kNone ? -1 : rule_ids_[best[l]];
    }
  }
}

size_t Classifier::memory_bytes() const {
  return trees_.size() * sizeof(Tree) + nodes_.size() * sizeof(Node) +
         leaf_boxes_.size() * sizeof(LeafEntry) + rule_ids_.size() * sizeof(int32_t);
}

}  // namespace rulejit::classify
