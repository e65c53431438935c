// Forwarding header: the rule-shape queries the passes use live in
// ir/rule_shape.h. Kept only for merge_set_runs.cc, which is moving to
// compiler/lower/ (issue 18); include ir/rule_shape.h there and delete this.
#ifndef RULEJIT_COMPILER_PASSES_RULE_EFFECTS_H_
#define RULEJIT_COMPILER_PASSES_RULE_EFFECTS_H_

#include "ir/rule_shape.h"

namespace rulejit::passes {
using ir::ChangesStateOrJumps;
using ir::EndsChain;
}  // namespace rulejit::passes

#endif  // RULEJIT_COMPILER_PASSES_RULE_EFFECTS_H_
