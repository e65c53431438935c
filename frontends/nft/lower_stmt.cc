// Lowering of statements: the dispatch over ast::Statement, and one short
// function per statement kind. Matches are lowered in match.cc.
//
//   accept / jump C      → [ immediate reg 0 accept ] / [ immediate reg 0 jump -> C ]
//   counter, log, limit, quota, queue, notrack, flow add @ft → the IR statement as parsed
//   reject with tcp reset → (l4proto tcp first in the rule) [ reject type 1 code 0 ]
//   reject (inet, after ip saddr ...) → [ reject type 0 code 3 ]
#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"

namespace rulejit::frontends::nft {

bool Linearizer::Lower(ir::Rule& rule, const ast::Statement& stmt) {
  // One case per statement kind: a new ast::Statement kind fails to compile.
  struct Dispatch {
    Linearizer& lin;
    ir::Rule& rule;
    bool operator()(const ast::Match& s) { return lin.LowerMatch(rule, s); }
    bool operator()(const ast::Verdict& s) { return lin.LowerVerdict(rule, s); }
    bool operator()(const ast::Reject& s) { return lin.LowerReject(rule, s); }
    bool operator()(const ast::Counter& s) { return lin.EmitStatement(rule, s.counter, s.loc); }
    bool operator()(const ast::Log& s) { return lin.EmitStatement(rule, s.log, s.loc); }
    bool operator()(const ast::Limit& s) { return lin.EmitStatement(rule, s.limit, s.loc); }
    bool operator()(const ast::Quota& s) { return lin.EmitStatement(rule, s.quota, s.loc); }
    bool operator()(const ast::Queue& s) { return lin.EmitStatement(rule, s.queue, s.loc); }
    bool operator()(const ast::Notrack& s) { return lin.EmitStatement(rule, ir::Notrack{}, s.loc); }
    bool operator()(const ast::Synproxy& s) { return lin.EmitStatement(rule, s.synproxy, s.loc); }
    bool operator()(const ast::MetaCtSet& s) { return lin.LowerMetaCtSet(rule, s); }
    bool operator()(const ast::PayloadSet& s) { return lin.LowerPayloadSet(rule, s); }
    bool operator()(const ast::Nat& s) { return lin.LowerNat(rule, s); }
    bool operator()(const ast::Objref& s) { return lin.LowerObjref(rule, s); }
    bool operator()(const ast::Dynset& s) { return lin.LowerDynset(rule, s); }
    bool operator()(const ast::FlowOffload& s) {
      return lin.EmitStatement(rule, ir::FlowOffload{s.flowtable}, s.loc);
    }
  };
  return std::visit(Dispatch{*this, rule}, stmt);
}

// The statements that need no context: the IR expression as parsed.
bool Linearizer::EmitStatement(ir::Rule& rule, ir::Expr e, ir::SourceLoc loc) {
  Emit(rule, std::move(e), loc);
  return true;
}

bool Linearizer::LowerVerdict(ir::Rule& rule, const ast::Verdict& s) {
  ir::Immediate imm;
  imm.verdict = s.verdict;
  Emit(rule, imm, s.loc);
  return true;
}

// The ICMP the reject sends: the table's, the rule's network protocol's in
// inet and netdev tables, or the one written; a TCP reset needs TCP and an
// ICMP code its IP version, as dependencies at the front of the rule.
bool Linearizer::LowerReject(ir::Rule& rule, const ast::Reject& s) {
  const ir::Family fam = table_->family;
  ir::Reject rej = fam == ir::Family::kIp    ? ir::Reject{RejectType::kIcmpUnreach, 3}
                   : fam == ir::Family::kIp6 ? ir::Reject{RejectType::kIcmpUnreach, 4}
                                             : ir::Reject{RejectType::kIcmpxUnreach, 1};
  switch (s.with) {
    case ast::Reject::With::kDefault:
      if (fam == ir::Family::kInet || fam == ir::Family::kNetdev) {
        if (ctx_.net == 4) rej = {RejectType::kIcmpUnreach, 3};
        if (ctx_.net == 6) rej = {RejectType::kIcmpUnreach, 4};
      }
      break;
    case ast::Reject::With::kTcpReset: {
      Field dep;
      dep.dep = Dep::kL4;
      dep.l4proto = 6;
      dep.loc = s.loc;
      if (!EmitDepsInFront(rule, &dep, 0, s.loc)) return false;
      rej = {RejectType::kTcpReset, 0};
      break;
    }
    case ast::Reject::With::kIcmpx:
      rej = {RejectType::kIcmpxUnreach, s.code};
      break;
    case ast::Reject::With::kIcmp:
    case ast::Reject::With::kIcmpv6: {
      const int net = s.with == ast::Reject::With::kIcmp ? 4 : 6;
      if ((fam == ir::Family::kIp && net == 6) || (fam == ir::Family::kIp6 && net == 4)) {
        return Error(s.with_loc, absl::StrCat("reject with ", s.with_word, " in a ",
                                              ir::FamilyName(fam), " table"));
      }
      if (!EmitDepsInFront(rule, nullptr, net, s.loc)) return false;
      rej = {RejectType::kIcmpUnreach, s.code};
      break;
    }
  }
  Emit(rule, rej, s.loc);
  return true;
}

// nft puts a statement's dependency (the field `dep`'s, or else network
// protocol `net`) at the front of the rule.
bool Linearizer::EmitDepsInFront(ir::Rule& rule, const Field* dep, int net, ir::SourceLoc loc) {
  ir::Rule front;
  if (dep != nullptr ? !EmitDeps(front, *dep) : !EmitNetDep(front, net, loc)) return false;
  rule.exprs.insert(rule.exprs.begin(), front.exprs.begin(), front.exprs.end());
  return true;
}

}  // namespace rulejit::frontends::nft
