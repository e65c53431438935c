// The value of `meta mark set` / `ct mark set` (32-bit host-order targets)
// as an expression over constants and at most one field, with C precedence
// (<< >> bind tighter than &, then ^, then |; `and` `xor` `or` spell them):
//
//   ct mark set 0x1 or ct mark        → [ ct load mark => reg 1 ]
//                                       [ bitwise reg 1 = ( reg 1 & 0xfffffffe ) ^ 0x00000001 ]
//   ct mark set (meta mark | 0x10) << 8 → load, & ~0x10 ^ 0x10, << 8
//   ct mark set ip dscp & 0x0f << 1   → load 1b, & 0xfc, >> 2, & 0x1e
//
// Constant subexpressions fold; the field's value then goes through the
// remaining operations in order, adjacent &|^ merged into one mask/xor as
// nft does. A second field is computed in the next register and combined
// with a register-operand bitwise:
//
//   meta mark set ct mark & 0xffff0000 | meta mark & 0xffff
//     → [ ct load mark => reg 1 ] [ bitwise reg 1 = ( reg 1 & 0xffff0000 ) ^ 0 ]
//       [ meta load mark => reg 2 ] [ bitwise reg 2 = ( reg 2 & 0x0000ffff ) ^ 0 ]
//       [ bitwise reg 1 = ( reg 1 | reg 2 ) ]
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"
#include "frontends/nft/lower_util.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {
namespace {

// The operator at a token: '&' '|' '^' 'l' (<<) 'r' (>>), or 0.
char BinopAt(const Token& t) {
  if (t.kind == Tok::kPunct) {
    if (t.text == "&") return '&';
    if (t.text == "|") return '|';
    if (t.text == "^") return '^';
    if (t.text == "<<") return 'l';
    if (t.text == ">>") return 'r';
    return 0;
  }
  if (t.kind != Tok::kWord) return 0;
  if (t.text == "and") return '&';
  if (t.text == "or") return '|';
  if (t.text == "xor") return '^';
  return 0;
}

int Precedence(char op) {
  switch (op) {
    case 'l':
    case 'r': return 4;
    case '&': return 3;
    case '^': return 2;
    case '|': return 1;
  }
  return 0;
}

U128 Apply(char op, U128 a, U128 b) {
  const U128 all = 0xffffffffu;
  switch (op) {
    case '&': return a & b;
    case '|': return a | b;
    case '^': return a ^ b;
    case 'l': return b >= 32 ? 0 : (a << b) & all;
    case 'r': return b >= 32 ? 0 : (a & all) >> b;
  }
  return a;
}

}  // namespace

// Is the value after `set` one the expression parser takes: a target that
// is a 32-bit host-order integer (marks)?
bool Parser::IsValueExprTarget(const Field& target) const {
  return target.host_order && target.LoadLen() == 4 &&
         (target.type == DType::kMark || target.type == DType::kInteger);
}

bool Parser::ParseValuePrimary(const Field& target, ValueExpr* out) {
  const Token& t = Peek();
  if (t.kind == Tok::kPunct && t.text == "(") {
    Nesting nesting(*this, Next().loc);
    if (!nesting.ok() || !ParseValueExpr(target, 1, out)) return false;
    return ExpectPunct(")");
  }
  if (t.kind == Tok::kWord && (IsPayloadProto(t.text) || t.text == "meta" || t.text == "ct" ||
                               t.text == "numgen" || t.text == "jhash" ||
                               t.text == "symhash" || IsUnqualifiedMeta(t.text))) {
    out->has_source = true;
    return ParseField(&out->source);
  }
  if (t.kind != Tok::kWord) return ErrorUnexpected("a value");
  std::optional<Value> v = ParseValue(target.type, t.text, 32);
  if (!v || v->is_str) {
    return Error(t.loc, absl::StrCat("invalid value '", t.text, "' (expected a 32-bit number)"));
  }
  Next();
  out->constant = v->num;
  return true;
}

