// Hook flattening over cubes (see flatten.h).
#include "compiler/analysis/flatten.h"

#include <map>

#include "compiler/analysis/lift.h"
#include "ir/hook_order.h"

namespace rulejit::analysis {
namespace {

constexpr int kJumpStackSize = 16;  // NFT_JUMP_STACK_SIZE, as the interpreter

using Region = std::vector<Cube>;  // disjoint cubes

class Walker {
 public:
  Walker(const ir::Ruleset& ruleset, ir::Hook hook, const Space& space,
         Flattened& out)
      : ruleset_(ruleset), space_(space), lifter_(ruleset, space, hook),
        out_(out) {}

  // Runs `region` through chain `chain` of `table` from its first rule;
  // returns the part that returns to the caller (or falls off the end).
  // `certain`: no inexact rule was passed on the way here; cleared when
  // the walk passes one (its effect on later rules is unknown).
  Region Walk(int table, int chain, Region region, int depth, bool& certain);
  // Moves what was recorded per rule into `out.reach`.
  void Finish();

 private:
  const LiftedRule& Lifted(int table, int chain, int rule);
  void Emit(const Region& region, ir::VerdictCode verdict, ir::RuleRef ref) {
    for (const Cube& c : region) out_.decisions.push_back({c, verdict, ref});
  }

  const ir::Ruleset& ruleset_;
  const Space& space_;
  Lifter lifter_;
  Flattened& out_;
  std::map<std::tuple<int, int, int>, LiftedRule> cache_;
  std::map<std::tuple<int, int, int>, bool> reported_;
  std::map<std::tuple<int, int, int>, RuleReach> reach_;
};

// A rule's decided packets within one walk of its chain.
struct Taken {
  ir::RuleRef rule;
  Region region;
};

// Records that `region` reached exact rule `ref` whose match is `match`;
// `taken` holds what earlier rules of this chain walk decided.
void Record(RuleReach& reach, const ir::RuleRef& ref, const Region& region,
            const std::optional<Cube>& match, bool certain,
            const std::vector<Taken>& taken) {
  reach.rule = ref;
  (certain ? reach.reached_certain : reach.reached_uncertain) = true;
  if (!match) return;
  for (const Cube& c : region) {
    if (Overlaps(c, *match)) {
      reach.matched = true;
      return;
    }
  }
  for (const Taken& t : taken) {
    bool overlaps = false;
    for (const Cube& c : t.region) overlaps = overlaps || Overlaps(c, *match);
    if (overlaps) AddRuleOnce(reach.covered_by, t.rule);
  }
}

void Walker::Finish() {
  for (auto& [key, reach] : reach_) out_.reach.push_back(std::move(reach));
  reach_.clear();
}

const LiftedRule& Walker::Lifted(int table, int chain, int rule) {
  auto key = std::make_tuple(table, chain, rule);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const ir::Rule& r = ruleset_.tables[table].chains[chain].rules[rule];
    it = cache_.emplace(key, lifter_.Lift(table, r)).first;
  }
  return it->second;
}

// Moves the cubes of `region` into `hit` (∩ match) and `rest` (\ match).
void Split(Region& region, const Cube& match, Region& hit, Region& rest,
           const Space& space) {
  rest.reserve(rest.size() + region.size() + kDims);
  for (Cube& c : region) {
    if (!Overlaps(c, match)) {
      rest.push_back(std::move(c));
      continue;
    }
    hit.push_back(*Intersect(c, match));
    for (Cube& piece : Subtract(c, match, space)) rest.push_back(std::move(piece));
  }
  region.clear();
}

Region Walker::Walk(int table, int chain, Region region, int depth,
                    bool& certain) {
  const ir::Table& t = ruleset_.tables[table];
  const ir::Chain& ch = t.chains[chain];
  Region returned;
  std::vector<Taken> taken;
  for (size_t i = 0; i < ch.rules.size() && !region.empty(); ++i) {
    const int rule = static_cast<int>(i);
    const LiftedRule& lifted = Lifted(table, chain, rule);
    const ir::RuleRef ref{table, chain, rule};
    if (!lifted.exact) {
      if (!reported_[{table, chain, rule}]) {
        reported_[{table, chain, rule}] = true;
        out_.inexact.push_back({ref, lifted.reason});
      }
      certain = false;
      continue;
    }
    Record(reach_[{table, chain, rule}], ref, region, lifted.match, certain, taken);
    if (!lifted.match) continue;
    if (lifted.verdict == ir::VerdictCode::kContinue ||
        lifted.verdict == ir::VerdictCode::kBreak) {
      continue;  // matching packets go on with the next rule anyway
    }
    Region hit, rest;
    Split(region, *lifted.match, hit, rest, space_);
    region = std::move(rest);
    if (hit.empty()) continue;
    // Decided for this chain (jumps may come back, so they don't count).
    if (lifted.verdict != ir::VerdictCode::kJump) taken.push_back({ref, hit});
    switch (lifted.verdict) {
      case ir::VerdictCode::kAccept:
      case ir::VerdictCode::kDrop:
        Emit(hit, lifted.verdict, ref);
        break;
      case ir::VerdictCode::kReturn:
        returned.insert(returned.end(), hit.begin(), hit.end());
        break;
      case ir::VerdictCode::kJump:
      case ir::VerdictCode::kGoto: {
        const ir::Chain* target = t.FindChain(lifted.target);
        if (target == nullptr) {  // the interpreter: no match
          region.insert(region.end(), hit.begin(), hit.end());
          break;
        }
        int target_index = static_cast<int>(target - t.chains.data());
        if (lifted.verdict == ir::VerdictCode::kJump) {
          if (depth >= kJumpStackSize) {
            Emit(hit, ir::VerdictCode::kDrop, ref);
            break;
          }
          Region back = Walk(table, target_index, std::move(hit), depth + 1, certain);
          region.insert(region.end(), back.begin(), back.end());
        } else {
          Region back = Walk(table, target_index, std::move(hit), depth, certain);
          returned.insert(returned.end(), back.begin(), back.end());
        }
        break;
      }
      default:
        break;
    }
  }
  returned.insert(returned.end(), region.begin(), region.end());
  return returned;
}

bool SeesIpv4(const ir::Table& table) {
  return table.family == ir::Family::kIp || table.family == ir::Family::kInet;
}

}  // namespace

