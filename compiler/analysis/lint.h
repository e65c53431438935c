// Lint: rules that never decide anything, found exactly in header space.
//
//   std::vector<LintFinding> findings = LintRuleset(ruleset, {});
//   for (const LintFinding& f : findings) ... f.rule, f.kind, f.blocked_by
//
// A rule is *shadowed* when no packet that reaches it matches it: earlier
// rules (`blocked_by`, the earlier rules of its chain whose decided packets
// overlap its match; Batfish's filterLineReachability reports the same) or
// the conditions of the jumps that lead to its chain take every such
// packet. It is *redundant* (opt-in, it costs one exact diff per rule)
// when it does match packets but removing it changes no verdict at any
// hook. It is *unreachable* when no packet gets to it at all: earlier
// rules of its chain (`blocked_by`) decide every packet that enters the
// chain, or nothing jumps to its chain (`blocked_by` empty).
//
// The per-rule question ("does any packet that gets here match it?") and
// `blocked_by` are the shadowed-rule prover's (compiler/headerspace/
// shadow_prover.h, the one remove-shadowed-rules uses), asked by the walk
// of each hook (flatten.h) with the packets that enter each chain.
//
// Only what the analysis can prove is reported: rules of ip, ip6 and inet
// tables, reached at some netfilter hook with only exactly-lifted rules
// before them on every path (flatten.h); unreachable rules and the
// redundancy check only for rulesets that lift exactly. The space is
// unfragmented IPv4 without options and IPv6 without extension headers
// (compiler/headerspace/cube.h), so a finding is exact for those packets;
// a rule that reads what the space holds fixed (extension headers, the
// IPv4 fragment fields, the IPv6 next header) is not judged shadowed or
// redundant (it may match only packets outside the space).
#ifndef RULEJIT_COMPILER_ANALYSIS_LINT_H_
#define RULEJIT_COMPILER_ANALYSIS_LINT_H_

#include <vector>

#include "ir/interp.h"
#include "ir/ir.h"

namespace rulejit::analysis {

enum class LintKind { kShadowed, kRedundant, kUnreachable };

struct LintFinding {
  LintKind kind = LintKind::kShadowed;
  ir::RuleRef rule;
  std::vector<ir::RuleRef> blocked_by;  // kShadowed, kUnreachable; may be empty
};

struct LintOptions {
  bool redundant = false;  // also look for redundant rules
  // Above this many rules the redundancy check is skipped (it runs one
  // diff per rule).
  size_t redundant_max_rules = 500;
};

struct LintResult {
  std::vector<LintFinding> findings;  // in rule order
  bool redundancy_checked = false;    // false: skipped (size or inexact)
};

LintResult LintRuleset(const ir::Ruleset& ruleset, const LintOptions& options);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_LINT_H_
