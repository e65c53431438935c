// The lowered plan: every decision about how a verified, optimized ruleset
// becomes code, made once, between the passes and the backends.
//
//   ir::Ruleset (after passes) ──BuildPlan──▶ lower::Plan ──▶ asmjit | llvm
//     layout          global chain and rule ids (the ABI's numbering)
//     per chain       segments in rule order: linear rules, set runs (one
//                     lookup of a varying constant), classified runs (a
//                     decision structure answers, code runs the action
//                     from each rule's action start); inline at jumps
//     shared loads    header fields read once per packet (asmjit)
//     direct          per hook: verdicts read straight off a classifier
//
// The IR keeps only the ruleset's meaning; the plan keeps how to run it.
// Each decision is one file (layout.cc, classified_runs.cc, set_runs.cc,
// inline_chains.cc, shared_loads.cc, direct_verdicts.cc) and can be turned
// off by name (LowerOptions::disabled, the same names as --no-pass);
// PrintPlan shows a plan (`rulejit compile --emit plan`) and VerifyPlan
// checks what backends assume of it.
#ifndef RULEJIT_COMPILER_LOWER_PLAN_H_
#define RULEJIT_COMPILER_LOWER_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/classify/classifier.h"
#include "compiler/lower/layout.h"
#include "ir/ir.h"

namespace rulejit::lower {

// Rules [begin, end) of a chain answered by a decision structure: the code
// asks the classifier for the first matching rule, then runs that rule's
// action, expressions [action_begin[r - begin], end) of rule r.
struct ClassifiedRun {
  uint32_t begin = 0;
  uint32_t end = 0;
  const classify::Classifier* classifier = nullptr;
  std::vector<uint32_t> action_begin;  // per rule of the run
};

// Rules [begin, end) alike but for the constant of one equality, expression
// `node` of each (set_runs.cc): a backend may find the rule to run with one
// lookup of that value instead of one compare a rule.
struct SetRun {
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t node = 0;
};

// A header field several rules load; a backend may load it once per packet.
struct SharedLoad {
  ir::PayloadBase base = ir::PayloadBase::kNetwork;
  uint32_t offset = 0;
  uint32_t len = 0;  // 1, 2 or 4
};
inline constexpr size_t kMaxSharedLoads = 16;

struct ChainPlan {
  std::vector<ClassifiedRun> classified;  // in rule order, disjoint
  std::vector<SetRun> set_runs;           // in rule order, disjoint, none in a classified run
  bool inline_at_jumps = false;           // compiled into each rule that jumps to it
};

// One stretch of a chain as a backend emits it (Segments).
struct Segment {
  enum Kind : uint8_t { kLinear, kSetRun, kClassified };
  Kind kind = kLinear;
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t index = 0;  // into ChainPlan::set_runs or ::classified
};
// The chain's rules [0, rules) as segments in rule order, covering each
// rule once: its classified runs and set runs, linear stretches between.
std::vector<Segment> Segments(const ChainPlan& chain, uint32_t rules);

// A hook whose verdict is a table lookup on the classifier's answer: it runs
// one base chain whose rules are all one classified run of accepts and
// drops, each with or without a counter (a large flat ACL). The compiled
// code would only ask the classifier and return the rule's verdict, so the
// burst path does that itself.
struct DirectVerdicts {
  ir::RuleRef chain;
  const classify::Classifier* classifier = nullptr;
  std::vector<ir::VerdictCode> verdicts;  // per rule of the chain: accept or drop
  std::vector<uint8_t> counted;           // per rule: it has a counter
  uint32_t rule_base = 0;                 // layout id of rule 0
  uint32_t policy_id = 0;                 // layout id of the chain's policy
  ir::VerdictCode policy = ir::VerdictCode::kAccept;
};

inline constexpr int kHookCount = static_cast<int>(ir::Hook::kEgress) + 1;

struct Plan {
  explicit Plan(const ir::Ruleset& ruleset) : layout(ruleset), chains(layout.chain_count) {}
  Plan(Plan&&) = default;

  Layout layout;
  std::vector<ChainPlan> chains;  // per global chain index
  std::vector<SharedLoad> shared_loads;
  std::vector<std::optional<DirectVerdicts>> direct;  // per ir::Hook
  // The decision structures the classified runs point into (a deque: the
  // pointers stay valid as it grows).
  std::deque<classify::Classifier> classifiers;
  // Rule id of rule 0 of the chain the first classifier belongs to (its
  // answers are that chain's rule indexes); 0 without classifiers.
  uint32_t first_classified_rule_base = 0;

  // Rules answered by decision structures rather than linear code.
  size_t ClassifiedRules() const;
  size_t ClassifierBytes() const;
};

struct LowerOptions {
  // Large chains as decision structures (compiler/classify) when measured
  // to be faster; false keeps every chain linear.
  bool classify = true;
  // Shortest run of liftable rules worth a decision structure.
  uint32_t classify_min_rules = 256;
  // Decision names not to take ("merge-set-runs", ...; see AllDecisions).
  std::vector<std::string> disabled;
  // Receives the plan printed before and after decision `dump_after`.
  std::string dump_after;
  std::function<void(const std::string& before, const std::string& after)> dump;
};

// The decisions that may be turned off, in the order they are taken.
struct DecisionInfo {
  const char* name;     // "merge-set-runs"
  const char* summary;  // one line for --help
};
const std::vector<DecisionInfo>& AllDecisions();
bool IsDecisionName(const std::string& name);

// Plans `ruleset` (verified, passes run). Errors: a classifier that fails
// to build.
[[nodiscard]] absl::StatusOr<Plan> BuildPlan(const ir::Ruleset& ruleset,
                                             const LowerOptions& options);

// The decisions, one per file; BuildPlan takes them in this order.
absl::Status PlanClassifiedRuns(const ir::Ruleset& ruleset, const LowerOptions& options,
                                Plan& plan);
void PlanInlineChains(const ir::Ruleset& ruleset, Plan& plan);
void PlanSetRuns(const ir::Ruleset& ruleset, Plan& plan);
void PlanSharedLoads(const ir::Ruleset& ruleset, Plan& plan);
void PlanDirectVerdicts(const ir::Ruleset& ruleset, Plan& plan);

// Text form, for --emit plan and golden tests (plan_print.cc).
std::string PrintPlan(const Plan& plan, const ir::Ruleset& ruleset);
// What backends assume of a plan (plan_verify.cc): runs within their
// chains, sorted and disjoint, set runs outside classified runs, action
// starts within their rules, inlined chains regular and transfer-free,
// shared loads few and small, direct verdicts over one whole classified
// chain. An error names the first broken assumption.
absl::Status VerifyPlan(const Plan& plan, const ir::Ruleset& ruleset);

}  // namespace rulejit::lower

#endif  // RULEJIT_COMPILER_LOWER_PLAN_H_
