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
  Json j = {{"rate", e.rate}, {"per", unit}, {"burst", e.burst}};
  if (e.over) j["inv"] = true;
  if (e.bytes) {
    j["rate_unit"] = "bytes";
    j["burst_unit"] = "bytes";
    ctx.Say(absl::StrCat("limit rate ", over, e.rate, " bytes/", unit, " burst ", e.burst, " bytes"),
            Json{{"limit", j}});
  } else {
    ctx.Say(absl::StrCat("limit rate ", over, e.rate, "/", unit, " burst ", e.burst, " packets"),
            Json{{"limit", j}});
  }
  return absl::OkStatus();
}

absl::Status Log(RuleCtx& ctx, const ir::Log& e) {
  static constexpr const char* kLevels[] = {"emerg", "alert", "crit", "err", "warn",
                                            "notice", "info", "debug", "audit"};
  std::string s = "log";
  Json j = Json::object();
  if (e.prefix) {
    absl::StrAppend(&s, " prefix ", Quote(*e.prefix));
    j["prefix"] = *e.prefix;
  }
  if (e.group) {
    absl::StrAppend(&s, " group ", *e.group);
    j["group"] = *e.group;
    if (e.snaplen) absl::StrAppend(&s, " snaplen ", e.snaplen);
    if (e.snaplen) j["snaplen"] = e.snaplen;
    if (e.qthreshold) absl::StrAppend(&s, " queue-threshold ", e.qthreshold);
    if (e.qthreshold) j["queue-threshold"] = e.qthreshold;
    ctx.Say(s, Json{{"log", j}});
    return absl::OkStatus();
  }
  if (e.level) {
    if (*e.level > 8) return Refuse("a log level nft cannot name");
    absl::StrAppend(&s, " level ", kLevels[*e.level]);
    j["level"] = kLevels[*e.level];
  }
  std::vector<std::string> tcp;
  Json flags = Json::array();
  if (e.flags & kLogTcpSeq) tcp.push_back("sequence");
  if (e.flags & kLogTcpOpt) tcp.push_back("options");
  for (const std::string& t : tcp) flags.push_back("tcp " + t);
  if (!tcp.empty()) absl::StrAppend(&s, " flags tcp ", absl::StrJoin(tcp, ","));
  if (e.flags & kLogIpOpt) absl::StrAppend(&s, " flags ip options");
  if (e.flags & kLogIpOpt) flags.push_back("ip options");
  if (e.flags & kLogUid) absl::StrAppend(&s, " flags skuid");
  if (e.flags & kLogUid) flags.push_back("skuid");
  if (e.flags & kLogMacDecode) absl::StrAppend(&s, " flags ether");
  if (e.flags & kLogMacDecode) flags.push_back("ether");
  if (!flags.empty()) j["flags"] = flags;
  ctx.Say(s, Json{{"log", j.empty() ? Json() : j}});
  return absl::OkStatus();
}

// {"reject": {"type": "icmp", "expr": "port-unreachable"}}
Json RejectJson(const char* type, const char* code) {
  Json j = {{"type", type}};
  if (code) j["expr"] = code;
  return Json{{"reject", j}};
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
      ctx.Say("reject with tcp reset", RejectJson("tcp reset", nullptr));
      return absl::OkStatus();
    case RejectType::kIcmpxUnreach:
      if (e.code > 3) return Refuse("an icmpx code nft cannot name");
      ctx.Say(absl::StrCat("reject with icmpx ", kIcmpx[e.code]), RejectJson("icmpx", kIcmpx[e.code]));
      return absl::OkStatus();
    case RejectType::kIcmpUnreach:
      break;
  }
  if (ctx.facts.nfproto == 2) {
    const char* name = e.code < 4 ? kIcmp[e.code] : e.code == 9 ? "net-prohibited"
                     : e.code == 10 ? "host-prohibited" : e.code == 13 ? "admin-prohibited" : nullptr;
    if (!name) return Refuse("an icmp code nft cannot name");
    ctx.Say(absl::StrCat("reject with icmp ", name), RejectJson("icmp", name));
    return absl::OkStatus();
  }
  if (ctx.facts.nfproto == 10) {
    const char* name = e.code < 7 ? kIcmp6[e.code] : nullptr;
    if (!name) return Refuse("an icmpv6 code nft cannot name");
    ctx.Say(absl::StrCat("reject with icmpv6 ", name), RejectJson("icmpv6", name));
    return absl::OkStatus();
  }
  return Refuse("an icmp reject with no IPv4/IPv6 check before it (nft would add one)");
}

