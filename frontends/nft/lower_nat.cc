// Lowering of the NAT statements (snat, dnat, masquerade, redirect), as
// nft's netlink_linearize does: values go to consecutive 128-bit registers
// from reg 1, addresses first.
//
//   dnat to 1.2.3.4-1.2.3.9:80  → [ immediate reg 1 ADDR ] [ immediate reg 2 ADDR ]
//                                 [ immediate reg 3 PORT ]
//                                 [ nat dnat ip addr_min reg 1 addr_max reg 2
//                                   proto_min reg 3 flags 0x2 ]
//   dnat ip to tcp dport map { 80 : 1.2.3.4 }
//                               → key loads, [ lookup ... dreg 1 ] [ nat dnat ip addr_min reg 1 ]
//   masquerade random           → [ masq flags 0x4 ]
#include "frontends/nft/linearize.h"

namespace rulejit::frontends::nft {

bool Linearizer::LowerNat(ir::Rule& rule, const ast::Nat& s) {
  ir::Nat nat = s.nat;
  if (s.map) {
    if (!EmitMapLookup(rule, *s.map)) return false;
    nat.addr_min = 1;
    Emit(rule, nat, s.loc);
    return true;
  }
  ir::Reg reg = 1;
  auto load = [&](const ir::Bytes& data) {
    ir::Immediate imm;
    imm.dreg = reg;
    imm.data = data;
    Emit(rule, imm, s.loc);
    return reg++;
  };
  if (!s.addrs.empty()) nat.addr_min = load(s.addrs[0]);
  if (s.addrs.size() > 1) nat.addr_max = load(s.addrs[1]);
  if (!s.ports.empty()) {
    nat.proto_min = load(s.ports[0]);
    nat.flags |= ir::kNatProtoSpecified;
  }
  if (s.ports.size() > 1) nat.proto_max = load(s.ports[1]);
  Emit(rule, nat, s.loc);
  return true;
}

// The protocol context, or a `meta l4proto` / `ip protocol` / `ip6
// nexthdr` load already in the rule.
bool Linearizer::HasTransportMatch(const ir::Rule& rule) const {
  if (ctx_.l4 >= 0) return true;
  for (const ir::Node& n : rule.exprs) {
    if (const auto* m = std::get_if<ir::MetaLoad>(&n.expr)) {
      if (m->key == ir::MetaKey::kL4Proto) return true;
    }
    if (const auto* p = std::get_if<ir::PayloadLoad>(&n.expr)) {
      if (p->base == ir::PayloadBase::kNetwork && p->len == 1 &&
          (p->offset == 9 || p->offset == 6)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace rulejit::frontends::nft
