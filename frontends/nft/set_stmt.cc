// The grammar of the statements that write: `meta|ct KEY set VALUE` (a
// constant, a field, a value expression, or `KEY map { ... }`) and `FIELD
// set VALUE` on a header field, into ast::MetaCtSet and ast::PayloadSet
// (lowered in lower_set.cc).
#include "absl/strings/str_cat.h"
#include "frontends/nft/lower_util.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

// `KEY map { k : v, ... }` / `KEY map @name` after the key `src`; the data
// is of the type of `target` (followed by `data_rest`: concatenated data).
bool Parser::ParseMapLookup(const Lhs& src, const Field& target, ast::MapValue* out,
                            std::vector<Field> data_rest) {
  out->loc = Next().loc;  // map
  out->key = src;
  // `ip6 saddr & ::ffff map { ... }`: the key is masked after its load.
  out->masked_key = src.has_binop && src.fields.size() == 1 && !src.fields[0].NeedsMask();
  if (src.has_binop && !out->masked_key) {
    return Error(out->loc, "unsupported binary operation before map");
  }
  out->type.fields = SetKeyFields(src.fields);
  out->type.is_map = true;
  out->type.data = target;
  out->type.data_rest = std::move(data_rest);
  if (Peek().kind == Tok::kSetRef) {
    out->named_loc = Peek().loc;
    out->named = Next().text;
    return true;
  }
  if (!ParseSetElements(out->type, &out->elements)) return false;
  if (out->elements.empty()) return Error(out->loc, "empty map");
  return true;
}

bool Parser::ParseSetStmt(ir::Rule& rule, const Field& target, bool is_ct) {
  ast::MetaCtSet s{target, is_ct, Peek().loc, {}};
  if (!ParseSetValue(target, &s.value)) return false;
  return lin_.Lower(rule, s);
}

// A field, a value expression (32-bit host-order targets), a map lookup,
// or a constant.
bool Parser::ParseSetValue(const Field& target, ast::SetValue* out) {
  const Token& t = Peek();
  bool source_field = t.kind == Tok::kWord && StartsSourceField(t.text);
  // `KEY map { ... }` / `KEY map @m` comes before the first '{' or '@'.
  bool is_map = false;
  for (size_t i = 0; source_field && i < 16; ++i) {
    const Token& a = PeekAt(i);
    if (a.kind == Tok::kNewline || a.kind == Tok::kEnd || a.kind == Tok::kSetRef ||
        (a.kind == Tok::kPunct && (a.text == "{" || a.text == ";" || a.text == "}"))) {
      break;
    }
    if (a.kind == Tok::kWord && a.text == "map") is_map = true;
  }
  const bool expr_start = source_field || Peek().kind == Tok::kWord || AtPunct("(");
  if (IsValueExprTarget(target) && !is_map && expr_start) {
    ValueExpr v;
    if (!ParseValueExpr(target, 1, &v)) return false;
    *out = std::move(v);
    return true;
  }
  if (source_field) {
    Lhs src;
    if (!ParseLhs(&src)) return false;
    if (!AtWord("map")) {
      *out = ast::FieldValue{std::move(src)};
      return true;
    }
    ast::MapValue map;
    if (!ParseMapLookup(src, target, &map)) return false;
    *out = std::move(map);
    return true;
  }
  ast::SetConstant c;
  if (!ParseSetConstant(target, &c.first, &c.value)) return false;
  *out = c;
  return true;
}

// The value of a set statement: a constant, possibly folded (`0x11 xor
// 0x1331`, `0x12 or 0x11`, flag lists `ecn, cwr`). `first` keeps the first
// item (strings), `v` the folded number.
bool Parser::ParseSetConstant(const Field& target, Item* first, U128* v) {
  if (!ParseItem(target, first)) return false;
  if (first->kind != Item::Kind::kValue) return Error(first->loc, "expected a value");
  *v = first->lo.num;
  while (IsBitmask(target.type) && AcceptPunct(",")) {
    Item more;
    if (!ParseItem(target, &more)) return false;
    if (more.kind != Item::Kind::kValue) return Error(more.loc, "expected a value");
    *v |= more.lo.num;
  }
  while (!sink_.failed) {
    const Token& o = Peek();
    std::string s = o.text;
    char kind = 0;
    if (s == "and" || (o.kind == Tok::kPunct && s == "&")) kind = '&';
    else if (s == "or" || (o.kind == Tok::kPunct && s == "|")) kind = '|';
    else if (s == "xor" || (o.kind == Tok::kPunct && s == "^")) kind = '^';
    if (kind == 0) break;
    Next();
    U128 w = 0;
    if (!ParseBinopOperand(target, &w)) return false;
    *v = kind == '&' ? (*v & w) : kind == '|' ? (*v | w) : (*v ^ w);
  }
  return !sink_.failed;
}

