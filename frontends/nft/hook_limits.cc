// The kernel's hook checks of synproxy (nft_synproxy_validate: input and
// forward) and rt tcpmss (nft_rt_validate: forward, output, postrouting)
// also hold in regular chains, through every jump, goto and verdict map
// that reaches them from a base chain (nft_chain_validate_hooks on the
// chains the kernel walks from each base chain); a chain no base chain
// reaches is not checked. The base chains' own rules are checked as they
// are parsed (objects.cc, expr.cc), with the statement's column.
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/nft/parser.h"
#include "ir/chain_index.h"

namespace rulejit::frontends::nft {
namespace {

uint32_t Bit(ir::Hook h) { return 1u << static_cast<int>(h); }

// The chains a rule jumps or goes to, directly or through a verdict map.
std::vector<const ir::Chain*> Targets(const ir::Table& t, ir::ChainIndex& chains,
                                      const ir::Rule& r) {
  std::vector<const ir::Chain*> out;
  auto add = [&](const ir::Verdict& v) {
    if (v.code != ir::VerdictCode::kJump && v.code != ir::VerdictCode::kGoto) return;
    if (const ir::Chain* c = chains.Find(t, v.chain)) out.push_back(c);
  };
  for (const ir::Node& n : r.exprs) {
    if (const auto* imm = std::get_if<ir::Immediate>(&n.expr)) {
      if (imm->dreg == ir::kVerdictReg) add(imm->verdict);
    } else if (const auto* lk = std::get_if<ir::Lookup>(&n.expr)) {
      const ir::Set* set = lk->dreg && *lk->dreg == ir::kVerdictReg ? t.FindSet(lk->set) : nullptr;
      for (const ir::SetElement& e : set ? set->elements : std::vector<ir::SetElement>{}) {
        if (e.verdict) add(*e.verdict);
      }
    }
  }
  return out;
}

// The hooks an expression may run at (0: any), and its name.
uint32_t AllowedHooks(const ir::Table& t, const ir::Expr& e, const char** what) {
  using ir::Hook;
  bool synproxy = std::holds_alternative<ir::Synproxy>(e);
  if (const auto* o = std::get_if<ir::Objref>(&e)) {
    const ir::Set* set = o->sreg ? t.FindSet(o->set) : nullptr;
    synproxy = o->sreg ? set != nullptr && set->obj_type == ir::kObjSynproxy
                       : o->type == ir::kObjSynproxy;
  }
  if (synproxy) {
    *what = "synproxy";
    return Bit(Hook::kInput) | Bit(Hook::kForward);
  }
  if (std::holds_alternative<ir::Rt>(e)) {
    *what = "rt mtu";
    return Bit(Hook::kForward) | Bit(Hook::kOutput) | Bit(Hook::kPostrouting);
  }
  return 0;
}

// socket and tproxy, checked in base chains too (nft_socket_validate:
// prerouting, input, output; nft_tproxy_validate: prerouting). At output
// a socket expression reads the sending socket, which the host model does
// not hold: refused there as unmodelled.
uint32_t SocketHooks(const ir::Expr& e, const char** what) {
  using ir::Hook;
  if (std::holds_alternative<ir::Socket>(e)) {
    *what = "socket";
    return Bit(Hook::kPrerouting) | Bit(Hook::kInput);
  }
  if (std::holds_alternative<ir::Tproxy>(e)) {
    *what = "tproxy";
    return Bit(Hook::kPrerouting);
  }
  return 0;
}

}  // namespace

bool Parser::CheckHookLimits(const ir::Ruleset& rs) {
  for (const ir::Table& t : rs.tables) {
    // The hooks that reach each chain, to a fixed point: a chain goes back
    // on the work list when its hooks grow (at most once per hook), so a
    // long jump chain written in any order takes linear time.
    ir::ChainIndex chains(t);
    std::vector<std::vector<size_t>> jumps(t.chains.size());
    std::vector<uint32_t> reach(t.chains.size(), 0);
    std::vector<size_t> work;
    for (size_t i = 0; i < t.chains.size(); ++i) {
      for (const ir::Rule& r : t.chains[i].rules) {
        for (const ir::Chain* c : Targets(t, chains, r)) {
          jumps[i].push_back(static_cast<size_t>(c - t.chains.data()));
        }
      }
      if (t.chains[i].base) {
        reach[i] = Bit(t.chains[i].base->hook);
        work.push_back(i);
      }
    }
    while (!work.empty()) {
      const size_t i = work.back();
      work.pop_back();
      for (size_t j : jumps[i]) {
        if ((reach[j] | reach[i]) == reach[j]) continue;
        reach[j] |= reach[i];
        work.push_back(j);
      }
    }
    const bool inet_family = t.family == ir::Family::kIp || t.family == ir::Family::kIp6 ||
                             t.family == ir::Family::kInet;
    for (size_t i = 0; i < t.chains.size(); ++i) {
      for (const ir::Rule& r : t.chains[i].rules) {
        for (const ir::Node& n : r.exprs) {
          const char* what = "";
          uint32_t allowed = SocketHooks(n.expr, &what);
          if (allowed != 0 && !inet_family) {
            return Error(n.loc, absl::StrCat(what, " is for ip, ip6 and inet tables only"));
          }
          if (allowed != 0 && (reach[i] & Bit(ir::Hook::kOutput)) && *what == 's') {
            return Error(n.loc, absl::StrCat("socket in chain '", t.chains[i].name,
                                             "', which hook output reaches: there it reads "
                                             "the sending socket, which rulejit does not model"));
          }
          if (allowed == 0 && t.chains[i].base) continue;
          if (allowed == 0) allowed = AllowedHooks(t, n.expr, &what);
          const uint32_t bad = allowed == 0 ? 0 : reach[i] & ~allowed;
          if (bad == 0) continue;
          int hook = 0;
          while (!(bad & (1u << hook))) ++hook;
          return Error(n.loc, absl::StrCat(what, " in chain '", t.chains[i].name,
                                           "', which hook ",
                                           ir::HookName(static_cast<ir::Hook>(hook)),
                                           " reaches: the kernel refuses it (EOPNOTSUPP)"));
        }
      }
    }
  }
  return true;
}

}  // namespace rulejit::frontends::nft