// Precedence climbing from `min_prec`.
bool Parser::ParseValueExpr(const Field& target, int min_prec, ValueExpr* out) {
  if (!ParseValuePrimary(target, out)) return false;
  while (!sink_.failed) {
    char op = BinopAt(Peek());
    if (op == 0 || Precedence(op) < min_prec) break;
    ir::SourceLoc oloc = Next().loc;
    ValueExpr rhs;
    if (!ParseValueExpr(target, Precedence(op) + 1, &rhs)) return false;
    if (out->has_source && rhs.has_source) {
      if (op == 'l' || op == 'r') {
        return Error(oloc, "unsupported shift by a non-constant amount");
      }
      out->ops.push_back({op, 0, std::make_shared<const ValueExpr>(std::move(rhs))});
      continue;
    }
    if (!out->has_source && !rhs.has_source) {
      out->constant = Apply(op, out->constant, rhs.constant);
      continue;
    }
    if (rhs.has_source) {
      // c OP field: only & | ^ commute.
      if (op == 'l' || op == 'r') {
        return Error(oloc, "unsupported shift by a non-constant amount");
      }
      // c | (field << n): the field's own operations come first.
      rhs.ops.push_back({op, out->constant, nullptr});
      *out = std::move(rhs);
      continue;
    }
    if ((op == 'l' || op == 'r') && rhs.constant >= 32) {
      return Error(oloc, "shift by 32 bits or more");
    }
    out->ops.push_back({op, rhs.constant, nullptr});
  }
  return !sink_.failed;
}

// Loads the source field into reg 1 as a 32-bit host-order value: a field
// of the target's size as it is, a narrower header field (ip dscp, ip6
// dscp) isolated and shifted down.
bool Linearizer::EmitValueSource(ir::Rule& rule, const Field& f, uint32_t len, ir::Reg reg) {
  if (!EmitDeps(rule, f)) return false;
  const uint32_t flen = f.LoadLen();
  if (flen == len && !f.NeedsMask()) {
    EmitLoad(rule, f, reg, len);
    return true;
  }
  if (f.kind != Field::Kind::kPayload || flen > 2) {
    return Error(f.loc, "unsupported value expression of a different size");
  }
  EmitLoad(rule, f, reg, flen);
  if (f.NeedsMask()) {
    ir::Bitwise b;
    b.sreg = b.dreg = reg;
    b.len = flen;
    b.mask = EncodeNum(f, (static_cast<U128>(1) << f.len_bits) - 1, flen);
    b.xor_ = ir::Bytes(flen, 0);
    Emit(rule, b, f.loc);
  }
  EmitBitfieldShiftDown(rule, f, reg, len);
  return true;
}

// After a bitfield's load and mask, its value: as nft evaluates a bitfield
// it cannot fold into constants (statement arguments, named set keys),
// a 2-byte load to host order, then shifted down.
void Linearizer::EmitBitfieldShiftDown(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len) {
  if (f.LoadLen() == 2) {
    ir::Byteorder bo;
    bo.op = ir::ByteorderOp::kNtoh;
    bo.sreg = bo.dreg = reg;
    bo.len = bo.size = 2;
    Emit(rule, bo, f.loc);
  }
  if (f.Shift() > 0) {
    ir::Bitwise b;
    b.op = ir::BitwiseOp::kRshift;
    b.sreg = b.dreg = reg;
    b.len = len;
    b.shift = f.Shift();
    Emit(rule, b, f.loc);
  }
}

bool Linearizer::EmitValueDeps(ir::Rule& rule, const ValueExpr& v) {
  if (v.has_source && !EmitDeps(rule, v.source)) return false;
  for (const ValueExpr::Step& step : v.ops) {
    if (step.operand != nullptr && !EmitValueDeps(rule, *step.operand)) return false;
  }
  return true;
}

// Emits `v` into `reg` (len bytes, host order); register operands go to
// the registers after it.
bool Linearizer::EmitValueExpr(ir::Rule& rule, const Field& target, const ValueExpr& v,
                               ir::Reg reg, ir::SourceLoc loc) {
  const uint32_t len = target.LoadLen();
  if (!v.has_source) {
    ir::Immediate imm;
    imm.dreg = reg;
    imm.data = EncodeNumber(v.constant, len, true);
    Emit(rule, imm, loc);
    return true;
  }
  if (reg > 4) return Error(loc, "value expression too deep for the registers");
  // Dependencies of every field first: they use reg 1, which holds the
  // value once its computation starts.
  if (reg == 1 && !EmitValueDeps(rule, v)) return false;
  if (!EmitValueSource(rule, v.source, len, reg)) return false;
  return EmitValueSteps(rule, target, v, reg, loc);
}

