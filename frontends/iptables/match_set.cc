// -m set --match-set NAME src,dst[,...] (xt_set revisions 1-4) as a lookup
// into a named IR set built from the ipset's contents (ipset.h), the way an
// nft set does it: addresses as an exact or interval set, address and port
// as a concatenation `addr . l4proto . port` (. `ip frag-off & 0x1fff` for
// IPv4), hash:ip,port,ip and hash:ip,port,net as `addr . l4proto . port .
// addr2` (. frag-off), hash:net,iface as `addr . iifname|oifname` (the
// second flag: src is the input interface, dst the output one), ports alone
// as `l4proto . port`.
//
// The kernel's meaning (ip_set_test and the types' kadt):
//  - flag i picks the source or destination field of dimension i; fewer
//    flags than the type's dimensions never match; more are ignored;
//  - hash:net types: the most specific net containing the address decides,
//    and a `nomatch` net means "not in the set"; --return-nomatch turns it
//    round (a nomatch net matches, a matching one does not). So the IR set
//    holds the disjoint ranges whose most specific net has the wanted flag;
//  - port types read the port of tcp, udp, sctp and udplite (ipset's
//    elements of other protocols are refused by ipset.cc); an IPv4 non-first
//    fragment is in no set (the frag-off field of the key, always 0 in the
//    elements). bitmap:port reads tcp and udp ports only;
//  - list:set: a packet is in it when it is in one of its members (with the
//    same flags); members of different shapes are refused;
//  - a set of the other family: iptables refuses the rule.
// hash:ip sets alone are exact sets of masked addresses that the SET
// target may change (target_set.cc: HashIpSet). hash:ip,port and hash:net
// ipsets that a SET target changes: the lookups here are redirected to one
// set per ipset after the dump (target_set.cc: ShareReadSets), so each
// lookup records the IR set it reads (IpsetUse::ir_set).
// Counter conditions (--packets-*, --bytes-*) read element counters,
// which the saved contents do not give: refused. --update-counters and
// friends change only counters: accepted.
#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "frontends/iptables/ipset.h"
#include "ir/util.h"

