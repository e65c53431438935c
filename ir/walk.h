// Walks over a ruleset's expressions in file order (tables, chains, rules,
// expressions): the first that satisfies a predicate (what the checks that
// refuse a ruleset for what it reads point at), or every one.
//
//   if (const ir::Node* n = ir::FirstNode(ruleset, IsClockRead)) ...
//   ir::ForEachNode(ruleset, [&](const ir::Node& n) { ... });
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

// Calls `fn(node)` for every expression.
template <typename Fn>
void ForEachNode(const Ruleset& ruleset, Fn fn) {
  for (const Table& t : ruleset.tables) {
    for (const Chain& c : t.chains) {
      for (const Rule& r : c.rules) {
        for (const Node& n : r.exprs) fn(n);
      }
    }
  }
}

// Whether any base chain is of type nat (it needs connection tracking, and
// its statements and policy draw ports).
inline bool HasNatBaseChain(const Ruleset& ruleset) {
  for (const Table& t : ruleset.tables) {
    for (const Chain& c : t.chains) {
      if (c.base && c.base->type == "nat") return true;
    }
  }
  return false;
}

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_WALK_H_
