// The classifier: a decision structure over header space (box.h) whose
// answer is the index of the first rule whose box holds the packet, exactly
// as the linear chain's first matching rule.
//
//   auto c = classify::Classifier::Build(chain, seg.begin, seg.end);
//   if (!c.ok()) ... (some rule in the range does not lift: headerspace/lift_box.h)
//   int rule = c->FirstMatch(packet_view);   // chain rule index, or -1
//   c->memory_bytes();                       // size of the built tables
//
// Algorithm (HyperSplit-style binary splits, leaves of a few rules; build in
// classifier_build.cc, lookup in classifier_run.cc, DPDK style):
//
//   build(region, rules in priority order):
//     keep the rules whose box meets the region; cut the list after the
//       first rule whose box covers the whole region (later ones can never
//       be first there)
//     if |rules| <= leaf_size or depth == max_depth: leaf(rules)
//     for each dimension d, for each candidate threshold t (a clipped rule
//       end hi, or a clipped rule start lo - 1, inside the region):
//         L(t) = #rules with clipped lo <= t, R(t) = #rules with clipped hi > t
//     pick (d, t) minimising max(L, R), then L + R
//     node on d, slices = [region ∩ {x_d <= t}, region ∩ {x_d > t}]
//     while the node has fewer than 8 thresholds: split the slice with
//       the most rules again on d, at its best t, if that separates rules
//       at all (one node's compare does all these binary levels' work)
//     children: build(slice, its rules) for each slice, in order
//
//   partition: rules go to one of four groups by (source range small?,
//     destination range small?); each group gets its own tree (CutSplit's
//     idea: a wildcard address in one rule no longer gets copied under
//     every cut of the other rules' addresses). Two groups share a tree
//     when it holds at most a tenth more box copies than their two trees
//     (greedy, pairs that most packets walk both of; fw1_10K: 3 trees, 2
//     walked instead of 3). When lookups walk more than
//     1.25 trees on average (measured on a point of every rule), one tree
//     for all rules is built instead (leaves of up to
//     single_tree_leaf_size rules) and kept if its leaves hold at most
//     single_tree_budget boxes per rule (ipc1_10K: 2x faster).
//
//   lookup(key):
//     best = none
//     for tree in trees, by their highest-priority rule:
//       if tree's first rule is after best: stop
//       n = tree.root
//       while n is inner:
//         n = n.child + #(thresholds of n below key[n.dim])   (one AVX2 compare)
//       test the leaf's boxes before best against key, 8 at a time (a
//         vector compare per dimension); the first that holds: best
//     return best == none ? -1 : rule[best]
//   FirstMatchBurst walks 16 packets a level at a time (a leaf's child is
//   itself, so no branch per packet; only the packets that can still find
//   a better rule walk a tree) and prefetches their leaves. The
//   walks are written once (classifier_walk.h) and compiled twice: with
//   AVX2 where the CPU has it, with SSE2 and scalar code elsewhere.
//
// The built structure is immutable and made of flat arrays: 64-byte nodes
// of up to 8 thresholds (a node's children are adjacent), leaf blocks
// holding copies of the leaves' boxes in columns, 8 to a block. It is safe to share between
// threads.
#ifndef RULEJIT_COMPILER_CLASSIFY_CLASSIFIER_H_
#define RULEJIT_COMPILER_CLASSIFY_CLASSIFIER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/classify/space.h"
#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::classify {

// The instruction sets the lookups are compiled for: baseline x86-64
// (classifier_run.cc), AVX2 (classifier_run_avx2.cc), AVX-512 F+VL+BW
// (classifier_run_avx512.cc).
enum class Isa : uint8_t { kBaseline, kAvx2, kAvx512 };
const char* IsaName(Isa isa);  // "baseline", "avx2", "avx512"
// Whether this CPU (and its OS) runs the lookups of `isa`.
bool CpuHas(Isa isa);
// The widest instruction set up to `max` that this CPU runs.
Isa BestIsaUpTo(Isa max);

struct ClassifierOptions {
  uint32_t leaf_size = 8;   // a node with at most this many rules is a leaf
  uint32_t max_depth = 64;  // deeper nodes become leaves (correct, slower)
  // Split the rules into up to four trees by whether their source and
  // destination address ranges are small (at most 2^address_bits_small
  // addresses), so that wildcard addresses are not copied into every
  // address cut of specific rules.
  bool partition = true;
  uint32_t address_bits_small = 16;
  // With partition: first try one tree for all rules, kept when its leaves
  // hold at most this many boxes per rule (one walk per packet instead of
  // one per group; ipc1_10K: 39 copies a rule, 2x faster); 0: always
  // partition. The cap bounds memory and build time (fw1_10K's single
  // tree, given up, took 568 ms to build with a cap of 100).
  uint32_t single_tree_budget = 50;
  // The single tree's leaf size: its walk is memory-bound, and larger
  // leaves copy fewer boxes (ipc1_10K: 355k leaf entries instead of 762k,
  // classify_bench 861 -> 794 ns per 32; acl1 and fw1, partitioned, were
  // slower with 12).
  uint32_t single_tree_leaf_size = 12;
  BoxContext lift;  // what every packet of the chain is known to have
  // The widest instruction set the lookups may use; the classifier takes
  // the widest the CPU has up to this (classifier_run.cc's walk table).
  // kBaseline: the SSE2 and scalar code every x86-64 runs (tests compare
  // them all).
  Isa max_isa = Isa::kAvx512;
};

