// The cube policy's side effects for packet paths (lift_cube.h: Effect):
// what a rule writes that later hooks read, recorded when the lifter was
// made for a path walk (compiler/analysis/path_walk.h). Only constants are
// modelled: a value computed from the packet, a NAT to a range, a
// masquerade or redirect (whose address is the device's) fail the rule
// with the reason, so the walk reports them as not modelled.
#include "absl/strings/str_cat.h"
#include "compiler/headerspace/lift_cube_internal.h"
#include "ir/util.h"

namespace rulejit::headerspace::cube_lift {

// The constant register `reg` holds (its first `len` bytes, read
// big-endian: the dimension's coordinate); nullopt when it holds none.
std::optional<Value> RuleLifter::ConstantIn(std::optional<ir::Reg> reg, uint32_t len) {
  if (!reg) return std::nullopt;
  const Sym* sym = Read(*reg, len, "a statement");
  if (sym == nullptr || !sym->constant || sym->chain.size() != 1) return std::nullopt;
  const auto* imm = std::get_if<ir::Immediate>(&sym->chain.front());
  if (imm == nullptr || imm->data.size() < len) return std::nullopt;
  Value v = 0;
  for (uint32_t i = 0; i < len; ++i) v = v << 8 | imm->data[i];
  return v;
}

bool RuleLifter::RecordNat(const ir::Nat& e) {
  if ((e.flags & ir::kNatNetmap) != 0) return Fail("NETMAP maps a prefix (not modelled)");
  Effect effect{.kind = e.kind == NatKind::kDnat   ? Effect::Kind::kDnat
                        : e.kind == NatKind::kSnat ? Effect::Kind::kSnat
                        : e.kind == NatKind::kMasq ? Effect::Kind::kMasq
                                                   : Effect::Kind::kRedir};
  const bool device = e.kind == NatKind::kMasq || e.kind == NatKind::kRedir;
  const uint32_t addr_len = e.family == ir::Family::kIp6 ? 16 : 4;
  if (e.addr_min && !device) {
    const uint32_t want = packet_family_ == kFamilyIpv6 ? 16 : 4;
    if (addr_len != want) return Fail("NAT to an address of the other family (not modelled)");
    std::optional<Value> lo = ConstantIn(e.addr_min, addr_len);
    std::optional<Value> hi = e.addr_max ? ConstantIn(e.addr_max, addr_len) : lo;
    if (!lo || !hi) return Fail("NAT to an address that is not a constant (not modelled)");
    if (*lo != *hi) return Fail("NAT to an address range (not modelled: the kernel picks one)");
    effect.has_addr = true;
    effect.value = *lo;
  }
  if (e.proto_min) {
    std::optional<Value> lo = ConstantIn(e.proto_min, 2);
    std::optional<Value> hi = e.proto_max ? ConstantIn(e.proto_max, 2) : lo;
    if (!lo || !hi) return Fail("NAT to a port that is not a constant (not modelled)");
    if (*lo != *hi) return Fail("NAT to a port range (not modelled: the kernel picks one)");
    effect.has_port = true;
    effect.port = static_cast<uint16_t>(*lo);
  }
  effects_.push_back(effect);
  result_.verdict = ir::VerdictCode::kAccept;  // nft_nat_eval: NF_ACCEPT
  return true;
}

// A mark set from a value: a mark (meta or ct) loaded whole, then at most
// one mask-and-xor over its 4 bytes.
std::optional<Effect> RuleLifter::MarkFrom(ir::Reg reg, Effect::Kind kind) {
  const Sym* sym = Read(reg, 4, "a statement");
  if (sym == nullptr || sym->constant || sym->merged) return std::nullopt;
  if (sym->dim != Dim::kMark && sym->dim != Dim::kCtMark) return std::nullopt;
  Effect e{.kind = kind, .from = sym->dim};
  if (sym->chain.size() > 2) return std::nullopt;
  if (sym->chain.size() == 2) {
    const auto* b = std::get_if<ir::Bitwise>(&sym->chain[1]);
    if (b == nullptr || b->op != ir::BitwiseOp::kMaskXor || b->len != 4 || b->mask.size() < 4 ||
        b->xor_.size() < 4) {
      return std::nullopt;
    }
    e.mask = e.xor_ = 0;
    for (int i = 0; i < 4; ++i) {
      e.mask = e.mask << 8 | b->mask[i];
      e.xor_ = e.xor_ << 8 | b->xor_[i];
    }
  }
  return e;
}

bool RuleLifter::RecordEffect(const ir::Expr& expr) {
  if (const auto* set = std::get_if<ir::MetaSet>(&expr)) {
    if (set->key != ir::MetaKey::kMark) {
      return Fail(absl::StrCat("sets meta ", ir::MetaKeyName(set->key), " (not modelled)"));
    }
    std::optional<Value> v = ConstantIn(set->sreg, 4);
    std::optional<Effect> copy = v ? std::nullopt : MarkFrom(set->sreg, Effect::Kind::kSetMark);
    if (!v && !copy) {
      return Fail("sets meta mark to a value that is neither a constant nor a mark (not modelled)");
    }
    effects_.push_back(copy ? *copy : Effect{.kind = Effect::Kind::kSetMark, .value = *v});
    return true;
  }
  if (const auto* set = std::get_if<ir::CtSet>(&expr)) {
    if (set->key != ir::CtKey::kMark || set->dir != ir::CtDir::kNone) {
      return Fail("sets a ct key other than mark (not modelled)");
    }
    std::optional<Value> v = ConstantIn(set->sreg, 4);
    std::optional<Effect> copy = v ? std::nullopt : MarkFrom(set->sreg, Effect::Kind::kSetCtMark);
    if (!v && !copy) {
      return Fail("sets ct mark to a value that is neither a constant nor a mark (not modelled)");
    }
    effects_.push_back(copy ? *copy : Effect{.kind = Effect::Kind::kSetCtMark, .value = *v});
    return true;
  }
  if (std::holds_alternative<ir::Notrack>(expr)) {
    effects_.push_back({.kind = Effect::Kind::kNotrack});
    return true;
  }
  return RecordNat(std::get<ir::Nat>(expr));
}

}  // namespace rulejit::headerspace::cube_lift
