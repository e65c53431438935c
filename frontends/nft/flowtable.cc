// Flowtables and the statement that fills them, as nft 1.0.6 reads them:
//
//   flowtable ft {                          (in a table block, or
//     hook ingress priority 0;               `add flowtable FAMILY TABLE ft { ... }`)
//     devices = { lan1, "wan" };
//     flags offload; counter
//   }
//   ... meta l4proto { tcp, udp } flow offload @ft     (or `flow add @ft`)
//
// The declaration is recorded in ir::Table::flowtables; the statement is
// [ flow_offload flowtable ft ] (ir::FlowOffload has its meaning). What the
// kernel refuses is a located error here: a flowtable hooks ingress only,
// `flow add` runs in forward chains of ip, ip6 and inet tables only
// (nft_flow_offload_validate: EOPNOTSUPP) and names a flowtable of its
// table (ENOENT).
#include "absl/strings/str_cat.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

bool Parser::ParseFlowtableBlock(ir::Table& table, const std::string& name, ir::SourceLoc loc) {
  ir::Flowtable ft;
  bool existed = false;
  for (const ir::Flowtable& f : table.flowtables) {
    if (f.name == name) {
      ft = f;  // `add flowtable` again: nft adds devices to it
      existed = true;
    }
  }
  ft.name = name;
  ft.loc = loc;
  bool hooked = false;
  while (!sink_.failed) {
    SkipSeparators();
    if (AtBlockClose()) {
      if (!CloseBlock()) return false;
      break;
    }
    const Token& t = Peek();
    if (t.kind != Tok::kWord) return ErrorUnexpected("flowtable property");
    const std::string w = t.text;
    const ir::SourceLoc wloc = Next().loc;
    if (w == "hook") {
      std::string hook;
      const ir::SourceLoc hook_loc = Peek().loc;
      if (!ExpectWord(&hook, "hook name")) return false;
      if (hook != "ingress") return Error(hook_loc, "flowtables hook ingress only");
      if (!AcceptWord("priority")) return ErrorUnexpected("'priority'");
      if (!ParsePriority(&ft.priority, table.family)) return false;
      hooked = true;
    } else if (w == "devices") {
      if (!ParseFlowtableDevices(ft)) return false;
    } else if (w == "flags") {
      std::string f;
      const ir::SourceLoc floc = Peek().loc;
      if (!ExpectWord(&f, "flowtable flag")) return false;
      if (f != "offload") {
        return Error(floc, absl::StrCat("unknown flowtable flag '", f, "'"),
                     ir::DidYouMean(f, {"offload"}));
      }
      ft.flags |= 0x1;  // NFT_FLOWTABLE_HW_OFFLOAD
    } else if (w == "counter") {
      ft.flags |= 0x2;  // NFT_FLOWTABLE_COUNTER
    } else {
      return Error(wloc, absl::StrCat("unknown flowtable property '", w, "'"),
                   ir::DidYouMean(w, {"hook", "devices", "flags", "counter"}));
    }
  }
  if (sink_.failed) return false;
  if (!hooked && !existed) return Error(loc, "flowtable has no hook");
  for (ir::Flowtable& f : table.flowtables) {
    if (f.name == name) {
      f = std::move(ft);
      return true;
    }
  }
  table.flowtables.push_back(std::move(ft));
  return true;
}

// `devices = { a, "b" }` or `devices = a` (the `devices` word read).
bool Parser::ParseFlowtableDevices(ir::Flowtable& ft) {
  if (!ExpectPunct("=")) return false;
  const bool braced = AcceptPunct("{");
  do {
    SkipNewlines();
    if (braced && AtPunct("}")) break;
    std::string dev;
    if (!ExpectName(&dev, "device name")) return false;
    ft.devices.push_back(std::move(dev));
    SkipNewlines();
  } while (braced && AcceptPunct(","));
  return !braced || ExpectPunct("}");
}

// `flow add @NAME` / `flow offload @NAME`.
bool Parser::ParseFlowOffload(ast::Statement* out) {
  const ir::SourceLoc loc = Next().loc;  // flow
  Next();                                // add | offload
  if (Peek().kind != Tok::kSetRef) return ErrorUnexpected("'@' and a flowtable name");
  const std::string name = Next().text;
  if (table_->family != ir::Family::kIp && table_->family != ir::Family::kIp6 &&
      table_->family != ir::Family::kInet) {
    return Error(loc, "flow offload runs in ip, ip6 and inet tables only");
  }
  *out = ast::FlowOffload{name, loc};
  return true;
}

// After the whole file: every `flow add` names a flowtable of its table,
// and none sits in a base chain of another hook than forward.
bool Parser::CheckFlowOffloads(const ir::Ruleset& rs) {
  for (const ir::Table& t : rs.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        for (const ir::Node& n : r.exprs) {
          const auto* flow = std::get_if<ir::FlowOffload>(&n.expr);
          if (flow == nullptr) continue;
          bool found = false;
          for (const ir::Flowtable& f : t.flowtables) found |= f.name == flow->flowtable;
          if (!found) {
            return Error(n.loc, absl::StrCat("no flowtable '", flow->flowtable, "' in table '",
                                             t.name, "'"));
          }
          if (c.base && c.base->hook != ir::Hook::kForward) {
            return Error(n.loc, "flow offload runs in forward chains only");
          }
        }
      }
    }
  }
  return true;
}

}  // namespace rulejit::frontends::nft
