// The linearizer's primitives: appending an expression, loading a field
// into a register, encoding values in a field's byte order, and loading a
// set key into consecutive registers.
//
//   payload field  → [ payload load LEN @ BASE + OFF => reg ]
//   meta / ct key  → [ meta load KEY => reg ] / [ ct load KEY => reg ]
//   tcp option ... → [ exthdr load ... => reg ]
//
// Payload values are in network order (bit fields shifted into place),
// meta/ct values in host order.
#include "frontends/nft/linearize.h"
#include "frontends/nft/lower_util.h"
#include "ir/util.h"

namespace rulejit::frontends::nft {

bool ErrorSink::Error(ir::SourceLoc loc, std::string msg, std::string hint) {
  if (!failed) diags.Error(loc, std::move(msg), std::move(hint));
  failed = true;
  return false;
}

void Linearizer::StartRule(ir::Table& table) {
  table_ = &table;
  ctx_ = ProtoCtx{};
  pending_sets_.clear();
}

std::vector<ir::Set> Linearizer::TakePendingSets() {
  std::vector<ir::Set> out = std::move(pending_sets_);
  pending_sets_.clear();
  return out;
}

void Linearizer::Emit(ir::Rule& rule, ir::Expr e, ir::SourceLoc loc) {
  rule.exprs.push_back(ir::Node{std::move(e), loc});
}

void Linearizer::EmitLoad(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len) {
  switch (f.kind) {
    case Field::Kind::kPayload: {
      ir::PayloadLoad p;
      p.base = f.base;
      p.offset = f.LoadOffset();
      p.len = len;
      p.dreg = reg;
      Emit(rule, p, f.loc);
      return;
    }
    case Field::Kind::kMeta:
      Emit(rule, ir::MetaLoad{f.meta, reg}, f.loc);
      return;
    case Field::Kind::kCt:
      Emit(rule, ir::CtLoad{f.ct, reg, f.dir}, f.loc);
      return;
    case Field::Kind::kNumgen: {
      ir::Numgen n = f.numgen;
      n.dreg = reg;
      Emit(rule, n, f.loc);
      return;
    }
    case Field::Kind::kHash: {
      // nft loads the key into the next 16-byte register after the
      // hash's own (words before the hash's hold earlier parts of a key);
      // where that would run past the registers, into the hash's own,
      // which the hash reads whole before it writes.
      ir::Hash h = f.hash;
      h.dreg = reg;
      if (!h.symmetric) {
        const int next = (ir::RegWord(reg) / 4 + 1) * 4;
        h.sreg = next * 4 + ir::Pad4(h.len) <= ir::kRegBytes ? ir::RegForWord(next) : reg;
        EmitKeyFieldLoads(rule, f.hash_key, false, false, h.sreg);
      }
      Emit(rule, h, f.loc);
      return;
    }
    case Field::Kind::kExthdr: {
      ir::Exthdr x;
      x.op = f.exthdr_op;
      x.type = f.exthdr_type;
      x.offset = f.LoadOffset();
      x.len = len;
      x.present = f.exthdr_present;
      x.dreg = reg;
      Emit(rule, x, f.loc);
      return;
    }
    case Field::Kind::kFib:
      Emit(rule, ir::Fib{f.fib_flags, f.fib_result, reg}, f.loc);
      return;
    case Field::Kind::kRt:
      Emit(rule, ir::Rt{ir::RtKey::kTcpMss, reg}, f.loc);
      return;
    case Field::Kind::kSocket:
      Emit(rule, ir::Socket{f.socket_key, 0, reg}, f.loc);
      return;
  }
}

// [ bitwise reg = (reg & mask) ^ xr ] over the field's load, in its order.
void Linearizer::EmitBitwise(ir::Rule& rule, const Field& f, ir::Reg reg, U128 mask, U128 xr) {
  ir::Bitwise b;
  b.sreg = b.dreg = reg;
  b.len = f.LoadLen();
  b.mask = EncodeNum(f, mask, f.LoadLen());
  b.xor_ = EncodeNum(f, xr, f.LoadLen());
  Emit(rule, b, f.loc);
}

ir::Bytes Linearizer::EncodeNum(const Field& f, U128 v, uint32_t len) {
  if (f.host_order) return EncodeNumber(v, len, true);
  return EncodeNumber(v << f.Shift(), len, false);
}

ir::Bytes Linearizer::Encode(const Field& f, const Value& v, uint32_t len) {
  if (v.is_str) {
    ir::Bytes b(len, 0);
    for (size_t i = 0; i < v.str.size() && i < len; ++i) b[i] = static_cast<uint8_t>(v.str[i]);
    return b;
  }
  return EncodeNum(f, v.num, len);
}

// Dependencies and loads of a set/map key into consecutive registers, with
// bit-field masks, and host-order fields byte-swapped for interval sets.
bool Linearizer::EmitKeyLoads(ir::Rule& rule, const std::vector<Field>& fields,
                              const ir::Set* set) {
  for (const Field& f : fields) {
    if (!EmitDeps(rule, f)) return false;
  }
  EmitKeyFieldLoads(rule, fields, set != nullptr && !set->anonymous(),
                    set != nullptr && set->interval());
  return true;
}

// The loads of EmitKeyLoads, without the dependencies. A named set or a
// concatenation holds a bitfield's value, shifted down.
void Linearizer::EmitKeyFieldLoads(ir::Rule& rule, const std::vector<Field>& fields, bool named,
                                   bool interval, ir::Reg first) {
  int word = ir::RegWord(first);
  for (const Field& f : fields) {
    EmitKeyFieldLoad(rule, f, ir::RegForWord(word), named || fields.size() > 1, interval);
    word += Pad4(f.LoadLen()) / 4;
  }
}

void Linearizer::EmitKeyFieldLoad(ir::Rule& rule, const Field& f, ir::Reg reg, bool shift_down,
                                  bool interval) {
  EmitLoad(rule, f, reg, f.LoadLen());
  if (f.NeedsMask()) EmitBitwise(rule, f, reg, BitsMask(f.len_bits), 0);
  if (shift_down && IsShiftedBitfield(f)) EmitBitfieldShiftDown(rule, f, reg, f.LoadLen());
  if (interval && f.host_order && f.LoadLen() > 1) {
    ir::Byteorder bo;
    bo.op = ir::ByteorderOp::kHton;
    bo.sreg = bo.dreg = reg;
    bo.len = bo.size = f.LoadLen();
    Emit(rule, bo, f.loc);
  }
}

}  // namespace rulejit::frontends::nft
