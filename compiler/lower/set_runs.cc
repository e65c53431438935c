// merge-set-runs (a plan decision): consecutive rules that are alike but for the constant of
// one equality become one lookup of that value (what `nft -o` does by
// rewriting them into one rule with an anonymous set or verdict map).
//
//   tcp dport 22 counter accept          ┐ loaded and checked once, then
//   tcp dport 80 counter accept          │ a compare tree on dport picks
//   tcp dport 443 counter drop           │ the rule; only that rule's
//   tcp dport 8080 log accept            ┘ action part runs
//
// Unlike nft -o the rules stay as they are: the plan records the run in
// ChainPlan::set_runs and the backend compiles it (asmjit: one compare
// tree over the sorted values), so deciding-rule ids and counters are
// those of the original rules. A run that overlaps a classified run is
// left out: the classifier answers those rules already.
//
// A run is at least kMinRun rules r, each with the same expressions
// [0, node) (the same, ir/equal.h, and only reads: loads, masks, compares,
// lookups), at `node` an equality of the same shape (`cmp eq` of 1, 2 or
// 4 register bytes, or a fused payload eq of 1, 2 or 4 bytes with one
// mask) whose constant may differ, and after it anything that neither
// changes state nor jumps (ir/rule_shape.h).
//
// Why one lookup is exact: the shared prefix reads the same packet and
// state for every rule of the run (no rule of it changes state), so it
// fails for all or for none; a rule whose constant differs from the
// packet's value fails at `node`. So the rules that can match are those
// with the packet's value, in rule order, and the backend tries exactly
// those, in order. Runs start over at emptied rules.
#include <optional>
#include <variant>
#include <vector>

#include "compiler/lower/plan.h"
#include "ir/equal.h"
#include "ir/rule_shape.h"

namespace rulejit::lower {
namespace {

constexpr size_t kMinRun = 4;

bool OnlyReads(const ir::Expr& e) {
  if (const auto* lookup = std::get_if<ir::Lookup>(&e)) {
    return !(lookup->dreg && *lookup->dreg == ir::kVerdictReg);
  }
  return std::holds_alternative<ir::PayloadLoad>(e) || std::holds_alternative<ir::MetaLoad>(e) ||
         std::holds_alternative<ir::CtLoad>(e) || std::holds_alternative<ir::Bitwise>(e) ||
         std::holds_alternative<ir::Byteorder>(e) || std::holds_alternative<ir::Cmp>(e) ||
         std::holds_alternative<ir::Range>(e) || std::holds_alternative<ir::FusedCmp>(e);
}

bool SmallLen(size_t len) { return len == 1 || len == 2 || len == 4; }

// The equality with its constant zeroed: two nodes with the same shape
// differ at most in the constant. None when the node is not a mergeable
// equality.
std::optional<ir::Expr> EqualityShape(const ir::Expr& e) {
  if (const auto* cmp = std::get_if<ir::Cmp>(&e)) {
    if (cmp->op != ir::CmpOp::kEq || !SmallLen(cmp->data.size())) return std::nullopt;
    ir::Cmp shape = *cmp;
    shape.data.assign(shape.data.size(), 0);
    return shape;
  }
  if (const auto* fused = std::get_if<ir::FusedCmp>(&e)) {
    if (fused->op != ir::CmpOp::kEq || !SmallLen(fused->load.len)) return std::nullopt;
    ir::FusedCmp shape = *fused;
    shape.data.assign(shape.data.size(), 0);
    return shape;
  }
  return std::nullopt;
}

// A rule as the run test needs it: whether it may join a run at all.
struct RuleText {
  bool eligible = false;
};

RuleText Describe(const ir::Rule& rule) {
  return {.eligible = !rule.exprs.empty() && !ir::ChangesStateOrJumps(rule)};
}

bool SameAt(const ir::TableSets& sets, const ir::Rule& a, const ir::Rule& b, size_t i) {
  return ir::SameExpr(sets, a.exprs[i].expr, sets, b.exprs[i].expr);
}

// Whether rule b can join a run led by rule a that varies at `node`.
bool Joins(const ir::TableSets& sets, const ir::Rule& a, const ir::Rule& b, const RuleText& tb,
           size_t node) {
  if (!tb.eligible || node >= b.exprs.size()) return false;
  for (size_t i = 0; i < node; ++i) {
    if (!SameAt(sets, a, b, i)) return false;
  }
  return EqualityShape(a.exprs[node].expr) == EqualityShape(b.exprs[node].expr);
}

// The node at which a run led by rule a varies: the first expression where
// a and the next rule b differ, when it is a mergeable equality in both and
// what comes before it only reads (it runs once for the whole run).
std::optional<size_t> VaryingNode(const ir::TableSets& sets, const ir::Rule& a,
                                  const RuleText& ta, const ir::Rule& b, const RuleText& tb) {
  if (!ta.eligible || !tb.eligible) return std::nullopt;
  for (size_t i = 0; i < a.exprs.size() && i < b.exprs.size(); ++i) {
    if (SameAt(sets, a, b, i)) {
      if (!OnlyReads(a.exprs[i].expr)) return std::nullopt;
      continue;
    }
    const std::optional<ir::Expr> shape = EqualityShape(a.exprs[i].expr);
    if (!shape || shape != EqualityShape(b.exprs[i].expr)) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

std::vector<SetRun> RunsOf(const ir::TableSets& sets, const ir::Chain& chain) {
  std::vector<SetRun> runs;
  std::vector<RuleText> texts;
  texts.reserve(chain.rules.size());
  for (const ir::Rule& r : chain.rules) texts.push_back(Describe(r));
  for (size_t i = 0; i < chain.rules.size();) {
    const std::optional<size_t> node =
        i + 1 < chain.rules.size()
            ? VaryingNode(sets, chain.rules[i], texts[i], chain.rules[i + 1], texts[i + 1])
            : std::nullopt;
    size_t end = i + 1;
    while (node && end < chain.rules.size() &&
           Joins(sets, chain.rules[i], chain.rules[end], texts[end], *node)) {
      ++end;
    }
    if (node && end - i >= kMinRun) {
      runs.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(end),
                      static_cast<uint32_t>(*node)});
      i = end;
    } else {
      ++i;
    }
  }
  return runs;
}

// Whether [begin, end) shares a rule with a classified run.
bool OverlapsClassified(const ChainPlan& chain_plan, const SetRun& run) {
  for (const ClassifiedRun& c : chain_plan.classified) {
    if (c.begin < run.end && run.begin < c.end) return true;
  }
  return false;
}

}  // namespace

void PlanSetRuns(const ir::Ruleset& ruleset, Plan& plan) {
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    const ir::Table& table = ruleset.tables[t];
    const ir::TableSets sets(table);
    for (size_t c = 0; c < table.chains.size(); ++c) {
      ChainPlan& chain_plan =
          plan.chains[plan.layout.ChainIndex(static_cast<int>(t), static_cast<int>(c))];
      chain_plan.set_runs.clear();
      for (const SetRun& run : RunsOf(sets, table.chains[c])) {
        if (!OverlapsClassified(chain_plan, run)) chain_plan.set_runs.push_back(run);
      }
    }
  }
}

}  // namespace rulejit::lower
