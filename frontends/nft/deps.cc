// nft's protocol context and implicit dependencies (its evaluate step): a
// field of a header the rule has not established yet gets the match that
// establishes it, once per rule.
//
//   ip saddr (inet)    → [ meta load nfproto ] [ cmp eq 2 ]
//   tcp dport          → [ meta load l4proto ] [ cmp eq 6 ]
//   tcp dport (netdev) → [ meta load protocol ] [ cmp eq 0x0800 ]
//                        [ payload load 1b @ nh + 9 ] [ cmp eq 6 ]
//   ether saddr        → [ meta load iiftype ] [ cmp eq 0x0001 ]
//   vlan id            → ether deps, [ payload load 2b @ ll + 12 ] [ cmp eq 0x8100 ]
//   icmp id            → [ payload load 1b @ th + 0 ] [ lookup {echo-request, echo-reply} ]
//
// Matches update the context (NoteContext): `meta nfproto ipv4` makes the
// rule IPv4, `ip protocol tcp` makes it TCP, and a conflicting field later
// is an error, as in nft.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"

namespace rulejit::frontends::nft {
namespace {

// `meta l4proto` and `ip protocol`/`ip6 nexthdr`: matches that set the
// transport protocol context.
bool IsL4ProtoField(const Field& f) {
  return (f.kind == Field::Kind::kMeta && f.meta == ir::MetaKey::kL4Proto) ||
         (f.kind == Field::Kind::kPayload && f.type == DType::kInetProto &&
          f.base == ir::PayloadBase::kNetwork);
}

bool IsCtProtocolField(const Field& f) {
  return f.kind == Field::Kind::kCt && f.ct == ir::CtKey::kProtocol;
}

// `icmp type` / `icmpv6 type`: the match that ICMP field dependencies check.
bool IsIcmpTypeField(const Field& f) {
  return f.kind == Field::Kind::kPayload && f.base == ir::PayloadBase::kTransport &&
         f.off_bits == 0 && (f.type == DType::kIcmpType || f.type == DType::kIcmpv6Type);
}

// [ LOAD => reg 1 ] [ cmp eq DATA ]
void EmitEq(Linearizer& lin, ir::Rule& rule, ir::Expr load, ir::Bytes data, ir::SourceLoc loc) {
  lin.Emit(rule, std::move(load), loc);
  ir::Cmp c;
  c.sreg = 1;
  c.data = std::move(data);
  lin.Emit(rule, c, loc);
}

ir::Bytes EtherTypeOf(int net) {
  return net == 4 ? ir::Bytes{0x08, 0x00} : ir::Bytes{0x86, 0xdd};
}

}  // namespace

bool Linearizer::EmitNetDep(ir::Rule& rule, int net, ir::SourceLoc loc) {
  ir::Family fam = table_->family;
  if (ctx_.net == net) return true;
  if (ctx_.net != 0) return Error(loc, "conflicting network protocols in one rule");
  if (fam == ir::Family::kIp || fam == ir::Family::kIp6) {
    int own = fam == ir::Family::kIp ? 4 : 6;
    if (own != net) {
      return Error(loc, absl::StrCat("IPv", net, " expression in an ", ir::FamilyName(fam),
                                     " table"));
    }
    ctx_.net = net;
    return true;
  }
  if (ctx_.link) {
    // With an Ethernet header established nft tests its ether type.
    EmitEq(*this, rule, ir::PayloadLoad{ir::PayloadBase::kLink, 12, 2, 1}, EtherTypeOf(net), loc);
  } else if (fam == ir::Family::kInet) {
    EmitEq(*this, rule, ir::MetaLoad{ir::MetaKey::kNfProto, 1},
           {static_cast<uint8_t>(net == 4 ? 2 : 10)}, loc);
  } else {
    EmitEq(*this, rule, ir::MetaLoad{ir::MetaKey::kProtocol, 1}, EtherTypeOf(net), loc);
  }
  ctx_.net = net;
  return true;
}

bool Linearizer::EmitDeps(ir::Rule& rule, const Field& f) {
  for (const Field& part : f.hash_key) {
    if (!EmitDeps(rule, part)) return false;
  }
  if (!EmitL3L4Deps(rule, f)) return false;
  if (!f.icmp_types.empty() && ctx_.icmp_type_value >= 0 &&
      std::find(f.icmp_types.begin(), f.icmp_types.end(), ctx_.icmp_type_value) ==
          f.icmp_types.end()) {
    return Error(f.loc, "field does not exist in the ICMP type matched before");
  }
  if (f.icmp_types.empty() || ctx_.icmp_type) return true;
  return EmitIcmpTypeDep(rule, f);
}

// icmp id → [ load type ] [ cmp eq echo-request ] or a lookup in the types
// the field exists in.
bool Linearizer::EmitIcmpTypeDep(ir::Rule& rule, const Field& f) {
  ctx_.icmp_type = true;
  if (f.icmp_types.size() == 1) {
    EmitEq(*this, rule, ir::PayloadLoad{ir::PayloadBase::kTransport, 0, 1, 1},
           {f.icmp_types[0]}, f.loc);
    return true;
  }
  Emit(rule, ir::PayloadLoad{ir::PayloadBase::kTransport, 0, 1, 1}, f.loc);
  ir::Set set;
  set.name = FreshAnonName("__set");
  set.flags = ir::kSetAnonymous | ir::kSetConstant;
  set.key_len = 1;
  set.loc = f.loc;
  for (uint8_t t : f.icmp_types) {
    ir::SetElement e;
    e.key = {t};
    e.loc = f.loc;
    set.elements.push_back(e);
  }
  ir::Lookup lk;
  lk.sreg = 1;
  lk.set = set.name;
  pending_sets_.push_back(std::move(set));
  Emit(rule, lk, f.loc);
  return true;
}

bool Linearizer::EmitL3L4Deps(ir::Rule& rule, const Field& f) {
  const ir::Family fam = table_->family;
  const bool l4_dep = f.dep == Dep::kL4 || f.dep == Dep::kL4Ipv4 || f.dep == Dep::kL4Ipv6;
  if (l4_dep && ctx_.l4_alternatives.size() > 1) {
    // nft: after `ip protocol { tcp, udp }` a tcp field may not hold.
    int other = ctx_.l4_alternatives[0] != f.l4proto ? ctx_.l4_alternatives[0]
                                                     : ctx_.l4_alternatives[1];
    return Error(f.loc, absl::StrCat("conflicting protocols specified: ",
                                     SymbolName(DType::kInetProto, other), " vs. ",
                                     SymbolName(DType::kInetProto, f.l4proto)));
  }
  switch (f.dep) {
    case Dep::kNone:
      return true;
    case Dep::kIpv4:
      return EmitNetDep(rule, 4, f.loc);
    case Dep::kIpv6:
      return EmitNetDep(rule, 6, f.loc);
    case Dep::kL4Ipv4:
    case Dep::kL4Ipv6: {
      int net = f.dep == Dep::kL4Ipv4 ? 4 : 6;
      // Either ICMP flavour may ride on either IP version (`meta nfproto
      // ipv4 icmpv6 type ...`): only a rule without a network protocol
      // gets the likely one (IPv4 for icmp, IPv6 for icmpv6).
      if (fam != ir::Family::kIp && fam != ir::Family::kIp6 && ctx_.net == 0 &&
          !EmitNetDep(rule, net, f.loc)) {
        return false;
      }
      if (fam == ir::Family::kNetdev || fam == ir::Family::kBridge) {
        return EmitNetdevL4Dep(rule, f, net);
      }
      return EmitL4Dep(rule, f);
    }
    case Dep::kL4:
      return EmitL4Dep(rule, f);
    case Dep::kLink:
    case Dep::kVlan:
      return EmitLinkDeps(rule, f);
  }
  return true;
}

// [ meta load l4proto ] [ cmp eq PROTO ], once.
bool Linearizer::EmitL4Dep(ir::Rule& rule, const Field& f) {
  if (ctx_.l4 == f.l4proto) return true;
  if (ctx_.l4 >= 0) return Error(f.loc, "conflicting transport protocols in one rule");
  EmitEq(*this, rule, ir::MetaLoad{ir::MetaKey::kL4Proto, 1}, {f.l4proto}, f.loc);
  ctx_.l4 = f.l4proto;
  return true;
}

// Without an L3 hook context nft tests the IP header's own field.
bool Linearizer::EmitNetdevL4Dep(ir::Rule& rule, const Field& f, int net) {
  if (ctx_.l4 == f.l4proto) return true;
  if (ctx_.l4 >= 0) return Error(f.loc, "conflicting transport protocols in one rule");
  int have = ctx_.net != 0 ? ctx_.net : net;
  EmitEq(*this, rule, ir::PayloadLoad{ir::PayloadBase::kNetwork, have == 4 ? 9u : 6u, 1, 1},
         {f.l4proto}, f.loc);
  ctx_.l4 = f.l4proto;
  return true;
}

// An Ethernet header (outside bridge tables), then a VLAN tag.
bool Linearizer::EmitLinkDeps(ir::Rule& rule, const Field& f) {
  if (!ctx_.link && table_->family != ir::Family::kBridge) {
    EmitEq(*this, rule, ir::MetaLoad{ir::MetaKey::kIifType, 1}, {0x01, 0x00}, f.loc);
  }
  ctx_.link = true;
  if (f.dep == Dep::kVlan && !ctx_.vlan && ctx_.ethertype >= 0) {
    return Error(f.loc, "vlan header after a non-vlan ether type match");
  }
  if (f.dep == Dep::kVlan && !ctx_.vlan) {
    EmitEq(*this, rule, ir::PayloadLoad{ir::PayloadBase::kLink, 12, 2, 1}, {0x81, 0x00}, f.loc);
    ctx_.vlan = true;
  }
  return true;
}

bool Linearizer::NetworkKnown() const {
  return table_->family == ir::Family::kIp || table_->family == ir::Family::kIp6 ||
         ctx_.net != 0;
}

// nft (proto_ctx_update for each element of an anonymous set):
// `meta l4proto { tcp, udp }` records both; the last is the context.
// `icmp type { echo-reply, echo-request }` likewise leaves the last type
// as the context that `icmp id` checks.
void Linearizer::NoteSetContext(const Field& f, const std::vector<Element>& elems) {
  if (IsCtProtocolField(f) && NetworkKnown()) ctx_.ct_l4 = true;
  const bool l4 = IsL4ProtoField(f);
  const bool icmp_type = IsIcmpTypeField(f);
  if (!l4 && !icmp_type) return;
  for (const Element& e : elems) {
    if (e.key.size() != 1 || e.key[0].kind != Item::Kind::kValue || e.key[0].lo.is_str) continue;
    int v = static_cast<int>(e.key[0].lo.num);
    if (icmp_type) {
      ctx_.icmp_type = true;
      ctx_.icmp_type_value = v;
      continue;
    }
    auto& alt = ctx_.l4_alternatives;
    if (std::find(alt.begin(), alt.end(), v) == alt.end()) alt.push_back(v);
    ctx_.l4 = v;
  }
}

void Linearizer::NoteContext(const Field& f, const Item& item) {
  if (item.kind != Item::Kind::kValue || item.lo.is_str) return;
  if (IsIcmpTypeField(f)) {
    ctx_.icmp_type = true;
    ctx_.icmp_type_value = static_cast<int>(item.lo.num);
  }
  U128 v = item.lo.num;
  if (IsL4ProtoField(f)) ctx_.l4 = static_cast<int>(v);
  if (IsCtProtocolField(f) && NetworkKnown()) ctx_.ct_l4 = true;
  if (f.kind == Field::Kind::kMeta && f.meta == ir::MetaKey::kNfProto) {
    ctx_.net = v == 2 ? 4 : v == 10 ? 6 : ctx_.net;
  }
  bool ethertype = f.type == DType::kEtherType &&
                   (f.kind == Field::Kind::kMeta || f.base == ir::PayloadBase::kLink);
  if (ethertype) {
    if (v == 0x0800) ctx_.net = 4;
    if (v == 0x86dd) ctx_.net = 6;
    if (v == 0x8100 && f.kind == Field::Kind::kPayload) ctx_.vlan = true;
    if (f.kind == Field::Kind::kPayload && f.off_bits == 96) ctx_.ethertype = static_cast<int>(v);
  }
  if (f.kind == Field::Kind::kMeta && f.meta == ir::MetaKey::kIifType && v == 1) {
    ctx_.link = true;
  }
}

}  // namespace rulejit::frontends::nft
