// Lowering of a match against one value, range, prefix or flag list (and a
// concatenation of values), as nft's evaluate and netlink_linearize do:
//
//   tcp dport 22              → deps, [ load 2b @ th + 2 ] [ cmp eq 0x0016 ]
//   ip saddr 10.1.0.0/16      → [ load 2b @ nh + 12 ] [ cmp eq 0x0a01 ]
//   ip dscp 1/6               → [ load ] [ bitwise ] [ byteorder ] ... cmp
//   tcp flags syn             → [ load ] [ bitwise & 0x02 ] [ cmp neq 0 ]
//   meta mark 1-5             → [ meta load ] [ byteorder ] [ range ]
//   x ^ c == v                → x == v ^ c (nft moves a pure xor to the value)
//   meta protocol ip          → nothing in an ip table (always true)
#include <algorithm>

#include "frontends/nft/linearize.h"
#include "frontends/nft/lower_util.h"

namespace rulejit::frontends::nft {
namespace {

bool IsEquality(ast::RelOp op) {
  return op == ast::RelOp::kImplicit || op == ast::RelOp::kEq || op == ast::RelOp::kNeq;
}

// `x ^ c == v` → `x == v ^ c`: a pure xor (no mask) moves to the constant.
void FoldXorIntoValue(const ast::Match& m, Lhs& lhs, Item& it) {
  const Field& f = lhs.fields[0];
  if (lhs.has_binop && lhs.fields.size() == 1 && lhs.xor_val != 0 &&
      (lhs.and_mask & BitsMask(f.len_bits)) == BitsMask(f.len_bits) &&
      it.kind == Item::Kind::kValue && !it.lo.is_str && IsEquality(m.op)) {
    it.lo.num ^= lhs.xor_val & BitsMask(f.len_bits);
    lhs.has_binop = false;
  }
}

}  // namespace

bool Linearizer::LowerValueMatch(ir::Rule& rule, const ast::Match& m, const ast::ValueRhs& r) {
  Lhs lhs = m.lhs;
  Element e = r.value;
  Item& it = e.key[0];
  const Field& f0 = lhs.fields[0];
  const bool concat = lhs.fields.size() > 1;
  if (!concat) FoldXorIntoValue(m, lhs, it);
  if (!concat && DropsOwnProtocol(m, lhs, it)) return true;
  // A bitfield under a mask: nft takes the field's value (isolated and
  // shifted down), then masks it; a prefix is such a mask:
  // `ip dscp 1/6` → `ip dscp & 0x3f == 1` → & 0xfc, >> 2, & 0x3f, cmp 1.
  if (!concat && f0.kind == Field::Kind::kPayload && f0.Shift() > 0 &&
      (lhs.has_binop || it.kind == Item::Kind::kPrefix) && it.kind != Item::Kind::kRange) {
    return EmitBitfieldMaskMatch(rule, f0, lhs, ToCmp(m.op), it);
  }
  for (const Field& f : lhs.fields) {
    if (!EmitDeps(rule, f)) return false;
  }
  if (concat) return EmitConcatValueMatch(rule, m, e);
  if (!lhs.has_binop && it.kind == Item::Kind::kPrefix && !f0.host_order && it.prefix % 8 == 0 &&
      it.prefix > 0 && IsEquality(m.op) &&
      ((f0.kind == Field::Kind::kPayload && !f0.NeedsMask()) || f0.kind == Field::Kind::kCt)) {
    return EmitPrefixBytesMatch(rule, m, f0, it);
  }
  return EmitSingleValueMatch(rule, m, lhs, r, it);
}

// `meta protocol ip` / `meta nfproto ipv4` in a table of that family is
// always true: nft drops it. (nft's stmt_reduce drops `meta protocol`
// when it meets the next statement: the last statement of a rule stays.)
bool Linearizer::DropsOwnProtocol(const ast::Match& m, const Lhs& lhs, const Item& it) {
  const Field& f = lhs.fields[0];
  const ir::Family fam = table_->family;
  if (lhs.has_binop || f.kind != Field::Kind::kMeta ||
      (f.meta == ir::MetaKey::kProtocol && m.last_statement) ||
      (f.meta != ir::MetaKey::kProtocol && f.meta != ir::MetaKey::kNfProto) ||
      (m.op != ast::RelOp::kImplicit && m.op != ast::RelOp::kEq) ||
      it.kind != Item::Kind::kValue || (fam != ir::Family::kIp && fam != ir::Family::kIp6)) {
    return false;
  }
  const bool v4 = fam == ir::Family::kIp;
  U128 own = f.meta == ir::MetaKey::kProtocol ? (v4 ? 0x0800 : 0x86dd) : (v4 ? 2 : 10);
  if (it.lo.num != own) return false;
  ctx_.net = v4 ? 4 : 6;
  return true;
}

bool Linearizer::EmitBitfieldMaskMatch(ir::Rule& rule, const Field& f, const Lhs& lhs,
                                       ir::CmpOp op, const Item& it) {
  const uint32_t len = f.LoadLen();
  if (!EmitValueSource(rule, f, len)) return false;
  // The value is in host order now (EmitValueSource byte-swaps 2 bytes).
  U128 mask = BitsMask(f.len_bits);
  U128 xr = 0;
  if (lhs.has_binop) {
    mask &= lhs.and_mask;
    xr = lhs.xor_val & BitsMask(f.len_bits);
  }
  if (it.kind == Item::Kind::kPrefix) mask &= ~BitsMask(f.len_bits - it.prefix);
  ir::Bitwise b;
  b.len = len;
  b.mask = EncodeNumber(mask, len, true);
  b.xor_ = EncodeNumber(xr, len, true);
  Emit(rule, b, f.loc);
  ir::Cmp c;
  c.op = op;
  c.sreg = 1;
  U128 v = it.kind == Item::Kind::kPrefix ? it.lo.num & mask : it.lo.num & BitsMask(f.len_bits);
  c.data = EncodeNumber(v, len, true);
  Emit(rule, c, it.loc);
  return true;
}

// A byte-aligned prefix: nft loads only the prefix bytes of a header
// field (`ip saddr 192.168.2.0/24` → load 3b, cmp eq), and compares only
// them after a full load of a ct address.
bool Linearizer::EmitPrefixBytesMatch(ir::Rule& rule, const ast::Match& m, const Field& f,
                                      const Item& it) {
  const uint32_t n = it.prefix / 8;
  EmitLoad(rule, f, 1, f.kind == Field::Kind::kPayload ? n : f.LoadLen());
  ir::Bytes full = Encode(f, it.lo, f.LoadLen());
  ir::Cmp c;
  c.op = m.op == ast::RelOp::kNeq ? ir::CmpOp::kNeq : ir::CmpOp::kEq;
  c.sreg = 1;
  c.data.assign(full.begin(), full.begin() + n);
  Emit(rule, c, it.loc);
  return true;
}

// `ip saddr . tcp dport 1.2.3.4 . 22` → loads into reg 1, 9, ...; one cmp
// over the padded words.
bool Linearizer::EmitConcatValueMatch(ir::Rule& rule, const ast::Match& m, const Element& e) {
  const std::vector<Field>& fields = m.lhs.fields;
  EmitKeyFieldLoads(rule, fields, /*named=*/false, /*interval=*/false);
  ir::Cmp c;
  c.op = ToCmp(m.op);
  c.sreg = 1;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (e.key[i].kind != Item::Kind::kValue) {
      return Error(e.key[i].loc, "unsupported range in a concatenation outside a set");
    }
    ir::Bytes b = Encode(fields[i], e.key[i].lo, fields[i].LoadLen());
    b.resize(Pad4(fields[i].LoadLen()), 0);
    c.data.insert(c.data.end(), b.begin(), b.end());
  }
  c.data.resize(c.data.size() - (Pad4(fields.back().LoadLen()) - fields.back().LoadLen()));
  Emit(rule, c, e.loc);
  return true;
}

