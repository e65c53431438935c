// Probing rule expressions on model packets (ir/expr_eval.h) and solving
// cmp and range into interval sets of a dimension (see lift_cube_internal.h).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/lift_cube_internal.h"
#include "compiler/headerspace/packet_model.h"
#include "ir/expr_eval.h"
#include "ir/fib_eval.h"
#include "ir/util.h"
#include "packet/parse.h"

namespace rulejit::headerspace::cube_lift {

using ir::Overloaded;

bool RuleLifter::Probe(const Sym& sym, Value v, uint8_t* regs) const {
  Point point = base_point_;
  if (!sym.constant) point[static_cast<int>(sym.dim)] = v;
  // The owner's ids are read only from a socket (the load constrained the
  // region to socket 1 already).
  if (!sym.constant && (sym.dim == Dim::kSkUid || sym.dim == Dim::kSkGid)) {
    point[static_cast<int>(Dim::kSocket)] = 1;
  }
  // As BuildModelPacket and ModelPacket::View, without allocating.
  uint8_t frame[kModelMaxLen];
  PacketView view = packet::ParseEthernet(frame, BuildModelFrame(point, frame));
  if (!LinkVisible(hook_)) view.link_off = kAbsent;
  struct {
    PacketMeta meta;
  } pkt{BuildModelMeta(point, space_)};
  ir::MutableMeta mut = ir::MutableMeta::Of(pkt.meta);
  std::memset(regs, 0, ir::kRegBytes);
  for (const ir::Expr& e : sym.chain) {
    bool ok = std::visit(
        Overloaded{
            [&](const ir::PayloadLoad& l) { return ir::EvalPayloadLoad(l, view, regs); },
            [&](const ir::MetaLoad& m) {
              return ir::EvalMetaLoad(m, family_, view, pkt.meta, mut, regs);
            },
            [&](const ir::CtLoad& c) {
              return ir::EvalCtLoad(c, pkt.meta, mut, regs);
            },
            [&](const ir::Bitwise& b) { return ir::EvalBitwise(b, regs); },
            [&](const ir::Fib& f) {
              return ir::EvalFib(f, hook_, view, pkt.meta, *space_.host, regs);
            },
            [&](const ir::Byteorder& b) { return ir::EvalByteorder(b, regs); },
            [&](const ir::Immediate& i) {
              uint8_t* dst = ir::RegBytes(regs, i.dreg,
                                          ir::Pad4(i.data.size()));
              if (dst == nullptr) return false;
              ir::StoreBytes(dst, i.data.data(), i.data.size());
              return true;
            },
            [&](const auto&) { return false; },
        },
        e);
    if (!ok) return false;
  }
  return true;
}

bool RuleLifter::ProbeCmp(const Sym& sym, ir::Reg sreg, ir::CmpOp op,
                          const ir::Bytes& data, Value v) const {
  alignas(8) uint8_t regs[ir::kRegBytes];
  if (!Probe(sym, v, regs)) return false;
  return ir::EvalCmp(ir::Cmp{.op = op, .sreg = sreg, .data = data}, regs);
}

std::optional<Value> RuleLifter::FirstGte(const Sym& sym, ir::Reg sreg,
                                          const ir::Bytes& data) const {
  const Value max = DimMax(sym);
  if (!ProbeCmp(sym, sreg, ir::CmpOp::kGte, data, max)) return std::nullopt;
  Value lo = 0, hi = max;  // answer in [lo, hi]
  while (lo < hi) {
    Value mid = lo + (hi - lo) / 2;
    if (ProbeCmp(sym, sreg, ir::CmpOp::kGte, data, mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

std::optional<Value> RuleLifter::LastLte(const Sym& sym, ir::Reg sreg,
                                         const ir::Bytes& data) const {
  if (!ProbeCmp(sym, sreg, ir::CmpOp::kLte, data, 0)) return std::nullopt;
  Value lo = 0, hi = DimMax(sym);  // answer in [lo, hi]
  while (lo < hi) {
    Value mid = lo + (hi - lo) / 2 + 1;
    if (ProbeCmp(sym, sreg, ir::CmpOp::kLte, data, mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

std::optional<IntervalSet> RuleLifter::Solve(const Sym& sym, const Test& test,
                                             const Solver& monotone,
                                             bool equality_only_names) {
  alignas(8) uint8_t regs[ir::kRegBytes];
  if (sym.constant) {
    bool pass = Probe(sym, 0, regs) && test(regs);
    return pass ? Everything(sym) : IntervalSet();
  }
  if (sym.ifindex && !equality_only_names) {
    Fail(absl::StrCat("compares ", sym.dim == Dim::kIifName ? "meta iif" : "meta oif",
                      " other than by equality with lo's index"));
    return std::nullopt;
  }
  if ((sym.dim == Dim::kIifName || sym.dim == Dim::kOifName) && !sym.device_attribute) {
    if (!equality_only_names || sym.chain.size() != 1) {
      Fail("compares an interface name other than by equality, "
           "prefix or exact-name set");
      return std::nullopt;
    }
  }
  if (sym.fib) return FibSolve(sym, test);
  if (Searchable(sym) && monotone) {
    if (std::optional<IntervalSet> set = monotone()) return set;
  }
  const Value max = DimMax(sym);
  if (max > kEnumerateMax) {
    Fail(absl::StrCat("compares ", DimName(sym.dim),
                      " through an operation that is not a prefix "
                      "mask (not reasoned about exactly yet)"));
    return std::nullopt;
  }
  IntervalSet set;
  for (Value v = 0; v <= max; ++v) {
    if (!family_cube_.get(sym.dim).Contains(v)) continue;  // not in the space
    if (Probe(sym, v, regs) && test(regs)) set.Add(v, v);
  }
  return set;
}

std::optional<IntervalSet> RuleLifter::MaskedEquals(const Sym& sym, const ir::Cmp& e) const {
  // The chain must be: a load whose register bytes are the dimension's
  // value big-endian (a whole field, or meta/ct mark), then one mask/xor.
  if (sym.constant || sym.chain.size() > 2 || !sym.load_monotone) return std::nullopt;
  const uint32_t width = sym.load_len;  // bytes of the dimension's value
  const Value max = DimMax(sym);
  if (width == 0 || width > 16 || (width < 16 && (max >> (8 * width)) != 0) ||
      e.data.size() != width) {
    return std::nullopt;
  }
  ir::Bytes mask_bytes(width, 0xff), xor_bytes(width, 0);
  if (sym.chain.size() == 2) {
    const auto* b = std::get_if<ir::Bitwise>(&sym.chain[1]);
    if (b == nullptr || b->op != ir::BitwiseOp::kMaskXor || b->len != width ||
        b->mask.size() < width || b->xor_.size() < width) {
      return std::nullopt;
    }
    mask_bytes = KeyBytes(b->mask, 0, width);
    xor_bytes = KeyBytes(b->xor_, 0, width);
  }
  ir::Bytes data = e.data;
  if (sym.host_endian) {  // register bytes = the value little-endian
    std::reverse(mask_bytes.begin(), mask_bytes.end());
    std::reverse(xor_bytes.begin(), xor_bytes.end());
    std::reverse(data.begin(), data.end());
  }
  const Value mask = ir::BigEndian<Value>(mask_bytes.data(), width);
  const Value want = ir::BigEndian<Value>(data.data(), width) ^ ir::BigEndian<Value>(xor_bytes.data(), width);
  IntervalSet set;
  if ((want & ~mask) == 0) {
    // Bits below the mask's lowest one are free (one interval each);
    // enumerate the free bits above it.
    int low = 0;
    while (low < 8 * static_cast<int>(width) && ((mask >> low) & 1) == 0) ++low;
    std::vector<int> free_bits;
    for (int bit = low; bit < 8 * static_cast<int>(width); ++bit) {
      if (((mask >> bit) & 1) == 0) free_bits.push_back(bit);
    }
    if (free_bits.size() > kMaskFreeBitsMax) return std::nullopt;
    const Value block = low >= 128 ? kValueMax : (Value{1} << low) - 1;
    for (uint32_t combo = 0; combo < (1u << free_bits.size()); ++combo) {
      Value base = want;
      for (size_t i = 0; i < free_bits.size(); ++i) {
        if ((combo >> i) & 1) base |= Value{1} << free_bits[i];
      }
      set.Add(base, base | block);
    }
  }
  if (e.op == ir::CmpOp::kNeq) set = set.Complement(max);
  return set.Intersect(family_cube_.get(sym.dim));
}

bool RuleLifter::Compare(const Sym& src, const ir::Cmp& e) {
  if (AfterEffect()) return false;
  const Sym s = src;
  if (s.merged) return MergedCmp(s, e);
  if (s.ifindex && !LoopbackIndexCmp(s, e)) return false;
  const Value max = DimMax(s);
  if ((e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq) && !Searchable(s) &&
      s.dim != Dim::kIifName && s.dim != Dim::kOifName) {
    if (std::optional<IntervalSet> set = MaskedEquals(s, e)) return Constrain(s, *set);
  }
  auto monotone = [&]() -> std::optional<IntervalSet> {
    std::optional<Value> a = FirstGte(s, e.sreg, e.data);
    std::optional<Value> b = LastLte(s, e.sreg, e.data);
    switch (e.op) {
      case ir::CmpOp::kEq: return Between(a, b);
      case ir::CmpOp::kNeq: return Between(a, b).Complement(max);
      case ir::CmpOp::kLt:
        if (!a) return IntervalSet::Range(0, max);
        return *a == 0 ? IntervalSet() : IntervalSet::Range(0, *a - 1);
      case ir::CmpOp::kLte: return Between(Value{0}, b);
      case ir::CmpOp::kGt:
        if (!b) return IntervalSet::Range(0, max);
        return *b == max ? IntervalSet() : IntervalSet::Range(*b + 1, max);
      case ir::CmpOp::kGte: return Between(a, max);
    }
    return std::nullopt;
  };
  bool equality = e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq;
  std::optional<IntervalSet> set = Solve(
      s, [&](const uint8_t* regs) { return ir::EvalCmp(e, regs); }, monotone,
      equality);
  return set && Constrain(s, *set);
}

bool RuleLifter::Range(const ir::Range& e) {
  if (AfterEffect()) return false;
  const Sym* sym = Read(e.sreg, std::max(e.from.size(), e.to.size()), "range");
  if (sym == nullptr) return false;
  const Sym s = *sym;
  if (s.merged) return Fail("compares a merged load of several fields with a range");
  const Value max = DimMax(s);
  auto monotone = [&]() -> std::optional<IntervalSet> {
    IntervalSet in = Between(FirstGte(s, e.sreg, e.from), LastLte(s, e.sreg, e.to));
    return e.negate ? in.Complement(max) : in;
  };
  std::optional<IntervalSet> set = Solve(
      s, [&](const uint8_t* regs) { return ir::EvalRange(e, regs); }, monotone,
      false);
  return set && Constrain(s, *set);
}

std::optional<IntervalSet> RuleLifter::BytesBetween(const Sym& sym, ir::Reg reg,
                                                    const ir::Bytes& lo,
                                                    const ir::Bytes& hi,
                                                    bool names_ok) {
  auto test = [&](const uint8_t* regs) {
    return ir::EvalCmp(ir::Cmp{.op = ir::CmpOp::kGte, .sreg = reg, .data = lo}, regs) &&
           ir::EvalCmp(ir::Cmp{.op = ir::CmpOp::kLte, .sreg = reg, .data = hi}, regs);
  };
  auto monotone = [&]() -> std::optional<IntervalSet> {
    return Between(FirstGte(sym, reg, lo), LastLte(sym, reg, hi));
  };
  if (sym.ifindex) {
    Fail("looks up an interface index in a set (only lo's index is known without the host)");
    return std::nullopt;
  }
  return Solve(sym, test, monotone, names_ok && lo == hi);
}

bool RuleLifter::LoopbackIndexCmp(const Sym& sym, const ir::Cmp& e) {
  static const ir::Bytes kLoopback = {1, 0, 0, 0};  // index 1, host order
  const bool equality = e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq;
  if (equality && sym.chain.size() == 1 && e.data == kLoopback) return true;
  return Fail(absl::StrCat("compares ", sym.dim == Dim::kIifName ? "meta iif" : "meta oif",
                           " with an index other than lo's (1): which device has it "
                           "depends on the host (use iifname/oifname)"));
}


}  // namespace rulejit::headerspace::cube_lift