// `to ADDR[-ADDR][:PORT[-PORT]]` of a NAT statement; its JSON "addr" and
// "port" members go to `json`.
absl::StatusOr<std::string> NatTarget(RuleCtx& ctx, const ir::Nat& e, Json& json) {
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
                   bool v6, Json& j) -> absl::StatusOr<std::string> {
    absl::StatusOr<RegValue> a = ctx.Get(*lo);
    if (!a.ok()) return a.status();
    absl::StatusOr<std::string> s = RenderAs(ctx, *a, t, j);
    if (!s.ok()) return s.status();
    std::string text = v6 && a->konst ? "[" + *s + "]" : *s;
    if (hi && *hi != *lo) {
      absl::StatusOr<RegValue> b = ctx.Get(*hi);
      if (!b.ok()) return b.status();
      Json j2;
      absl::StatusOr<std::string> t2 = RenderAs(ctx, *b, t, j2);
      if (!t2.ok()) return t2.status();
      if (!a->konst || !b->konst) return Refuse("a NAT range from a map");
      if (*a->konst != *b->konst) {
        absl::StrAppend(&text, "-", v6 ? "[" + *t2 + "]" : *t2);
        j = Json{{"range", Json::array({j, j2})}};
      }
    }
    return text;
  };
  if (e.addr_min) {
    Json j;
    absl::StatusOr<std::string> a = piece(e.addr_min, e.addr_max, addr_t, e.family == ir::Family::kIp6 && e.proto_min, j);
    if (!a.ok()) return a.status();
    out = *a;
    json["addr"] = j;
  }
  if (e.proto_min) {
    Json j;
    absl::StatusOr<std::string> p = piece(e.proto_min, e.proto_max, port_t, false, j);
    if (!p.ok()) return p.status();
    absl::StrAppend(&out, ":", *p);
    json["port"] = j;
  }
  return out;
}

std::vector<std::string> NatFlagList(uint32_t flags) {
  std::vector<std::string> f;
  if (flags & ir::kNatRandom) f.push_back("random");
  if (flags & ir::kNatRandomFully) f.push_back("fully-random");
  if (flags & ir::kNatPersistent) f.push_back("persistent");
  return f;
}

// `tproxy [ip|ip6] to ADDR[:PORT]` / `tproxy to :PORT`: the target is
// written as a NAT target is. TPROXY's drop on a miss has no nft form.
absl::Status Tproxy(RuleCtx& ctx, const ir::Tproxy& e) {
  if (e.else_drop) return Refuse("iptables' TPROXY target (it drops where nft's tproxy goes on)");
  ir::Nat target;
  target.family = e.family == ir::Family::kIp6 ? ir::Family::kIp6 : ir::Family::kIp;
  target.addr_min = e.addr;
  target.proto_min = e.port;
  Json j = Json::object();
  absl::StatusOr<std::string> to = NatTarget(ctx, target, j);
  if (!to.ok()) return to.status();
  std::string head = "tproxy";
  if (ctx.table.family == ir::Family::kInet && e.addr) {
    absl::StrAppend(&head, e.family == ir::Family::kIp6 ? " ip6" : " ip");
    j["family"] = e.family == ir::Family::kIp6 ? "ip6" : "ip";
  }
  ctx.Say(absl::StrCat(head, " to ", *to), Json{{"tproxy", j}});
  return absl::OkStatus();
}