void AddRuleOnce(std::vector<ir::RuleRef>& rules, const ir::RuleRef& rule) {
  for (const ir::RuleRef& r : rules) {
    if (r.table == rule.table && r.chain == rule.chain && r.rule == rule.rule) return;
  }
  rules.push_back(rule);
}

Flattened FlattenHook(const ir::Ruleset& ruleset, ir::Hook hook,
                      const Space& space) {
  Flattened out;
  Walker walker(ruleset, hook, space, out);
  // No base chain: the kernel accepts (decided_by stays {-1, -1, -1}).
  std::vector<Decision> accepts = {
      {Cube::Full(space), ir::VerdictCode::kAccept, ir::RuleRef{}}};
  // Inexact rules of one base chain can change what later ones see.
  bool certain = true;
  for (const ir::RuleRef& base : ir::BaseChainsAt(ruleset, hook)) {
    const ir::Table& table = ruleset.tables[base.table];
    if (hook == ir::Hook::kIngress || hook == ir::Hook::kEgress) {
      out.inexact.push_back(
          {base, "ingress/egress chains are not reasoned about exactly yet"});
      continue;
    }
    if (!SeesIpv4(table)) continue;
    Region input;
    for (const Decision& d : accepts) input.push_back(d.cube);
    // The chain decides afresh for everything accepted so far.
    const size_t first = out.decisions.size();
    Region fell = walker.Walk(base.table, base.chain, std::move(input), 0, certain);
    const ir::VerdictCode policy =
        table.chains[base.chain].base->policy == ir::VerdictCode::kDrop
            ? ir::VerdictCode::kDrop
            : ir::VerdictCode::kAccept;
    for (Cube& c : fell) {
      out.decisions.push_back({std::move(c), policy, {base.table, base.chain, -1}});
    }
    accepts.clear();
    std::vector<Decision> kept(out.decisions.begin(), out.decisions.begin() + first);
    for (size_t i = first; i < out.decisions.size(); ++i) {
      Decision& d = out.decisions[i];
      if (d.verdict == ir::VerdictCode::kAccept) {
        accepts.push_back(std::move(d));
      } else {
        kept.push_back(std::move(d));
      }
    }
    out.decisions = std::move(kept);
  }
  out.decisions.insert(out.decisions.end(), accepts.begin(), accepts.end());
  walker.Finish();
  return out;
}

}  // namespace rulejit::analysis
