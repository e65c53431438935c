// Lowering of the statements that write: `meta|ct KEY set VALUE` (one
// function per kind of value) and `FIELD set VALUE` on a header field.
//
//   meta mark set 0x10          → [ immediate reg 1 0x10 ] [ meta set mark with reg 1 ]
//   meta mark set ct mark       → [ ct load mark => reg 1 ] [ meta set mark with reg 1 ]
//   meta mark set ip dscp map { 0 : 1 }
//                               → loads, [ lookup reg 1 set __map0 dreg 1 ] [ meta set ]
//   tcp dport set 80            → [ immediate reg 1 0x0050 ] [ payload write ... csum ]
//   ip dscp set 1               → [ load 2b ] [ bitwise ] [ payload write ... csum ]
#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"
#include "frontends/nft/lower_util.h"

namespace rulejit::frontends::nft {

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

namespace {

// The bytes a payload write covers, and the field's shift inside them.
struct WriteWindow {
  uint32_t offset, size, shift;
};

// The field's bytes, widened to whole 16-bit words when a checksum is
// updated (the kernel's checksum update works on 16-bit words).
WriteWindow WriteWindowOf(const Field& f, bool csum) {
  WriteWindow win{f.LoadOffset(), f.LoadLen(), f.Shift()};
  if (csum && win.size % 2 != 0) {
    ++win.size;
    if (win.offset % 2 != 0) {
      --win.offset;
    } else {
      win.shift += 8;
    }
  }
  return win;
}

}  // namespace

bool Linearizer::LowerMetaCtSet(ir::Rule& rule, const ast::MetaCtSet& s) {
  // One case per kind of value: a new ast::SetValue kind fails to compile.
  struct Dispatch {
    Linearizer& lin;
    ir::Rule& rule;
    const ast::MetaCtSet& s;
    bool operator()(const ast::SetConstant& v) { return lin.EmitSetConstant(rule, s, v); }
    bool operator()(const ValueExpr& v) {
      return lin.EmitValueExpr(rule, s.target, v, 1, s.loc);
    }
    bool operator()(const ast::FieldValue& v) { return lin.EmitFieldValue(rule, s, v.field); }
    bool operator()(const ast::MapValue& v) { return lin.EmitMapLookup(rule, v); }
  };
  return std::visit(Dispatch{*this, rule, s}, s.value) &&
         EmitSetTarget(rule, s.target, s.is_ct);
}

// [ immediate reg 1 VALUE ]
bool Linearizer::EmitSetConstant(ir::Rule& rule, const ast::MetaCtSet& s,
                                 const ast::SetConstant& c) {
  const uint32_t len = s.target.LoadLen();
  ir::Immediate imm;
  imm.dreg = 1;
  imm.data = c.first.lo.is_str ? Encode(s.target, c.first.lo, len)
                               : EncodeNum(s.target, c.value, len);
  Emit(rule, imm, s.loc);
  return true;
}

// A field of the target's size (with `& | ^` constants), or a one-byte
// header field as the value of a wider key.
bool Linearizer::EmitFieldValue(ir::Rule& rule, const ast::MetaCtSet& s, const Lhs& src) {
  const uint32_t len = s.target.LoadLen();
  if (src.fields.size() != 1) return Error(s.loc, "unsupported concatenation as a value");
  const Field& f = src.fields[0];
  if (f.kind == Field::Kind::kPayload && f.LoadLen() == 1 && len > 1) {
    return EmitNarrowSource(rule, src, len);
  }
  if (f.LoadLen() != len || f.NeedsMask()) {
    return Error(s.loc, "unsupported value expression of a different size");
  }
  if (!EmitDeps(rule, f)) return false;
  EmitLoad(rule, f, 1, len);
  if (src.has_binop) {
    ir::Bitwise b;
    b.len = len;
    b.mask = EncodeNum(f, src.and_mask & BitsMask(f.len_bits), len);
    b.xor_ = EncodeNum(f, src.xor_val & BitsMask(f.len_bits), len);
    Emit(rule, b, s.loc);
  }
  return true;
}

// The map's key loads, then [ lookup reg 1 set MAP dreg 1 ].
bool Linearizer::EmitMapLookup(ir::Rule& rule, const ast::MapValue& m) {
  std::string name = m.named;
  if (!name.empty()) {
    const ir::Set* s = FindTableSet(name);
    if (s == nullptr || !(s->flags & ir::kSetMap) || s->verdict_map) {
      return Error(m.named_loc, absl::StrCat("no map '", name, "'"));
    }
  } else if (!AddAnonSet(m.type, m.elements, m.loc, &name)) {
    return false;
  }
  if (!EmitKeyLoads(rule, m.key.fields, FindSet(name))) return false;
  if (m.masked_key) {
    const Field& f = m.key.fields[0];
    ir::Bitwise b;
    b.len = f.LoadLen();
    b.mask = EncodeNum(f, m.key.and_mask & BitsMask(f.len_bits), b.len);
    b.xor_ = EncodeNum(f, m.key.xor_val & BitsMask(f.len_bits), b.len);
    Emit(rule, b, m.loc);
  }
  ir::Lookup lk;
  lk.sreg = 1;
  lk.set = name;
  lk.dreg = 1;
  Emit(rule, lk, m.loc);
  return true;
}

// [ exthdr write tcpopt ] of a constant, or of `rt mtu` turned to network
// order as nft does: [ rt load tcpmss ] [ byteorder hton 2, 2 ].
bool Linearizer::LowerTcpOptionSet(ir::Rule& rule, const ast::PayloadSet& s) {
  const Field& f = s.target;
  const uint32_t len = f.len_bits / 8;
  if (s.from_rt_mtu) {
    Emit(rule, ir::Rt{ir::RtKey::kTcpMss, 1}, s.loc);
    ir::Byteorder b;
    b.sreg = b.dreg = 1;
    b.op = ir::ByteorderOp::kHton;
    b.len = 2;
    b.size = 2;
    Emit(rule, b, s.loc);
  } else {
    ir::Immediate imm;
    imm.dreg = 1;
    imm.data = EncodeNumber(s.xor_val, len, false);
    Emit(rule, imm, s.loc);
  }
  ir::ExthdrWrite w;
  w.type = f.exthdr_type;
  w.offset = f.off_bits / 8;
  w.len = len;
  w.sreg = 1;
  Emit(rule, w, s.loc);
  return true;
}

// Another field's value (loaded whole) or a map's data into reg 1.
bool Linearizer::EmitPayloadSetValue(ir::Rule& rule, const ast::PayloadSet& s) {
  if (const auto* map = std::get_if<ast::MapValue>(&*s.value)) return EmitMapLookup(rule, *map);
  const Field& g = std::get<ast::FieldValue>(*s.value).field.fields[0];
  if (!EmitDeps(rule, g)) return false;
  EmitLoad(rule, g, 1, g.LoadLen());
  return true;
}

// [ payload write ]. A field that does not fill whole bytes (or, when a
// checksum is updated, whole 16-bit words) is merged into the bytes around
// it: load, mask out the field, xor in the value, write.
bool Linearizer::LowerPayloadSet(ir::Rule& rule, const ast::PayloadSet& s) {
  const Field& f = s.target;
  if (f.kind == Field::Kind::kExthdr) return LowerTcpOptionSet(rule, s);
  ir::PayloadWrite w;
  WriteChecksum(f, &w);
  if (!EmitDeps(rule, f)) return false;
  const WriteWindow win = WriteWindowOf(f, w.csum_type != 0 || w.csum_flags != 0);
  if (s.value) {
    if (!EmitPayloadSetValue(rule, s)) return false;
  } else if (!s.from_field && win.shift == 0 && win.size * 8 == f.len_bits) {
    ir::Immediate imm;
    imm.dreg = 1;
    imm.data = EncodeNumber(s.xor_val, win.size, false);
    Emit(rule, imm, s.loc);
  } else {
    // Load the bytes around the field, mask it out, xor the value in.
    EmitLoad(rule, f, 1, win.size);
    std::get<ir::PayloadLoad>(rule.exprs.back().expr).offset = win.offset;
    const U128 all = BitsMask(win.size * 8);
    const U128 field_mask = BitsMask(f.len_bits);
    ir::Bitwise b;
    b.len = win.size;
    b.mask = EncodeNumber((~(field_mask << win.shift) | (s.and_mask << win.shift)) & all,
                          win.size, false);
    b.xor_ = EncodeNumber((s.xor_val << win.shift) & all, win.size, false);
    Emit(rule, b, s.loc);
  }
  w.base = f.base;
  w.offset = win.offset;
  w.len = win.size;
  w.sreg = 1;
  Emit(rule, w, s.loc);
  return true;
}

}  // namespace rulejit::frontends::nft