// A rule for the classifier: its box and the index FirstMatch reports.
struct RuleBox {
  Box box;
  int rule = 0;
};

class Classifier {
 public:
  struct Stats {
    size_t rules = 0;         // non-empty boxes in the structure
    size_t inner_nodes = 0;   // of the binary tree
    size_t nodes = 0;         // built nodes (merged), leaves included
    size_t leaves = 0;
    size_t leaf_entries = 0;  // sum of leaf list lengths
    size_t max_depth = 0;
    size_t max_leaf = 0;
    size_t trees = 0;
  };

  // Lifts rules [begin, end) of `chain`; FirstMatch reports chain rule
  // indexes. Fails when a rule in the range does not lift.
  [[nodiscard]] static absl::StatusOr<Classifier> Build(const ir::Chain& chain, size_t begin,
                                                        size_t end,
                                                        const ClassifierOptions& options = {});
  // From boxes in priority order (first = highest).
  static Classifier FromBoxes(const std::vector<RuleBox>& rules,
                              const ClassifierOptions& options = {});

  // The first matching rule's index, or -1.
  int FirstMatch(const PacketView& pkt) const { return FirstMatch(KeyOf(pkt)); }
  // The packet's key as this classifier's boxes read it (BoxContext).
  Key KeyOf(const PacketView& pkt) const {
    return ExtractKey(pkt, ports_first_fragment_only_);
  }
  int FirstMatch(const Key& key) const;
  // Burst form: out[i] = FirstMatch(keys[i]); interleaves the tree walks of
  // several packets to overlap their cache misses.
  void FirstMatchBurst(const Key* keys, uint32_t n, int* out) const;

  size_t memory_bytes() const;
  // How many trees a lookup of `key` walks (the builder's cost measure;
  // classify_bench reports it).
  uint32_t TreesWalked(const Key& key) const;
  const Stats& stats() const { return stats_; }
  // The instruction set the lookups run with.
  Isa isa() const { return isa_; }

