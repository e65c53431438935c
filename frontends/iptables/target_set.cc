// The SET target (xt_SET revision 3's set_target_v3) on hash:ip,
// hash:ip,port, hash:ip,port,ip and hash:net ipsets, and the one IR set per
// such ipset that it and -m set share.
//
//   -j SET --add-set NAME FLAGS [--exist] [--timeout N] [--del-set NAME FLAGS]
//
// The kernel's meaning (ip_set_add / ip_set_del and the types' kadt):
//  - fewer flags than the type's dimensions change nothing; flag i picks
//    the source or destination field of dimension i;
//  - hash:ip: the address masked to the set's netmask; the all-zero
//    address is never added (kadt returns -EINVAL);
//  - hash:ip,port: the address, the protocol and its port (get_port in
//    ip_set_getport.c): tcp, udp, sctp and udplite ports, read from a
//    whole header of a first fragment; other protocols go in with their
//    ICMP type and code or port 0, which only rules with -p tcp, udp, sctp
//    or udplite rule out here (others are refused, located). The key is
//    -m set's (match_set.cc: IpsetPortSet); hash:ip,port,ip: the same and
//    the third flag's address;
//  - hash:net: the address masked to the longest net length in the set
//    (h->nets[0]; the full length when empty). Modelled with nets of one
//    length and no nomatch net (CheckNetSet), so the set is exact keys of
//    masked addresses, which -m set's lookups mask to (ShareReadSets);
//  - add without --exist leaves an element already there as it is;
//    --exist re-adds it, which restarts its timeout: nft's `add` and
//    `update` (ir::DynsetOp);
//  - a set created with `timeout T` times out what the target adds after
//    --timeout N seconds or else T; without it, the target's --timeout is
//    ignored. A full set (`maxelem`) takes no more;
//  - the target always continues, add first, then delete;
//  - a set of the other family: iptables refuses the rule.
// As an IR set: exact keys, constant until a SET target changes it
// (CheckIpsetWrites then makes it dynamic), so a packet's add is seen by
// the next packet's lookup (ir/dynset_eval.h). The state is per table in
// the IR; an ipset changed in one table and used in another, or read
// through a list:set, is refused, located. Other set types, and add and
// delete of one set in one rule are refused, located.
// --map-set NAME FLAGS --map-mark (LowerSetMap): a map of the elements'
// skbmark, on hash:ip and hash:ip,port ipsets that no SET target changes;
// --map-prio and --map-queue are refused, located.
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "frontends/iptables/ipset.h"
#include "ir/util.h"

