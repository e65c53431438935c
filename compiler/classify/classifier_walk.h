// The classifier's lookups (see classifier.h for the algorithm), written
// once over an `Ops` that supplies the two inner steps in one instruction
// set:
//   Ops::Below(node, biased value) how many thresholds of the node are
//                                  below the value: the packet moves to
//                                  child + that (the value and the
//                                  thresholds fit 32 bits)
//   Ops::Hits(block, leaf key)     bit j set when box j of the block holds
//                                  the packet
// classifier_run.cc instantiates it with SSE2 and scalar code (every
// x86-64), classifier_run_avx2.cc with AVX2, classifier_run_avx512.cc with
// AVX-512; Classifier picks one at run time. Include only from those files: everything here has internal
// linkage, because each unit compiles it for its own instruction set and
// the two copies must not be merged by the linker.
#ifndef RULEJIT_COMPILER_CLASSIFY_CLASSIFIER_WALK_H_
#define RULEJIT_COMPILER_CLASSIFY_CLASSIFIER_WALK_H_

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "compiler/classify/classifier.h"

namespace rulejit::classify {
namespace {

using Node = Classifier::Node;
using LeafBlock = Classifier::LeafBlock;
using LeafKey = Classifier::LeafKey;
constexpr uint32_t kNone = Classifier::kNone;
constexpr uint32_t kLeafDim = Classifier::kLeafDim;

// How many of the inner node's thresholds are below the key's value (the
// packet moves to child + that), exact for every key (an absent address is
// 2^32, above every threshold).
inline uint32_t ExactBelow(const Node& node, const uint64_t* key) {
  const uint64_t v = key[node.dim];
  uint32_t below = 0;
  for (uint32_t i = 0; i < node.used; ++i) {
    below += (static_cast<uint32_t>(node.threshold[i]) ^ 0x80000000u) < v ? 1 : 0;
  }
  return below;
}

// The first box of the leaf starting at `block` that holds the key, if it
// comes before `best`; else kNone. Boxes are in priority order, so the
// first hit is the leaf's answer.
template <class Ops>
[[gnu::always_inline]] inline uint32_t ScanLeaf(const LeafBlock* block, const LeafKey& key,
                                                uint32_t best) {
  for (;; ++block) {
    if (block->index[0] >= best) return kNone;  // an empty block's is kNone
    const uint32_t hits = Ops::Hits(*block, key);
    if (hits != 0) {
      const uint32_t found = block->index[__builtin_ctz(hits)];
      return found < best ? found : kNone;
    }
    if (!block->more) return kNone;
  }
}

// Which boxes of `block` the key's fields pass, given per dimension the
// boxes whose range holds the field value (`in`, byte d, bit j: box j): a
// present field must be in range where the box has values, an absent one
// needs the box's absent_ok. The five dimensions' masks are bytes of one
// word, so that a few word operations combine them (a loop per dimension
// took 17% of acl1_10K's burst lookup).
[[gnu::always_inline]] inline uint32_t PassingBoxes(const LeafBlock& block, const LeafKey& key,
                                                    uint64_t in) {
  // Bytes past kDims are what follows in the block; the OR below passes them.
  uint64_t present_ok, absent_ok;
  std::memcpy(&present_ok, block.present_ok, sizeof present_ok);
  std::memcpy(&absent_ok, block.absent_ok, sizeof absent_ok);
  static_assert(offsetof(LeafBlock, absent_ok) + sizeof(uint64_t) <= sizeof(LeafBlock));
  constexpr uint64_t kPastDims = ~uint64_t{0} << (8 * kDims);
  uint64_t pass = (in & present_ok & ~key.absent) | (absent_ok & key.absent) | kPastDims;
  pass &= pass >> 32;  // AND of the eight bytes
  pass &= pass >> 16;
  pass &= pass >> 8;
  return static_cast<uint32_t>(pass & 0xff);
}

// The best box holding the key, or kNone; counts the trees walked.
// A step's dependency chain is the single lookup's cost (BM_ClassifierKey,
// jit_bench: 4 steps and a leaf, all in L1): the next node's dimension
// comes from the parent's kid_dims rather than a load of the child, and the
// key is read field by field (copying it whole with one vector load
// stalled on the caller's 8-byte stores that had just written it).
template <class Ops>
uint32_t BestBox(const Classifier::Arrays& a, const Key& key, uint32_t* walked) {
  int32_t biased[kLeafDim + 1];
#pragma GCC unroll 8
  for (int d = 0; d < kDims; ++d) {
    biased[d] = static_cast<int32_t>(static_cast<uint32_t>(key.v[d]) ^ 0x80000000u);
  }
  biased[kLeafDim] = INT32_MIN;
  // Only addresses can be absent above 32 bits (2^32); the fast step needs
  // every value in 32 bits.
  const bool fits = key.v[kSrcAddr] <= FieldMax(kSrcAddr) && key.v[kDstAddr] <= FieldMax(kDstAddr);
  const LeafKey leaf_key = Classifier::ToLeafKey(key);
  uint32_t best = kNone;
  for (uint32_t t = 0; t < a.tree_count; ++t) {
    if (a.trees[t].first_box >= best) break;  // no rule of this tree can come first
    if (walked) ++*walked;
    uint32_t n = a.trees[t].root;
    uint32_t dim = a.nodes[n].dim;
    while (dim != kLeafDim) {
      const Node& node = a.nodes[n];
      if (node.first >= best) {
        n = Classifier::kEmptyLeaf;
        break;
      }
      const uint32_t below = fits ? Ops::Below(node, biased[dim]) : ExactBelow(node, key.v);
      n = node.child + below;
      dim = Classifier::KidDim(node, below);
    }
    const uint32_t found = ScanLeaf<Ops>(a.blocks + a.nodes[n].block, leaf_key, best);
    if (found < best) best = found;
  }
  return best;
}

// Sixteen packets walk each tree together, one node per round, so that
// their loads are in flight at once (16 rather than 8: ipc1_10K's 38 MB
// tree, 1.2-1.6x faster in classify_bench; the others alike); a packet on a leaf stays there (its
// child is itself), so a round has no branch per packet. A packet walks
// every tree whose first box could beat what it has found, down to a leaf:
// checking `first` at each step cost more than the steps it saved
// (classify_bench), and the leaf scan gives up at once when its first box
// is no better. A packet without an address (its absent value does not
// fit 32 bits) takes BestBox.
template <class Ops>
void FirstMatchBurst(const Classifier::Arrays& a, const Key* keys, uint32_t n, int* out) {
  constexpr uint32_t kLanes = 16;
  const Node* nodes = a.nodes;
  for (uint32_t base = 0; base < n; base += kLanes) {
    const uint32_t lanes = n - base < kLanes ? n - base : kLanes;
    uint32_t best[kLanes];
    int32_t walk_key[kLanes][kLeafDim + 1];
    LeafKey leaf_keys[kLanes];
    bool exact[kLanes];
    for (uint32_t l = 0; l < lanes; ++l) {
      const Key& key = keys[base + l];
      leaf_keys[l] = Classifier::ToLeafKey(key);
      constexpr uint64_t kAddrBytes = Classifier::kAbsentBytes[(1u << kSrcAddr) | (1u << kDstAddr)];
      exact[l] = (leaf_keys[l].absent & kAddrBytes) != 0;
      best[l] = exact[l] ? 0 : kNone;  // an exact lane skips the walk
      for (int d = 0; d < kDims; ++d) {
        walk_key[l][d] = static_cast<int32_t>(static_cast<uint32_t>(key.v[d]) ^ 0x80000000u);
      }
      walk_key[l][kLeafDim] = INT32_MIN;  // 0, biased
    }
    for (uint32_t t = 0; t < a.tree_count; ++t) {
      const Classifier::Tree& tree = a.trees[t];
      // Only the lanes that can still find a better box walk the tree
      // (`lane`: theirs, in order; at[i]: lane[i]'s node): after the first
      // tree most packets have their answer (acl1_10K: 1.02 trees walked a
      // packet), and a round of 16 steps for one packet's sake is waste.
      uint32_t lane[kLanes], at[kLanes];
      uint32_t walking = 0;
      for (uint32_t l = 0; l < lanes; ++l) {
        lane[walking] = l;
        at[walking] = tree.root;
        walking += tree.first_box < best[l] ? 1 : 0;
      }
      if (walking == 0) break;
      // A node says which of its children are leaves, so the walk ends in
      // the round that reaches the last leaf rather than one round later
      // (a round of 16 steps; acl1_10K walks ~3 rounds a tree).
      bool all_leaves = nodes[tree.root].dim == kLeafDim;
      while (!all_leaves) {
        all_leaves = true;
        for (uint32_t i = 0; i < walking; ++i) {
          const Node& node = nodes[at[i]];
          const uint32_t below = Ops::Below(node, walk_key[lane[i]][node.dim]);
          all_leaves &= (node.leaf_kids >> below) & 1u;
          at[i] = node.child + below;
        }
      }
      // Every lane's leaf loads before any is scanned (a leaf scan waits on
      // its first block otherwise, lane after lane).
      for (uint32_t i = 0; i < walking; ++i) {
        const char* block = reinterpret_cast<const char*>(a.blocks + nodes[at[i]].block);
        __builtin_prefetch(block);
        __builtin_prefetch(block + 64);
        __builtin_prefetch(block + 128);
        __builtin_prefetch(block + 192);
      }
      for (uint32_t i = 0; i < walking; ++i) {
        const uint32_t l = lane[i];
        const uint32_t found = ScanLeaf<Ops>(a.blocks + nodes[at[i]].block, leaf_keys[l], best[l]);
        if (found < best[l]) best[l] = found;
      }
    }
    for (uint32_t l = 0; l < lanes; ++l) {
      if (exact[l]) best[l] = BestBox<Ops>(a, keys[base + l], nullptr);
      out[base + l] = best[l] == kNone ? -1 : a.rule_ids[best[l]];
    }
  }
}

}  // namespace

// The AVX2 and AVX-512 instances (classifier_run_avx2.cc,
// classifier_run_avx512.cc); call only where the CPU has the instruction
// set (CpuHas).
namespace avx2 {
uint32_t BestBox(const Classifier::Arrays& a, const Key& key, uint32_t* walked);
void FirstMatchBurst(const Classifier::Arrays& a, const Key* keys, uint32_t n, int* out);
}  // namespace avx2
namespace avx512 {
uint32_t BestBox(const Classifier::Arrays& a, const Key& key, uint32_t* walked);
void FirstMatchBurst(const Classifier::Arrays& a, const Key* keys, uint32_t n, int* out);
}  // namespace avx512

}  // namespace rulejit::classify

#endif  // RULEJIT_COMPILER_CLASSIFY_CLASSIFIER_WALK_H_
