// Extensions the kernel registers at some hooks only (the nat targets,
// the owner match), and the check it makes at load time: against every
// hook that can reach the rule (xt_check_target / xt_check_match with the
// hook mask translate_table computes through jumps). One in a user chain
// must suit each built-in chain that jumps to it, directly or through
// other user chains. Uses in built-in chains are checked as they are
// lowered (targets_nat.cc, match_owner.cc); CheckHookLimitedUses checks the
// rest once the table is complete.
#include <algorithm>
#include <deque>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"

namespace rulejit::frontends::iptables_internal {

namespace {

// The chains a chain's rules jump or go to.
std::vector<std::string> Targets(const ir::Chain& chain) {
  std::vector<std::string> out;
  for (const ir::Rule& rule : chain.rules) {
    for (const ir::Node& node : rule.exprs) {
      const auto* imm = std::get_if<ir::Immediate>(&node.expr);
      if (imm && imm->dreg == ir::kVerdictReg && !imm->verdict.chain.empty()) {
        out.push_back(imm->verdict.chain);
      }
    }
  }
  return out;
}

// For each chain, the hooks of the built-in chains that reach it.
absl::flat_hash_map<std::string, std::vector<ir::Hook>> ReachingHooks(const ir::Table& table) {
  absl::flat_hash_map<std::string, const ir::Chain*> by_name;
  for (const ir::Chain& c : table.chains) by_name[c.name] = &c;
  absl::flat_hash_map<std::string, std::vector<ir::Hook>> hooks;
  for (const ir::Chain& base : table.chains) {
    if (!base.base) continue;
    const ir::Hook hook = base.base->hook;
    std::deque<const ir::Chain*> todo = {&base};
    while (!todo.empty()) {
      const ir::Chain* chain = todo.front();
      todo.pop_front();
      std::vector<ir::Hook>& seen = hooks[chain->name];
      if (std::find(seen.begin(), seen.end(), hook) != seen.end()) continue;
      seen.push_back(hook);
      for (const std::string& name : Targets(*chain)) {
        auto it = by_name.find(name);
        if (it != by_name.end()) todo.push_back(it->second);
      }
    }
  }
  return hooks;
}

}  // namespace

bool RegisteredAt(std::string_view name, ir::Hook hook) {
  using ir::Hook;
  if (name == "SNAT") return hook == Hook::kPostrouting || hook == Hook::kInput;
  if (name == "MASQUERADE") return hook == Hook::kPostrouting;
  if (name == "owner") return hook == Hook::kOutput || hook == Hook::kPostrouting;
  if (name == "rpfilter" || name == "TPROXY") return hook == Hook::kPrerouting;
  if (name == "socket") return hook == Hook::kPrerouting || hook == Hook::kInput;
  if (name == "devgroup --src-group") {
    return hook == Hook::kPrerouting || hook == Hook::kInput || hook == Hook::kForward;
  }
  if (name == "devgroup --dst-group") {
    return hook == Hook::kForward || hook == Hook::kOutput || hook == Hook::kPostrouting;
  }
  if (name == "addrtype --limit-iface-in" || name == "policy --dir in") {
    return hook != Hook::kOutput && hook != Hook::kPostrouting;
  }
  if (name == "TCPMSS --clamp-mss-to-pmtu" || name == "CLASSIFY") {
    return hook == Hook::kForward || hook == Hook::kOutput || hook == Hook::kPostrouting;
  }
  if (name == "addrtype --limit-iface-out" || name == "policy --dir out") {
    return hook != Hook::kPrerouting && hook != Hook::kInput;
  }
  if (name == "DNAT" || name == "REDIRECT") {
    return hook == Hook::kPrerouting || hook == Hook::kOutput;
  }
  return true;  // NETMAP: all four
}

const char* RegisteredHooksHint(std::string_view name) {
  if (name == "SNAT") return "SNAT is valid in POSTROUTING and INPUT";
  if (name == "MASQUERADE") return "MASQUERADE is valid in POSTROUTING";
  if (name == "DNAT") return "DNAT is valid in PREROUTING and OUTPUT";
  if (name == "REDIRECT") return "REDIRECT is valid in PREROUTING and OUTPUT";
  if (name == "owner") return "the owner match is valid in OUTPUT and POSTROUTING";
  if (name == "rpfilter") return "the rpfilter match is valid in PREROUTING only";
  if (name == "socket") return "the socket match is valid in PREROUTING and INPUT";
  if (name == "TPROXY") return "TPROXY is valid in PREROUTING only";
  if (name == "addrtype --limit-iface-in") {
    return "--limit-iface-in needs an input device: not in OUTPUT or POSTROUTING";
  }
  if (name == "devgroup --src-group") {
    return "--src-group is valid in PREROUTING, INPUT and FORWARD";
  }
  if (name == "devgroup --dst-group") {
    return "--dst-group is valid in FORWARD, OUTPUT and POSTROUTING";
  }
  if (name == "CLASSIFY") return "CLASSIFY is valid in FORWARD, OUTPUT and POSTROUTING";
  if (name == "TCPMSS --clamp-mss-to-pmtu") {
    return "path-MTU clamping is valid in FORWARD, OUTPUT and POSTROUTING";
  }
  if (name == "addrtype --limit-iface-out") {
    return "--limit-iface-out needs an output device: not in PREROUTING or INPUT";
  }
  if (name == "policy --dir in") return "an input policy is not valid in OUTPUT and POSTROUTING";
  if (name == "policy --dir out") return "an output policy is not valid in PREROUTING and INPUT";
  return "";
}

void CheckHookLimitedUses(const ir::Table& table, const std::vector<HookLimitedUse>& uses,
                          ir::Diagnostics& diags) {
  if (uses.empty()) return;
  const auto hooks = ReachingHooks(table);
  for (const HookLimitedUse& use : uses) {
    auto it = hooks.find(use.chain);
    if (it == hooks.end()) continue;  // not reached: the kernel checks nothing
    for (ir::Hook hook : it->second) {
      if (RegisteredAt(use.name, hook)) continue;
      diags.Error(use.loc,
                  absl::StrCat(use.kind, " '", use.name, "' in chain '", use.chain,
                               "' is reached from the ", ir::HookName(hook), " hook"),
                  RegisteredHooksHint(use.name));
      break;
    }
  }
}

}  // namespace rulejit::frontends::iptables_internal
