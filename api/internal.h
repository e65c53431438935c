// Inside the project only (never installed): the IR behind the public
// Ruleset handle. tools/, tests/ and bench/ reach the IR through here; the
// runtime and embedders never do (../DESIGN.md: they see rulesets only
// through the API).
//
//   const ir::Ruleset& rs = IrOf(program->ruleset());
//   Ruleset handle = RulesetOf(std::move(built_ir));   // tests build IR
#ifndef RULEJIT_API_INTERNAL_H_
#define RULEJIT_API_INTERNAL_H_

#include <optional>
#include <string>
#include <utility>

#include "ir/ir.h"
#include "rulejit/rulejit.h"

namespace rulejit {

struct Ruleset::Impl {
  ir::Ruleset ir;  // first: the hot path reaches it through one pointer
  // The text ParseRuleset parsed (the ruleset's file 0) and its syntax,
  // for RuleText; unset for a ruleset built as IR.
  std::string source;
  std::optional<InputFormat> format;
};

struct RulesetInternal {
  static const ir::Ruleset& Ir(const Ruleset& ruleset) { return ruleset.impl_->ir; }
  static ir::Ruleset& Ir(Ruleset& ruleset) { return ruleset.impl_->ir; }
  static Ruleset Make(Ruleset::Impl impl);
};

inline const ir::Ruleset& IrOf(const Ruleset& ruleset) { return RulesetInternal::Ir(ruleset); }
inline ir::Ruleset& MutableIrOf(Ruleset& ruleset) { return RulesetInternal::Ir(ruleset); }
// A handle over IR built directly (tests, tools); RuleText prints its rules.
inline Ruleset RulesetOf(ir::Ruleset ruleset) {
  return RulesetInternal::Make({.ir = std::move(ruleset)});
}

}  // namespace rulejit

#endif  // RULEJIT_API_INTERNAL_H_