namespace rulejit::frontends::iptables_internal {
namespace {

constexpr uint64_t kMaxExpanded = 65536;  // addresses one saved element may stand for
constexpr uint32_t kMaxTimeout = 2147483;  // IPSET_MAX_TIMEOUT (seconds)

bool IsPortSet(const Ipset& set) {
  return set.kind == IpsetKind::kHashIpPort || set.kind == IpsetKind::kHashIpPortIp;
}
bool IsNetSet(const Ipset& set) { return set.kind == IpsetKind::kHashNet; }

std::string IrName(const Ipset& set) {
  // An escaped name never ends so (see match_set.cc: a name there ends in
  // an escape, a flag letter s or d, or "_nomatch").
  if (set.kind == IpsetKind::kHashIpPortIp) return IpsetIrBase(set.name) + "_ipportip";
  return IpsetIrBase(set.name) + (IsPortSet(set) ? "_ipport" : IsNetSet(set) ? "_net" : "_ip");
}

uint32_t FullLen(const Ipset& set) { return set.ipv6 ? 128 : 32; }

// hash:ip: the netmask. hash:net (whose nets ReadSetOp has checked are of
// one length): the length of its most specific nets, which kadt masks the
// packet's address to (h->nets[0]), or the full length when it is empty.
uint32_t Netmask(const Ipset& set) {
  if (IsNetSet(set)) return set.elements.empty() ? FullLen(set) : set.elements[0].prefix;
  return set.netmask ? set.netmask : FullLen(set);
}

ir::Bytes MaskBytes(uint32_t prefix, size_t len) {
  ir::Bytes mask(len, 0);
  for (size_t i = 0; i < len; ++i) {
    const int bits = static_cast<int>(prefix) - static_cast<int>(i * 8);
    mask[i] = bits >= 8 ? 0xff : bits <= 0 ? 0 : (0xff << (8 - bits)) & 0xff;
  }
  return mask;
}

// Adds 2^(128 - 8 * len + shift)... : `addr` + `step` at bit `bit` (from
// the right), in place; false on overflow.
bool AddAtBit(ir::Bytes& addr, uint32_t bit) {
  size_t i = addr.size() - 1 - bit / 8;
  unsigned carry = 1u << (bit % 8);
  for (;; --i) {
    const unsigned v = addr[i] + carry;
    addr[i] = static_cast<uint8_t>(v);
    carry = v >> 8;
    if (carry == 0) return true;
    if (i == 0) return false;
  }
}

// The netmask-sized blocks a saved element (prefix <= netmask) stands for.
bool Expand(LowerCtx& ctx, const Ipset& set, const IpsetElement& e, std::set<ir::Bytes>* out) {
  const uint32_t mask = Netmask(set), full = set.ipv6 ? 128 : 32;
  if (mask - e.prefix > 16 || (uint64_t{1} << (mask - e.prefix)) > kMaxExpanded) {
    return ctx.Error(e.loc, "ipset element stands for more than 65536 addresses; not modelled");
  }
  ir::Bytes addr = e.addr;
  for (uint64_t n = uint64_t{1} << (mask - e.prefix); n > 0; --n) {
    out->insert(addr);
    if (n > 1) AddAtBit(addr, full - mask);
  }
  return true;
}

void RecordUse(LowerCtx& ctx, IpsetUse::Kind kind, const std::string& ipset, ir::SourceLoc loc) {
  if (ctx.ipset_uses == nullptr) return;
  ctx.ipset_uses->push_back({kind, ipset, ctx.table_name, ctx.rule->loc, loc, ""});
}

struct SetOp {
  const Option* opt = nullptr;
  const Ipset* set = nullptr;
  std::vector<bool> src;  // per flag: the source field
};

// The transport header bytes get_port (ip_set_getport.c) reads whole for
// the protocols whose ports hash:ip,port keeps.
uint32_t PortHeaderLen(uint8_t proto) { return proto == 6 ? 20 : proto == 132 ? 12 : 8; }

// hash:net's kadt adds and deletes the packet's address masked to the
// most specific length in the set (h->nets[0]), which changes as nets
// come and go. Modelled: nets of one length and no nomatch net, so that
// the set is an exact set of masked addresses like hash:ip's; deletes only
// at the full length, which a delete cannot change.
bool CheckNetSet(LowerCtx& ctx, const Option& opt, const Ipset& set) {
  const std::string name = opt.args[0].text;
  for (const IpsetElement& e : set.elements) {
    if (e.prefix != set.elements[0].prefix) {
      return ctx.Error(opt.ArgLoc(0), absl::StrCat("SET on hash:net ipset '", name,
                                                   "' with nets of different lengths is not "
                                                   "modelled"),
                       "the kernel masks to the longest length present, which then changes");
    }
    if (e.nomatch) {
      return ctx.Error(opt.ArgLoc(0), absl::StrCat("SET on hash:net ipset '", name,
                                                   "' with nomatch nets is not modelled"));
    }
  }
  if (opt.name == "--del-set" && Netmask(set) != FullLen(set)) {
    return ctx.Error(opt.ArgLoc(0), absl::StrCat("SET --del-set on hash:net ipset '", name,
                                                 "' of /", Netmask(set),
                                                 " nets is not modelled"),
                     "deleting the last of them changes the length the kernel masks to");
  }
  return true;
}

// --add-set, --del-set or --map-set NAME FLAGS: the ipset (of types
// `types`, of the rule's family) and the flags.
bool ReadSetAndFlags(LowerCtx& ctx, const Option& opt, std::initializer_list<IpsetKind> types,
                     const char* modelled, SetOp* out) {
  out->opt = &opt;
  const std::string& name = opt.args[0].text;
  if (ctx.ipsets == nullptr || (out->set = ctx.ipsets->Find(name)) == nullptr) {
    return ctx.Error(opt.ArgLoc(0), absl::StrCat("ipset '", name, "' is not given"),
                     "give the sets' `ipset save` output with --ipset FILE");
  }
  const std::vector<std::string_view> flags = Split(opt.args[1].text, ',');
  for (std::string_view f : flags) {
    if (f != "src" && f != "dst") {
      return ctx.Error(opt.ArgLoc(1), absl::StrCat("invalid ", opt.name, " flag '", Sv(f), "'"),
                       "flags are src or dst, one per dimension, separated by commas");
    }
  }
  if (flags.size() > 6) return ctx.Error(opt.ArgLoc(1), absl::StrCat("more than 6 ", opt.name, " flags"));
  for (std::string_view f : flags) out->src.push_back(f == "src");
  if (std::find(types.begin(), types.end(), out->set->kind) == types.end()) {
    return ctx.Error(opt.ArgLoc(0), absl::StrCat(opt.name == "--map-set" ? "--map-set" : "SET",
                                                 " on ipset '", name, "' of type ",
                                                 out->set->type, " is not modelled"),
                     absl::StrCat("modelled: ", modelled));
  }
  if (out->set->ipv6 != ctx.ipv6()) {
    return ctx.Error(opt.ArgLoc(0), absl::StrCat("ipset '", name, "' is of family ",
                                                 out->set->ipv6 ? "inet6" : "inet",
                                                 ", which is not applicable here"));
  }
  return true;
}

bool ReadSetOp(LowerCtx& ctx, const Option& opt, SetOp* out) {
  if (!ReadSetAndFlags(ctx, opt,
                       {IpsetKind::kHashIp, IpsetKind::kHashIpPort, IpsetKind::kHashIpPortIp,
                        IpsetKind::kHashNet},
                       "hash:ip, hash:ip,port, hash:ip,port,ip, hash:net", out)) {
    return false;
  }
  if (IsNetSet(*out->set) && !CheckNetSet(ctx, opt, *out->set)) return false;
  const std::optional<uint8_t> proto = ctx.l4proto();
  if (IsPortSet(*out->set) && (!proto || (*proto != 6 && *proto != 17 && *proto != 132 &&
                                          *proto != 136))) {
    return ctx.Error(opt.ArgLoc(0), absl::StrCat("SET on ", out->set->type, " ipset '",
                                                 opt.args[0].text, "' in a rule without -p tcp, "
                                                 "udp, sctp or udplite is not modelled"),
                     "the kernel keeps other protocols with their ICMP type and code or port 0");
  }
  return true;
}

// hash:ip,port's kadt: the address and the port that the flags pick, the
// rule's protocol (-p, checked by ReadSetOp); nothing when the transport
// header is shorter than the protocol's (get_port) or, on IPv4, in a
// non-first fragment (ip_set_get_ip4_port). The key is -m set's
// (IpsetPortSet), the zero address included.
std::string LoadPortSetKey(LowerCtx& ctx, const SetOp& op) {
  const ir::SourceLoc loc = op.opt->loc;
  ctx.Payload(ir::PayloadBase::kTransport, PortHeaderLen(*ctx.l4proto()) - 1, 1, loc);
  LoadIpsetPortKey(ctx, *op.set, op.src, loc);
  // IPv4: frag-off after addr . l4proto . port [. addr2].
  const int frag_word = op.set->kind == IpsetKind::kHashIpPortIp ? 4 : 3;
  if (!ctx.ipv6()) ctx.Add(ir::Cmp{ir::CmpOp::kEq, ir::RegForWord(frag_word), {0, 0}}, loc);
  return IpsetPortSet(ctx, *op.set);
}

bool EmitSetOp(LowerCtx& ctx, const SetOp& op, ir::DynsetOp kind, uint64_t timeout_ms) {
  // ip_set_add/ip_set_del: fewer flags than dimensions change nothing.
  if (static_cast<int>(op.src.size()) < op.set->dimensions()) return true;
  RecordUse(ctx, IpsetUse::kWrite, op.set->name, op.opt->ArgLoc(0));
  std::string name;
  if (IsPortSet(*op.set)) {
    name = LoadPortSetKey(ctx, op);
  } else {
    name = HashIpSet(ctx, *op.set);
    LoadHashIpKey(ctx, *op.set, op.src[0], op.opt->loc);
    if (kind != ir::DynsetOp::kDelete && !IsNetSet(*op.set)) {  // hash:net adds 0.0.0.0
      ctx.Cmp(ir::CmpOp::kNeq, ir::Bytes(op.set->ipv6 ? 16 : 4, 0), op.opt->loc);
    }
  }
  ir::Dynset d;
  d.op = kind;
  d.set = name;
  d.sreg_key = 1;
  d.timeout_ms = timeout_ms;
  ctx.Add(std::move(d), op.opt->loc);
  return true;
}

// The map --map-set reads: -m set's key (HashIpSet's or IpsetPortSet's)
// to `~skbmarkmask . skbmark` (host order, as meta mark is in a register).
std::string MapSet(LowerCtx& ctx, const Ipset& set) {
  const std::string name = IpsetIrBase(set.name) + "_map";
  if (ctx.table->FindSet(name) != nullptr) return name;
  const uint32_t addr_len = set.ipv6 ? 16 : 4;
  ir::Set s;
  s.name = name;
  s.flags = ir::kSetConstant | ir::kSetMap;
  s.data_len = 8;
  s.loc = set.loc;
  if (IsPortSet(set)) {
    s.field_lens = {addr_len, 1, 2};
    if (!set.ipv6) s.field_lens.push_back(2);  // frag-off & 0x1fff: 0
    for (uint32_t f : s.field_lens) s.key_len += ir::Pad4(f);
  } else {
    s.key_len = addr_len;
  }
  for (const IpsetElement& e : set.elements) {
    ir::Bytes data = HostU32(~e.skbmarkmask);
    const ir::Bytes mark = HostU32(e.skbmark);
    data.insert(data.end(), mark.begin(), mark.end());
    std::set<ir::Bytes> keys;
    if (IsPortSet(set)) {
      ir::Bytes key = e.addr;
      const ir::Bytes port = BigEndian(e.port, 2);
      key.insert(key.end(), {e.proto, 0, 0, 0, port[0], port[1], 0, 0});
      if (!set.ipv6) key.insert(key.end(), {0, 0, 0, 0});
      keys.insert(std::move(key));
    } else if (!Expand(ctx, set, e, &keys)) {
      return name;
    }
    for (const ir::Bytes& k : keys) s.elements.push_back({.key = k, .data = data, .loc = set.loc});
  }
  ctx.table->sets.push_back(std::move(s));
  return name;
}

// --map-set NAME FLAGS --map-mark (set_target_v3): the kernel tests the
// packet as -m set does and, when its element is there, sets the mark from
// the element's skbinfo: (mark & ~skbmarkmask) ^ skbmark; without
// --map-mark it changes nothing. iptables refuses --map-set outside the
// mangle table. Modelled on hash:ip and hash:ip,port ipsets that no SET
// target changes (CheckIpsetWrites).
bool LowerSetMap(LowerCtx& ctx, const TargetUse& t, const Option& opt) {
  if (ctx.table_name != "mangle") {
    return ctx.Error(opt.loc, "--map-set is only usable from the mangle table");
  }
  if (opt.invert) return ctx.Error(opt.loc, "! --map-set is not modelled");
  SetOp op;
  if (!ReadSetAndFlags(ctx, opt, {IpsetKind::kHashIp, IpsetKind::kHashIpPort},
                       "hash:ip, hash:ip,port", &op)) {
    return false;
  }
  const bool mark = std::any_of(t.options.begin(), t.options.end(),
                                [](const Option& o) { return o.name == "--map-mark"; });
  // Fewer flags than dimensions: never in the set.
  if (!mark || static_cast<int>(op.src.size()) < op.set->dimensions()) return true;
  RecordUse(ctx, IpsetUse::kReadMap, op.set->name, opt.ArgLoc(0));
  const std::string map = MapSet(ctx, *op.set);
  if (IsPortSet(*op.set)) {
    LoadIpsetPortKey(ctx, *op.set, op.src, opt.loc);
  } else {
    LoadHashIpKey(ctx, *op.set, op.src[0], opt.loc);
  }
  const ir::Reg not_mask = ir::RegForWord(8), value = ir::RegForWord(9);
  ctx.Add(ir::Lookup{.sreg = 1, .set = map, .dreg = not_mask, .invert = false}, opt.loc);
  ctx.Add(ir::MetaLoad{ir::MetaKey::kMark, 1}, opt.loc);
  for (auto [op_kind, reg] : {std::pair{ir::BitwiseOp::kAndReg, not_mask},
                              std::pair{ir::BitwiseOp::kXorReg, value}}) {
    ir::Bitwise b;
    b.op = op_kind;
    b.sreg = b.dreg = 1;
    b.sreg2 = reg;
    b.len = 4;
    ctx.Add(std::move(b), opt.loc);
  }
  ctx.Add(ir::MetaSet{ir::MetaKey::kMark, 1}, opt.loc);
  return true;
}

}  // namespace

std::string IpsetIrBase(std::string_view ipset) {
  std::string name = "ipset_";
  for (char c : ipset) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      name += c;
    } else {
      absl::StrAppend(&name, "_", static_cast<int>(static_cast<unsigned char>(c)), "_");
    }
  }
  return name;
}