  // The built arrays. Public for the lookup walks in classifier_walk.h,
  // which two translation units compile with different instruction sets;
  // nothing else should need them.
  static constexpr uint32_t kNone = 0xffffffffu;
  // A node holds up to kWays sorted thresholds on one dimension (binary
  // splits, classifier_build.cc): a packet steps to child + (number of
  // thresholds below its field value), which one or two vector compares
  // compute, so a step does up to kWays binary splits' work.
  //
  // Thresholds are stored biased (x ^ 0x80000000, so that signed compares
  // order them as unsigned); unused slots hold INT32_MAX, which no biased
  // value exceeds. Thresholds never exceed a field's largest value, so
  // they fit 32 bits; the "absent" address value (2^32) does not, and
  // packets without an address take the exact scalar step.
  // Leaf: dim == kLeafDim, a key slot that always holds 0, no thresholds,
  // and child is the leaf itself, so stepping from a leaf stays there and
  // the burst walk needs no branch per packet; its boxes are in
  // leaf_blocks_[block] and the blocks after it while `more` is set.
  // `first`: the best (smallest) box index anywhere below the node; a walk
  // that already found a box at least as good gives up there.
  static constexpr uint32_t kLeafDim = kDims;
  static constexpr int kWays = 8;
  struct alignas(64) Node {
    int32_t threshold[kWays];
    uint32_t child;
    uint32_t dim;
    uint32_t first;
    uint32_t used;   // thresholds in use
    uint32_t block;  // leaf: its first block in leaf_blocks_
    uint32_t leaf_kids;  // bit i: child + i is a leaf (a leaf: 1, itself)
    // Bits 3i..3i+2: child + i's dim (kLeafDim for a leaf; a leaf: its
    // own), so that the single lookup knows the next node's dimension
    // from this one: its step waits on no load of the child's `dim`.
    uint32_t kid_dims;
  };
  static_assert(kDims + 1 <= 8 && 3 * (kWays + 1) <= 32, "kid_dims: 3 bits per child");
  static uint32_t KidDim(const Node& node, uint32_t below) {
    return node.kid_dims >> (3 * below) & 7u;
  }
  // Node 0 is an empty leaf: where a single lookup's walk goes when the
  // rest of the tree cannot beat what it has found.
  static constexpr uint32_t kEmptyLeaf = 0;
  struct Tree {
    uint32_t root;
    uint32_t first_box;  // the tree's highest-priority box
  };
  // A packet's fields as the leaf test reads them: narrow values (absent
  // fields read as 0), and a byte per dimension marking the absent ones.
  struct LeafKey {
    uint32_t addr[2];
    uint16_t port[2];
    uint8_t proto;
    uint64_t absent;  // byte d: 0xff when field d was not read (the leaf test's mask)
  };
  // Up to kBlock boxes of a leaf in columns, so that one vector compare per
  // dimension tests all of them (classifier_run_avx2.cc); 256 bytes, as
  // many as eight boxes take row by row. Per dimension a box holds the
  // field values [lo, lo + span] when its present_ok bit is set (none
  // otherwise), and packets without the field when its absent_ok bit is.
  // Boxes are in priority order; unused slots have neither bit, so they
  // never match, and index kNone.
  static constexpr int kBlock = 8;
  struct alignas(64) LeafBlock {
    uint32_t addr_lo[2][kBlock];
    uint32_t addr_span[2][kBlock];
    uint16_t port_lo[2][kBlock];
    uint16_t port_span[2][kBlock];
    uint8_t proto_lo[kBlock];
    uint8_t proto_span[kBlock];
    uint32_t index[kBlock];     // into rule_ids_ (priority order)
    uint8_t present_ok[kDims];  // bit j: box j
    uint8_t absent_ok[kDims];
    uint8_t used;  // boxes in this block
    uint8_t more;  // the leaf goes on in the next block
    // Bit j: box j has values in every dimension (present_ok of all
    // dimensions), what a key with every field present needs besides the
    // ranges (the AVX-512 leaf test's short way).
    uint8_t present_all;
  };
  struct Arrays {
    const Tree* trees;
    uint32_t tree_count;
    const Node* nodes;
    const LeafBlock* blocks;
    const int32_t* rule_ids;
  };
  Arrays arrays() const {
    return {trees_.data(), static_cast<uint32_t>(trees_.size()), nodes_.data(),
            leaf_blocks_.data(), rule_ids_.data()};
  }
  // A key's values are at most AbsentValue = 2^bits, so value >> bits is
  // 1 exactly when the field is absent, and the absent value narrows to 0,
  // as it should read: no compare or select per field (the key setup took
  // a fifth of acl1_10K's burst lookup).
  // kAbsentBytes[bits]: byte d is 0xff where bit d is set.
  static constexpr std::array<uint64_t, 1u << kDims> kAbsentBytes = [] {
    std::array<uint64_t, 1u << kDims> bytes{};
    for (uint32_t bits = 0; bits < bytes.size(); ++bits) {
      for (int d = 0; d < kDims; ++d) {
        if (bits >> d & 1) bytes[bits] |= uint64_t{0xff} << (8 * d);
      }
    }
    return bytes;
  }();
  static LeafKey ToLeafKey(const Key& key) {
    LeafKey k;
    uint32_t absent = 0;
#pragma GCC unroll 8  // constant shifts, no loop (the single lookup's setup)
    for (int d = 0; d < kDims; ++d) {
      absent |= static_cast<uint32_t>(key.v[d] >> kDimBits[d]) << d;
    }
    k.absent = kAbsentBytes[absent];
    k.addr[0] = static_cast<uint32_t>(key.v[kSrcAddr]);
    k.addr[1] = static_cast<uint32_t>(key.v[kDstAddr]);
    k.port[0] = static_cast<uint16_t>(key.v[kSrcPort]);
    k.port[1] = static_cast<uint16_t>(key.v[kDstPort]);
    k.proto = static_cast<uint8_t>(key.v[kProto]);
    return k;
  }

 private:
  friend class ClassifierBuilder;
  bool ports_first_fragment_only_ = false;
  Isa isa_ = Isa::kBaseline;  // the lookups' instruction set

  std::vector<Tree> trees_;           // by first_box
  std::vector<Node> nodes_;
  // A leaf's boxes are copied into its own blocks so that a leaf scan reads
  // consecutive memory (no indirection per rule).
  std::vector<LeafBlock> leaf_blocks_;
  std::vector<Box> boxes_;            // in priority order (build input)
  std::vector<int32_t> rule_ids_;     // per box: the reported rule index
  Stats stats_;
};

}  // namespace rulejit::classify

#endif  // RULEJIT_COMPILER_CLASSIFY_CLASSIFIER_H_
