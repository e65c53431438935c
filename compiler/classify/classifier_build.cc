// Classifier construction (see classifier.h for the algorithm). Build-time
// only: allocation is fine here, the result is flat arrays.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/classify/classifier.h"
#include "compiler/headerspace/lift_box.h"

namespace rulejit::classify {

class ClassifierBuilder {
 public:
  ClassifierBuilder(Classifier& out, const ClassifierOptions& options)
      : out_(out), options_(options), leaf_size_(options.leaf_size) {}

  void Run() {
    std::vector<std::vector<uint32_t>> groups = Groups(options_.partition);
    if (options_.partition) groups = MergeCheapPairs(std::move(groups));
    BuildTrees(std::move(groups), SIZE_MAX, options_.leaf_size);
    // Partition groups cost a tree walk each. When packets walk several
    // (measured on a point of every rule's box), try one tree for all
    // rules instead, kept if its copies of boxes stay within the budget.
    if (options_.partition && options_.single_tree_budget > 0 && out_.trees_.size() > 1 &&
        MeanTreesWalked() > kWalksWorthOneTree) {
      Classifier partitioned = out_;
      const size_t budget = static_cast<size_t>(options_.single_tree_budget) * out_.boxes_.size();
      if (!BuildTrees(Groups(false), budget, options_.single_tree_leaf_size)) {
        out_ = std::move(partitioned);
      }
    }
    out_.stats_.rules = out_.boxes_.size();
    out_.stats_.trees = out_.trees_.size();
    out_.boxes_ = {};  // the leaves hold their own copies
    out_.stats_.nodes = out_.nodes_.size();
    out_.nodes_.shrink_to_fit();
    out_.leaf_blocks_.shrink_to_fit();
  }

 private:
  // A tree per non-empty group, leaves of up to `leaf_size` boxes; false
  // (and nothing built) when the leaves would hold more than `budget` boxes.
  bool BuildTrees(std::vector<std::vector<uint32_t>> groups, size_t budget, uint32_t leaf_size) {
    leaf_size_ = leaf_size;
    out_.trees_.clear();
    out_.nodes_.clear();
    out_.leaf_blocks_.clear();
    out_.stats_ = {};
    budget_ = budget;
    out_.nodes_.push_back(Leaf(Classifier::kEmptyLeaf, 0, Classifier::kNone));
    out_.leaf_blocks_.push_back(EmptyBlock());
    for (std::vector<uint32_t>& group : groups) {
      if (group.empty()) continue;
      binary_.clear();
      binary_.resize(1);
      const uint32_t first = group.front();
      BuildNode(0, Box{}, std::move(group), 0);
      if (out_.stats_.leaf_entries > budget_) return false;
      const uint32_t root = static_cast<uint32_t>(out_.nodes_.size());
      out_.nodes_.emplace_back();
      Widen(root, 0);
      out_.trees_.push_back(Classifier::Tree{root, first});
    }
    std::sort(out_.trees_.begin(), out_.trees_.end(),
              [](const Classifier::Tree& a, const Classifier::Tree& b) {
                return a.first_box < b.first_box;
              });
    return true;
  }

  static constexpr double kWalksWorthOneTree = 1.25;
  static constexpr size_t kUnknown = SIZE_MAX;

