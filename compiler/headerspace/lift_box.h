// Lifting a rule into the box projection of header space (box.h;
// compiler/headerspace/README.md): the box policy of the one rule walk
// (lift_walk.h).
//
//   auto lifted = headerspace::LiftToBox(rule);
//   if (lifted.ok()) { lifted->box ... rule.exprs[lifted->action_begin...] }
//   else             { lifted.status().message(): why it stays linear }
//
// A rule lifts when it is a match part followed by an action part:
//   match   a conjunction of, in any order and on any registers,
//             payload load  4b @ network + 12 | + 16, 2b @ transport + 0 | + 2
//                           (1-3 bytes at network + 12 | + 16 in an ip table)
//             meta load l4proto
//             bitwise reg = (reg & PREFIX_MASK) ^ 0   on a loaded field
//             cmp eq|neq|lt|lte|gt|gte, range eq|neq   on a (masked) field
//             fused payload ... (compiler/passes' FusedCmp) of the same forms,
//               and an equality on both ports as one 4-byte load
//   action  counter / log statements, then one terminal verdict:
//             accept, drop, return, goto, or reject.
// Every comparison becomes an interval of the field (a prefix mask keeps the
// masked value monotone in the field, so `(x & m) OP v` is an interval); a
// neq whose complement is two intervals does not lift. Each field loaded
// excludes "absent" from its dimension, so the box matches exactly the
// packets the rule's match part matches. An unsatisfiable rule lifts to an
// empty box, and so does a rule with no expressions (a pass blanked it).
// Anything else (other loads or keys, lookups, byteorder, reads
// of registers the rule did not load, non-prefix masks, jump/continue, a
// statement inside the match part) does not lift: the status says why.
#ifndef RULEJIT_COMPILER_HEADERSPACE_LIFT_BOX_H_
#define RULEJIT_COMPILER_HEADERSPACE_LIFT_BOX_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "compiler/headerspace/box.h"
#include "ir/ir.h"

namespace rulejit::headerspace {

// What is known about every packet the rule's chain sees.
struct BoxContext {
  // The chain is in an `ip` table: every packet has a whole IPv4 header,
  // so a load of the first 1 to 3 bytes of an address (nft's /8, /16, /24
  // prefixes) is readable exactly when the whole address is, and lifts as
  // a prefix of it.
  bool complete_ipv4_header = false;
  // Port dimensions read "absent" on non-first IPv4 fragments (ExtractKey),
  // so the iptables frontend's `frag-off & 0x1fff == 0` test that guards
  // every port match (as xt_tcp/xt_udp do) lifts: a rule with it and a
  // port match is exactly its box. Needs complete_ipv4_header. In this
  // mode a port match without the test (nft's fast-path port loads read
  // fragments) does not lift, nor the test without a port match.
  bool ports_first_fragment_only = false;
};

// The context for the rules of `chain` in `table`: a whole IPv4 header in
// ip tables, first-fragment ports where some rule has the fragment test.
BoxContext BoxContextForChain(const ir::Table& table, const ir::Chain& chain);

struct LiftedBox {
  // In ExtractKey(pkt, context.ports_first_fragment_only); empty when the
  // rule can never match.
  Box box;
  size_t action_begin = 0;  // index of the first expression of the action part
};

// The rule's box, or a FailedPrecondition status naming the expression that
// does not lift.
[[nodiscard]] absl::StatusOr<LiftedBox> LiftToBox(const ir::Rule& rule,
                                                 const BoxContext& context = {});

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_LIFT_BOX_H_
