// Hook flattening over cubes (see flatten.h). Each walk of a chain asks
// the shadowed-rule prover (compiler/headerspace/shadow_prover.h), given
// the packets that enter the chain, what reaches each rule and which
// earlier rules took the rest; the walk moves the packets the prover
// hands it along jumps, returns and verdicts. Packets a rule set a mark
// on go on from the next rule in a walk of their own, whose rules see the
// marks as mark_now.h's Now says.
#include "compiler/analysis/flatten.h"

#include <map>

#include "ir/hook_order.h"

namespace rulejit::analysis {
namespace {

constexpr int kJumpStackSize = 16;  // NFT_JUMP_STACK_SIZE, as the interpreter
// Rules walked with marks a rule set (each distinct mark walks the rest of
// its chain on its own): past this, the rule that would walk further is
// reported as not reasoned about, instead of a walk quadratic in the rules.
constexpr size_t kMarkedStepBudget = 250000;
constexpr char kTooManyMarks[] =
    "too many marks set by earlier rules to carry through the rest of the chain (not "
    "modelled: the walk stops after 250000 rules walked with them)";

using Region = std::vector<Cube>;  // disjoint cubes

// Packets of a walk that see the same marks (mark_now.h).
struct Part {
  Now now;
  Region region;
};
using Parts = std::vector<Part>;

// Adds `region` to the part of `parts` with marks `now` (or a new one).
void AddPart(Parts& parts, const Now& now, Region region) {
  if (region.empty()) return;
  for (Part& p : parts) {
    if (p.now == now) {
      p.region.insert(p.region.end(), std::make_move_iterator(region.begin()),
                      std::make_move_iterator(region.end()));
      return;
    }
  }
  parts.push_back({now, std::move(region)});
}

void AddParts(Parts& to, Parts from) {
  for (Part& p : from) AddPart(to, p.now, std::move(p.region));
}

class Walker {
 public:
  Walker(const ir::Ruleset& ruleset, ir::Hook hook, const Space& space,
         bool record_reach, Flattened& out)
      : ruleset_(ruleset), lifter_(ruleset, space, hook, headerspace::Effects::kMarks),
        out_(out), record_reach_(record_reach) {}

  // Runs `region`, whose rules read the marks `now`, through chain `chain`
  // of `table` from rule `from`; returns the parts that return to the
  // caller (or fall off the end).
  // `certain`: no inexact rule was passed on the way here; cleared when
  // the walk passes one (its effect on later rules is unknown).
  Parts Walk(int table, int chain, size_t from, Region region, const Now& now, int depth,
             bool& certain);
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

  // What `branch` of rule `ref` does with the packets `hit` it matched,
  // which read the marks `now`: decides them, returns them, or walks them
  // through another chain (what comes back goes on in the chain, `prover`,
  // or, with other marks, in a walk of its own from the next rule; what
  // returns is added to `returned`).
  void Branch(const ir::RuleRef& ref, const LiftedBranch& branch, Region hit, const Now& now,
              int depth, bool& certain, ShadowProver& prover, Parts& returned);

 private:
  const LiftedRule& Lifted(int table, int chain, int rule);
  // The rule as packets that read the marks `now` see it: its matches on
  // the arriving packets (mark_now.h: SeenAs).
  const LiftedRule& Seen(int table, int chain, int rule, const Now& now);
  // The packets of `parts` go on in chain (ref.table, ref.chain) after
  // rule ref.rule: those with marks `now` through `prover`, the others in
  // walks of their own.
  void GoOn(const ir::RuleRef& ref, Parts parts, const Now& now, int depth, bool& certain,
            ShadowProver& prover, Parts& returned);
  void Emit(Region& region, ir::VerdictCode verdict, ir::RuleRef ref, const Now& now) {
    for (Cube& c : region) out_.decisions.push_back({std::move(c), verdict, ref, now});
  }