  // Two groups whose rules share a tree with few more copies of boxes than
  // their own two trees hold (at most a tenth more) become one group:
  // packets that walked both walk one tree. Greedy, the cheapest pair
  // first (ties: the larger group, fewer leaves on fw1_10K), until no pair
  // is cheap. Only pairs whose trees most rules' packets walk both of (a
  // tree is walked until a rule before its first is found) are tried:
  // each try builds a tree. fw1_10K: the rules small in both addresses
  // join those small in destination only with no copy at all, and packets
  // walk 2 trees instead of 3.
  std::vector<std::vector<uint32_t>> MergeCheapPairs(std::vector<std::vector<uint32_t>> groups) {
    std::erase_if(groups, [](const std::vector<uint32_t>& g) { return g.empty(); });
    const size_t rules = out_.boxes_.size();
    std::vector<size_t> entries(groups.size(), kUnknown);
    auto entries_of = [&](size_t g) {
      if (entries[g] == kUnknown) entries[g] = TreeEntries(groups[g], SIZE_MAX);
      return entries[g];
    };
    for (;;) {
      size_t best_i = 0, best_j = 0, best_together = 0, best_apart = 0;
      std::vector<uint32_t> best_group;
      for (size_t i = 0; i < groups.size(); ++i) {
        for (size_t j = i + 1; j < groups.size(); ++j) {
          const size_t both_walked = rules - std::max(groups[i].front(), groups[j].front());
          if (2 * both_walked < rules) continue;
          const size_t apart = entries_of(i) + entries_of(j);
          const size_t bound = apart + apart / 10;
          std::vector<uint32_t> merged;
          std::merge(groups[i].begin(), groups[i].end(), groups[j].begin(), groups[j].end(),
                     std::back_inserter(merged));
          const size_t together = TreeEntries(merged, bound);
          if (together > bound) continue;
          // Growth ratios compared as together / apart, multiplied out.
          const size_t mine = together * best_apart, theirs = best_together * apart;
          const bool better = best_group.empty() || mine < theirs ||
                              (mine == theirs && merged.size() > best_group.size());
          if (!better) continue;
          best_i = i;
          best_j = j;
          best_together = together;
          best_apart = apart;
          best_group = std::move(merged);
        }
      }
      if (best_group.empty()) return groups;
      groups[best_i] = std::move(best_group);
      entries[best_i] = best_together;
      groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(best_j));
      entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(best_j));
    }
  }

  // The leaf entries of a tree for `group`; more than `budget` when the
  // build gave up there. Builds nothing.
  size_t TreeEntries(std::vector<uint32_t> group, size_t budget) {
    const Classifier::Stats stats = out_.stats_;
    const size_t blocks = out_.leaf_blocks_.size();
    out_.stats_.leaf_entries = 0;
    budget_ = budget;
    binary_.clear();
    binary_.resize(1);
    BuildNode(0, Box{}, std::move(group), 0);
    const size_t entries = out_.stats_.leaf_entries;
    out_.stats_ = stats;
    out_.leaf_blocks_.resize(blocks);
    return entries;
  }

  // Trees a lookup walks, averaged over one point of each rule's box (its
  // lowest corner).
  double MeanTreesWalked() const {
    if (out_.boxes_.empty()) return 0;
    size_t walks = 0;
    for (const Box& box : out_.boxes_) {
      Key key;
      for (int d = 0; d < kDims; ++d) key.v[d] = box.lo[d];
      walks += out_.TreesWalked(key);
    }
    return static_cast<double>(walks) / static_cast<double>(out_.boxes_.size());
  }

  // A node of the binary tree built first. Inner: key[dim] <= threshold
  // goes to child, else child + 1. Leaf (dim == kLeafDim): its boxes start
  // at leaf_blocks_[threshold]. `wide`: the node at the top of the wide
  // node it belongs to (BuildNode); itself for a top.
  struct Node {
    uint32_t threshold;
    uint32_t child;
    uint32_t dim;
    uint32_t first;
    uint32_t wide;
  };

  static Classifier::Node Leaf(uint32_t self, uint32_t block, uint32_t first) {
    Classifier::Node leaf;
    std::fill(std::begin(leaf.threshold), std::end(leaf.threshold), INT32_MAX);
    leaf.child = self;
    leaf.dim = Classifier::kLeafDim;
    leaf.first = first;
    leaf.used = 0;
    leaf.block = block;
    leaf.leaf_kids = 1;
    leaf.kid_dims = Classifier::kLeafDim;
    return leaf;
  }

  // Writes out_.nodes_[wide] for binary node b and, below it, its children.
  void Widen(uint32_t wide, uint32_t b) {
    const Node node = binary_[b];
    if (node.dim == Classifier::kLeafDim) {
      out_.nodes_[wide] = Leaf(wide, node.threshold, node.first);
      return;
    }
    std::vector<uint32_t> thresholds, kids;
    Merge(b, b, thresholds, kids);
    Classifier::Node& w = out_.nodes_[wide];
    std::fill(std::begin(w.threshold), std::end(w.threshold), INT32_MAX);
    for (size_t i = 0; i < thresholds.size(); ++i) {
      w.threshold[i] = static_cast<int32_t>(thresholds[i] ^ 0x80000000u);
    }
    const uint32_t base = static_cast<uint32_t>(out_.nodes_.size());
    w.child = base;
    w.dim = node.dim;
    w.first = node.first;
    w.used = static_cast<uint32_t>(thresholds.size());
    w.block = 0;
    w.leaf_kids = 0;
    w.kid_dims = 0;
    for (size_t i = 0; i < kids.size(); ++i) {
      const uint32_t dim = binary_[kids[i]].dim;
      if (dim == Classifier::kLeafDim) w.leaf_kids |= 1u << i;
      w.kid_dims |= dim << (3 * i);
    }
    out_.nodes_.resize(base + kids.size());  // invalidates w
    for (size_t i = 0; i < kids.size(); ++i) Widen(base + static_cast<uint32_t>(i), kids[i]);
  }

  // In order: the thresholds of the binary nodes of wide node `wide` at
  // and below b, and the subtrees between them.
  void Merge(uint32_t b, uint32_t wide, std::vector<uint32_t>& thresholds,
             std::vector<uint32_t>& kids) const {
    const Node& node = binary_[b];
    if (node.dim == Classifier::kLeafDim || node.wide != wide) {
      kids.push_back(b);
      return;
    }
    Merge(node.child, wide, thresholds, kids);
    thresholds.push_back(node.threshold);
    Merge(node.child + 1, wide, thresholds, kids);
  }

  // Box indexes per tree, each in priority order.
  std::vector<std::vector<uint32_t>> Groups(bool partition) const {
    std::vector<std::vector<uint32_t>> groups(partition ? 4 : 1);
    const uint64_t small = uint64_t{1} << options_.address_bits_small;
    for (uint32_t i = 0; i < out_.boxes_.size(); ++i) {
      const Box& b = out_.boxes_[i];
      size_t g = 0;
      if (partition) {
        g = (b.hi[kSrcAddr] - b.lo[kSrcAddr] < small ? 1 : 0) +
            (b.hi[kDstAddr] - b.lo[kDstAddr] < small ? 2 : 0);
      }
      groups[g].push_back(i);
    }
    return groups;
  }

  struct Split {
    int dim = -1;
    uint64_t threshold = 0;
    size_t worst = 0, total = 0;  // max(L, R) and L + R
  };

  // Rules after one that covers the region are never first in it.
  void CutCovered(const Box& region, std::vector<uint32_t>& rules) const {
    for (size_t i = 0; i < rules.size(); ++i) {
      if (out_.boxes_[rules[i]].Covers(region)) {
        rules.resize(i + 1);
        return;
      }
    }
  }

  // A slice of a wide node's region on its dimension, with its rules.
  struct Part {
    uint32_t node;  // in binary_
    Box region;
    std::vector<uint32_t> rules;
    uint32_t depth;
    bool final = false;  // no split on the node's dimension separates its rules
  };

  // Builds the subtree at binary_[index] as one wide node (or a leaf);
  // returns its best box index. The node's dimension is the best binary
  // split's; then, up to kWays thresholds, the slice with the most rules
  // is split again on that dimension while that separates rules at all,
  // so that nodes use their thresholds where the rules are (a node of
  // three full binary levels wastes those under a slice that is already
  // small). A slice's split is computed only when it is the largest left
  // (build time).
  uint32_t BuildNode(uint32_t index, const Box& region, std::vector<uint32_t> rules,
                     uint32_t depth) {
    out_.stats_.max_depth = std::max<size_t>(out_.stats_.max_depth, depth);
    if (out_.stats_.leaf_entries > budget_) return Classifier::kNone;  // over budget: given up
    CutCovered(region, rules);
    Split split;
    if (rules.size() > leaf_size_ && depth < options_.max_depth) {
      split = BestSplit(region, rules);
    }
    if (split.dim < 0) return MakeLeaf(index, rules);
    const int d = split.dim;
    std::vector<Part> parts;
    parts.push_back(Part{index, region, std::move(rules), depth});
    SplitPart(parts, 0, split, index);
    for (int used = 1; used < Classifier::kWays;) {
      size_t p = parts.size();
      for (size_t i = 0; i < parts.size(); ++i) {
        const bool larger = p == parts.size() || parts[i].rules.size() > parts[p].rules.size();
        if (!parts[i].final && larger) p = i;
      }
      if (p == parts.size()) break;
      Part& part = parts[p];
      if (part.rules.size() > leaf_size_ && part.depth < options_.max_depth) {
        split = BestSplit(part.region, part.rules, d);
        if (split.dim >= 0 && split.worst < part.rules.size()) {
          SplitPart(parts, p, split, index);
          ++used;
          continue;
        }
      }
      part.final = true;
    }
    uint32_t first = Classifier::kNone;
    for (Part& part : parts) {
      first = std::min(first, BuildNode(part.node, part.region, std::move(part.rules), part.depth));
    }
    binary_[index].first = first;
    return first;
  }

  // Splits parts[p] in two at `split` (a binary_ node of wide node `wide`).
  void SplitPart(std::vector<Part>& parts, size_t p, const Split& split, uint32_t wide) {
    const int d = split.dim;
    const uint64_t t = split.threshold;
    Part left{0, parts[p].region, {}, parts[p].depth + 1};
    Part right = left;
    for (uint32_t r : parts[p].rules) {
      if (out_.boxes_[r].lo[d] <= t) left.rules.push_back(r);
      if (out_.boxes_[r].hi[d] > t) right.rules.push_back(r);
    }
    const uint32_t child = static_cast<uint32_t>(binary_.size());
    binary_[parts[p].node] =
        Node{static_cast<uint32_t>(t), child, static_cast<uint32_t>(d), 0, wide};
    binary_.resize(binary_.size() + 2);
    ++out_.stats_.inner_nodes;
    left.node = child;
    right.node = child + 1;
    left.region.hi[d] = t;
    right.region.lo[d] = t + 1;
    CutCovered(left.region, left.rules);
    CutCovered(right.region, right.rules);
    parts[p] = std::move(left);
    parts.insert(parts.begin() + static_cast<std::ptrdiff_t>(p) + 1, std::move(right));
  }

  static Classifier::LeafBlock EmptyBlock() {
    Classifier::LeafBlock block{};
    std::fill(std::begin(block.index), std::end(block.index), Classifier::kNone);
    return block;
  }

  // Box `index` into slot `slot` of `block`, in columns.
  void PutBox(Classifier::LeafBlock& block, int slot, uint32_t index) const {
    const Box& box = out_.boxes_[index];
    uint64_t lo[kDims], span[kDims];
    for (int d = 0; d < kDims; ++d) {
      // The box's field values are [lo, min(hi, FieldMax)]; "absent" is the
      // one value above FieldMax.
      const uint64_t hi = std::min(box.hi[d], FieldMax(d));
      lo[d] = span[d] = 0;
      if (box.lo[d] <= hi) {
        block.present_ok[d] |= 1u << slot;
        lo[d] = box.lo[d];
        span[d] = hi - box.lo[d];
      }
      if (box.hi[d] == AbsentValue(d)) block.absent_ok[d] |= 1u << slot;
    }
    for (int a = 0; a < 2; ++a) {
      block.addr_lo[a][slot] = static_cast<uint32_t>(lo[kSrcAddr + a]);
      block.addr_span[a][slot] = static_cast<uint32_t>(span[kSrcAddr + a]);
      block.port_lo[a][slot] = static_cast<uint16_t>(lo[kSrcPort + a]);
      block.port_span[a][slot] = static_cast<uint16_t>(span[kSrcPort + a]);
    }
    block.proto_lo[slot] = static_cast<uint8_t>(lo[kProto]);
    block.proto_span[slot] = static_cast<uint8_t>(span[kProto]);
    block.index[slot] = index;
    block.used = static_cast<uint8_t>(slot + 1);
    bool present_all = true;
    for (int d = 0; d < kDims; ++d) present_all &= (block.present_ok[d] >> slot & 1) != 0;
    if (present_all) block.present_all |= static_cast<uint8_t>(1u << slot);
  }

  uint32_t MakeLeaf(uint32_t index, const std::vector<uint32_t>& rules) {
    const uint32_t first = rules.empty() ? Classifier::kNone : rules.front();
    binary_[index] = Node{static_cast<uint32_t>(out_.leaf_blocks_.size()), index,
                          Classifier::kLeafDim, first, index};
    // Blocks of kBlock boxes; every block but the last says `more`.
    out_.leaf_blocks_.push_back(EmptyBlock());
    for (size_t i = 0; i < rules.size(); ++i) {
      if (i > 0 && i % Classifier::kBlock == 0) {
        out_.leaf_blocks_.back().more = 1;
        out_.leaf_blocks_.push_back(EmptyBlock());
      }
      PutBox(out_.leaf_blocks_.back(), static_cast<int>(i % Classifier::kBlock), rules[i]);
    }
    ++out_.stats_.leaves;
    out_.stats_.leaf_entries += rules.size();
    out_.stats_.max_leaf = std::max(out_.stats_.max_leaf, rules.size());
    return first;
  }

  // The threshold over all dimensions that best balances the two sides.
  // `only_dim` >= 0: that dimension only.
  Split BestSplit(const Box& region, const std::vector<uint32_t>& rules, int only_dim = -1) {
    Split best;
    const size_t n = rules.size();
    for (int d = 0; d < kDims; ++d) {
      if (region.lo[d] == region.hi[d] || (only_dim >= 0 && d != only_dim)) continue;
      lo_.clear();
      hi_.clear();
      candidates_.clear();
      for (uint32_t r : rules) {
        const Box& b = out_.boxes_[r];
        const uint64_t clo = std::max(b.lo[d], region.lo[d]);
        const uint64_t chi = std::min(b.hi[d], region.hi[d]);
        lo_.push_back(clo);
        hi_.push_back(chi);
        if (chi < region.hi[d]) candidates_.push_back(chi);
        if (clo > region.lo[d]) candidates_.push_back(clo - 1);
      }
      std::sort(lo_.begin(), lo_.end());
      std::sort(hi_.begin(), hi_.end());
      std::sort(candidates_.begin(), candidates_.end());
      candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
      size_t li = 0, hi = 0;
      for (uint64_t t : candidates_) {
        while (li < n && lo_[li] <= t) ++li;
        while (hi < n && hi_[hi] <= t) ++hi;
        const size_t left = li, right = n - hi;
        const size_t worst = std::max(left, right), total = left + right;
        if (best.dim < 0 || worst < best.worst || (worst == best.worst && total < best.total)) {
          best = Split{d, t, worst, total};
        }
      }
    }
    return best;
  }

  Classifier& out_;
  const ClassifierOptions& options_;
  std::vector<Node> binary_;  // the tree being built
  size_t budget_ = SIZE_MAX;  // leaf entries allowed
  uint32_t leaf_size_;        // of the trees being built
  std::vector<uint64_t> lo_, hi_, candidates_;  // scratch for BestSplit
};

