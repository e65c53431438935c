// -m rpfilter [--loose] [--validmark] [--accept-local] [--invert]: the
// reverse path filter, lowered to ir::RpfilterExprs (ir/rpfilter_ir.h:
// fib on the host model and boolean maps, with the kernel's meaning).
//
// The checks of rpfilter_check and the registration: the raw and mangle
// tables only, the PREROUTING hook only (in user chains checked at
// COMMIT, hook_limits.cc). The options take no `!`.
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "ir/rpfilter_ir.h"

namespace rulejit::frontends::iptables_internal {

bool LowerRpfilter(LowerCtx& ctx, const MatchUse& m) {
  if (ctx.table_name != "raw" && ctx.table_name != "mangle") {
    return ctx.Error(m.loc,
                     absl::StrCat("rpfilter is not valid in table '", ctx.table_name, "'"),
                     "the kernel's rpfilter_check allows the raw and mangle tables only");
  }
  if (ctx.hook && *ctx.hook != ir::Hook::kPrerouting) {
    return ctx.Error(m.loc, absl::StrCat("rpfilter is not valid in chain '", ctx.chain_name, "'"),
                     RegisteredHooksHint("rpfilter"));
  }
  ir::RpfilterFlags flags;
  for (const Option& o : m.options) {
    if (o.name == "--loose") flags.loose = true;
    if (o.name == "--validmark") flags.validmark = true;
    if (o.name == "--accept-local") flags.accept_local = true;
    if (o.name == "--invert") flags.invert = true;
  }
  auto add_set = [&](ir::Set set) {
    set.loc = m.loc;
    for (ir::SetElement& e : set.elements) e.loc = m.loc;
    return ctx.AddSet(std::move(set));
  };
  for (ir::Expr& e : ir::RpfilterExprs(ctx.ipv6(), flags, add_set)) ctx.Add(std::move(e), m.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
