// The statements that write: `meta|ct KEY set VALUE` (a constant, a
// field, a value expression, or `KEY map { ... }`) and `FIELD set VALUE` on
// a header field (a payload write with its checksum update). These are
// still lowered as they are parsed, through the linearizer's primitives.
//
//   meta mark set 0x10          → [ immediate reg 1 0x10 ] [ meta set mark with reg 1 ]
//   meta mark set ip dscp map { 0 : 1 }
//                               → loads, [ lookup reg 1 set __map0 dreg 1 ] [ meta set ]
//   tcp dport set 80            → [ immediate reg 1 0x0050 ] [ payload write ... csum ]
#include "absl/strings/str_cat.h"
#include "frontends/nft/lower_util.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {
namespace {

// The checksums a write to `f` must keep right, as nft chooses them: the
// header's own checksum (ip, tcp, icmp), and the transport checksum for
// fields of the pseudo-header (addresses, ip protocol), every udp field and
// raw writes to the transport payload. False for headers nft's rules for
// are not written down here.
bool WriteChecksum(const Field& f, ir::PayloadWrite* w) {
  const bool ip4 = f.base == ir::PayloadBase::kNetwork && f.dep == Dep::kIpv4;
  const bool ip6 = f.base == ir::PayloadBase::kNetwork && f.dep == Dep::kIpv6;
  const bool l4 = f.base == ir::PayloadBase::kTransport &&
                  (f.dep == Dep::kL4 || f.dep == Dep::kL4Ipv4);
  if (ip4) {
    w->csum_type = ir::kCsumInet;
    w->csum_offset = 10;
    if (f.off_bits == 72 || f.off_bits == 96 || f.off_bits == 128) w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  if (ip6) {
    if (f.off_bits == 64 || f.off_bits == 192) w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  if (l4 && f.l4proto == 6) {
    w->csum_type = ir::kCsumInet;
    w->csum_offset = 16;
    return true;
  }
  if (l4 && f.l4proto == 1) {
    w->csum_type = ir::kCsumInet;
    w->csum_offset = 2;
    return true;
  }
  if (l4 && (f.l4proto == 17 || f.l4proto == 136)) {
    w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  if (f.base == ir::PayloadBase::kInner) {
    w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  return f.base == ir::PayloadBase::kLink;
}

}  // namespace

// `meta mark set KEY map { k : v, ... }` / `map @name`
bool Parser::ParseMapStmtSource(ir::Rule& rule, const Lhs& src, const Field& target) {
  ir::SourceLoc loc = Next().loc;  // map
  // `ip6 saddr & ::ffff map { ... }`: the key is masked after its load.
  const bool masked_key = src.has_binop && src.fields.size() == 1 && !src.fields[0].NeedsMask();
  if (src.has_binop && !masked_key) {
    return Error(loc, "unsupported binary operation before map");
  }
  SetType st;
  st.fields = SetKeyFields(src.fields);
  st.is_map = true;
  st.data = target;
  std::string name;
  if (Peek().kind == Tok::kSetRef) {
    name = Next().text;
    const ir::Set* s = table_->FindSet(name);
    if (s == nullptr || !(s->flags & ir::kSetMap) || s->verdict_map) {
      return Error(toks_[pos_ - 1].loc, absl::StrCat("no map '", name, "'"));
    }
  } else {
    std::vector<Element> elems;
    if (!ParseSetElements(st, &elems)) return false;
    if (elems.empty()) return Error(loc, "empty map");
    if (!lin_.AddAnonSet(st, elems, loc, &name)) return false;
  }
  if (!lin_.EmitKeyLoads(rule, src.fields, lin_.FindSet(name))) return false;
  if (masked_key) {
    const Field& f = src.fields[0];
    ir::Bitwise b;
    b.len = f.LoadLen();
    b.mask = lin_.EncodeNum(f, src.and_mask & BitsMask(f.len_bits), b.len);
    b.xor_ = lin_.EncodeNum(f, src.xor_val & BitsMask(f.len_bits), b.len);
    lin_.Emit(rule, b, loc);
  }
  ir::Lookup lk;
  lk.sreg = 1;
  lk.set = name;
  lk.dreg = 1;
  lin_.Emit(rule, lk, loc);
  return true;
}

bool Parser::ParseSetStmt(ir::Rule& rule, const Field& target, bool is_ct) {
  ir::SourceLoc loc = Peek().loc;
  uint32_t len = target.LoadLen();
  const Token& t = Peek();
  bool source_field =
      t.kind == Tok::kWord && (IsPayloadProto(t.text) || t.text == "meta" ||
                               t.text == "ct" || IsUnqualifiedMeta(t.text));
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
    return lin_.EmitValueExpr(rule, target, v, 1, loc) && lin_.EmitSetTarget(rule, target, is_ct);
  }
  if (source_field) {
    Lhs src;
    if (!ParseLhs(&src)) return false;
    if (AtWord("map")) {
      if (!ParseMapStmtSource(rule, src, target)) return false;
      return lin_.EmitSetTarget(rule, target, is_ct);
    }
    if (src.fields.size() != 1) return Error(loc, "unsupported concatenation as a value");
    const Field& f = src.fields[0];
    if (f.kind == Field::Kind::kPayload && f.LoadLen() == 1 && len > 1) {
      return lin_.EmitNarrowSource(rule, src, len) && lin_.EmitSetTarget(rule, target, is_ct);
    }
    if (f.LoadLen() != len || f.NeedsMask()) {
      return Error(loc, "unsupported value expression of a different size");
    }
    if (AtWord("map")) return Error(Peek().loc, "unsupported map expression");
    if (!lin_.EmitDeps(rule, f)) return false;
    lin_.EmitLoad(rule, f, 1, len);
    if (src.has_binop) {
      ir::Bitwise b;
      b.len = len;
      b.mask = lin_.EncodeNum(f, src.and_mask & BitsMask(f.len_bits), len);
      b.xor_ = lin_.EncodeNum(f, src.xor_val & BitsMask(f.len_bits), len);
      lin_.Emit(rule, b, loc);
    }
  } else {
    U128 v = 0;
    Item first;
    if (!ParseSetConstant(target, &first, &v)) return false;
    ir::Immediate imm;
    imm.dreg = 1;
    imm.data = first.lo.is_str ? lin_.Encode(target, first.lo, len) : lin_.EncodeNum(target, v, len);
    lin_.Emit(rule, imm, loc);
  }
  return lin_.EmitSetTarget(rule, target, is_ct);
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

// `FIELD set VALUE` on a header field: [ payload write ]. A field that does
// not fill whole bytes (or, when a checksum is updated, whole 16-bit words)
// is merged into the bytes around it: load, mask out the field, xor in the
// value, write. VALUE is a constant or the same field with `& | ^` constants.
bool Parser::ParsePayloadSet(ir::Rule& rule, const Lhs& lhs) {
  const Field& f = lhs.fields[0];
  ir::SourceLoc loc = lhs.loc;
  if (lhs.fields.size() != 1 || lhs.has_binop || f.kind != Field::Kind::kPayload) {
    return Error(loc, "unsupported target of a set statement");
  }
  ir::PayloadWrite w;
  if (!WriteChecksum(f, &w)) {
    return Error(loc, "unsupported statement: setting a field of this header");
  }
  const U128 field_mask = BitsMask(f.len_bits);
  U128 and_mask = 0, xor_val = 0;  // new field = (field & and_mask) ^ xor_val
  bool from_field = false;
  const Token& t = Peek();
  if (t.kind == Tok::kSetRef ||
      (t.kind == Tok::kWord && (IsPayloadProto(t.text) || t.text == "meta" || t.text == "ct" ||
                                IsUnqualifiedMeta(t.text)))) {
    Lhs src;
    if (!ParseLhs(&src)) return false;
    const Field& g = src.fields[0];
    if (src.fields.size() != 1 || g.kind != f.kind || g.base != f.base ||
        g.off_bits != f.off_bits || g.len_bits != f.len_bits) {
      return Error(src.loc, "unsupported value: only the same field with '&', '|', '^' constants");
    }
    and_mask = src.and_mask & field_mask;
    xor_val = src.xor_val & field_mask;
    from_field = true;
  } else {
    Item first;
    U128 v = 0;
    if (!ParseSetConstant(f, &first, &v)) return false;
    if (first.lo.is_str) return Error(first.loc, "expected a number");
    if ((v & ~field_mask) != 0) return Error(first.loc, "value does not fit the field");
    xor_val = v;
  }
  if (!lin_.EmitDeps(rule, f)) return false;
  uint32_t byte_off = f.LoadOffset();
  uint32_t size = f.LoadLen();
  uint32_t shift = f.Shift();
  const bool csum = w.csum_type != 0 || w.csum_flags != 0;
  if (csum && size % 2 != 0) {
    ++size;
    if (byte_off % 2 != 0) {
      --byte_off;
    } else {
      shift += 8;
    }
  }
  if (!from_field && shift == 0 && size * 8 == f.len_bits) {
    ir::Immediate imm;
    imm.dreg = 1;
    imm.data = EncodeNumber(xor_val, size, false);
    lin_.Emit(rule, imm, loc);
  } else {
    lin_.EmitLoad(rule, f, 1, size);
    std::get<ir::PayloadLoad>(rule.exprs.back().expr).offset = byte_off;
    const U128 all = BitsMask(size * 8);
    ir::Bitwise b;
    b.len = size;
    b.mask = EncodeNumber((~(field_mask << shift) | (and_mask << shift)) & all, size, false);
    b.xor_ = EncodeNumber((xor_val << shift) & all, size, false);
    lin_.Emit(rule, b, loc);
  }
  w.base = f.base;
  w.offset = byte_off;
  w.len = size;
  w.sreg = 1;
  lin_.Emit(rule, w, loc);
  return true;
}

// A one-byte header field as the value of a wider key (`meta mark set ip
// dscp | 4`): load, isolate and shift the bits down, then apply the binop

}  // namespace rulejit::frontends::nft
