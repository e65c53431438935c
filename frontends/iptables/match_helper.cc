// -m helper --helper NAME (xt_helper): the conntrack helper of the
// connection's *master*, the connection an expectation of that helper
// made this one from. It is not nft's `ct helper` (the connection's own
// helper), though iptables-translate writes that.
//
// KERNEL: without an entry or a master the match answers its `!`: it
// matches no packet, and with `!` every packet. rulejit models no
// expectations, so no connection has a master: `--helper NAME` lowers to
// `ct helper "NAME"` (no helper is assigned, so it never matches) and
// `! --helper NAME` to nothing (every packet). A dump that assigns helpers
// (CT --helper), under which masters exist, is refused by
// CheckHelperMatches at its end.
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "ir/walk.h"

namespace rulejit::frontends::iptables_internal {

bool LowerHelper(LowerCtx& ctx, const MatchUse& m) {
  if (!RequireOptions(ctx, m)) return false;
  const Option& opt = m.options[0];
  const std::string& name = opt.args[0].text;
  constexpr size_t kNameMax = 29;  // struct xt_helper_info's name[30]
  if (name.size() > kNameMax) {
    return ctx.Error(opt.ArgLoc(), absl::StrCat("helper name '", name, "' is too long"),
                     "at most 29 characters");
  }
  if (ctx.helper_matches != nullptr) ctx.helper_matches->push_back(m.loc);
  if (opt.invert) return true;
  // ct helper names are 16 bytes (NF_CT_HELPER_NAME_LEN): a longer one
  // names no helper either.
  ir::Bytes text(16, 0);
  for (size_t i = 0; i < name.size() && i < text.size(); ++i) text[i] = name[i];
  ctx.Ct(ir::CtKey::kHelper, opt.loc);
  ctx.Cmp(ir::CmpOp::kEq, text, opt.loc);
  return true;
}

void CheckHelperMatches(const ir::Ruleset& ruleset, const std::vector<ir::SourceLoc>& uses,
                        ir::Diagnostics& diags) {
  if (uses.empty()) return;
  const ir::Node* assigns = ir::FirstNode(ruleset, [](const ir::Expr& e) {
    const auto* ref = std::get_if<ir::Objref>(&e);
    return ref != nullptr && ref->type == ir::kObjCtHelper;
  });
  if (assigns == nullptr) return;
  for (const ir::SourceLoc& loc : uses) {
    diags.Error(loc, "match 'helper' is not supported where the dump assigns conntrack helpers",
                "it reads the helper of the connection's master, and expectations are not "
                "modelled");
  }
}

}  // namespace rulejit::frontends::iptables_internal
