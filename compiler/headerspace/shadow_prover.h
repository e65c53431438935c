// The shadowed-rule prover: the one question behind remove-shadowed-rules
// and lint, asked rule by rule along one walk of a chain: does any packet
// that enters the chain and gets past the earlier rules match this rule?
// "No" means the rule is shadowed there.
//
//   ShadowProver<PacketModel::kAllPackets5Tuple> p(boxes);      // all packets enter
//   ShadowProver<PacketModel::kUnfragmented16> q(cubes, entry); // `entry` enters
//   if (p.Covered(region)) ... else if (ends the chain) p.Cover(rule, region);
//
// Why one prover with two entries: the pass asks it of every chain with
// all packets entering (it can't know who jumps there, and its proofs must
// hold for every packet); lint asks it with the chain's entry region, the
// packets a hook's walk brings to the chain (compiler/analysis/flatten.h:
// the jump conditions on the way, what earlier chains decided). The
// answer is the same predicate: rule ∩ entry ⊆ ∪ (what earlier rules of
// the chain took from the entry).
//
// How, per entry:
//   - all packets: the earlier rules' regions are kept as covers and the
//     rule's region is cut by them (cover.h), within a budget (a
//     10000-rule chain must stay within the compile budget), so "covered"
//     is exact and "not covered" may be a miss;
//   - an entry region (cubes): the undecided part of the entry is kept
//     (the entry minus what earlier rules took, indexed, cube_index.h), and
//     the rule is covered when none of it lies in the rule's region: exact
//     both ways. A walker that follows the packets (flatten.cc) takes the
//     packets of each rule from it (Take), hands back those a jump
//     returned (Readmit), and says which rule decided what (Blame).
// Both keep, per earlier rule, what it took, to name the rules that block
// a shadowed one (CoveringRules).
#ifndef RULEJIT_COMPILER_HEADERSPACE_SHADOW_PROVER_H_
#define RULEJIT_COMPILER_HEADERSPACE_SHADOW_PROVER_H_

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/headerspace/cube_index.h"
#include "compiler/headerspace/lift.h"

namespace rulejit::headerspace {

struct ShadowBudget {
  size_t max_covers = 1024;  // covers kept per chain segment
  size_t piece_budget = 64;  // pieces of a rule's region still uncovered
};

// A lifted rule's region as disjoint pieces of its projection, or nullopt
// when it did not lift (exactly).
inline std::optional<std::vector<Box>> RegionOf(const absl::StatusOr<LiftedBox>& lifted) {
  if (!lifted.ok()) return std::nullopt;
  return std::vector<Box>{lifted->box};
}
inline std::optional<std::vector<Cube>> RegionOf(const LiftedRule& lifted) {
  if (!lifted.exact) return std::nullopt;
  std::vector<Cube> region;
  for (const LiftedBranch& b : lifted.branches) region.push_back(b.match);
  return region;
}

// Whether the union of `covers` contains all of `region`, per projection.
inline bool Covered(const Lifter<PacketModel::kAllPackets5Tuple>&,
                    const std::vector<Box>& region, const std::vector<Box>& covers,
                    size_t piece_budget) {
  return CoveredByUnion(region.front(), covers, piece_budget);
}
inline bool Covered(const Lifter<PacketModel::kUnfragmented16>& lifter,
                    const std::vector<Cube>& region, const std::vector<Cube>& covers,
                    size_t piece_budget) {
  return CoveredByUnion(region, covers, lifter.space(), piece_budget);
}

inline bool PiecesOverlap(const Box& a, const Box& b) { return a.Intersects(b); }
inline bool PiecesOverlap(const Cube& a, const Cube& b) { return Overlaps(a, b); }

template <PacketModel M>
class ShadowProver {
 public:
  using Region = typename Lifter<M>::Region;
  using Pieces = std::vector<Region>;
  static constexpr bool kCubes = M == PacketModel::kUnfragmented16;

