// What a well-formed ruleset may read that rulejit's model has no value
// for: the evaluators would fail to match where the kernel loads a value,
// a silent difference, so such a read is a located error when a ruleset
// is parsed (frontends/frontend.cc). The verifier (verifier.h) is about
// well-formed bytecode and accepts these.
#ifndef RULEJIT_IR_UNMODELLED_H_
#define RULEJIT_IR_UNMODELLED_H_

#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::ir {

// Why the model has no value for meta `key`, or null when it has one.
const char* UnmodelledMetaKey(MetaKey key);

// Why the model has no value for ct `key` (given whether the ruleset
// assigns conntrack helpers and sets conntrack labels), or null.
const char* UnmodelledCtKey(CtKey key, bool helpers_assigned, bool labels_set);

// Reports each read the model cannot answer; false when there is one.
bool CheckModelled(const Ruleset& ruleset, Diagnostics& diags);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_UNMODELLED_H_
