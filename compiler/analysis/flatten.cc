// Hook flattening over cubes (see flatten.h). Each walk of a chain asks
// the shadowed-rule prover (compiler/headerspace/shadow_prover.h), given
// the packets that enter the chain, what reaches each rule and which
// earlier rules took the rest; the walk moves the packets the prover
// hands it along jumps, returns and verdicts.
#include "compiler/analysis/flatten.h"

#include <map>

#include "ir/hook_order.h"

namespace rulejit::analysis {
namespace {

constexpr int kJumpStackSize = 16;  // NFT_JUMP_STACK_SIZE, as the interpreter

using Region = std::vector<Cube>;  // disjoint cubes

class Walker {
 public:
  Walker(const ir::Ruleset& ruleset, ir::Hook hook, const Space& space,
         bool record_reach, Flattened& out)
      : ruleset_(ruleset), lifter_(ruleset, space, hook),
        out_(out), record_reach_(record_reach) {}

  // Runs `region` through chain `chain` of `table` from its first rule;
  // returns the part that returns to the caller (or falls off the end).
  // `certain`: no inexact rule was passed on the way here; cleared when
  // the walk passes one (its effect on later rules is unknown).
  Region Walk(int table, int chain, Region region, int depth, bool& certain);
  // Moves what was recorded per rule into `out.reach`.
  void Finish();
  // Reports the fraction of the rules of base chain (table, chain) walked
  // to `progress` (may be empty).
  void Watch(int table, int chain, Progress progress) {
    watched_ = {table, chain};
    progress_ = std::move(progress);
  }
  // Records the rules of a chain from `from` on, which a walk never got to
  // (earlier rules, those `prover` blames, decided everything).
  void PassOver(int table, int chain, size_t from, const ShadowProver& prover);

  // What `branch` of rule `ref` does with the packets `hit` it matched:
  // decides them, returns them, or walks them through another chain
  // (what comes back goes on in the chain, `prover`, or returns with
  // `returned`).
  void Apply(int table, const ir::RuleRef& ref, const LiftedBranch& branch,
             Region hit, int depth, bool& certain, ShadowProver& prover,
             Region& returned);

 private:
  const LiftedRule& Lifted(int table, int chain, int rule);
  void Emit(Region& region, ir::VerdictCode verdict, ir::RuleRef ref) {
    for (Cube& c : region) out_.decisions.push_back({std::move(c), verdict, ref});
  }

