// Decompiling a rule's actions: verdicts, counter, limit, log, reject,
// NAT, set statements, objects (see nft_print.h). The iptables-only
// expressions (recent, hashlimit, string, time, TCPMSS, CHECKSUM) have no
// nft statement that means the same: they are refused with that reason.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emit/nft_rule_internal.h"
#include "ir/printer.h"

namespace rulejit::emit {
namespace {

absl::Status Refuse(std::string why) { return absl::InvalidArgumentError(std::move(why)); }

absl::Status Limit(RuleCtx& ctx, const ir::Limit& e) {
  const char* unit = ir::LimitUnitName(e.unit_seconds);
  if (!unit) return Refuse("a limit per period nft cannot name");
  std::string over = e.over ? "over " : "";
  if (e.bytes) {
    ctx.Say(absl::StrCat("limit rate ", over, e.rate, " bytes/", unit, " burst ", e.burst, " bytes"));
  } else {
    ctx.Say(absl::StrCat("limit rate ", over, e.rate, "/", unit, " burst ", e.burst, " packets"));
  }
  return absl::OkStatus();
}

absl::Status Log(RuleCtx& ctx, const ir::Log& e) {
  static constexpr const char* kLevels[] = {"emerg", "alert", "crit", "err", "warn",
                                            "notice", "info", "debug", "audit"};
  std::string s = "log";
  if (e.prefix) absl::StrAppend(&s, " prefix ", Quote(*e.prefix));
  if (e.group) {
    absl::StrAppend(&s, " group ", *e.group);
    if (e.snaplen) absl::StrAppend(&s, " snaplen ", e.snaplen);
    if (e.qthreshold) absl::StrAppend(&s, " queue-threshold ", e.qthreshold);
    ctx.Say(s);
    return absl::OkStatus();
  }
  if (e.level) {
    if (*e.level > 8) return Refuse("a log level nft cannot name");
    absl::StrAppend(&s, " level ", kLevels[*e.level]);
  }
  std::vector<std::string> tcp;
  if (e.flags & kLogTcpSeq) tcp.push_back("sequence");
  if (e.flags & kLogTcpOpt) tcp.push_back("options");
  if (!tcp.empty()) absl::StrAppend(&s, " flags tcp ", absl::StrJoin(tcp, ","));
  if (e.flags & kLogIpOpt) absl::StrAppend(&s, " flags ip options");
  if (e.flags & kLogUid) absl::StrAppend(&s, " flags skuid");
  if (e.flags & kLogMacDecode) absl::StrAppend(&s, " flags ether");
  ctx.Say(s);
  return absl::OkStatus();
}

absl::Status Reject(RuleCtx& ctx, const ir::Reject& e) {
  static constexpr const char* kIcmp[] = {"net-unreachable", "host-unreachable", "prot-unreachable",
                                          "port-unreachable"};
  static constexpr const char* kIcmpx[] = {"no-route", "port-unreachable", "host-unreachable",
                                           "admin-prohibited"};
  static constexpr const char* kIcmp6[] = {"no-route", "admin-prohibited", nullptr, "addr-unreachable",
                                           "port-unreachable", "policy-fail", "reject-route"};
  switch (e.type) {
    case RejectType::kTcpReset:
      ctx.Say("reject with tcp reset");
      return absl::OkStatus();
    case RejectType::kIcmpxUnreach:
      if (e.code > 3) return Refuse("an icmpx code nft cannot name");
      ctx.Say(absl::StrCat("reject with icmpx ", kIcmpx[e.code]));
      return absl::OkStatus();
    case RejectType::kIcmpUnreach:
      break;
  }
  if (ctx.facts.nfproto == 2) {
    const char* name = e.code < 4 ? kIcmp[e.code] : e.code == 9 ? "net-prohibited"
                     : e.code == 10 ? "host-prohibited" : e.code == 13 ? "admin-prohibited" : nullptr;
    if (!name) return Refuse("an icmp code nft cannot name");
    ctx.Say(absl::StrCat("reject with icmp ", name));
    return absl::OkStatus();
  }
  if (ctx.facts.nfproto == 10) {
    const char* name = e.code < 7 ? kIcmp6[e.code] : nullptr;
    if (!name) return Refuse("an icmpv6 code nft cannot name");
    ctx.Say(absl::StrCat("reject with icmpv6 ", name));
    return absl::OkStatus();
  }
  return Refuse("an icmp reject with no IPv4/IPv6 check before it (nft would add one)");
}

// `to ADDR[-ADDR][:PORT[-PORT]]` of a NAT statement.
absl::StatusOr<std::string> NatTarget(RuleCtx& ctx, const ir::Nat& e) {
  Value addr_t;
  addr_t.lit = e.family == ir::Family::kIp6 ? Lit::kIpv6 : Lit::kIpv4;
  addr_t.type = e.family == ir::Family::kIp6 ? "ipv6_addr" : "ipv4_addr";
  addr_t.len = e.family == ir::Family::kIp6 ? 16 : 4;
  Value port_t;
  port_t.lit = Lit::kBeDec;
  port_t.type = "inet_service";
  port_t.len = 2;
  std::string out;
  auto piece = [&](std::optional<ir::Reg> lo, std::optional<ir::Reg> hi, const Value& t,
                   bool v6) -> absl::StatusOr<std::string> {
    absl::StatusOr<RegValue> a = ctx.Get(*lo);
    if (!a.ok()) return a.status();
    absl::StatusOr<std::string> s = RenderAs(ctx, *a, t);
    if (!s.ok()) return s.status();
    std::string text = v6 && a->konst ? "[" + *s + "]" : *s;
    if (hi && *hi != *lo) {
      absl::StatusOr<RegValue> b = ctx.Get(*hi);
      if (!b.ok()) return b.status();
      absl::StatusOr<std::string> t2 = RenderAs(ctx, *b, t);
      if (!t2.ok()) return t2.status();
      if (!a->konst || !b->konst) return Refuse("a NAT range from a map");
      if (*a->konst != *b->konst) absl::StrAppend(&text, "-", v6 ? "[" + *t2 + "]" : *t2);
    }
    return text;
  };
  if (e.addr_min) {
    absl::StatusOr<std::string> a = piece(e.addr_min, e.addr_max, addr_t, e.family == ir::Family::kIp6 && e.proto_min);
    if (!a.ok()) return a.status();
    out = *a;
  }
  if (e.proto_min) {
    absl::StatusOr<std::string> p = piece(e.proto_min, e.proto_max, port_t, false);
    if (!p.ok()) return p.status();
    absl::StrAppend(&out, ":", *p);
  }
  return out;
}

std::string NatFlags(uint32_t flags) {
  std::vector<std::string> f;
  if (flags & ir::kNatRandom) f.push_back("random");
  if (flags & ir::kNatRandomFully) f.push_back("fully-random");
  if (flags & ir::kNatPersistent) f.push_back("persistent");
  return f.empty() ? "" : " " + absl::StrJoin(f, ",");
}

absl::Status Nat(RuleCtx& ctx, const ir::Nat& e) {
  constexpr uint32_t kImplied = ir::kNatMapIps | ir::kNatProtoSpecified;
  if (e.flags & ir::kNatNetmap) return Refuse("a NAT prefix mapping (netmap)");
  if (e.flags & ~(kImplied | ir::kNatRandom | ir::kNatRandomFully | ir::kNatPersistent)) {
    return Refuse("NAT flags nft cannot write");
  }
  // The kernel sets MAP_IPS with an address register and PROTO_SPECIFIED
  // with a port register itself (nft_nat_init), whatever the flags say.
  absl::StatusOr<std::string> to = NatTarget(ctx, e);
  if (!to.ok()) return to.status();
  std::string head;
  switch (e.kind) {
    case NatKind::kMasq: head = "masquerade"; break;
    case NatKind::kRedir: head = "redirect"; break;
    case NatKind::kSnat: case NatKind::kDnat: {
      head = e.kind == NatKind::kSnat ? "snat" : "dnat";
      if (ctx.table.family == ir::Family::kInet && e.addr_min) {
        absl::StrAppend(&head, e.family == ir::Family::kIp6 ? " ip6" : " ip");
      }
      break;
    }
  }
  if (!to->empty()) absl::StrAppend(&head, " to ", to->front() == ':' ? "" : "", *to);
  ctx.Say(head + NatFlags(e.flags));
  return absl::OkStatus();
}

// The statement head that runs an object of `type` ("counter name").
const char* ObjrefHead(uint32_t type) {
  switch (type) {
    case ir::kObjCounter: return "counter name";
    case ir::kObjQuota: return "quota name";
    case ir::kObjLimit: return "limit name";
    case ir::kObjCtHelper: return "ct helper set";
    case ir::kObjCtTimeout: return "ct timeout set";
    case ir::kObjCtExpect: return "ct expectation set";
    case ir::kObjSecmark: return "meta secmark set";
    case ir::kObjSynproxy: return "synproxy name";
    default: return nullptr;
  }
}

// `counter name "c"`, or from an object map: `counter name ip saddr map @m`.
absl::Status Objref(RuleCtx& ctx, const ir::Objref& e) {
  if (!e.sreg) {
    const char* head = ObjrefHead(e.type);
    if (!head) return Refuse("an object of a type nft cannot name");
    ctx.Say(absl::StrCat(head, " ", Quote(e.name)));
    return absl::OkStatus();
  }
  const ir::Set* set = ctx.table.FindSet(e.set);
  if (!set) return Refuse(absl::StrCat("looks up object map ", e.set, " which the table lacks"));
  const char* head = ObjrefHead(set->obj_type);
  if (!head) return Refuse("an object map of a type nft cannot name");
  absl::StatusOr<std::vector<Value>> keys = KeyFields(ctx, *set, *e.sreg);
  if (!keys.ok()) return keys.status();
  std::vector<std::string> texts;
  for (const Value& k : *keys) texts.push_back(k.text);
  std::string ref = "@" + Ident(set->name);
  if (set->anonymous()) {
    absl::StatusOr<std::string> elems = PrintElements(*set, SetShape{*keys, std::nullopt});
    if (!elems.ok()) return elems.status();
    ref = absl::StrCat("{ ", *elems, " }");
  }
  ctx.Say(absl::StrCat(head, " ", absl::StrJoin(texts, " . "), " map ", ref));
  return absl::OkStatus();
}

absl::Status SetKey(RuleCtx& ctx, const Value& target, ir::Reg sreg) {
  absl::StatusOr<RegValue> v = ctx.Get(sreg);
  if (!v.ok()) return v.status();
  absl::StatusOr<std::string> s = RenderAs(ctx, *v, target);
  if (!s.ok()) return s.status();
  ctx.Say(absl::StrCat(target.text, " set ", *s));
  return absl::OkStatus();
}

// `add|update|delete @s { KEY [timeout T] [counter|limit|quota ...] [: DATA] }`
absl::Status Dynset(RuleCtx& ctx, const ir::Dynset& e) {
  const ir::Set* set = ctx.table.FindSet(e.set);
  if (!set) return Refuse(absl::StrCat("updates set ", e.set, " which the table lacks"));
  if (set->anonymous()) return Refuse("updates an anonymous set");
  absl::StatusOr<std::vector<Value>> keys = KeyFields(ctx, *set, e.sreg_key);
  if (!keys.ok()) return keys.status();
  std::vector<std::string> texts;
  for (const Value& k : *keys) texts.push_back(k.text);
  static constexpr const char* kOps[] = {"add", "update", "delete"};
  std::string s = absl::StrCat(kOps[static_cast<int>(e.op)], " @", Ident(set->name), " { ",
                               absl::StrJoin(texts, " . "));
  if (e.timeout_ms) absl::StrAppend(&s, " timeout ", Duration(e.timeout_ms));
  for (const ir::DynsetElemExpr& x : e.exprs) {
    RuleCtx inner{ctx.table, ctx.shapes, ctx.facts, {}, {}};
    if (const auto* c = std::get_if<ir::Counter>(&x)) {
      absl::StrAppend(&s, " counter packets ", c->packets, " bytes ", c->bytes);
      continue;
    }
    if (const auto* l = std::get_if<ir::Limit>(&x)) {
      if (absl::Status st = Limit(inner, *l); !st.ok()) return st;
    } else if (const auto* q = std::get_if<ir::Quota>(&x)) {
      absl::StrAppend(&s, " quota ", q->over ? "over " : "", q->bytes, " bytes used ", q->consumed, " bytes");
      continue;
    }
    for (const Stmt& st : inner.stmts) absl::StrAppend(&s, " ", st.text);
  }
  if (e.sreg_data) {
    absl::StatusOr<RegValue> d = ctx.Get(*e.sreg_data);
    if (!d.ok()) return d.status();
    if (d->konst) {
      auto it = ctx.shapes.find(set->name);
      if (it == ctx.shapes.end() || !it->second.data) {
        return Refuse(absl::StrCat("a constant into map @", set->name, " whose data type no rule shows"));
      }
      absl::StatusOr<std::string> r = RenderAs(ctx, *d, *it->second.data);
      if (!r.ok()) return r.status();
      absl::StrAppend(&s, " : ", *r);
    } else {
      if (d->map || d->present || d->v.computed || !d->v.mask.empty()) return Refuse("map data from a computed value");
      ctx.shapes[set->name].data = d->v;
      absl::StrAppend(&s, " : ", d->v.text);
    }
  }
  ctx.Say(s + " }");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RenderAs(RuleCtx& ctx, const RegValue& v, const Value& target) {
  if (v.konst) {
    ir::Bytes k = *v.konst;
    if (target.len && k.size() > target.len) k.resize(target.len);
    std::optional<std::string> s = Literal(target, k);
    if (!s) return Refuse(absl::StrCat("constant ", HexLiteral(k), " has no ", target.text, " literal"));
    return *s;
  }
  if (v.map) {
    SetShape shape{v.map_keys, target};
    std::string keys;
    for (const Value& k : v.map_keys) absl::StrAppend(&keys, keys.empty() ? "" : " . ", k.text);
    if (!v.map->anonymous()) {
      ctx.shapes[v.map->name] = shape;
      return absl::StrCat(keys, " map @", Ident(v.map->name));
    }
    absl::StatusOr<std::string> elems = PrintElements(*v.map, shape);
    if (!elems.ok()) return elems.status();
    return absl::StrCat(keys, " map { ", *elems, " }");
  }
  if (v.present || !v.v.xor_.empty() || !v.v.mask.empty()) {
    // (x & m) ^ x2, as nft folds `x & m`, `x | c`, `x ^ c`.
    if (v.present) return Refuse("an `exists` result as a value");
    const ir::Bytes& m = v.v.mask;
    const ir::Bytes& x = v.v.xor_;
    bool ones = std::all_of(m.begin(), m.end(), [](uint8_t b) { return b == 0xff; });
    bool zero = std::all_of(x.begin(), x.end(), [](uint8_t b) { return b == 0; });
    bool is_or = true;
    for (size_t i = 0; i < m.size(); ++i) is_or = is_or && (m[i] ^ x[i]) == 0xff && !(m[i] & x[i]);
    std::optional<std::string> ml = Literal(v.v, m), xl = Literal(v.v, x);
    if (!ml || !xl) return Refuse("a bitwise constant with no literal");
    if (zero) return absl::StrCat(v.v.text, " & ", *ml);
    if (ones) return absl::StrCat(v.v.text, " ^ ", *xl);
    if (is_or) return absl::StrCat(v.v.text, " | ", *xl);
    return Refuse("a bitwise with both mask and xor");
  }
  return v.v.text;
}

absl::Status Action(RuleCtx& ctx, const ir::Node& node) {
  const ir::Expr& x = node.expr;
  if (const auto* e = std::get_if<ir::Immediate>(&x)) {
    ctx.Say(VerdictText(e->verdict));
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Counter>(&x)) {
    ctx.Say(absl::StrCat("counter packets ", e->packets, " bytes ", e->bytes));
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Limit>(&x)) return Limit(ctx, *e);
  if (const auto* e = std::get_if<ir::Log>(&x)) return Log(ctx, *e);
  if (const auto* e = std::get_if<ir::Reject>(&x)) return Reject(ctx, *e);
  if (std::holds_alternative<ir::Notrack>(x)) {
    ctx.Say("notrack");
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Nat>(&x)) return Nat(ctx, *e);
  if (const auto* e = std::get_if<ir::Objref>(&x)) return Objref(ctx, *e);
  if (const auto* e = std::get_if<ir::MetaSet>(&x)) {
    std::optional<Value> t = MetaValue(e->key);
    if (!t) return Refuse("sets a meta key nft cannot name");
    return SetKey(ctx, *t, e->sreg);
  }
  if (const auto* e = std::get_if<ir::CtSet>(&x)) {
    std::optional<Value> t = CtValue(e->key, e->dir);
    if (!t) return Refuse("sets a ct key nft cannot name");
    return SetKey(ctx, *t, e->sreg);
  }
  if (const auto* e = std::get_if<ir::Quota>(&x)) {
    ctx.Say(absl::StrCat("quota ", e->over ? "over " : "", e->bytes, " bytes used ", e->consumed, " bytes"));
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Queue>(&x)) {
    if (e->sreg_qnum) return Refuse("a queue number from a register");
    std::vector<std::string> f;
    if (e->flags & kQueueBypass) f.push_back("bypass");
    if (e->flags & kQueueFanout) f.push_back("fanout");
    std::string s = "queue";
    if (!f.empty()) absl::StrAppend(&s, " flags ", absl::StrJoin(f, ","));
    absl::StrAppend(&s, " num ", e->num);
    if (e->total > 1) absl::StrAppend(&s, "-", e->num + e->total - 1);
    ctx.Say(s);
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::FlowOffload>(&x)) {
    ctx.Say("flow add @" + Ident(e->flowtable));
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Dynset>(&x)) return Dynset(ctx, *e);
  if (const auto* e = std::get_if<ir::Synproxy>(&x)) {
    ctx.Say(absl::StrCat("synproxy mss ", e->mss, " wscale ", e->wscale));
    return absl::OkStatus();
  }
  if (std::holds_alternative<ir::Recent>(x)) return Refuse("iptables' recent match has no nft equivalent");
  if (std::holds_alternative<ir::Hashlimit>(x)) return Refuse("iptables' hashlimit match has no exact nft equivalent");
  if (std::holds_alternative<ir::StringMatch>(x)) return Refuse("iptables' string match has no nft equivalent");
  if (std::holds_alternative<ir::TimeMatch>(x)) return Refuse("iptables' time match has no exact nft equivalent");
  if (std::holds_alternative<ir::TcpMss>(x)) return Refuse("iptables' TCPMSS target has no exact nft equivalent");
  if (std::holds_alternative<ir::ChecksumFill>(x)) return Refuse("iptables' CHECKSUM target has no nft equivalent");
  return Refuse("an expression the nft printer does not know yet");
}

}  // namespace rulejit::emit