// One field: load, one bitwise for the field, user, prefix and flag masks
// (nft merges them), then a flag test, a range or a compare.
bool Linearizer::EmitSingleValueMatch(ir::Rule& rule, const ast::Match& m, const Lhs& lhs,
                                      const ast::ValueRhs& r, const Item& it) {
  const Field& f = lhs.fields[0];
  const uint32_t len = f.LoadLen();
  EmitLoad(rule, f, 1, len);
  const bool implicit_flags = IsBitmask(f.type) && !r.flag_mask && !lhs.has_binop &&
                              (m.op == ast::RelOp::kImplicit || m.op == ast::RelOp::kNot) &&
                              it.kind == Item::Kind::kValue;
  EmitValueMask(rule, lhs, r, it, implicit_flags);
  if (implicit_flags) {
    // `tcp flags syn` → any of the flags: (flags & syn) != 0.
    ir::Cmp c;
    c.op = m.op == ast::RelOp::kNot ? ir::CmpOp::kEq : ir::CmpOp::kNeq;
    c.sreg = 1;
    c.data = ir::Bytes(len, 0);
    Emit(rule, c, m.rhs_loc);
    return true;
  }
  // Host-order values are byte-swapped before ordered compares and ranges.
  const bool swap = f.host_order && len > 1 &&
                    (IsOrdering(m.op) || it.kind == Item::Kind::kRange);
  if (swap) {
    ir::Byteorder bo;
    bo.op = ir::ByteorderOp::kHton;
    bo.len = bo.size = len;
    Emit(rule, bo, it.loc);
  }
  if (it.kind == Item::Kind::kRange) return EmitRangeCompare(rule, m, f, it, swap);
  if (it.lo.is_str) return EmitStringCompare(rule, m, f, it);
  return EmitValueCompare(rule, m, lhs, it, swap);
}