std::string HashIpSet(LowerCtx& ctx, const Ipset& set) {
  std::string name = IrName(set);
  if (ctx.table->FindSet(name) != nullptr) return name;
  std::set<ir::Bytes> keys;
  for (const IpsetElement& e : set.elements) {
    if (!Expand(ctx, set, e, &keys)) return name;
  }
  ir::Set s;
  s.name = name;
  s.flags = ir::kSetConstant;
  s.key_len = set.ipv6 ? 16 : 4;
  s.loc = set.loc;
  for (const ir::Bytes& k : keys) {
    ir::SetElement el;
    el.key = k;
    el.loc = set.loc;
    s.elements.push_back(std::move(el));
  }
  ctx.table->sets.push_back(std::move(s));
  return name;
}

void LoadHashIpKey(LowerCtx& ctx, const Ipset& set, bool src, ir::SourceLoc loc) {
  const bool v6 = set.ipv6;
  ctx.Payload(ir::PayloadBase::kNetwork, v6 ? (src ? 8 : 24) : (src ? 12 : 16), v6 ? 16 : 4, loc);
  if (Netmask(set) != (v6 ? 128u : 32u)) ctx.Mask(MaskBytes(Netmask(set), v6 ? 16 : 4), loc);
}

bool LowerSetTarget(LowerCtx& ctx, const TargetUse& t) {
  SetOp add, del;
  bool exist = false;
  std::optional<uint32_t> timeout;
  const Option* map = nullptr;
  for (const Option& opt : t.options) {
    if (opt.name == "--add-set" && !ReadSetOp(ctx, opt, &add)) return false;
    if (opt.name == "--del-set" && !ReadSetOp(ctx, opt, &del)) return false;
    if (opt.name == "--exist") exist = true;
    if (opt.name == "--timeout") {
      auto n = ParseNumber(opt.args[0].text, UINT32_MAX);
      if (!n) return ctx.Error(opt.ArgLoc(0), "invalid --timeout value");
      timeout = static_cast<uint32_t>(std::min<uint64_t>(*n, kMaxTimeout));
    }
    if (opt.name == "--map-set") map = &opt;
    if (opt.name == "--map-prio" || opt.name == "--map-queue") {
      return ctx.Error(opt.loc, absl::StrCat(opt.name, " is not modelled"),
                       "modelled: --map-mark");
    }
  }
  if (map != nullptr) {
    if (add.opt != nullptr || del.opt != nullptr) {
      return ctx.Error(map->loc, "--map-set with --add-set or --del-set is not modelled");
    }
    return LowerSetMap(ctx, t, *map);
  }
  if (add.opt == nullptr && del.opt == nullptr) {
    return ctx.Error(t.loc, "SET needs --add-set or --del-set");
  }
  if (add.opt != nullptr && del.opt != nullptr && add.set == del.set) {
    return ctx.Error(del.opt->ArgLoc(0), "--add-set and --del-set of one ipset are not modelled");
  }
  if (timeout == 0u && add.opt != nullptr && add.set->timeout != 0) {
    return ctx.Error(t.loc, "--timeout 0 (an element that never expires) is not modelled");
  }
  // Delete first: with different sets the order does not matter, and a
  // full set stops the rule at the add (the kernel goes on regardless).
  if (del.opt != nullptr && !EmitSetOp(ctx, del, ir::DynsetOp::kDelete, 0)) return false;
  if (add.opt == nullptr) return true;
  const uint64_t timeout_ms = add.set->timeout == 0 ? 0 : uint64_t{timeout.value_or(add.set->timeout)} * 1000;
  return EmitSetOp(ctx, add, exist ? ir::DynsetOp::kUpdate : ir::DynsetOp::kAdd, timeout_ms);
}