  const ir::Ruleset& ruleset_;
  Lifter lifter_;
  Flattened& out_;
  std::map<std::tuple<int, int, int>, LiftedRule> cache_;
  using SeenKey = std::tuple<int, int, int, int, uint32_t, uint32_t, int, uint32_t, uint32_t>;
  std::map<SeenKey, LiftedRule> seen_;
  std::map<std::tuple<int, int, int>, bool> reported_;
  std::map<std::tuple<int, int, int>, RuleReach> reach_;
  bool record_reach_;
  std::pair<int, int> watched_{-1, -1};
  Progress progress_;
  size_t marked_steps_ = 0;  // rules walked with marks set (kMarkedStepBudget)
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

const LiftedRule& Walker::Seen(int table, int chain, int rule, const Now& now) {
  const LiftedRule& lifted = Lifted(table, chain, rule);
  if (now.Identity() || !lifted.exact) return lifted;
  const SeenKey key{table, chain, rule, static_cast<int>(now.mark.src), now.mark.mask,
                    now.mark.xor_, static_cast<int>(now.ct.src), now.ct.mask, now.ct.xor_};
  auto it = seen_.find(key);
  if (it != seen_.end()) return it->second;
  LiftedRule out = lifted;
  out.branches.clear();
  for (const LiftedBranch& b : lifted.branches) {
    std::string why;
    std::optional<Cube> match = SeenAs(b.match, now, lifter_.space(), why);
    if (!why.empty()) {
      out = LiftedRule{.exact = false, .reason = std::move(why)};
      break;
    }
    if (!match) continue;
    out.branches.push_back(b);
    out.branches.back().match = *std::move(match);
  }
  out.match.reset();
  if (out.branches.size() == 1) out.match = out.branches[0].match;
  return seen_.emplace(key, std::move(out)).first->second;
}

void Walker::GoOn(const ir::RuleRef& ref, Parts parts, const Now& now, int depth,
                  bool& certain, ShadowProver& prover, Parts& returned) {
  for (Part& p : parts) {
    if (p.now == now) {
      prover.Readmit(std::move(p.region));
    } else {
      AddParts(returned, Walk(ref.table, ref.chain, static_cast<size_t>(ref.rule) + 1,
                              std::move(p.region), p.now, depth, certain));
    }
  }
}

void Walker::Branch(const ir::RuleRef& ref, const LiftedBranch& branch, Region hit,
                    const Now& now, int depth, bool& certain, ShadowProver& prover,
                    Parts& returned) {
  const Now after = Apply(now, branch.effects);
  // Decided for this chain (jumps may come back, so they don't count;
  // packets that only had their marks set go on).
  if (record_reach_ && branch.verdict != ir::VerdictCode::kJump &&
      branch.verdict != ir::VerdictCode::kContinue &&
      branch.verdict != ir::VerdictCode::kBreak) {
    prover.Blame(static_cast<size_t>(ref.rule), hit);
  }
  switch (branch.verdict) {
    case ir::VerdictCode::kAccept:
    case ir::VerdictCode::kDrop:
    case ir::VerdictCode::kQueue:  // not lifted (lift.cc fails on queue)
      Emit(hit, branch.verdict, ref, after);
      break;
    case ir::VerdictCode::kContinue:
    case ir::VerdictCode::kBreak:
      GoOn(ref, {{after, std::move(hit)}}, now, depth, certain, prover, returned);
      break;
    case ir::VerdictCode::kReturn:
      AddPart(returned, after, std::move(hit));
      break;
    case ir::VerdictCode::kJump:
    case ir::VerdictCode::kGoto: {
      const ir::Table& t = ruleset_.tables[ref.table];
      const ir::Chain* target = t.FindChain(branch.target);
      if (target == nullptr) {  // the interpreter: no match
        GoOn(ref, {{after, std::move(hit)}}, now, depth, certain, prover, returned);
        break;
      }
      int target_index = static_cast<int>(target - t.chains.data());
      if (branch.verdict == ir::VerdictCode::kJump) {
        if (depth >= kJumpStackSize) {
          Emit(hit, ir::VerdictCode::kDrop, ref, after);
          break;
        }
        GoOn(ref, Walk(ref.table, target_index, 0, std::move(hit), after, depth + 1, certain),
             now, depth, certain, prover, returned);
      } else {
        AddParts(returned,
                 Walk(ref.table, target_index, 0, std::move(hit), after, depth, certain));
      }
      break;
    }
    default:
      break;
  }
}

Parts Walker::Walk(int table, int chain, size_t from, Region input, const Now& now,
                   int depth, bool& certain) {
  ShadowProver prover(lifter_, std::move(input));
  const ir::Table& t = ruleset_.tables[table];
  const ir::Chain& ch = t.chains[chain];
  Parts returned;
  size_t i = from;
  for (; i < ch.rules.size() && !prover.Exhausted(); ++i) {
    const int rule = static_cast<int>(i);
    if (progress_ && (i & 63) == 0 && depth == 0 &&
        watched_ == std::make_pair(table, chain)) {
      progress_(static_cast<double>(i) / ch.rules.size());
    }
    const ir::RuleRef ref{table, chain, rule};
    if (!now.Identity() && ++marked_steps_ > kMarkedStepBudget) {
      if (!reported_[{table, chain, rule}]) {
        reported_[{table, chain, rule}] = true;
        out_.inexact.push_back({ref, kTooManyMarks});
      }
      certain = false;
      break;
    }
    const LiftedRule& lifted = Seen(table, chain, rule, now);
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
      if ((branch.verdict == ir::VerdictCode::kContinue ||
           branch.verdict == ir::VerdictCode::kBreak) &&
          Apply(now, branch.effects) == now) {
        continue;  // matching packets go on with the next rule anyway
      }
      Region hit = prover.Take(branch.match);
      if (hit.empty()) continue;
      Branch(ref, branch, std::move(hit), now, depth, certain, prover, returned);
    }
  }
  if (record_reach_) PassOver(table, chain, i, prover);
  AddPart(returned, now, prover.TakeRest());
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
    Parts input;
    std::vector<Decision> unseen;
    for (Decision& d : accepts) {
      if (Sees(table, d.cube)) {
        AddPart(input, d.now, {std::move(d.cube)});
      } else {
        unseen.push_back(std::move(d));
      }
    }
    if (input.empty()) {
      accepts = std::move(unseen);
      continue;
    }
    const size_t first = out.decisions.size();
    const ir::VerdictCode policy =
        table.chains[base.chain].base->policy == ir::VerdictCode::kDrop
            ? ir::VerdictCode::kDrop
            : ir::VerdictCode::kAccept;
    for (Part& part : input) {
      Parts fell = walker.Walk(base.table, base.chain, 0, std::move(part.region), part.now, 0,
                               certain);
      for (Part& p : fell) {
        for (Cube& c : p.region) {
          out.decisions.push_back({std::move(c), policy, {base.table, base.chain, -1}, p.now});
        }
      }
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
