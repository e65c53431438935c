// Decompiling one rule: the register walk (see nft_print.h).
//
// Loads put a RegValue in their register; cmp, range and lookup turn the
// value they read into a match statement; bitwise and byteorder rewrite
// what a register holds; the actions go to nft_stmt.cc. A rule's facts
// (`meta nfproto`, `meta l4proto` compared equal) decide where a field may
// print by its name (nft_keys.cc).
//
//   [ payload load 4b @ network header + 12 => reg 1 ]
//   [ bitwise reg 1 = ( reg 1 & 0x0000ffff ) ^ 0 ]      → ip saddr 10.1.0.0/16
//   [ cmp eq reg 1 0x0000010a ]
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "emit/nft_rule_internal.h"
#include "ir/util.h"

namespace rulejit::emit {

absl::StatusOr<RegValue> RuleCtx::Get(ir::Reg r) const {
  int w = ir::RegWord(r);
  if (w < 0 || !regs[w]) return absl::InvalidArgumentError(absl::StrCat("reads register ", r, " which no expression of the rule wrote"));
  return *regs[w];
}

absl::StatusOr<std::vector<Value>> KeyFields(RuleCtx& ctx, const ir::Set& set, ir::Reg sreg) {
  std::vector<uint32_t> lens = set.field_lens;
  if (lens.empty()) lens.push_back(set.key_len);
  std::vector<Value> keys;
  int word = ir::RegWord(sreg);
  for (uint32_t len : lens) {
    if (word < 0 || word >= ir::kRegWords || !ctx.regs[word]) return absl::InvalidArgumentError("a set key from a register nothing wrote");
    const RegValue& rv = *ctx.regs[word];
    if (rv.konst || rv.map || rv.present || rv.v.computed) return absl::InvalidArgumentError("a set key that is a constant or a map result");
    if (rv.v.len != len || !rv.v.mask.empty()) return absl::InvalidArgumentError(absl::StrCat("set @", set.name, " keyed by part of ", rv.v.text));
    keys.push_back(rv.v);
    word += (len + 3) / 4;
  }
  if (!set.anonymous()) ctx.shapes[set.name].keys = keys;
  return keys;
}

void RuleCtx::Put(ir::Reg r, RegValue v) {
  int w = ir::RegWord(r);
  if (w < 0) return;
  int words = std::max<int>(1, (v.v.len + 3) / 4);
  for (int i = 0; i < words && w + i < ir::kRegWords; ++i) regs[w + i].reset();
  regs[w] = std::move(v);
}

namespace {

absl::Status Refuse(std::string why) { return absl::InvalidArgumentError(std::move(why)); }

bool AllOnes(const ir::Bytes& b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0xff; });
}
bool AllZero(const ir::Bytes& b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}

const char* OpText(ir::CmpOp op) {
  switch (op) {
    case ir::CmpOp::kEq: return "==";
    case ir::CmpOp::kNeq: return "!=";
    case ir::CmpOp::kLt: return "<";
    case ir::CmpOp::kLte: return "<=";
    case ir::CmpOp::kGt: return ">";
    case ir::CmpOp::kGte: return ">=";
  }
  return "?";
}

// The JSON of a literal Lit() wrote (it has one whenever Lit succeeds).
Json JLit(const Value& v, const ir::Bytes& data) {
  std::optional<Json> j = JsonLiteral(v, data);
  return j ? *j : Json(HexLiteral(data));
}

absl::StatusOr<std::string> Lit(const Value& v, const ir::Bytes& data) {
  std::optional<std::string> s = Literal(v, data);
  if (!s) return Refuse(absl::StrCat("constant ", HexLiteral(data), " has no exact ", v.text, " literal"));
  return *s;
}

