// Rule → box lifting (see lift_box.h): the box policy of the one rule
// walk (lift_walk.h). The walk keeps the registers and dispatches; this
// file says what a box knows: which loads are box fields, that a loaded
// field excludes "absent", how a prefix-masked compare narrows a field to
// an interval, and which action parts a classified rule may have.
#include "compiler/headerspace/lift_box.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/headerspace/fields.h"
#include "compiler/headerspace/lift_walk.h"
#include "ir/rule_shape.h"
#include "ir/util.h"

namespace rulejit::headerspace {
namespace {

// An inclusive interval of a field's values; lo > hi is empty.
struct FieldInterval {
  uint64_t lo, hi;
  bool empty() const { return lo > hi; }
};

// What the lifter knows a register holds: field `dim` shifted right by
// `shift` bits (a load of its first bytes only), ANDed with `mask` (a
// prefix mask once shifted back). Where it sits is the walk's
// (lift_walk.h).
struct Tracked {
  int dim;
  uint64_t mask;
  int shift;
};

uint32_t FieldLen(int dim) { return kDimBits[dim] / 8; }

// The payload fields of the box (fields.h's IPv4 fields with a box
// dimension), gathered once: lifting looks every load up here.
struct BoxField {
  ir::PayloadBase base;
  uint32_t offset, len;
  int dim;
};
constexpr auto kBoxFields = [] {
  std::array<BoxField, kBoxDims> out{};
  size_t n = 0;
  for (const FieldBytes& f : kFields4) {
    if (BoxPayloadDim(f.dim) >= 0) out[n++] = {f.base, f.begin, f.end - f.begin, BoxPayloadDim(f.dim)};
  }
  return out;
}();

// The box dimension whose whole field a payload load reads, or -1.
int PayloadDim(const ir::PayloadLoad& e) {
  for (const BoxField& f : kBoxFields) {
    if (f.len == e.len && f.offset == e.offset && f.base == e.base && f.len > 0) return f.dim;
  }
  return -1;
}

// The address dimension whose first 1 to 3 bytes a load reads, or -1.
int AddressPrefixDim(const ir::PayloadLoad& e) {
  for (const BoxField& f : kBoxFields) {
    if ((f.dim == kSrcAddr || f.dim == kDstAddr) && f.base == e.base && f.offset == e.offset &&
        e.len >= 1 && e.len < f.len) {
      return f.dim;
    }
  }
  return -1;
}

// True when `mask` (over `dim`'s bits) is a run of ones from the top.
bool IsPrefixMask(uint64_t mask, int dim) {
  uint64_t inv = ~mask & FieldMax(dim);
  return (inv & (inv + 1)) == 0;
}

// {x in [0, max] : (x & mask) OP v} for a prefix mask: an interval, because
// x & mask is non-decreasing in x and its values are the block starts.
FieldInterval MaskedOrder(ir::CmpOp op, uint64_t v, uint64_t mask, int dim) {
  const uint64_t max = FieldMax(dim);
  const uint64_t inv = ~mask & max;
  const FieldInterval none{1, 0};
  auto at_most = [&](uint64_t t) { return FieldInterval{0, (t & mask) | inv}; };
  auto at_least = [&](uint64_t t) -> FieldInterval {
    uint64_t start = (t & mask) == t ? t : (t & mask) + inv + 1;
    return start > max ? none : FieldInterval{start, max};
  };
  switch (op) {
    case ir::CmpOp::kEq: return (v & inv) ? none : FieldInterval{v, v | inv};
    case ir::CmpOp::kLte: return at_most(v);
    case ir::CmpOp::kLt: return v == 0 ? none : at_most(v - 1);
    case ir::CmpOp::kGte: return at_least(v);
    case ir::CmpOp::kGt: return v == max ? none : at_least(v + 1);
    case ir::CmpOp::kNeq: break;  // handled by the caller as a complement
  }
  return none;
}

// The complement of `in` within [0, max] when it is one interval.
std::optional<FieldInterval> Complement(FieldInterval in, int dim) {
  const uint64_t max = FieldMax(dim);
  if (in.empty()) return FieldInterval{0, max};
  if (in.lo == 0 && in.hi == max) return FieldInterval{1, 0};
  if (in.lo == 0) return FieldInterval{in.hi + 1, max};
  if (in.hi == max) return FieldInterval{0, in.lo - 1};
  return std::nullopt;
}

// The box policy of RuleWalk: the match part (payload, meta, mask,
// compare, range, fused compare) narrows the box; the first other
// expression starts the action part, which may hold counter/log
// statements and then one final verdict.
class BoxLifter {
 public:
  using Slot = SymbolicRegisters<Tracked>::Slot;
  explicit BoxLifter(const BoxContext& context) : context_(context) {}