namespace rulejit::frontends::iptables_internal {
namespace {

using U128 = unsigned __int128;
constexpr int kDimMax = 6;  // IPSET_DIM_MAX

enum class Shape { kAddr, kAddrPort, kAddrPortAddr, kAddrIface, kPort };

Shape ShapeOf(IpsetKind kind) {
  switch (kind) {
    case IpsetKind::kHashIpPort:
    case IpsetKind::kHashNetPort:
      return Shape::kAddrPort;
    case IpsetKind::kHashIpPortIp:
    case IpsetKind::kHashIpPortNet:
      return Shape::kAddrPortAddr;
    case IpsetKind::kHashNetIface:
      return Shape::kAddrIface;
    case IpsetKind::kBitmapPort:
      return Shape::kPort;
    default:
      return Shape::kAddr;
  }
}

// One entry of the lowered set: an address range (kAddr, kAddrPort,
// kAddrPortAddr), a protocol and port (kAddrPort, kPort, kAddrPortAddr),
// and the third dimension's address range (kAddrPortAddr).
struct Entry {
  U128 lo = 0, hi = 0;
  uint8_t proto = 0;
  uint16_t port = 0;
  U128 lo2 = 0, hi2 = 0;
  std::string iface;  // kAddrIface
  auto Key() const { return std::tie(proto, port, iface, lo, hi, lo2, hi2); }
  bool operator==(const Entry& o) const { return Key() == o.Key(); }
};

U128 ToU128(const ir::Bytes& b) {
  U128 v = 0;
  for (uint8_t x : b) v = (v << 8) | x;
  return v;
}

ir::Bytes FromU128(U128 v, size_t len) {
  ir::Bytes out(len);
  for (size_t i = len; i-- > 0;) {
    out[i] = static_cast<uint8_t>(v & 0xff);
    v >>= 8;
  }
  return out;
}

struct Prefix {
  U128 lo, hi;
  uint32_t len;
  bool nomatch;
};

// Ranges where the most specific containing prefix has nomatch ==
// `want_nomatch` (nets are nested or disjoint).
void FlattenNets(std::vector<Prefix> nets, bool want_nomatch, uint8_t proto, uint16_t port,
                 std::vector<Entry>* out) {
  std::sort(nets.begin(), nets.end(), [](const Prefix& a, const Prefix& b) {
    return a.lo != b.lo ? a.lo < b.lo : a.len < b.len;
  });
  std::vector<const Prefix*> open;
  U128 pos = 0;
  auto emit = [&](U128 lo, U128 hi, const Prefix* p) {
    if (lo > hi || p->nomatch != want_nomatch) return;
    if (!out->empty() && out->back().proto == proto && out->back().port == port &&
        out->back().hi + 1 == lo && lo != 0) {
      out->back().hi = hi;
    } else {
      out->push_back({lo, hi, proto, port});
    }
  };
  auto close_until = [&](U128 start, bool all) {
    while (!open.empty() && (all || open.back()->hi < start)) {
      emit(pos, open.back()->hi, open.back());
      pos = open.back()->hi + 1;
      open.pop_back();
    }
  };
  for (const Prefix& p : nets) {
    close_until(p.lo, false);
    if (!open.empty() && pos < p.lo) emit(pos, p.lo - 1, open.back());
    pos = p.lo;
    open.push_back(&p);
  }
  close_until(0, true);
}

U128 HostBits(uint32_t prefix, bool ipv6) {
  const uint32_t full = ipv6 ? 128 : 32;
  return prefix >= full ? 0 : (((U128)1 << (full - prefix)) - 1);
}

// hash:ip,port,net: per address, protocol and port, the nets flattened.
void IpPortNetEntries(const Ipset& set, bool return_nomatch, std::vector<Entry>* out) {
  std::map<std::tuple<U128, uint8_t, uint16_t>, std::vector<Prefix>> groups;
  for (const IpsetElement& e : set.elements) {
    const U128 lo2 = ToU128(e.addr2);
    groups[{ToU128(e.addr), e.proto, e.port}].push_back(
        {lo2, lo2 | HostBits(e.prefix2, set.ipv6), e.prefix2, e.nomatch});
  }
  for (const auto& [key, nets] : groups) {
    std::vector<Entry> ranges;
    FlattenNets(nets, return_nomatch, 0, 0, &ranges);
    const auto& [ip, proto, port] = key;
    for (const Entry& r : ranges) out->push_back({ip, ip, proto, port, r.lo, r.hi});
  }
}

// hash:net,iface: per interface, the nets flattened.
void NetIfaceEntries(const Ipset& set, bool return_nomatch, std::vector<Entry>* out) {
  std::map<std::string, std::vector<Prefix>> groups;
  for (const IpsetElement& e : set.elements) {
    const U128 lo = ToU128(e.addr);
    groups[e.iface].push_back({lo, lo | HostBits(e.prefix, set.ipv6), e.prefix, e.nomatch});
  }
  for (const auto& [iface, nets] : groups) {
    std::vector<Entry> ranges;
    FlattenNets(nets, return_nomatch, 0, 0, &ranges);
    for (Entry& r : ranges) {
      r.iface = iface;
      out->push_back(std::move(r));
    }
  }
}

// The entries of one (non-list) set.
void Entries(const Ipset& set, bool return_nomatch, std::vector<Entry>* out) {
  if (set.kind == IpsetKind::kBitmapPort) {
    for (const IpsetElement& e : set.elements) {
      for (uint8_t proto : {6, 17}) out->push_back({0, 0, proto, e.port});
    }
    return;
  }
  if (set.kind == IpsetKind::kHashIp || set.kind == IpsetKind::kHashIpPort ||
      set.kind == IpsetKind::kHashIpPortIp) {
    for (const IpsetElement& e : set.elements) {
      const U128 lo = ToU128(e.addr), lo2 = e.addr2.empty() ? 0 : ToU128(e.addr2);
      out->push_back({lo, lo | HostBits(e.prefix, set.ipv6), e.proto, e.port, lo2, lo2});
    }
    return;
  }
  if (set.kind == IpsetKind::kHashIpPortNet) return IpPortNetEntries(set, return_nomatch, out);
  if (set.kind == IpsetKind::kHashNetIface) return NetIfaceEntries(set, return_nomatch, out);
  // hash:net types: per protocol and port, the nets flattened.
  std::vector<std::pair<std::pair<uint8_t, uint16_t>, Prefix>> nets;
  for (const IpsetElement& e : set.elements) {
    const U128 lo = ToU128(e.addr);
    nets.push_back({{e.proto, e.port}, {lo, lo | HostBits(e.prefix, set.ipv6), e.prefix, e.nomatch}});
  }
  std::sort(nets.begin(), nets.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < nets.size();) {
    size_t j = i;
    std::vector<Prefix> group;
    while (j < nets.size() && nets[j].first == nets[i].first) group.push_back(nets[j++].second);
    FlattenNets(group, return_nomatch, nets[i].first.first, nets[i].first.second, out);
    i = j;
  }
}

// Sorted, with overlapping or adjacent ranges of one protocol and port
// merged (kAddrPortAddr: duplicates dropped; no list holds such sets, so
// their ranges never overlap).
void Merge(Shape shape, std::vector<Entry>* entries) {
  std::sort(entries->begin(), entries->end(),
            [](const Entry& a, const Entry& b) { return a.Key() < b.Key(); });
  if (shape == Shape::kAddrPortAddr) {
    entries->erase(std::unique(entries->begin(), entries->end()), entries->end());
    return;
  }
  std::vector<Entry> out;
  for (const Entry& e : *entries) {
    if (!out.empty() && out.back().proto == e.proto && out.back().port == e.port &&
        out.back().iface == e.iface && (e.lo <= out.back().hi || e.lo == out.back().hi + 1)) {
      out.back().hi = std::max(out.back().hi, e.hi);
    } else {
      out.push_back(e);
    }
  }
  *entries = std::move(out);
}

struct Request {
  const Ipset* set = nullptr;
  std::vector<bool> src;  // per dimension: the source field
  bool invert = false, return_nomatch = false;
  ir::SourceLoc loc, name_loc;
};

bool ParseFlags(LowerCtx& ctx, const Option& opt, Request& r) {
  for (std::string_view f : Split(opt.args[1].text, ',')) {
    if (f != "src" && f != "dst") {
      return ctx.Error(opt.ArgLoc(1), absl::StrCat("invalid --match-set flag '", Sv(f), "'"),
                       "flags are src or dst, one per dimension, separated by commas");
    }
    r.src.push_back(f == "src");
  }
  if (r.src.size() > kDimMax) {
    return ctx.Error(opt.ArgLoc(1), absl::StrCat("more than ", kDimMax, " --match-set flags"));
  }
  return true;
}

bool ReadOptions(LowerCtx& ctx, const MatchUse& m, Request& r) {
  int sets = 0;
  for (const Option& opt : m.options) {
    if (opt.name == "--match-set" || opt.name == "--set") {
      ++sets;
      r.invert = opt.invert;
      r.loc = opt.loc;
      r.name_loc = opt.ArgLoc(0);
      if (ctx.ipsets == nullptr || (r.set = ctx.ipsets->Find(opt.args[0].text)) == nullptr) {
        return ctx.Error(opt.ArgLoc(0), absl::StrCat("ipset '", opt.args[0].text, "' is not given"),
                         "give the sets' `ipset save` output with --ipset FILE");
      }
      if (!ParseFlags(ctx, opt, r)) return false;
    } else if (opt.name == "--return-nomatch") {
      r.return_nomatch = true;
    } else if (opt.name.starts_with("--packets-") || opt.name.starts_with("--bytes-")) {
      return ctx.Error(opt.loc, absl::StrCat(opt.name, " is not modelled"),
                       "it reads the element's packet and byte counters, which ipset save "
                       "output does not fix");
    }
  }
  if (sets != 1) return ctx.Error(m.loc, "set needs exactly one --match-set");
  return true;
}

// The sets the match tests (a list's members, or the set itself) with their
// shape; members of the other family or with more dimensions than flags
// contribute nothing.
bool Members(LowerCtx& ctx, const Request& r, std::vector<const Ipset*>* out, Shape* shape) {
  std::vector<const Ipset*> all;
  if (r.set->kind != IpsetKind::kListSet) {
    if (r.set->kind != IpsetKind::kBitmapPort && r.set->ipv6 != ctx.ipv6()) {
      return ctx.Error(r.name_loc, absl::StrCat("ipset '", r.set->name, "' is of family ",
                                                r.set->ipv6 ? "inet6" : "inet",
                                                ", which is not applicable here"));
    }
    all.push_back(r.set);
  } else {
    for (const IpsetElement& e : r.set->elements) all.push_back(ctx.ipsets->Find(e.member));
  }
  bool first = true;
  for (const Ipset* s : all) {
    if (r.set->kind == IpsetKind::kListSet && ctx.ipset_uses != nullptr) {
      ctx.ipset_uses->push_back({IpsetUse::kReadInList, s->name, ctx.table_name, ctx.rule->loc,
                                 r.name_loc, ""});
    }
    if (first) *shape = ShapeOf(s->kind);
    if (ShapeOf(s->kind) != *shape) {
      return ctx.Error(r.name_loc, absl::StrCat("list:set '", r.set->name,
                                                "' has members of different kinds; not modelled"));
    }
    first = false;
    if (r.set->kind == IpsetKind::kListSet && *shape == Shape::kAddrPortAddr) {
      return ctx.Error(r.name_loc, absl::StrCat("list:set '", r.set->name, "' has a member of type ",
                                                s->type, "; not modelled in a list"));
    }
    const bool family_ok = s->kind == IpsetKind::kBitmapPort || s->ipv6 == ctx.ipv6();
    if (family_ok && static_cast<int>(r.src.size()) >= s->dimensions()) out->push_back(s);
  }
  return true;
}

// The IR set's fields (real lengths) for a shape.
std::vector<uint32_t> Fields(Shape shape, const LowerCtx& ctx) {
  const uint32_t addr = ctx.ipv6() ? 16 : 4;
  std::vector<uint32_t> f;
  if (shape != Shape::kPort) f.push_back(addr);
  if (shape == Shape::kAddrIface) return {addr, 16};
  if (shape != Shape::kAddr) f.insert(f.end(), {1, 2});
  if (shape == Shape::kAddrPortAddr) f.push_back(addr);
  if (shape != Shape::kAddr && !ctx.ipv6()) f.push_back(2);  // frag-off & 0x1fff
  return f;
}

ir::Bytes Padded(ir::Bytes b) {
  b.resize(ir::Pad4(static_cast<uint32_t>(b.size())), 0);
  return b;
}

ir::Bytes KeyOf(Shape shape, const LowerCtx& ctx, const Entry& e, U128 addr, U128 addr2) {
  ir::Bytes key;
  auto append = [&key](ir::Bytes b) {
    b = Padded(std::move(b));
    key.insert(key.end(), b.begin(), b.end());
  };
  if (shape != Shape::kPort) append(FromU128(addr, ctx.ipv6() ? 16 : 4));
  if (shape == Shape::kAddrIface) {
    ir::Bytes name(e.iface.begin(), e.iface.end());
    name.resize(16, 0);
    append(std::move(name));
  } else if (shape != Shape::kAddr) {
    append({e.proto});
    append(BigEndian(e.port, 2));
    if (shape == Shape::kAddrPortAddr) append(FromU128(addr2, ctx.ipv6() ? 16 : 4));
    if (!ctx.ipv6()) append({0, 0});
  }
  return key;
}

std::string IrSetName(const Request& r) {
  std::string name = IpsetIrBase(r.set->name);
  for (bool s : r.src) name += s ? 's' : 'd';
  if (r.return_nomatch) name += "_nomatch";
  return name;
}

// `merge`: adjacent addresses become ranges (an interval set); a set the
// SET target changes keeps one exact key per element.
ir::Set BuildSet(const Request& r, Shape shape, const LowerCtx& ctx,
                 const std::vector<const Ipset*>& members, bool merge = true) {
  std::vector<Entry> entries;
  for (const Ipset* s : members) Entries(*s, r.return_nomatch, &entries);
  if (merge) Merge(shape, &entries);
  ir::Set set;
  set.flags = ir::kSetConstant;
  set.loc = r.set->loc;
  std::vector<uint32_t> fields = Fields(shape, ctx);
  for (uint32_t f : fields) set.key_len += ir::Pad4(f);
  if (fields.size() > 1) set.field_lens = fields;
  const bool ranged = std::any_of(entries.begin(), entries.end(),
                                  [](const Entry& e) { return e.lo != e.hi || e.lo2 != e.hi2; });
  if (ranged) set.flags |= ir::kSetInterval | (fields.size() > 1 ? ir::kSetConcat : 0);
  for (const Entry& e : entries) {
    ir::SetElement el;
    el.key = KeyOf(shape, ctx, e, e.lo, e.lo2);
    if (ranged) el.key_end = KeyOf(shape, ctx, e, e.hi, e.hi2);
    el.loc = r.set->loc;
    set.elements.push_back(std::move(el));
  }
  return set;
}

// Loads the key of `shape` into the registers the set's fields start at.
void LoadAddr(LowerCtx& ctx, const Request& r, bool src, int* word) {
  const bool v6 = ctx.ipv6();
  const uint32_t off = v6 ? (src ? 8 : 24) : (src ? 12 : 16);
  ctx.Payload(ir::PayloadBase::kNetwork, off, v6 ? 16 : 4, r.loc, ir::RegForWord(*word));
  *word += v6 ? 4 : 1;
}

void LoadKey(LowerCtx& ctx, const Request& r, Shape shape) {
  int word = 0;
  const bool v6 = ctx.ipv6();
  if (shape != Shape::kPort) LoadAddr(ctx, r, r.src[0], &word);
  if (shape == Shape::kAddr) return;
  if (shape == Shape::kAddrIface) {
    ctx.Add(ir::MetaLoad{r.src[1] ? ir::MetaKey::kIifName : ir::MetaKey::kOifName,
                         ir::RegForWord(word)},
            r.loc);
    return;
  }
  const bool port_src = r.src[shape == Shape::kPort ? 0 : 1];
  ctx.Add(ir::MetaLoad{ctx.ip6t_legacy ? ir::MetaKey::kIp6tL4Proto : ir::MetaKey::kL4Proto,
                       ir::RegForWord(word++)},
          r.loc);
  ctx.Payload(ir::PayloadBase::kTransport, port_src ? 0 : 2, 2, r.loc, ir::RegForWord(word++));
  if (shape == Shape::kAddrPortAddr) LoadAddr(ctx, r, r.src[2], &word);
  if (v6) return;
  const ir::Reg frag = ir::RegForWord(word);
  ctx.Payload(ir::PayloadBase::kNetwork, 6, 2, r.loc, frag);
  ir::Bitwise b;
  b.sreg = b.dreg = frag;
  b.len = 2;
  b.mask = {0x1f, 0xff};
  b.xor_ = {0, 0};
  ctx.Add(std::move(b), r.loc);
}

}  // namespace

std::string IpsetPortSet(LowerCtx& ctx, const Ipset& set) {
  std::string name =
      IpsetIrBase(set.name) + (set.kind == IpsetKind::kHashIpPortIp ? "_ipportip" : "_ipport");
  if (ctx.table->FindSet(name) != nullptr) return name;
  Request r;
  r.set = &set;
  ir::Set s = BuildSet(r, ShapeOf(set.kind), ctx, {&set}, /*merge=*/false);
  s.name = name;
  ctx.table->sets.push_back(std::move(s));
  return name;
}

void LoadIpsetPortKey(LowerCtx& ctx, const Ipset& set, const std::vector<bool>& src,
                      ir::SourceLoc loc) {
  Request r;
  r.src = src;
  r.src.resize(std::max<size_t>(r.src.size(), 3), true);
  r.loc = loc;
  LoadKey(ctx, r, ShapeOf(set.kind));
}

bool LowerSet(LowerCtx& ctx, const MatchUse& m) {
  Request r;
  if (!ReadOptions(ctx, m, r)) return false;
  std::vector<const Ipset*> members;
  Shape shape = Shape::kAddr;
  if (!Members(ctx, r, &members, &shape)) return false;
  if (r.set->kind == IpsetKind::kHashIp) {
    // One IR set per ipset, which the SET target may change (target_set.cc).
    if (ctx.ipset_uses != nullptr) {
      ctx.ipset_uses->push_back({IpsetUse::kRead, r.set->name, ctx.table_name, ctx.rule->loc,
                                 r.name_loc, ""});
    }
    const std::string name = HashIpSet(ctx, *r.set);
    LoadHashIpKey(ctx, *r.set, r.src[0], r.loc);
    ctx.Add(ir::Lookup{.sreg = 1, .set = name, .invert = r.invert}, r.loc);
    return true;
  }
  const std::string name = IrSetName(r);
  // --return-nomatch on a type with nomatch elements looks up other ones.
  const bool nomatch_types = r.set->kind == IpsetKind::kHashNet ||
                             r.set->kind == IpsetKind::kHashNetPort ||
                             r.set->kind == IpsetKind::kHashIpPortNet ||
                             r.set->kind == IpsetKind::kHashNetIface;
  if (ctx.ipset_uses != nullptr && r.set->kind != IpsetKind::kListSet &&
      static_cast<int>(r.src.size()) >= r.set->dimensions() &&
      !(r.return_nomatch && nomatch_types)) {
    ctx.ipset_uses->push_back({IpsetUse::kRead, r.set->name, ctx.table_name, ctx.rule->loc,
                               r.name_loc, name});
  }
  // Fewer flags than dimensions: no member contributes; the key still loads.
  r.src.resize(std::max<size_t>(r.src.size(), 3), true);
  if (ctx.table->FindSet(name) == nullptr) {
    ir::Set set = BuildSet(r, shape, ctx, members);
    set.name = name;
    ctx.table->sets.push_back(std::move(set));
  }
  LoadKey(ctx, r, shape);
  ctx.Add(ir::Lookup{.sreg = 1, .set = name, .invert = r.invert}, r.loc);
  return true;
}

}  // namespace rulejit::frontends::iptables_internal
