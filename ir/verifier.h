// The IR verifier: checks a ruleset is well formed before anything runs it.
//
// Reported as located errors: a register read before any expression of the
// rule wrote it, lengths out of range (loads 1..64 bytes, compares and
// registers within the 64-byte register file), lookups of unknown sets or
// with key lengths that don't fit, jumps/gotos to chains that don't exist in
// the table or to base chains, jump loops (a chain reachable from itself),
// base chains with invalid hooks for their family, policies other than
// accept/drop.
#ifndef RULEJIT_IR_VERIFIER_H_
#define RULEJIT_IR_VERIFIER_H_

#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::ir {

// Appends any problems to `diags`; returns true when the ruleset is valid.
bool Verify(const Ruleset& ruleset, Diagnostics& diags);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_VERIFIER_H_