  // All packets enter the chain.
  explicit ShadowProver(const Lifter<M>& lifter, const ShadowBudget& budget = {})
      : lifter_(&lifter), budget_(budget) {}
  // The packets of `entry` (disjoint cubes) enter the chain.
  ShadowProver(const Lifter<M>& lifter, Pieces entry)
    requires kCubes
      : lifter_(&lifter), undecided_(CubeIndex{}) {
    for (Region& c : entry) undecided_->Add(std::move(c));
  }

  // Whether no packet that enters the chain and gets past the earlier
  // rules lies in `region` (disjoint pieces of a rule's region).
  bool Covered(const Pieces& region) const {
    if (region.empty()) return true;
    if constexpr (kCubes) {
      if (undecided_) {
        return std::none_of(region.begin(), region.end(), [&](const Region& piece) {
          return undecided_->AnyOverlapping(piece);
        });
      }
    }
    return headerspace::Covered(*lifter_, region, covers_, budget_.piece_budget);
  }

  // The packets of `region` that get this far leave the chain at `rule`
  // (it ends the chain for them).
  void Cover(size_t rule, const Pieces& region) {
    if (!undecided_) {
      if (covers_.size() >= budget_.max_covers) return;
      for (const Region& piece : region) Blame(rule, {piece});
      return;
    }
    if constexpr (kCubes) {
      for (const Region& piece : region) Blame(rule, Take(piece));
    }
  }

  // The earlier rules whose covers overlap `region`, in chain order, once
  // each: what blocks a rule `Covered` proves shadowed.
  std::vector<size_t> CoveringRules(const Pieces& region) const {
    std::vector<size_t> rules;
    for (size_t i = 0; i < covers_.size(); ++i) {
      const bool overlaps = std::any_of(region.begin(), region.end(), [&](const Region& r) {
        return PiecesOverlap(covers_[i], r);
      });
      if (overlaps) AddOnce(rules, owners_[i]);
    }
    return rules;
  }
  // Every rule that took something so far, in chain order, once each.
  std::vector<size_t> BlamedRules() const {
    std::vector<size_t> rules;
    for (size_t owner : owners_) AddOnce(rules, owner);
    return rules;
  }

  // For a walker that follows the packets (entry region only) ----------

  // The undecided packets in `match`, as disjoint cubes; they no longer
  // reach later rules unless handed back (Readmit).
  Pieces Take(const Region& match)
    requires kCubes
  {
    Pieces hit;
    std::vector<Region> taken;
    for (int id : undecided_->Overlapping(match)) taken.push_back(undecided_->Take(id));
    for (Region& c : taken) {
      hit.push_back(*Intersect(c, match));
      for (Region& piece : Subtract(c, match, lifter_->space())) undecided_->Add(std::move(piece));
    }
    return hit;
  }
  // Packets taken earlier that go on with the next rule (a jump returned
  // them, or its chain does not exist).
  void Readmit(Pieces back)
    requires kCubes
  {
    for (Region& c : back) undecided_->Add(std::move(c));
  }
  // `rule` decided the packets of `taken` for this chain (they left it
  // there), which names it among the rules that block later ones.
  void Blame(size_t rule, const Pieces& taken) {
    for (const Region& piece : taken) {
      covers_.push_back(piece);
      owners_.push_back(rule);
    }
  }
  // Nothing undecided is left: no later rule is reached.
  bool Exhausted() const
    requires kCubes
  {
    return undecided_->empty();
  }
  // What is left undecided: it falls off the end of the chain.
  Pieces TakeRest()
    requires kCubes
  {
    return undecided_->TakeAll();
  }

 private:
  static void AddOnce(std::vector<size_t>& rules, size_t rule) {
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
  }

  const Lifter<M>* lifter_;
  ShadowBudget budget_;
  std::optional<CubeIndex> undecided_;  // entry region only
  Pieces covers_;                       // what earlier rules took
  std::vector<size_t> owners_;          // their rules, as covers_
};

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_SHADOW_PROVER_H_