  absl::StatusOr<LiftedBox> Run(const ir::Rule& rule) {
    if (rule.exprs.empty()) {  // a no-op (passes blank removed rules): never first
      LiftedBox out;
      out.box.lo[0] = 1;
      out.box.hi[0] = 0;
      return out;
    }
    walk_.Run(rule.exprs);
    if (!status_.ok()) return status_;
    if (in_match_ && !EndMatchPart(rule.exprs.size())) return status_;
    if (!ended_) return NotLiftable("the rule has no verdict (evaluation goes on with the next rule)");
    LiftedBox out;
    out.box = box_;
    out.action_begin = action_begin_;
    return out;
  }

  // --- RuleWalk hooks (lift_walk.h)

  // The first-fragment test as a whole; the end of the match part; an
  // action part of counter/log statements and a last, final verdict.
  size_t Claim(const std::vector<ir::Node>& exprs, size_t i) {
    index_ = i;
    const ir::Expr& e = exprs[i].expr;
    if (in_match_) {
      if (ir::IsMatchExpr(e)) return FirstFragmentTest(exprs, i);
      if (!EndMatchPart(i)) return kStopWalk;
    }
    if (std::holds_alternative<ir::Counter>(e) || std::holds_alternative<ir::Log>(e)) return 0;
    const auto* imm = std::get_if<ir::Immediate>(&e);
    const bool verdict = std::holds_alternative<ir::Reject>(e) || (imm && imm->dreg == ir::kVerdictReg);
    if (verdict && i + 1 == exprs.size()) return 0;
    Fail(absl::StrCat("expression ", i + 1, " is neither a match, a counter/log nor a final verdict"));
    return kStopWalk;
  }
  bool Done() const { return false; }
  static bool Readable(const Slot& slot, size_t len) { return slot.len == len; }
  bool NoSource(const char* what, int /*word*/) {
    return Fail(absl::StrCat(what, " on a register that holds no loaded field"));
  }
  bool BadWrite(ir::Reg /*reg*/) { return Fail("register out of range"); }

  bool Payload(const ir::PayloadLoad& e) {
    int dim = -1;
    const int shift = PrefixShift(e, dim);
    if (shift < 0) return Fail("payload load of a field the classifier does not model");
    return Load(e.dreg, e.len, Tracked{dim, FieldMax(dim) >> shift, shift});
  }

  bool Meta(const ir::MetaLoad& e) {
    if (e.key != ir::MetaKey::kL4Proto) {
      return Fail(absl::StrCat("meta ", ir::MetaKeyName(e.key), " is not modelled"));
    }
    return Load(e.dreg, ir::MetaKeyLen(e.key), Tracked{kProto, FieldMax(kProto), 0});
  }

  bool CanDerive(const ir::Bitwise& e) {
    return e.op == ir::BitwiseOp::kMaskXor || Fail("bitwise shift");
  }