// [ cmp OP reg R DATA ] on what reg R holds.
absl::Status Cmp(RuleCtx& ctx, const ir::Cmp& e) {
  absl::StatusOr<RegValue> rv = ctx.Get(e.sreg);
  if (!rv.ok()) return rv.status();
  if (rv->konst || rv->map || rv->v.computed) return Refuse("compares a constant or a computed value");
  Value v = rv->v;
  const bool eq = e.op == ir::CmpOp::kEq, neq = e.op == ir::CmpOp::kNeq;
  if (rv->present) {
    if ((!eq && !neq) || e.data.size() > 4) return Refuse("orders an `exists` result");
    bool found = (LeInt(e.data) != 0) == eq;
    ctx.Say(absl::StrCat(v.text, found ? " exists" : " missing"), MatchJson("==", v.json, found));
    return absl::OkStatus();
  }
  if (e.data.size() > v.len) return Refuse("compares more bytes than the register holds");
  if (!AllZero(v.xor_)) return Refuse("compares a value with bits flipped (bitwise xor)");
  ir::Bytes data = e.data, mask = v.mask;
  if (v.lit == Lit::kIfname && mask.empty()) {
    // "eth0" (NUL after the name) or "eth*" (a prefix): nft's own forms.
  } else if (data.size() < v.len) {
    if (!eq && !neq) return Refuse("orders fewer bytes than the field holds");
    if (mask.empty()) mask.assign(v.len, 0xff);
    for (size_t i = data.size(); i < v.len; ++i) mask[i] = 0;
    data.resize(v.len, 0);
  }
  if (!mask.empty() && AllOnes(mask)) mask.clear();
  if (!eq && !neq && (v.lit == Lit::kLeDec || v.lit == Lit::kLeHex) && v.len > 1) {
    return Refuse(absl::StrCat("orders the host-order ", v.text, " byte by byte"));
  }
  Stmt s;
  s.payload_rel = v.payload;
  if (!mask.empty()) {
    if (!eq && !neq) return Refuse("orders a masked value");
    int plen = PrefixLength(mask);
    ir::Bytes masked = data;
    for (size_t i = 0; i < masked.size(); ++i) masked[i] &= mask[i];
    if (masked != data) return Refuse("compares masked-out bits (never or always matches)");
    absl::StatusOr<std::string> d = Lit(v, data);
    if (!d.ok()) return d.status();
    if (plen >= 0 && (v.lit == Lit::kIpv4 || v.lit == Lit::kIpv6)) {
      s.text = absl::StrCat(v.text, neq ? " != " : " ", *d, "/", plen);
      s.json = MatchJson(neq ? "!=" : "==", v.json,
                         Json{{"prefix", {{"addr", JLit(v, data)}, {"len", plen}}}});
    } else {
      absl::StatusOr<std::string> m = Lit(v, mask);
      if (!m.ok()) m = HexLiteral(mask);
      s.text = absl::StrCat(v.text, " & ", *m, " ", OpText(e.op), " ", *d);
      s.json = v.json.is_null() ? Json() : MatchJson(OpText(e.op), Json{{"&", Json::array({v.json, JLit(v, mask)})}}, JLit(v, data));
    }
    ctx.stmts.push_back(s);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> d = Lit(v, data);
  if (!d.ok()) return d.status();
  s.text = eq && !v.bitmask ? absl::StrCat(v.text, " ", *d)
                            : absl::StrCat(v.text, " ", OpText(e.op), " ", *d);
  s.json = MatchJson(OpText(e.op), v.json, JLit(v, data));
  if (neq && v.payload) {
    const ir::Bytes ones(v.len, 0xff);
    absl::StatusOr<std::string> m = Lit(v, ones);
    s.neq_masked = absl::StrCat(v.text, " & ", m.ok() ? *m : HexLiteral(ones), " != ", *d);
    if (!v.json.is_null()) s.json_masked = MatchJson("!=", Json{{"&", Json::array({v.json, JLit(v, ones)})}}, JLit(v, data));
  }
  if (eq && data.size() == 1 && v.text == "meta l4proto") ctx.facts.l4proto = data[0];
  if (eq && data.size() == 1 && v.text == "meta nfproto") ctx.facts.nfproto = data[0];
  ctx.stmts.push_back(s);
  return absl::OkStatus();
}

absl::Status Range(RuleCtx& ctx, const ir::Range& e) {
  absl::StatusOr<RegValue> rv = ctx.Get(e.sreg);
  if (!rv.ok()) return rv.status();
  const Value& v = rv->v;
  if (rv->konst || rv->map || rv->present || v.computed || !v.mask.empty()) return Refuse("a range over a computed value");
  if (e.from.size() != v.len || e.to.size() != v.len) return Refuse("a range over part of a field");
  if ((v.lit == Lit::kLeDec || v.lit == Lit::kLeHex) && v.len > 1) {
    return Refuse(absl::StrCat("a byte-order range over the host-order ", v.text));
  }
  absl::StatusOr<std::string> a = Lit(v, e.from), b = Lit(v, e.to);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  ctx.stmts.push_back(Stmt{absl::StrCat(v.text, e.negate ? " != " : " ", *a, "-", *b), "", false,
                           MatchJson(e.negate ? "!=" : "==", v.json, Json{{"range", Json::array({JLit(v, e.from), JLit(v, e.to)})}}),
                           nullptr, ""});
  return absl::OkStatus();
}

std::string KeyText(const std::vector<Value>& keys) {
  std::vector<std::string> texts;
  for (const Value& k : keys) texts.push_back(k.text);
  return absl::StrJoin(texts, " . ");
}

absl::Status Lookup(RuleCtx& ctx, const ir::Lookup& e) {
  const ir::Set* set = ctx.table.FindSet(e.set);
  if (!set) return Refuse(absl::StrCat("looks up set ", e.set, " which the table lacks"));
  absl::StatusOr<std::vector<Value>> keys = KeyFields(ctx, *set, e.sreg);
  if (!keys.ok()) return keys.status();
  std::string key = KeyText(*keys);
  if (e.dreg && *e.dreg != ir::kVerdictReg) {
    RegValue out;
    out.map = set;
    out.map_keys = *keys;
    out.v.len = set->data_len;
    ctx.Put(*e.dreg, out);
    return absl::OkStatus();
  }
  std::string ref;
  Json jref;
  if (set->anonymous()) {
    SetShape shape{*keys, std::nullopt};
    absl::StatusOr<std::string> elems = PrintElements(*set, shape, &jref);
    if (!elems.ok()) return elems.status();
    ref = absl::StrCat("{ ", *elems, " }");
    jref = Json{{"set", jref}};
  } else {
    ref = "@" + Ident(set->name);
    jref = "@" + JsonName(set->name);
  }
  const Json jkey = KeyJson(*keys);
  if (e.dreg) {  // a verdict map
    ctx.Say(absl::StrCat(key, " vmap ", ref),
            jkey.is_null() ? Json() : Json{{"vmap", {{"key", jkey}, {"data", jref}}}});
    return absl::OkStatus();
  }
  ctx.Say(absl::StrCat(key, e.invert ? " != " : " ", ref), MatchJson(e.invert ? "!=" : "==", jkey, jref));
  return absl::OkStatus();
}

// `x << N`, `x >> N`, `x | y` (& ^): values for set statements only.
absl::Status Computed(RuleCtx& ctx, const ir::Bitwise& e, RegValue out) {
  if (out.konst || out.map || out.present || !out.v.mask.empty() || e.len != out.v.len) {
    return Refuse("a shift or register-operand bitwise over a computed value");
  }
  if (e.op == ir::BitwiseOp::kLshift || e.op == ir::BitwiseOp::kRshift) {
    const char* op = e.op == ir::BitwiseOp::kLshift ? "<<" : ">>";
    out.v.text = absl::StrCat(out.v.text, " ", op, " ", e.shift);
    if (!out.v.json.is_null()) out.v.json = Json{{op, Json::array({out.v.json, e.shift})}};
  } else {
    absl::StatusOr<RegValue> other = ctx.Get(e.sreg2);
    if (!other.ok()) return other.status();
    if (other->konst || other->map || other->present || !other->v.mask.empty() || other->v.computed) {
      return Refuse("a register-operand bitwise over a computed value");
    }
    const char* op = e.op == ir::BitwiseOp::kAndReg ? "&" : e.op == ir::BitwiseOp::kOrReg ? "|" : "^";
    out.v.text = absl::StrCat(out.v.text, " ", op, " ", other->v.text);
    out.v.json = out.v.json.is_null() || other->v.json.is_null() ? Json()
                                                                 : Json{{op, Json::array({out.v.json, other->v.json})}};
  }
  out.v.computed = true;
  out.v.payload = false;
  ctx.Put(e.dreg, out);
  return absl::OkStatus();
}

absl::Status Bitwise(RuleCtx& ctx, const ir::Bitwise& e) {
  absl::StatusOr<RegValue> rv = ctx.Get(e.sreg);
  if (!rv.ok()) return rv.status();
  if (e.op != ir::BitwiseOp::kMaskXor) return Computed(ctx, e, *rv);
  RegValue out = *rv;
  if (out.map || out.present || !out.v.mask.empty()) return Refuse("a bitwise over a computed value");
  if (e.len != out.v.len && !(out.konst && e.len >= out.konst->size())) {
    return Refuse(absl::StrCat("a bitwise over part of ", out.v.text));
  }
  if (out.konst) {
    ir::Bytes k = *out.konst;
    k.resize(e.len, 0);
    for (size_t i = 0; i < k.size(); ++i) k[i] = (k[i] & e.mask[i]) ^ e.xor_[i];
    out.konst = k;
  } else {
    out.v.mask = e.mask;
    out.v.xor_ = e.xor_;
  }
  ctx.Put(e.dreg, out);
  return absl::OkStatus();
}

// nft puts `hton` before ordering compares and sets of host-order keys:
// afterwards the register holds the number big-endian.
absl::Status Byteorder(RuleCtx& ctx, const ir::Byteorder& e) {
  absl::StatusOr<RegValue> rv = ctx.Get(e.sreg);
  if (!rv.ok()) return rv.status();
  RegValue out = *rv;
  if (out.konst || out.map || out.present || !out.v.mask.empty() || e.len != out.v.len ||
      e.size != e.len || e.op != ir::ByteorderOp::kHton ||
      (out.v.lit != Lit::kLeDec && out.v.lit != Lit::kLeHex)) {
    return Refuse(absl::StrCat("a byteorder conversion of ", out.v.text, " nft would not generate"));
  }
  out.v.lit = Lit::kBeDec;
  ctx.Put(e.dreg, out);
  return absl::OkStatus();
}

// `jhash ip saddr . tcp dport mod 2 seed 0x1 offset 10` from the loads
// of the key the hash reads (one field, or fields padded to whole words).
absl::StatusOr<Value> HashValue(const RuleCtx& ctx, const ir::Hash& e) {
  std::string text = "symhash";
  Json body = Json{{"mod", e.mod}};
  if (!e.symmetric) {
    std::vector<Value> keys;
    uint32_t consumed = 0;
    for (int word = ir::RegWord(e.sreg); consumed < e.len; word += (keys.back().len + 3) / 4) {
      if (word < 0 || word >= ir::kRegWords || !ctx.regs[word]) return Refuse("jhash of registers nothing wrote");
      const RegValue& rv = *ctx.regs[word];
      if (rv.konst || rv.map || rv.present || rv.v.computed || !rv.v.mask.empty() || rv.v.len == 0) {
        return Refuse("jhash of a constant, a map result or a masked field");
      }
      keys.push_back(rv.v);
      consumed += keys.size() == 1 && rv.v.len == e.len ? e.len : ir::Pad4(rv.v.len);
    }
    if (consumed != e.len) return Refuse("jhash of part of a field");
    text = absl::StrCat("jhash ", KeyText(keys));
    body["expr"] = KeyJson(keys);
    if (body["expr"].is_null()) return Refuse("jhash of a field without a JSON form");
  }
  absl::StrAppend(&text, " mod ", e.mod);
  if (e.seed) {
    absl::StrAppend(&text, absl::StrFormat(" seed 0x%x", *e.seed));
    body["seed"] = *e.seed;
  }
  if (e.offset != 0) {
    absl::StrAppend(&text, " offset ", e.offset);
    body["offset"] = e.offset;
  }
  Value v;
  v.text = std::move(text);
  v.json = Json{{e.symmetric ? "symhash" : "jhash", body}};
  v.len = 4;
  v.lit = Lit::kLeDec;
  return v;
}

absl::Status Load(RuleCtx& ctx, const ir::Expr& expr, bool& handled) {
  handled = true;
  RegValue rv;
  ir::Reg dreg = 0;
  if (const auto* p = std::get_if<ir::PayloadLoad>(&expr)) {
    std::optional<Value> v = PayloadValue(*p, ctx.facts);
    if (!v) return Refuse("a payload load nft has no form for");
    rv.v = *v;
    dreg = p->dreg;
  } else if (const auto* m = std::get_if<ir::MetaLoad>(&expr)) {
    std::optional<Value> v = MetaValue(m->key);
    if (!v) return Refuse(absl::StrCat("meta ", ir::MetaKeyName(m->key), " has no exact nft form"));
    rv.v = *v;
    dreg = m->dreg;
  } else if (const auto* c = std::get_if<ir::CtLoad>(&expr)) {
    std::optional<Value> v = CtValue(c->key, c->dir);
    if (!v) return Refuse(absl::StrCat("ct ", ir::CtKeyName(c->key), " has no exact nft form"));
    rv.v = *v;
    dreg = c->dreg;
  } else if (const auto* x = std::get_if<ir::Exthdr>(&expr)) {
    std::optional<Value> v = ExthdrValue(*x, ctx.facts);
    if (!v) return Refuse("an extension header or TCP option read nft has no exact form for");
    rv.v = *v;
    rv.present = x->present;
    dreg = x->dreg;
  } else if (const auto* f = std::get_if<ir::Fib>(&expr)) {
    if (f->result == ir::FibResult::kXtAddrClass6) {
      return Refuse("ip6tables' addrtype match has no nft equivalent (fib type means "
                    "something else for IPv6)");
    }
    rv.v = FibValue(*f);
    rv.present = f->flags & ir::kFibPresent;
    dreg = f->dreg;
  } else if (const auto* n = std::get_if<ir::Numgen>(&expr)) {
    rv.v = NumgenValue(*n);
    dreg = n->dreg;
  } else if (const auto* h = std::get_if<ir::Hash>(&expr)) {
    absl::StatusOr<Value> v = HashValue(ctx, *h);
    if (!v.ok()) return v.status();
    rv.v = *std::move(v);
    dreg = h->dreg;
  } else if (const auto* so = std::get_if<ir::Socket>(&expr)) {
    if (so->key == ir::SocketKey::kCgroupv2) return Refuse("socket cgroupv2");
    rv.v = SocketValue(*so);
    dreg = so->dreg;
  } else if (const auto* i = std::get_if<ir::Immediate>(&expr); i && i->dreg != ir::kVerdictReg) {
    rv.konst = i->data;
    rv.v.len = i->data.size();
    dreg = i->dreg;
  } else {
    handled = false;
    return absl::OkStatus();
  }
  ctx.Put(dreg, std::move(rv));
  return absl::OkStatus();
}

absl::Status Fused(RuleCtx& ctx, const ir::FusedCmp& e) {
  bool handled = false;
  ir::PayloadLoad load = e.load;
  load.dreg = 1;
  if (absl::Status s = Load(ctx, load, handled); !s.ok()) return s;
  if (!e.mask.empty()) {
    ir::Bitwise b{.sreg = 1, .dreg = 1, .len = load.len};
    b.mask.assign(e.mask.begin(), e.mask.begin() + load.len);
    b.xor_.assign(load.len, 0);
    if (absl::Status s = Bitwise(ctx, b); !s.ok()) return s;
  }
  return Cmp(ctx, ir::Cmp{e.op, 1, e.data});
}

absl::Status Step(RuleCtx& ctx, const ir::Node& node) {
  bool handled = false;
  if (absl::Status s = Load(ctx, node.expr, handled); !s.ok() || handled) return s;
  if (const auto* e = std::get_if<ir::Cmp>(&node.expr)) return Cmp(ctx, *e);
  if (const auto* e = std::get_if<ir::Range>(&node.expr)) return Range(ctx, *e);
  if (const auto* e = std::get_if<ir::Lookup>(&node.expr)) return Lookup(ctx, *e);
  if (const auto* e = std::get_if<ir::Bitwise>(&node.expr)) return Bitwise(ctx, *e);
  if (const auto* e = std::get_if<ir::Byteorder>(&node.expr)) return Byteorder(ctx, *e);
  if (const auto* e = std::get_if<ir::FusedCmp>(&node.expr)) return Fused(ctx, *e);
  return Action(ctx, node);
}

}  // namespace

