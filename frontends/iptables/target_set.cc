// The SET target (xt_SET revision 3's set_target_v3) on hash:ip ipsets, and
// the one IR set per hash:ip ipset that it and -m set share.
//
//   -j SET --add-set NAME FLAGS [--exist] [--timeout N] [--del-set NAME FLAGS]
//
// The kernel's meaning (ip_set_add / ip_set_del and hash:ip's kadt):
//  - the first flag picks the source or destination address; the address
//    is masked to the set's netmask, and the all-zero address is never
//    added (kadt returns -EINVAL);
//  - add without --exist leaves an element already there as it is;
//    --exist re-adds it, which restarts its timeout: nft's `add` and
//    `update` (ir::DynsetOp);
//  - a set created with `timeout T` times out what the target adds after
//    --timeout N seconds or else T; without it, the target's --timeout is
//    ignored. A full set (`maxelem`) takes no more;
//  - the target always continues, add first, then delete;
//  - a set of the other family: iptables refuses the rule.
// As an IR set: exact keys of the masked address, constant until a SET
// target changes it (CheckIpsetWrites then makes it dynamic), so a packet's
// add is seen by the next packet's lookup (ir/dynset_eval.h). The state is
// per table in the IR; an ipset changed in one table and used in another,
// or read through a list:set, is refused, located. --map-set, other set
// types, and add and delete of one set in one rule are refused, located.
#include <algorithm>
#include <cctype>
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

std::string IrName(const Ipset& set) {
  return IpsetIrBase(set.name) + "_ip";  // an escaped name never ends so (see match_set.cc)
}

uint32_t Netmask(const Ipset& set) { return set.netmask ? set.netmask : set.ipv6 ? 128 : 32; }

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
  ctx.ipset_uses->push_back({kind, ipset, ctx.table_name, ctx.rule->loc, loc});
}

struct SetOp {
  const Option* opt = nullptr;
  const Ipset* set = nullptr;
  bool src = true;
};

bool ReadSetOp(LowerCtx& ctx, const Option& opt, SetOp* out) {
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
  out->src = flags[0] == "src";
  if (out->set->kind != IpsetKind::kHashIp) {
    return ctx.Error(opt.ArgLoc(0), absl::StrCat("SET on ipset '", name, "' of type ",
                                                 out->set->type, " is not modelled"),
                     "modelled: hash:ip");
  }
  if (out->set->ipv6 != ctx.ipv6()) {
    return ctx.Error(opt.ArgLoc(0), absl::StrCat("ipset '", name, "' is of family ",
                                                 out->set->ipv6 ? "inet6" : "inet",
                                                 ", which is not applicable here"));
  }
  return true;
}

bool EmitSetOp(LowerCtx& ctx, const SetOp& op, ir::DynsetOp kind, uint64_t timeout_ms) {
  RecordUse(ctx, IpsetUse::kWrite, op.set->name, op.opt->ArgLoc(0));
  const std::string name = HashIpSet(ctx, *op.set);
  LoadHashIpKey(ctx, *op.set, op.src, op.opt->loc);
  if (kind != ir::DynsetOp::kDelete) {
    ctx.Cmp(ir::CmpOp::kNeq, ir::Bytes(op.set->ipv6 ? 16 : 4, 0), op.opt->loc);
  }
  ir::Dynset d;
  d.op = kind;
  d.set = name;
  d.sreg_key = 1;
  d.timeout_ms = timeout_ms;
  ctx.Add(std::move(d), op.opt->loc);
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
  for (const Option& opt : t.options) {
    if (opt.name == "--add-set" && !ReadSetOp(ctx, opt, &add)) return false;
    if (opt.name == "--del-set" && !ReadSetOp(ctx, opt, &del)) return false;
    if (opt.name == "--exist") exist = true;
    if (opt.name == "--timeout") {
      auto n = ParseNumber(opt.args[0].text, UINT32_MAX);
      if (!n) return ctx.Error(opt.ArgLoc(0), "invalid --timeout value");
      timeout = static_cast<uint32_t>(std::min<uint64_t>(*n, kMaxTimeout));
    }
    if (opt.name.starts_with("--map-")) {
      return ctx.Error(opt.loc, absl::StrCat(opt.name, " is not modelled"),
                       "it reads the element's skbinfo, which rulejit's ipset input does not hold");
    }
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
    if (u.kind == IpsetUse::kReadInList) {
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
