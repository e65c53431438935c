// The first expression of a ruleset that satisfies a predicate, in file
// order (tables, chains, rules, expressions): what the checks that refuse
// a ruleset for what it reads point at.
//
//   if (const ir::Node* n = ir::FirstNode(ruleset, IsClockRead)) ...
#ifndef RULEJIT_IR_WALK_H_
#define RULEJIT_IR_WALK_H_

#include "ir/ir.h"

namespace rulejit::ir {

// `pred` takes an ir::Expr; null when no expression satisfies it.
template <typename Pred>
const Node* FirstNode(const Ruleset& ruleset, Pred pred) {
  for (const Table& t : ruleset.tables) {
    for (const Chain& c : t.chains) {
      for (const Rule& r : c.rules) {
        for (const Node& n : r.exprs) {
          if (pred(n.expr)) return &n;
        }
      }
    }
  }
  return nullptr;
}

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_WALK_H_