// The one bitwise of a single-field match, when any mask applies: the
// field's own bits, `& | ^` constants, a prefix, `/ flags`, the flags of an
// implicit flag test.
void Linearizer::EmitValueMask(ir::Rule& rule, const Lhs& lhs, const ast::ValueRhs& r,
                               const Item& it, bool implicit_flags) {
  const Field& f = lhs.fields[0];
  U128 mask = BitsMask(f.len_bits), xr = 0;
  if (lhs.has_binop) {
    mask &= lhs.and_mask;
    xr = lhs.xor_val & BitsMask(f.len_bits);
  }
  if (it.kind == Item::Kind::kPrefix) mask &= ~BitsMask(f.len_bits - it.prefix);
  if (r.flag_mask) mask &= *r.flag_mask;
  if (implicit_flags) mask &= it.lo.num;
  if (f.NeedsMask() || lhs.has_binop || it.kind == Item::Kind::kPrefix || r.flag_mask ||
      implicit_flags) {
    EmitBitwise(rule, f, 1, mask, xr);
  }
}

// [ cmp OP VALUE ] of a number or prefix; an equality notes the protocol
// context (`meta l4proto tcp`, `ether type ip`, ...).
bool Linearizer::EmitValueCompare(ir::Rule& rule, const ast::Match& m, const Lhs& lhs,
                                  const Item& it, bool swap) {
  const Field& f = lhs.fields[0];
  const uint32_t len = f.LoadLen();
  ir::Cmp c;
  c.op = ToCmp(m.op);
  c.sreg = 1;
  if (it.kind == Item::Kind::kPrefix) {
    U128 pm = BitsMask(f.len_bits) & ~BitsMask(f.len_bits - it.prefix);
    c.data = EncodeNum(f, it.lo.num & pm, len);
  } else {
    U128 v = it.lo.num;
    if (lhs.has_binop) v &= BitsMask(f.len_bits);
    c.data = swap ? EncodeNumber(v, len, false) : EncodeNum(f, v, len);
  }
  Emit(rule, c, it.loc);
  if (m.op == ast::RelOp::kImplicit || m.op == ast::RelOp::kEq) NoteContext(f, it);
  return true;
}

// `lo-hi` → [ range eq|neq lo hi ] (negated once more for an hour range
// that wraps at midnight UTC).
bool Linearizer::EmitRangeCompare(ir::Rule& rule, const ast::Match& m, const Field& f,
                                  const Item& it, bool swap) {
  if (!IsEquality(m.op)) return Error(m.op_loc, "unsupported operator with a range");
  const uint32_t len = f.LoadLen();
  auto enc = [&](U128 v) { return swap ? EncodeNumber(v, len, false) : EncodeNum(f, v, len); };
  ir::Range r;
  r.negate = m.op == ast::RelOp::kNeq;
  r.sreg = 1;
  if (it.outside) r.negate = !r.negate;
  r.from = enc(it.lo.num);
  r.to = enc(it.hi);
  Emit(rule, r, it.loc);
  return true;
}

// `iifname "eth*"` compares the bytes before the '*' only; `"*"` alone
// matches every name and emits nothing; `\*` is a literal '*'.
bool Linearizer::EmitStringCompare(ir::Rule& rule, const ast::Match& m, const Field& f,
                                   const Item& it) {
  const std::string& s = it.lo.str;
  const bool wildcard =
      !s.empty() && s.back() == '*' && (s.size() < 2 || s[s.size() - 2] != '\\');
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '*') continue;
    out.push_back(s[i]);
  }
  if (wildcard) out.pop_back();
  if (out.size() > f.LoadLen()) return Error(it.loc, "string too long");
  ir::Cmp c;
  c.op = ToCmp(m.op);
  c.sreg = 1;
  c.data.assign(out.begin(), out.end());
  if (!wildcard) c.data.resize(f.LoadLen(), 0);
  if (c.data.empty()) return true;
  Emit(rule, c, it.loc);
  if (m.op == ast::RelOp::kImplicit || m.op == ast::RelOp::kEq) NoteContext(f, it);
  return true;
}

}  // namespace rulejit::frontends::nft
