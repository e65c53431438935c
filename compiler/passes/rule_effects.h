// What a rule does besides matching, as the passes that empty rules need
// to know it: whether a match ends the chain, and whether the rule may
// change what later rules see.
#ifndef RULEJIT_COMPILER_PASSES_RULE_EFFECTS_H_
#define RULEJIT_COMPILER_PASSES_RULE_EFFECTS_H_

#include "ir/ir.h"

namespace rulejit::passes {

// A matching packet leaves the chain: accept, drop, return, goto (an
// immediate verdict) or a reject statement.
bool EndsChain(const ir::Rule& rule);

// The rule may change state a later rule reads (meta/ct mark set), has
// state of its own (limit: each copy has its own token bucket), or jumps
// (the called chain might do either), directly or through a verdict map.
bool ChangesStateOrJumps(const ir::Rule& rule);

}  // namespace rulejit::passes

#endif  // RULEJIT_COMPILER_PASSES_RULE_EFFECTS_H_