namespace {

// -m set on a changed port type or hash:net ipset looked up a set of
// its own per flag order (match_set.cc); they all read IrName's set, which
// the SET target changes, instead, and are dropped. hash:net's lookups
// mask the address first (its set holds masked addresses; the nets it
// replaces were of that length, so the meaning is the same).
void ShareReadSets(ir::Table& table, const Ipset& ipset, const std::vector<IpsetUse>& uses) {
  std::set<std::string> names;
  for (const IpsetUse& u : uses) {
    if (u.kind == IpsetUse::kRead && u.ipset == ipset.name && u.table == table.name &&
        !u.ir_set.empty()) {
      names.insert(u.ir_set);
    }
  }
  const std::string shared = IrName(ipset);
  names.erase(shared);
  if (names.empty()) return;
  const uint32_t len = ipset.ipv6 ? 16 : 4;
  const bool mask = IsNetSet(ipset) && Netmask(ipset) != FullLen(ipset);
  for (ir::Chain& chain : table.chains) {
    for (ir::Rule& rule : chain.rules) {
      for (size_t i = 0; i < rule.exprs.size(); ++i) {
        auto* lookup = std::get_if<ir::Lookup>(&rule.exprs[i].expr);
        if (lookup == nullptr || !names.count(lookup->set)) continue;
        lookup->set = shared;
        if (!mask) continue;
        ir::Bitwise b;
        b.sreg = b.dreg = lookup->sreg;
        b.len = len;
        b.mask = MaskBytes(Netmask(ipset), len);
        b.xor_ = ir::Bytes(len, 0);
        const ir::SourceLoc loc = rule.exprs[i].loc;
        rule.exprs.insert(rule.exprs.begin() + static_cast<std::ptrdiff_t>(i), ir::Node{b, loc});
        ++i;
      }
    }
  }
  std::erase_if(table.sets, [&](const ir::Set& s) { return names.count(s.name) > 0; });
}

}  // namespace

