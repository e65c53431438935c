// The IR of iptables' `-m rpfilter` (ipt_rpfilter.c, ip6t_rpfilter.c):
// `fib` expressions on the host model and boolean maps, no expression of
// its own. Built here for both sides that need the exact sequence: the
// iptables frontend lowers the match to it (frontends/iptables/
// match_rpfilter.cc), the iptables printer recognises it (emit/
// ipt_matches.cc). The meaning and the hosts it is exact on are in
// rpfilter_ir.cc.
//
//   std::vector<ir::Expr> exprs = ir::RpfilterExprs(
//       /*ipv6=*/false, {.loose = true}, [&](ir::Set s) { return AddSet(s); });
#ifndef RULEJIT_IR_RPFILTER_IR_H_
#define RULEJIT_IR_RPFILTER_IR_H_

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace rulejit::ir {

struct RpfilterFlags {  // XT_RPFILTER_*
  bool loose = false;
  bool validmark = false;
  bool accept_local = false;
  bool invert = false;
};

// The expressions, in order; each anonymous set they read goes to
// `add_set`, which names it (in the rule's table) and returns the name.
std::vector<Expr> RpfilterExprs(bool ipv6, const RpfilterFlags& flags,
                                const std::function<std::string(Set)>& add_set);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_RPFILTER_IR_H_