// The operations after the source field, in order: adjacent `& | ^`
// constants merge into one bitwise (as nft does), a register operand is
// computed in reg + 1 and combined, a shift is its own bitwise. A
// full-size network-order field keeps its byte order: its constants are
// encoded as the field's, and shifts (host-order words) are refused.
bool Linearizer::EmitValueSteps(ir::Rule& rule, const Field& target, const ValueExpr& v,
                                ir::Reg reg, ir::SourceLoc loc) {
  const uint32_t len = target.LoadLen();
  const Field& f = v.source;
  const bool network = !f.host_order && f.LoadLen() == len && !f.NeedsMask();
  ConstantMask pending;
  for (const ValueExpr::Step& step : v.ops) {
    if (step.operand == nullptr && pending.Add(step.op, step.constant)) continue;
    if (step.operand == nullptr && network) {
      return Error(loc, "unsupported shift of a network-order value");
    }
    EmitConstantMask(rule, f, reg, len, network, loc, &pending);
    ir::Bitwise b;
    b.sreg = b.dreg = reg;
    b.len = len;
    if (step.operand != nullptr) {
      if (!EmitValueExpr(rule, target, *step.operand, reg + 1, loc)) return false;
      b.op = step.op == '&' ? ir::BitwiseOp::kAndReg
             : step.op == '|' ? ir::BitwiseOp::kOrReg
                              : ir::BitwiseOp::kXorReg;
      b.sreg2 = reg + 1;
    } else {
      b.op = step.op == 'l' ? ir::BitwiseOp::kLshift : ir::BitwiseOp::kRshift;
      b.shift = static_cast<uint32_t>(step.constant);
    }
    Emit(rule, b, loc);
  }
  EmitConstantMask(rule, f, reg, len, network, loc, &pending);
  return true;
}

// [ bitwise reg = (reg & mask) ^ xor ] for the constants gathered so far.
void Linearizer::EmitConstantMask(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len,
                                  bool network, ir::SourceLoc loc, ConstantMask* m) {
  if (!m->pending) return;
  ir::Bitwise b;
  b.sreg = b.dreg = reg;
  b.len = len;
  b.mask = network ? EncodeNum(f, m->mask, len) : EncodeNumber(m->mask, len, true);
  b.xor_ = network ? EncodeNum(f, m->xr, len) : EncodeNumber(m->xr, len, true);
  Emit(rule, b, loc);
  *m = ConstantMask{};
}

// A one-byte header field as the value of a wider key (`meta mark set ip
// dscp | 4`): load, isolate and shift the bits down, then apply the binop
// on the register as a host-order word (one byte reads the same either way).
bool Linearizer::EmitNarrowSource(ir::Rule& rule, const Lhs& src, uint32_t len) {
  if (!EmitValueSource(rule, src.fields[0], len)) return false;
  if (src.has_binop) {
    U128 all = BitsMask(len * 8);
    ir::Bitwise b;
    b.len = len;
    b.mask = EncodeNumber(src.and_mask & all, len, true);
    b.xor_ = EncodeNumber(src.xor_val & all, len, true);
    Emit(rule, b, src.loc);
  }
  return true;
}

// [ meta set KEY with reg 1 ] / [ ct set KEY with reg 1 ]
bool Linearizer::EmitSetTarget(ir::Rule& rule, const Field& target, bool is_ct) {
  if (is_ct) {
    ir::CtSet s;
    s.key = target.ct;
    s.sreg = 1;
    s.dir = target.dir;
    Emit(rule, s, target.loc);
  } else {
    ir::MetaSet s;
    s.key = target.meta;
    s.sreg = 1;
    Emit(rule, s, target.loc);
  }
  return true;
}

}  // namespace rulejit::frontends::nft