Json MatchJson(const char* op, const Json& left, const Json& right) {
  if (left.is_null() || right.is_null()) return nullptr;
  return Json{{"match", {{"op", op}, {"left", left}, {"right", right}}}};
}

Json KeyJson(const std::vector<Value>& keys) {
  Json parts = Json::array();
  for (const Value& k : keys) {
    if (k.json.is_null()) return nullptr;
    parts.push_back(k.json);
  }
  return parts.size() == 1 ? parts[0] : Json{{"concat", parts}};
}

absl::StatusOr<RuleText> PrintRule(const ir::Table& table, const ir::Rule& rule,
                                   SetShapes& shapes) {
  RuleCtx ctx{table, shapes, Facts{table.family, std::nullopt, std::nullopt}, {}, {}};
  if (table.family == ir::Family::kIp) ctx.facts.nfproto = 2;
  if (table.family == ir::Family::kIp6) ctx.facts.nfproto = 10;
  for (const ir::Node& node : rule.exprs) {
    if (absl::Status s = Step(ctx, node); !s.ok()) return s;
  }
  // nft merges adjacent payload compares into one wider compare, which is
  // wrong for `!=` (not both instead of neither): mask those.
  std::vector<std::string> out;
  RuleText result{"", Json::array(), ""};
  for (size_t i = 0; i < ctx.stmts.size(); ++i) {
    const Stmt& s = ctx.stmts[i];
    bool near = (i > 0 && ctx.stmts[i - 1].payload_rel) ||
                (i + 1 < ctx.stmts.size() && ctx.stmts[i + 1].payload_rel);
    const bool masked = near && !s.neq_masked.empty();
    out.push_back(masked ? s.neq_masked : s.text);
    const Json& j = masked ? s.json_masked : s.json;
    if (j.is_null() && result.json_gap.empty()) {
      result.json_gap = s.json_why.empty()
                            ? absl::StrCat("`", out.back(), "` has no JSON form in the printer yet")
                            : s.json_why;
    }
    result.expr.push_back(j);
  }
  // nft keeps at most 128 characters of comment; a longer one (iptables
  // allows 256) stays as a script comment above the rule.
  std::string above;
  if (rule.comment.size() > 128 || rule.comment.find('\n') != std::string::npos) {
    above = "# comment: " + rule.comment.substr(0, rule.comment.find('\n')) + "\n\t\t";
  } else if (!rule.comment.empty()) {
    out.push_back("comment " + Quote(rule.comment));
  }
  result.text = above + absl::StrJoin(out, " ");
  return result;
}

}  // namespace rulejit::emit