  std::optional<Tracked> Derive(const Tracked& src, const ir::Bitwise& e) {
    if (e.mask.size() < e.len) return Refuse("bitwise mask shorter than its length");
    for (size_t i = 0; i < e.len && i < e.xor_.size(); ++i) {
      if (e.xor_[i] != 0) return Refuse("bitwise with a non-zero xor");
    }
    uint64_t mask = ir::BigEndian<uint64_t>(e.mask.data(), e.len) & src.mask;
    if (!IsPrefixMask(mask << src.shift, src.dim)) return Refuse("bitwise mask is not a prefix");
    Tracked t = src;
    t.mask = mask;
    return t;
  }

  bool Compare(const Tracked& src, const ir::Cmp& e) {
    return Constrain(src.dim, src.mask << src.shift, e.op,
                     ir::BigEndian<uint64_t>(e.data.data(), e.data.size()) << src.shift);
  }

  bool Range(const ir::Range& e) {
    if (e.from.size() != e.to.size()) return Fail("range bounds of different lengths");
    const Tracked* src = walk_.Read(e.sreg, e.from.size(), "range");
    if (src == nullptr) return false;
    const int dim = src->dim;
    const int shift = src->shift;
    const uint64_t mask = src->mask << shift;
    FieldInterval a = MaskedOrder(ir::CmpOp::kGte, ir::BigEndian<uint64_t>(e.from.data(), e.from.size()) << shift,
                                  mask, dim);
    FieldInterval b = MaskedOrder(ir::CmpOp::kLte, ir::BigEndian<uint64_t>(e.to.data(), e.to.size()) << shift,
                                  mask, dim);
    FieldInterval in{1, 0};
    if (!a.empty() && !b.empty() && std::max(a.lo, b.lo) <= std::min(a.hi, b.hi)) {
      in = FieldInterval{std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
    if (e.negate) {
      std::optional<FieldInterval> out = Complement(in, dim);
      if (!out) return Fail("range neq leaves two intervals");
      in = *out;
    }
    Intersect(dim, in);
    return true;
  }

  bool Fused(const ir::FusedCmp& e) {
    if (IsPortPair(e.load)) return FusedPorts(e);
    int dim = -1;
    const int shift = PrefixShift(e.load, dim);
    if (shift < 0) return Fail("fused compare on a field the classifier does not model");
    const uint32_t len = e.load.len;
    if (e.data.size() != len) return Fail("fused compare of a different length than its load");
    uint64_t mask = FieldMax(dim) >> shift;
    if (!e.mask.empty()) {
      if (e.mask.size() < len) return Fail("fused mask shorter than its load");
      mask = ir::BigEndian<uint64_t>(e.mask.data(), len);
      if (!IsPrefixMask(mask << shift, dim)) return Fail("fused mask is not a prefix");
    }
    Require(dim);
    return Constrain(dim, mask << shift, e.op, ir::BigEndian<uint64_t>(e.data.data(), len) << shift);
  }

  // Claim lets only a last verdict through.
  bool Verdict(ir::VerdictCode code, const std::string& /*target*/, size_t /*i*/) {
    if (!ir::EndsChain(code)) return Fail("the verdict does not end the chain walk (jump/continue)");
    ended_ = true;
    return true;
  }
  // Claim lets only counter and log statements through.
  bool Other(const ir::Expr& e, size_t i) {
    if (std::holds_alternative<ir::Counter>(e) || std::holds_alternative<ir::Log>(e)) return true;
    return Fail(absl::StrCat("expression ", i + 1, " is neither a match, a counter/log nor a final verdict"));
  }

 private:
  // The match part ends before exprs[i]: in first-fragment mode the test
  // and the port matches must have come together.
  bool EndMatchPart(size_t i) {
    in_match_ = false;
    action_begin_ = i;
    return CheckFragmentMode();
  }

  // The bits of field `dim` a partial load of `len` bytes drops (0 for a
  // whole field; -1 when the load is no prefix the context allows).
  int PrefixShift(const ir::PayloadLoad& e, int& dim) const {
    dim = PayloadDim(e);
    if (dim >= 0) return 0;
    if (!context_.complete_ipv4_header) return -1;
    dim = AddressPrefixDim(e);
    return dim < 0 ? -1 : static_cast<int>(8 * (FieldLen(dim) - e.len));
  }

  // A load: the register holds the field, and packets without it never
  // match.
  bool Load(ir::Reg reg, uint32_t len, Tracked t) {
    if (!walk_.Write(reg, len, t)) return false;
    Require(t.dim);
    return true;
  }

  // In first-fragment mode (BoxContext): the test goes with a port match
  // and every port match with the test, so the box is exact.
  bool CheckFragmentMode() {
    if (!context_.ports_first_fragment_only) return true;
    const bool ports = box_.Requires(kSrcPort) || box_.Requires(kDstPort);
    if (ports && !first_fragment_test_) {
      return Fail("port match without the first-fragment test (it reads fragments)");
    }
    if (first_fragment_test_ && !ports) {
      return Fail("first-fragment test without a port match");
    }
    return true;
  }

  // In first-fragment mode, how many expressions from exprs[i] are the
  // test `frag-off & 0x1fff == 0` (load 2b @ network + 6, mask, cmp eq 0;
  // or their fused form), whose register nothing reads after (0: not the
  // test).
  size_t FirstFragmentTest(const std::vector<ir::Node>& exprs, size_t i) {
    if (!context_.ports_first_fragment_only || !context_.complete_ipv4_header) return 0;
    const size_t n = FragmentTestLength(exprs, i);
    if (n > 0) first_fragment_test_ = true;
    if (n == 3) {  // the register now holds no field the lifter tracks
      walk_.Forget(std::get<ir::PayloadLoad>(exprs[i].expr).dreg, 4);
    }
    return n;
  }

  static size_t FragmentTestLength(const std::vector<ir::Node>& exprs, size_t i) {
    auto is_frag_load = [](const ir::PayloadLoad& l) {
      return l.base == ir::PayloadBase::kNetwork && l.offset == 6 && l.len == 2;
    };
    auto is_frag_mask = [](const ir::Bytes& m) {
      return m.size() >= 2 && m[0] == 0x1f && m[1] == 0xff;
    };
    auto is_zero2 = [](const ir::Bytes& d) {
      return d.size() == 2 && d[0] == 0 && d[1] == 0;
    };
    if (const auto* f = std::get_if<ir::FusedCmp>(&exprs[i].expr)) {
      return is_frag_load(f->load) && is_frag_mask(f->mask) && f->op == ir::CmpOp::kEq &&
                     is_zero2(f->data)
                 ? 1
                 : 0;
    }
    const auto* load = std::get_if<ir::PayloadLoad>(&exprs[i].expr);
    if (load == nullptr || !is_frag_load(*load) || i + 2 >= exprs.size()) return 0;
    const auto* mask = std::get_if<ir::Bitwise>(&exprs[i + 1].expr);
    const auto* cmp = std::get_if<ir::Cmp>(&exprs[i + 2].expr);
    if (mask == nullptr || cmp == nullptr || mask->op != ir::BitwiseOp::kMaskXor ||
        mask->sreg != load->dreg || mask->dreg != load->dreg || mask->len != 2 ||
        !is_frag_mask(mask->mask) || cmp->sreg != load->dreg || cmp->op != ir::CmpOp::kEq ||
        !is_zero2(cmp->data)) {
      return 0;
    }
    for (uint8_t b : mask->xor_) {
      if (b != 0) return 0;
    }
    return 3;
  }

  // Both ports in one 4-byte load (the passes fuse `sport == a && dport ==
  // b` so): equality splits into one equality per port.
  static bool IsPortPair(const ir::PayloadLoad& e) {
    return e.base == ir::PayloadBase::kTransport && e.offset == 0 && e.len == 4;
  }
  bool FusedPorts(const ir::FusedCmp& e) {
    if (e.op != ir::CmpOp::kEq) return Fail("ordered or neq compare of both ports at once");
    if (e.data.size() != 4 || (!e.mask.empty() && e.mask.size() < 4)) {
      return Fail("fused port pair of another length");
    }
    const uint64_t value = ir::BigEndian<uint64_t>(e.data.data(), 4);
    const uint64_t mask = e.mask.empty() ? 0xffffffffu : ir::BigEndian<uint64_t>(e.mask.data(), 4);
    for (int dim : {kSrcPort, kDstPort}) {
      const int shift = dim == kSrcPort ? 16 : 0;
      const uint64_t half_mask = (mask >> shift) & 0xffff;
      if (!IsPrefixMask(half_mask, dim)) return Fail("fused port mask is not a prefix");
      Require(dim);
      if (!Constrain(dim, half_mask, ir::CmpOp::kEq, (value >> shift) & 0xffff)) return false;
    }
    return true;
  }

  // Narrows `dim` to {x : (x & mask) OP v}.
  bool Constrain(int dim, uint64_t mask, ir::CmpOp op, uint64_t v) {
    FieldInterval in;
    if (op == ir::CmpOp::kNeq) {
      std::optional<FieldInterval> out = Complement(MaskedOrder(ir::CmpOp::kEq, v, mask, dim), dim);
      if (!out) return Fail("neq leaves two intervals");
      in = *out;
    } else {
      in = MaskedOrder(op, v, mask, dim);
    }
    Intersect(dim, in);
    return true;
  }

  // A loaded field: packets without it never match.
  void Require(int dim) { box_.hi[dim] = std::min(box_.hi[dim], FieldMax(dim)); }

  void Intersect(int dim, FieldInterval in) {
    if (in.empty()) {
      box_.lo[dim] = 1;  // an empty box: the rule never matches
      box_.hi[dim] = 0;
      return;
    }
    box_.lo[dim] = std::max(box_.lo[dim], in.lo);
    box_.hi[dim] = std::min(box_.hi[dim], in.hi);
  }

  // Records why the rule does not lift (in the match part, naming the
  // expression); false.
  bool Fail(std::string_view why) {
    status_ = in_match_ ? absl::FailedPreconditionError(absl::StrCat("expression ", index_ + 1, ": ", std::string(why)))
                        : NotLiftable(why);
    return false;
  }
  std::nullopt_t Refuse(std::string_view why) {
    Fail(why);
    return std::nullopt;
  }

  static absl::Status NotLiftable(std::string_view why) {
    return absl::FailedPreconditionError(std::string(why));
  }

  const BoxContext& context_;
  RuleWalk<BoxLifter, Tracked> walk_{*this};
  bool in_match_ = true;       // still in the match part
  size_t index_ = 0;           // of the expression being walked
  size_t action_begin_ = 0;
  bool first_fragment_test_ = false;
  bool ended_ = false;         // a final verdict ended the rule
  absl::Status status_;
  Box box_;
};

}  // namespace

BoxContext BoxContextForChain(const ir::Table& table, const ir::Chain& chain) {
  BoxContext context;
  context.complete_ipv4_header = table.family == ir::Family::kIp;
  if (!context.complete_ipv4_header) return context;
  // Some rule reads the fragment offset (the iptables frontend's test):
  // iptables port rules all carry it, nft ones never.
  auto reads_frag_off = [](const ir::Expr& e) {
    const ir::PayloadLoad* l = nullptr;
    if (const auto* f = std::get_if<ir::FusedCmp>(&e)) l = &f->load;
    if (const auto* p = std::get_if<ir::PayloadLoad>(&e)) l = p;
    return l != nullptr && l->base == ir::PayloadBase::kNetwork && l->offset == 6 && l->len == 2;
  };
  for (const ir::Rule& rule : chain.rules) {
    for (const ir::Node& node : rule.exprs) {
      if (reads_frag_off(node.expr)) {
        context.ports_first_fragment_only = true;
        return context;
      }
    }
  }
  return context;
}

absl::StatusOr<LiftedBox> LiftToBox(const ir::Rule& rule, const BoxContext& context) {
  return BoxLifter(context).Run(rule);
}

}  // namespace rulejit::headerspace