absl::Status Nat(RuleCtx& ctx, const ir::Nat& e) {
  constexpr uint32_t kImplied = ir::kNatMapIps | ir::kNatProtoSpecified;
  if (e.flags & ir::kNatNetmap) return Refuse("a NAT prefix mapping (netmap)");
  if (e.flags & ~(kImplied | ir::kNatRandom | ir::kNatRandomFully | ir::kNatPersistent)) {
    return Refuse("NAT flags nft cannot write");
  }
  // The kernel sets MAP_IPS with an address register and PROTO_SPECIFIED
  // with a port register itself (nft_nat_init), whatever the flags say.
  Json j = Json::object();
  absl::StatusOr<std::string> to = NatTarget(ctx, e, j);
  if (!to.ok()) return to.status();
  std::string head, key;
  switch (e.kind) {
    case NatKind::kMasq: head = key = "masquerade"; break;
    case NatKind::kRedir: head = key = "redirect"; break;
    case NatKind::kSnat: case NatKind::kDnat: {
      head = key = e.kind == NatKind::kSnat ? "snat" : "dnat";
      if (ctx.table.family == ir::Family::kInet && e.addr_min) {
        absl::StrAppend(&head, e.family == ir::Family::kIp6 ? " ip6" : " ip");
        j["family"] = e.family == ir::Family::kIp6 ? "ip6" : "ip";
      }
      break;
    }
  }
  if (!to->empty()) absl::StrAppend(&head, " to ", to->front() == ':' ? "" : "", *to);
  const std::vector<std::string> flags = NatFlagList(e.flags);
  if (!flags.empty()) {
    absl::StrAppend(&head, " ", absl::StrJoin(flags, ","));
    j["flags"] = flags;
  }
  for (const char* part : {"addr", "port"}) {
    if (j.contains(part) && j[part].is_null()) j = nullptr;  // a value with no JSON form
    if (j.is_null()) break;
  }
  ctx.Say(head, j.is_null() ? Json() : Json{{key, j.empty() ? Json() : j}});
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

// The JSON statement key of an object reference ("counter", "ct helper").
const char* ObjrefJsonKey(uint32_t type) {
  switch (type) {
    case ir::kObjCounter: return "counter";
    case ir::kObjQuota: return "quota";
    case ir::kObjLimit: return "limit";
    case ir::kObjCtHelper: return "ct helper";
    case ir::kObjCtTimeout: return "ct timeout";
    case ir::kObjCtExpect: return "ct expectation";
    case ir::kObjSecmark: return "secmark";
    case ir::kObjSynproxy: return "synproxy";
    default: return nullptr;
  }
}

// `counter name "c"`, or from an object map: `counter name ip saddr map @m`.
absl::Status Objref(RuleCtx& ctx, const ir::Objref& e) {
  if (!e.sreg) {
    const char* head = ObjrefHead(e.type);
    if (!head) return Refuse("an object of a type nft cannot name");
    ctx.Say(absl::StrCat(head, " ", Quote(e.name)), Json{{ObjrefJsonKey(e.type), e.name}});
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
  Json jref = "@" + JsonName(set->name);
  if (set->anonymous()) {
    absl::StatusOr<std::string> elems = PrintElements(*set, SetShape{*keys, std::nullopt}, &jref);
    if (!elems.ok()) return elems.status();
    ref = absl::StrCat("{ ", *elems, " }");
    jref = Json{{"set", jref}};
  }
  const Json jkey = KeyJson(*keys);
  ctx.Say(absl::StrCat(head, " ", absl::StrJoin(texts, " . "), " map ", ref),
          jkey.is_null() ? Json()
                         : Json{{ObjrefJsonKey(set->obj_type), {{"map", {{"key", jkey}, {"data", jref}}}}}});
  return absl::OkStatus();
}

absl::Status SetKey(RuleCtx& ctx, const Value& target, ir::Reg sreg) {
  absl::StatusOr<RegValue> v = ctx.Get(sreg);
  if (!v.ok()) return v.status();
  Json value;
  absl::StatusOr<std::string> s = RenderAs(ctx, *v, target, value);
  if (!s.ok()) return s.status();
  ctx.Say(absl::StrCat(target.text, " set ", *s),
          target.json.is_null() || value.is_null()
              ? Json()
              : Json{{"mangle", {{"key", target.json}, {"value", value}}}});
  return absl::OkStatus();
}

void CounterStmt(RuleCtx& ctx, const ir::Counter& e) {
  ctx.Say(absl::StrCat("counter packets ", e.packets, " bytes ", e.bytes),
          Json{{"counter", {{"packets", e.packets}, {"bytes", e.bytes}}}});
}

void QuotaStmt(RuleCtx& ctx, const ir::Quota& e) {
  Json j = {{"val", e.bytes}, {"val_unit", "bytes"}, {"used", e.consumed}, {"used_unit", "bytes"}};
  if (e.over) j["inv"] = true;
  ctx.Say(absl::StrCat("quota ", e.over ? "over " : "", e.bytes, " bytes used ", e.consumed, " bytes"),
          Json{{"quota", j}});
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
  Json elem = KeyJson(*keys);
  if (e.timeout_ms) absl::StrAppend(&s, " timeout ", Duration(e.timeout_ms));
  if (e.timeout_ms && !elem.is_null()) {
    elem = e.timeout_ms % 1000 ? Json() : Json{{"elem", {{"val", elem}, {"timeout", e.timeout_ms / 1000}}}};
  }
  Json stmts = Json::array();
  for (const ir::DynsetElemExpr& x : e.exprs) {
    RuleCtx inner{ctx.table, ctx.shapes, ctx.facts, {}, {}};
    if (const auto* c = std::get_if<ir::Counter>(&x)) {
      CounterStmt(inner, *c);
    } else if (const auto* l = std::get_if<ir::Limit>(&x)) {
      if (absl::Status st = Limit(inner, *l); !st.ok()) return st;
    } else if (const auto* q = std::get_if<ir::Quota>(&x)) {
      QuotaStmt(inner, *q);
    }
    for (const Stmt& st : inner.stmts) {
      absl::StrAppend(&s, " ", st.text);
      stmts.push_back(st.json);
    }
  }
  Json data;
  if (e.sreg_data) {
    absl::StatusOr<RegValue> d = ctx.Get(*e.sreg_data);
    if (!d.ok()) return d.status();
    if (d->konst) {
      auto it = ctx.shapes.find(set->name);
      if (it == ctx.shapes.end() || !it->second.data) {
        return Refuse(absl::StrCat("a constant into map @", set->name, " whose data type no rule shows"));
      }
      absl::StatusOr<std::string> r = RenderAs(ctx, *d, *it->second.data, data);
      if (!r.ok()) return r.status();
      absl::StrAppend(&s, " : ", *r);
    } else {
      if (d->map || d->present || d->v.computed || !d->v.mask.empty()) return Refuse("map data from a computed value");
      ctx.shapes[set->name].data = d->v;
      absl::StrAppend(&s, " : ", d->v.text);
      data = d->v.json;
    }
  }
  const bool map = e.sreg_data.has_value();
  Json j = {{"op", kOps[static_cast<int>(e.op)]}, {"elem", elem}, {map ? "map" : "set", "@" + JsonName(set->name)}};
  if (map) j["data"] = data;
  if (!stmts.empty()) j["stmt"] = stmts;
  const bool complete = !elem.is_null() && !(map && data.is_null()) &&
                        std::none_of(stmts.begin(), stmts.end(), [](const Json& x) { return x.is_null(); });
  ctx.Say(s + " }", complete && !map ? Json{{"set", j}} : Json());
  // nft 1.0.6 has no JSON for a map update (it warns "stmt ops map have
  // no json callback" when it lists one).
  if (map) ctx.stmts.back().json_why = "a map update statement, which nft 1.0.6's JSON has no form for";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RenderAs(RuleCtx& ctx, const RegValue& v, const Value& target,
                                     Json& json) {
  json = nullptr;
  if (v.konst) {
    ir::Bytes k = *v.konst;
    if (target.len && k.size() > target.len) k.resize(target.len);
    std::optional<std::string> s = Literal(target, k);
    if (!s) return Refuse(absl::StrCat("constant ", HexLiteral(k), " has no ", target.text, " literal"));
    json = *JsonLiteral(target, k);
    return *s;
  }
  if (v.map) {
    SetShape shape{v.map_keys, target};
    std::string keys;
    for (const Value& k : v.map_keys) absl::StrAppend(&keys, keys.empty() ? "" : " . ", k.text);
    const Json jkey = KeyJson(v.map_keys);
    if (!v.map->anonymous()) {
      ctx.shapes[v.map->name] = shape;
      if (!jkey.is_null()) json = Json{{"map", {{"key", jkey}, {"data", "@" + JsonName(v.map->name)}}}};
      return absl::StrCat(keys, " map @", Ident(v.map->name));
    }
    Json elems_json;
    absl::StatusOr<std::string> elems = PrintElements(*v.map, shape, &elems_json);
    if (!elems.ok()) return elems.status();
    if (!jkey.is_null()) json = Json{{"map", {{"key", jkey}, {"data", {{"set", elems_json}}}}}};
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
    const char* op = zero ? "&" : ones ? "^" : is_or ? "|" : nullptr;
    if (!op) return Refuse("a bitwise with both mask and xor");
    const ir::Bytes& operand = zero ? m : x;
    if (!v.v.json.is_null()) json = Json{{op, Json::array({v.v.json, *JsonLiteral(v.v, operand)})}};
    return absl::StrCat(v.v.text, " ", op, " ", zero ? *ml : *xl);
  }
  json = v.v.json;
  return v.v.text;
}

absl::Status Action(RuleCtx& ctx, const ir::Node& node) {
  const ir::Expr& x = node.expr;
  if (const auto* e = std::get_if<ir::Immediate>(&x)) {
    ctx.Say(VerdictText(e->verdict), VerdictJson(e->verdict));
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Counter>(&x)) {
    CounterStmt(ctx, *e);
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Limit>(&x)) return Limit(ctx, *e);
  if (const auto* e = std::get_if<ir::Log>(&x)) return Log(ctx, *e);
  if (const auto* e = std::get_if<ir::Reject>(&x)) return Reject(ctx, *e);
  if (std::holds_alternative<ir::Notrack>(x)) {
    ctx.Say("notrack", Json{{"notrack", nullptr}});
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Nat>(&x)) return Nat(ctx, *e);
  if (const auto* e = std::get_if<ir::Tproxy>(&x)) return Tproxy(ctx, *e);
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
    QuotaStmt(ctx, *e);
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
    Json j = {{"num", e->total > 1 ? Json{{"range", Json::array({e->num, e->num + e->total - 1})}} : Json(e->num)}};
    if (!f.empty()) j["flags"] = f;
    ctx.Say(s, Json{{"queue", j}});
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::FlowOffload>(&x)) {
    ctx.Say("flow add @" + Ident(e->flowtable),
            Json{{"flow", {{"op", "add"}, {"flowtable", "@" + JsonName(e->flowtable)}}}});
    return absl::OkStatus();
  }
  if (const auto* e = std::get_if<ir::Dynset>(&x)) return Dynset(ctx, *e);
  if (const auto* e = std::get_if<ir::Synproxy>(&x)) {
    ctx.Say(absl::StrCat("synproxy mss ", e->mss, " wscale ", e->wscale),
            Json{{"synproxy", {{"mss", e->mss}, {"wscale", e->wscale}}}});
    return absl::OkStatus();
  }
  if (std::holds_alternative<ir::Recent>(x)) return Refuse("iptables' recent match has no nft equivalent");
  if (std::holds_alternative<ir::Hashlimit>(x)) return Refuse("iptables' hashlimit match has no exact nft equivalent");
  if (std::holds_alternative<ir::StringMatch>(x)) return Refuse("iptables' string match has no nft equivalent");
  if (std::holds_alternative<ir::Ipv6HeaderMatch>(x)) {
    return Refuse("ip6tables' ipv6header match has no nft equivalent");
  }
  if (std::holds_alternative<ir::TimeMatch>(x)) return Refuse("iptables' time match has no exact nft equivalent");
  if (std::holds_alternative<ir::TcpMss>(x)) return Refuse("iptables' TCPMSS target has no exact nft equivalent");
  if (std::holds_alternative<ir::ChecksumFill>(x)) return Refuse("iptables' CHECKSUM target has no nft equivalent");
  return Refuse("an expression the nft printer does not know yet");
}

}  // namespace rulejit::emit