  const ir::Ruleset& ruleset_;
  Lifter lifter_;
  Flattened& out_;
  std::map<std::tuple<int, int, int>, LiftedRule> cache_;
  std::map<std::tuple<int, int, int>, bool> reported_;
  std::map<std::tuple<int, int, int>, RuleReach> reach_;
  bool record_reach_;
  std::pair<int, int> watched_{-1, -1};
  Progress progress_;
};


// The packets `lifted` matches, as disjoint cubes.
Region MatchOf(const LiftedRule& lifted) {
  Region match;
  for (const LiftedBranch& b : lifted.branches) match.push_back(b.match);
  return match;
}

// Adds the rules of chain (table, chain) at `rules` to `to`.
void AddRules(std::vector<ir::RuleRef>& to, int table, int chain,
              const std::vector<size_t>& rules) {
  for (size_t r : rules) AddRuleOnce(to, {table, chain, static_cast<int>(r)});
}

// Records that the walk `prover` follows reached exact rule `ref` (lifted
// as `lifted`): the prover says whether any undecided packet matches it,
// and if none does, which earlier rules took them.
void Record(RuleReach& reach, const ir::RuleRef& ref, const ShadowProver& prover,
            const LiftedRule& lifted, bool certain) {
  reach.rule = ref;
  (certain ? reach.reached_certain : reach.reached_uncertain) = true;
  if (lifted.branches.empty()) return;
  const Region match = MatchOf(lifted);
  if (!prover.Covered(match)) {
    reach.matched = true;
    return;
  }
  AddRules(reach.covered_by, ref.table, ref.chain, prover.CoveringRules(match));
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

void Walker::Apply(int table, const ir::RuleRef& ref, const LiftedBranch& branch,
                   Region hit, int depth, bool& certain, ShadowProver& prover,
                   Region& returned) {
  // Decided for this chain (jumps may come back, so they don't count).
  if (record_reach_ && branch.verdict != ir::VerdictCode::kJump) {
    prover.Blame(static_cast<size_t>(ref.rule), hit);
  }
  switch (branch.verdict) {
    case ir::VerdictCode::kAccept:
    case ir::VerdictCode::kDrop:
    case ir::VerdictCode::kQueue:  // not lifted (lift.cc fails on queue)
      Emit(hit, branch.verdict, ref);
      break;
    case ir::VerdictCode::kReturn:
      returned.insert(returned.end(), hit.begin(), hit.end());
      break;
    case ir::VerdictCode::kJump:
    case ir::VerdictCode::kGoto: {
      const ir::Table& t = ruleset_.tables[table];
      const ir::Chain* target = t.FindChain(branch.target);
      if (target == nullptr) {  // the interpreter: no match
        prover.Readmit(std::move(hit));
        break;
      }
      int target_index = static_cast<int>(target - t.chains.data());
      if (branch.verdict == ir::VerdictCode::kJump) {
        if (depth >= kJumpStackSize) {
          Emit(hit, ir::VerdictCode::kDrop, ref);
          break;
        }
        prover.Readmit(Walk(table, target_index, std::move(hit), depth + 1, certain));
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

Region Walker::Walk(int table, int chain, Region input, int depth,
                    bool& certain) {
  ShadowProver prover(lifter_, std::move(input));
  const ir::Table& t = ruleset_.tables[table];
  const ir::Chain& ch = t.chains[chain];
  Region returned;
  size_t i = 0;
  for (; i < ch.rules.size() && !prover.Exhausted(); ++i) {
    const int rule = static_cast<int>(i);
    if (progress_ && (i & 63) == 0 && depth == 0 &&
        watched_ == std::make_pair(table, chain)) {
      progress_(static_cast<double>(i) / ch.rules.size());
    }
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
    if (record_reach_) {
      Record(reach_[{table, chain, rule}], ref, prover, lifted, certain);
    }
    for (const LiftedBranch& branch : lifted.branches) {
      if (prover.Exhausted()) break;
      if (branch.verdict == ir::VerdictCode::kContinue ||
          branch.verdict == ir::VerdictCode::kBreak) {
        continue;  // matching packets go on with the next rule anyway
      }
      Region hit = prover.Take(branch.match);
      if (hit.empty()) continue;
      Apply(table, ref, branch, std::move(hit), depth, certain, prover, returned);
    }
  }
  if (record_reach_) PassOver(table, chain, i, prover);
  for (Cube& c : prover.TakeRest()) returned.push_back(std::move(c));
  return returned;
}

void Walker::PassOver(int table, int chain, size_t from, const ShadowProver& prover) {
  const ir::Chain& ch = ruleset_.tables[table].chains[chain];
  for (size_t i = from; i < ch.rules.size(); ++i) {
    const int rule = static_cast<int>(i);
    const LiftedRule& lifted = Lifted(table, chain, rule);
    RuleReach& reach = reach_[{table, chain, rule}];
    reach.rule = {table, chain, rule};
    reach.passed_over = true;
    AddRules(reach.covered_by, table, chain,
             lifted.branches.empty() ? prover.BlamedRules()
                                     : prover.CoveringRules(MatchOf(lifted)));
  }
}

// Whether the table's base chains see packets of the cube's family.
bool Sees(const ir::Table& table, const Cube& cube) {
  const bool v6 = cube.get(Dim::kFamily) == IntervalSet::Single(kFamilyIpv6);
  switch (table.family) {
    case ir::Family::kIp: return !v6;
    case ir::Family::kIp6: return v6;
    case ir::Family::kInet: return true;
    default: return false;
  }
}

}  // namespace

void AddRuleOnce(std::vector<ir::RuleRef>& rules, const ir::RuleRef& rule) {
  for (const ir::RuleRef& r : rules) {
    if (r.table == rule.table && r.chain == rule.chain && r.rule == rule.rule) return;
  }
  rules.push_back(rule);
}

Flattened FlattenHook(const ir::Ruleset& ruleset, ir::Hook hook,
                      const Space& space, const Progress& progress,
                      bool record_reach) {
  Flattened out;
  Walker walker(ruleset, hook, space, record_reach, out);
  // No base chain: the kernel accepts (decided_by stays {-1, -1, -1}).
  std::vector<Decision> accepts;
  for (Cube& c : FullRegion(space)) {
    accepts.push_back({std::move(c), ir::VerdictCode::kAccept, ir::RuleRef{}});
  }
  // Inexact rules of one base chain can change what later ones see.
  bool certain = true;
  const std::vector<ir::RuleRef> bases = ir::BaseChainsAt(ruleset, hook);
  for (size_t k = 0; k < bases.size(); ++k) {
    const ir::RuleRef& base = bases[k];
    const ir::Table& table = ruleset.tables[base.table];
    if (progress) {
      walker.Watch(base.table, base.chain, [&progress, k, n = bases.size()](double f) {
        progress((k + f) / n);
      });
    }
    if (hook == ir::Hook::kIngress || hook == ir::Hook::kEgress) {
      out.inexact.push_back(
          {base, "ingress/egress chains are not reasoned about exactly yet"});
      continue;
    }
    if (table.chains[base.chain].base->type == "nat") {
      out.inexact.push_back(
          {base, "nat chains (run for new connections only) are not reasoned about exactly"});
      continue;
    }
    // The chain decides afresh for everything of its families accepted so
    // far; the rest stays accepted as it was.
    Region input;
    std::vector<Decision> unseen;
    for (Decision& d : accepts) {
      if (Sees(table, d.cube)) {
        input.push_back(std::move(d.cube));
      } else {
        unseen.push_back(std::move(d));
      }
    }
    if (input.empty()) {
      accepts = std::move(unseen);
      continue;
    }
    const size_t first = out.decisions.size();
    Region fell = walker.Walk(base.table, base.chain, std::move(input), 0, certain);
    const ir::VerdictCode policy =
        table.chains[base.chain].base->policy == ir::VerdictCode::kDrop
            ? ir::VerdictCode::kDrop
            : ir::VerdictCode::kAccept;
    for (Cube& c : fell) {
      out.decisions.push_back({std::move(c), policy, {base.table, base.chain, -1}});
    }
    accepts = std::move(unseen);
    if (k + 1 == bases.size()) break;  // what it accepted is final: leave it
    // Accepted packets go on to the next base chain; drops are final.
    size_t kept = first;
    for (size_t i = first; i < out.decisions.size(); ++i) {
      Decision& d = out.decisions[i];
      if (d.verdict == ir::VerdictCode::kAccept) {
        accepts.push_back(std::move(d));
      } else {
        if (kept != i) out.decisions[kept] = std::move(d);
        ++kept;
      }
    }
    out.decisions.resize(kept, Decision{});
  }
  for (Decision& d : accepts) out.decisions.push_back(std::move(d));
  walker.Finish();
  return out;
}

}  // namespace rulejit::analysis
