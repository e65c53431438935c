// Where a classified rule's action begins, and what that action is: the
// plan, the direct-verdict tables and both backends ask it alike.
#ifndef RULEJIT_COMPILER_LOWER_RULE_ACTION_H_
#define RULEJIT_COMPILER_LOWER_RULE_ACTION_H_

#include <cstddef>
#include <optional>

#include "ir/ir.h"

namespace rulejit::lower {

// First expression of a classified rule that the generated code still runs
// (its action: counter, log, verdict); the classifier answered the rest.
size_t ActionBegin(const ir::Rule& rule);

// The action of a liftable rule that is a verdict, with or without a
// counter before it, and nothing else (no log, no mark).
struct VerdictAction {
  ir::VerdictCode verdict;
  bool counted;
};
std::optional<VerdictAction> VerdictOnlyAction(const ir::Rule& rule);

// The verdict of a liftable rule whose action is that verdict alone (no
// counter, log or other statement), else nothing.
std::optional<ir::VerdictCode> BareVerdict(const ir::Rule& rule);

}  // namespace rulejit::lower

#endif  // RULEJIT_COMPILER_LOWER_RULE_ACTION_H_