Classifier Classifier::FromBoxes(const std::vector<RuleBox>& rules,
                                 const ClassifierOptions& options) {
  Classifier c;
  for (const RuleBox& r : rules) {
    if (r.box.Empty()) continue;  // never matches
    c.boxes_.push_back(r.box);
    c.rule_ids_.push_back(r.rule);
  }
  c.ports_first_fragment_only_ = options.lift.ports_first_fragment_only;
  c.isa_ = BestIsaUpTo(options.max_isa);
  ClassifierBuilder(c, options).Run();
  return c;
}

absl::StatusOr<Classifier> Classifier::Build(const ir::Chain& chain, size_t begin, size_t end,
                                             const ClassifierOptions& options) {
  if (begin > end || end > chain.rules.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rule range [", begin, ", ", end, ") outside the chain"));
  }
  std::vector<RuleBox> boxes;
  boxes.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) {
    absl::StatusOr<headerspace::LiftedBox> lifted = headerspace::LiftToBox(chain.rules[i], options.lift);
    if (!lifted.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("rule ", i, " of chain ", chain.name, " does not lift: ",
                       lifted.status().message()));
    }
    boxes.push_back(RuleBox{lifted->box, static_cast<int>(i)});
  }
  return FromBoxes(boxes, options);
}

}  // namespace rulejit::classify
