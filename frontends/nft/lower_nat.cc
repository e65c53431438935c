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
//   dnat ip to ip saddr map { 10.0.0.1 : 1.2.3.4 . 8080 }
//                               → ... [ lookup ... dreg 1 ]
//                                 [ nat dnat ip addr_min reg 1 proto_min reg 9 ]
//                                 (the kernel adds the proto-specified flag itself)
//   snat ip to ip saddr map { 10.0.0.1 : 1.2.3.4-1.2.3.9 . 80-90 }
//                               → ... [ nat snat ip addr_min reg 1 addr_max reg 10
//                                       proto_min reg 9 proto_max reg 11 ]
//   masquerade random           → [ masq flags 0x4 ]
#include "frontends/nft/linearize.h"

namespace rulejit::frontends::nft {

bool Linearizer::LowerNat(ir::Rule& rule, const ast::Nat& s) {
  ir::Nat nat = s.nat;
  if (s.map) return LowerNatMap(rule, s, nat);
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

// The lookup leaves the data in the registers from reg 1: the address,
// then (`ADDR . PORT`) the port, each padded to 4 bytes; range data has the
// low ends, then the high ends. The map's data type says which (the parser
// copies a named map's); for a named map declared after the rule, data
// longer than an address is taken as `ADDR . PORT`.
bool Linearizer::LowerNatMap(ir::Rule& rule, const ast::Nat& s, ir::Nat nat) {
  if (!EmitMapLookup(rule, *s.map)) return false;
  const auto* lookup = std::get_if<ir::Lookup>(&rule.exprs.back().expr);
  const ir::Set* set = lookup != nullptr ? FindSet(lookup->set) : nullptr;
  const int addr_words = nat.family == ir::Family::kIp6 ? 4 : 1;
  const SetType& type = s.map->type;
  const bool typed = s.map->named.empty() || type.data_interval || !type.data_rest.empty();
  const bool ranges = type.data_interval;
  const bool port = typed ? !type.data_rest.empty()
                          : set != nullptr &&
                                set->data_len > static_cast<uint32_t>(addr_words) * 4;
  if (port && !HasTransportMatch(rule)) {
    return Error(s.map->key.loc, "transport protocol mapping is only valid after transport "
                                 "protocol match");
  }
  const int block = addr_words + (port ? 1 : 0);
  nat.addr_min = ir::RegForWord(0);
  if (port) nat.proto_min = ir::RegForWord(addr_words);
  if (ranges) {
    nat.addr_max = ir::RegForWord(block);
    if (port) nat.proto_max = ir::RegForWord(block + addr_words);
  }
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