// `tcp option OPT FIELD set VALUE` ([ exthdr write tcpopt ]): VALUE a
// constant or, for 16-bit fields, `rt mtu` (MSS clamping). The kernel
// writes 2 or 4 bytes from offset 2 of the option (nft_exthdr_tcp_set_init).
bool Parser::ParseTcpOptionSet(ir::Rule& rule, const Lhs& lhs) {
  const Field& f = lhs.fields[0];
  ast::PayloadSet s{f, lhs.loc};
  if (f.exthdr_present || f.off_bits % 8 != 0 || (f.len_bits != 16 && f.len_bits != 32) ||
      f.off_bits < 16) {
    return Error(lhs.loc, "cannot set this TCP option field: the kernel writes 2 or 4 whole "
                          "bytes after the kind and length (EOPNOTSUPP)");
  }
  if (AtWord("rt")) {
    Field src;
    if (!ParseField(&src)) return false;
    if (src.kind != Field::Kind::kRt || f.len_bits != 16) {
      return Error(src.loc, "unsupported value: a constant or, for 16-bit fields, rt mtu");
    }
    s.from_rt_mtu = true;
    return lin_.Lower(rule, s);
  }
  Item first;
  U128 v = 0;
  if (!ParseSetConstant(f, &first, &v)) return false;
  if (first.lo.is_str) return Error(first.loc, "expected a number");
  if ((v & ~BitsMask(f.len_bits)) != 0) return Error(first.loc, "value does not fit the field");
  s.xor_val = v;
  return lin_.Lower(rule, s);
}

// `FIELD set VALUE` on a whole-byte header field, VALUE another field of
// its size or a map lookup (`ip daddr set iifname map @m`): nft computes
// the value into a register and writes it ([ payload write reg 1 ]).
bool Parser::ParsePayloadSetFrom(ir::Rule& rule, const Lhs& src, ast::PayloadSet& s) {
  const Field& f = s.target;
  if (f.off_bits % 8 != 0 || f.len_bits % 8 != 0) {
    return Error(src.loc, "unsupported value for a field of part of a byte: a constant or "
                          "the field itself with '&', '|', '^' constants");
  }
  if (AtWord("map")) {
    ast::MapValue map;
    if (!ParseMapLookup(src, f, &map)) return false;
    s.value = std::move(map);
    return lin_.Lower(rule, s);
  }
  const Field& g = src.fields[0];
  if (src.fields.size() != 1 || src.has_binop || g.NeedsMask() || g.LoadLen() != f.LoadLen()) {
    return Error(src.loc, "unsupported value: a field of the same size, a map lookup, a "
                          "constant, or the field itself with '&', '|', '^' constants");
  }
  s.value = ast::FieldValue{src};
  return lin_.Lower(rule, s);
}

// `FIELD set VALUE` on a header field: VALUE is a constant, the same
// field with `& | ^` constants, or (ParsePayloadSetFrom) another value.
bool Parser::ParsePayloadSet(ir::Rule& rule, const Lhs& lhs) {
  const Field& f = lhs.fields[0];
  ast::PayloadSet s{f, lhs.loc};
  if (lhs.fields.size() == 1 && !lhs.has_binop && f.kind == Field::Kind::kExthdr &&
      f.exthdr_op == ir::ExthdrOp::kTcpopt) {
    return ParseTcpOptionSet(rule, lhs);
  }
  if (lhs.fields.size() != 1 || lhs.has_binop || f.kind != Field::Kind::kPayload) {
    return Error(lhs.loc, "unsupported target of a set statement");
  }
  ir::PayloadWrite w;
  if (!WriteChecksum(f, &w)) {
    return Error(lhs.loc, "unsupported statement: setting a field of this header");
  }
  const U128 field_mask = BitsMask(f.len_bits);
  const Token& t = Peek();
  if (t.kind == Tok::kSetRef || (t.kind == Tok::kWord && StartsSourceField(t.text))) {
    Lhs src;
    if (!ParseLhs(&src)) return false;
    const Field& g = src.fields[0];
    const bool same_field = src.fields.size() == 1 && g.kind == f.kind && g.base == f.base &&
                            g.off_bits == f.off_bits && g.len_bits == f.len_bits;
    if (!same_field || AtWord("map")) return ParsePayloadSetFrom(rule, src, s);
    s.and_mask = src.and_mask & field_mask;
    s.xor_val = src.xor_val & field_mask;
    s.from_field = true;
  } else {
    Item first;
    U128 v = 0;
    if (!ParseSetConstant(f, &first, &v)) return false;
    if (first.lo.is_str) return Error(first.loc, "expected a number");
    if ((v & ~field_mask) != 0) return Error(first.loc, "value does not fit the field");
    s.xor_val = v;
  }
  return lin_.Lower(rule, s);
}

}  // namespace rulejit::frontends::nft
