// What a rule is made of, as passes, the header-space lifters and the
// backends ask it: where its match part ends and its action part begins,
// whether a match ends the chain, whether it may change what later rules
// see.
//
//   tcp dport 22 counter accept
//   [ payload load ... ] [ cmp ... ] | [ counter ... ] [ immediate accept ]
//   match part (IsMatchExpr)         | MatchEnd(rule): the action part
#ifndef RULEJIT_IR_RULE_SHAPE_H_
#define RULEJIT_IR_RULE_SHAPE_H_

#include <cstddef>

#include "ir/ir.h"

namespace rulejit::ir {

// A match expression: a load, mask or compare (payload, meta, bitwise,
// cmp, range, fused compare).
bool IsMatchExpr(const Expr& e);

// Index of the rule's first expression that is not a match: where the
// action part begins (rule.exprs.size() when there is none).
size_t MatchEnd(const Rule& rule);

// A matching packet leaves the chain: accept, drop, return, goto (an
// immediate verdict) or a reject statement.
bool EndsChain(const Rule& rule);
// The verdict leaves the chain: accept, drop, return or goto (not jump or
// continue).
bool EndsChain(VerdictCode code);

// The rule sets a verdict (immediate to the verdict register) or rejects.
bool HasVerdict(const Rule& rule);

// The rule may change state a later rule reads (meta/ct mark set), has
// state of its own (limit: each copy has its own token bucket), or jumps
// (the called chain might do either), directly or through a verdict map.
bool ChangesStateOrJumps(const Rule& rule);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_RULE_SHAPE_H_