void CheckIpsetWrites(ir::Ruleset& ruleset, const Ipsets* ipsets,
                      const std::vector<IpsetUse>& uses, ir::Diagnostics& diags) {
  std::set<std::pair<uint32_t, uint32_t>> live;  // (file, line) of the rules left
  for (const ir::Table& table : ruleset.tables) {
    for (const ir::Chain& chain : table.chains) {
      for (const ir::Rule& rule : chain.rules) live.insert({rule.loc.file, rule.loc.line});
    }
  }
  std::map<std::string, const IpsetUse*> writes;  // ipset -> its first write
  for (const IpsetUse& u : uses) {
    if (u.kind == IpsetUse::kWrite && live.count({u.rule_loc.file, u.rule_loc.line})) {
      writes.emplace(u.ipset, &u);
    }
  }
  for (const IpsetUse& u : uses) {
    auto w = writes.find(u.ipset);
    if (w == writes.end() || !live.count({u.rule_loc.file, u.rule_loc.line})) continue;
    if (u.kind == IpsetUse::kReadMap) {
      diags.Error(u.loc, absl::StrCat("ipset '", u.ipset, "', which a SET target changes, read "
                                      "by --map-set; not modelled"));
    } else if (u.kind == IpsetUse::kReadInList) {
      diags.Error(u.loc, absl::StrCat("ipset '", u.ipset, "', which a SET target changes, read "
                                      "through a list:set; not modelled"));
    } else if (u.table != w->second->table) {
      diags.Error(u.loc, absl::StrCat("ipset '", u.ipset, "' is changed by a SET target in table '",
                                      w->second->table, "' and used in table '", u.table,
                                      "'; not modelled"),
                  "rulejit keeps a changed set's state per table");
    }
  }
  for (const auto& [ipset_name, use] : writes) {
    const Ipset* ipset = ipsets->Find(ipset_name);
    for (ir::Table& table : ruleset.tables) {
      if (table.name != use->table) continue;
      if (IsPortSet(*ipset) || IsNetSet(*ipset)) ShareReadSets(table, *ipset, uses);
      for (ir::Set& s : table.sets) {
        if (s.name != IrName(*ipset)) continue;
        s.flags = (s.flags & ~ir::kSetConstant) | ir::kSetEval;
        if (ipset->timeout != 0) {
          s.flags |= ir::kSetTimeout;
          s.timeout_ms = uint64_t{ipset->timeout} * 1000;
        }
        s.size = ipset->maxelem;
      }
    }
  }
}

}  // namespace rulejit::frontends::iptables_internal
