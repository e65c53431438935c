// The asmjit emitter's expressions: one small emitter per IR expression
// kind (bounds-checked loads, compares, ranges, lookups, verdicts, ...) and
// the shared payload loads of compiler/lower/shared_loads.cc.
#include <cstddef>
#include <cstring>
#include <map>
#include <variant>

#include "absl/strings/str_cat.h"
#include "compiler/backend/asmjit/asmjit_emitter.h"

namespace rulejit::backend {

void Emitter::EmitBoundsCheck(ir::PayloadBase base, uint32_t offset, uint32_t len, Label next) {
  const ir::HeaderSlot slot = ir::PayloadSlot(base, offset, len);
  a_.mov(x86::eax, CtxField(offsetof(JitContext, header_off) +
                                4 * static_cast<uint32_t>(slot), 4));
  a_.cmp(x86::eax, imm(-1));
  a_.je(next);  // header absent
  a_.lea(x86::rcx, x86::ptr(x86::rax, static_cast<int32_t>(offset + len)));
  a_.cmp(x86::rcx, x86::r13);
  a_.ja(next);  // past the end of the frame
}

int Emitter::SharedIndex(const ir::PayloadLoad& e) const {
  const auto& shared = plan_.shared_loads;
  for (size_t i = 0; i < shared.size(); ++i) {
    if (shared[i].base == e.base && shared[i].offset == e.offset && shared[i].len == e.len) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void Emitter::EmitSharedLoader(size_t i) {
  const lower::SharedLoad& f = plan_.shared_loads[i];
  Label absent = a_.newLabel();
  a_.bind(loaders_[i]);
  a_.bts(x86::r14d, imm(i));
  EmitBoundsCheck(f.base, f.offset, f.len, absent);
  x86::Mem src = x86::ptr(x86::r12, x86::rax, 0, static_cast<int32_t>(f.offset));
  src.setSize(f.len);
  if (f.len == 4) {
    a_.mov(x86::edx, src);
  } else {
    a_.movzx(x86::edx, src);
  }
  a_.mov(CtxField(offsetof(JitContext, shared_values) + 4 * i, 4), x86::edx);
  a_.bts(x86::r15d, imm(i));
  a_.bind(absent);
  a_.ret();
}

void Emitter::EmitSharedValue(int i, Label next) {
  SharedMiss miss{i, a_.newLabel(), a_.newLabel(), next};
  a_.bt(x86::r15d, imm(i));
  a_.jnc(miss.entry);
  a_.bind(miss.back);
  a_.mov(x86::edx, CtxField(offsetof(JitContext, shared_values) + 4 * i, 4));
  shared_misses_.push_back(miss);
}

void Emitter::EmitSharedMiss(const SharedMiss& miss) {
  a_.bind(miss.entry);
  a_.bt(x86::r14d, imm(miss.field));
  a_.jc(miss.next);  // read before: absent
  a_.call(loaders_[miss.field]);
  a_.bt(x86::r15d, imm(miss.field));
  a_.jnc(miss.next);
  a_.jmp(miss.back);
}

void Emitter::Emit(const ir::PayloadLoad& e, Label next) {
  const uint32_t word = ir::RegWord(e.dreg);
  if (const int i = SharedIndex(e); i >= 0) {  // the value, zero-padded to a word
    EmitSharedValue(i, next);
    a_.mov(RegMem(word * 4, 4), x86::edx);
    return;
  }
  EmitBoundsCheck(e.base, e.offset, e.len, next);
  a_.lea(x86::rsi, x86::ptr(x86::r12, x86::rax, 0, static_cast<int32_t>(e.offset)));
  if (e.len % 4) a_.mov(RegMem(word * 4 + e.len / 4 * 4, 4), imm(0));
  ForEachChunk(e.len, [&](uint32_t off, uint32_t size) {
    x86::Gp tmp = Sized(x86::rdx, size);
    a_.mov(tmp, x86::Mem(x86::rsi, static_cast<int32_t>(off), size));
    a_.mov(RegMem(word * 4 + off, size), tmp);
  });
}

void Emitter::Emit(const ir::MetaLoad& e, Label next) {
  if (e.key == ir::MetaKey::kL4Proto) {  // the common `-p tcp` case inline
    a_.mov(x86::rax, CtxField(offsetof(JitContext, view), 8));
    a_.cmp(x86::byte_ptr(x86::rax, offsetof(PacketView, l4proto_valid)), imm(0));
    a_.je(next);
    a_.movzx(x86::ecx, x86::byte_ptr(x86::rax, offsetof(PacketView, l4proto)));
    a_.mov(RegMem(ir::RegWord(e.dreg) * 4, 4), x86::ecx);
    return;
  }
  EmitHelperCall(reinterpret_cast<const void*>(&JitMetaLoad), &e, next);
}

void Emitter::Emit(const ir::MetaSet& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitMetaSet), &e, next);
}

void Emitter::Emit(const ir::Exthdr& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitExthdr), &e, next);
}

void Emitter::Emit(const ir::Fib& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitFib), &e, next);
}

void Emitter::Emit(const ir::TimeMatch& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitTimeMatch), &e, next);
}

void Emitter::Emit(const ir::Socket& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitSocket), &e, next);
}

void Emitter::Emit(const ir::Tproxy& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitTproxy), &e, next);
}

void Emitter::Emit(const ir::StringMatch& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitStringMatch), &e, next);
}

void Emitter::Emit(const ir::Hash& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitHash), &e, next);
}

void Emitter::Emit(const ir::Ipv6HeaderMatch& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitIpv6Header), &e, next);
}

void Emitter::Emit(const ir::CtLoad& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitCtLoad), &e, next);
}

void Emitter::Emit(const ir::CtSet& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitCtSet), &e, next);
}

void Emitter::Emit(const ir::Bitwise& e, Label next) {
  if (e.op != ir::BitwiseOp::kMaskXor) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitBitwise), &e, next);
    return;
  }
  const uint32_t words = (e.len + 3) / 4;
  const uint32_t src = ir::RegWord(e.sreg), dst = ir::RegWord(e.dreg);
  for (uint32_t w = 0; w < words; ++w) {
    uint32_t mask, x;
    BitwiseWord(e, w, &mask, &x);
    a_.mov(x86::edx, RegMem((src + w) * 4, 4));
    a_.and_(x86::edx, imm(mask));
    if (x != 0) a_.xor_(x86::edx, imm(x));
    a_.mov(RegMem((dst + w) * 4, 4), x86::edx);
  }
}

void Emitter::Emit(const ir::Byteorder& e, Label next) {
  EmitHelperCall(reinterpret_cast<const void*>(&JitByteorder), &e, next);
}

void Emitter::Emit(const ir::Cmp& e, Label next) {
  const uint32_t word = ir::RegWord(e.sreg);
  const uint32_t len = e.data.size();
  if (e.op == ir::CmpOp::kEq || e.op == ir::CmpOp::kNeq) {
    EmitEquality(word, e.data, e.op == ir::CmpOp::kEq, next);
    return;
  }
  if (len != 1 && len != 2 && len != 4) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitCmp), &e, next);
    return;
  }
  EmitLoadBigEndian(word, len, x86::eax);
  a_.cmp(x86::eax, imm(BigEndianValue(e.data.data(), len)));
  EmitOrderBranch(e.op, next);
}

void Emitter::EmitEquality(uint32_t word, const ir::Bytes& data, bool eq, Label next) {
  Label differs = a_.newLabel();
  ForEachChunk(data.size(), [&](uint32_t off, uint32_t size) {
    uint64_t v = ChunkValue(data.data() + off, size);
    if (size == 8) {
      a_.mov(x86::rax, imm(v));
      a_.cmp(RegMem(word * 4 + off, 8), x86::rax);
    } else {
      a_.cmp(RegMem(word * 4 + off, size), imm(v));
    }
    a_.jne(eq ? next : differs);
  });
  if (!eq) {
    a_.jmp(next);
    a_.bind(differs);
  }
}

void Emitter::EmitLoadBigEndian(uint32_t word, uint32_t len, const x86::Gp& out) {
  if (len == 1) {
    a_.movzx(out, RegMem(word * 4, 1));
  } else if (len == 2) {
    a_.movzx(out, RegMem(word * 4, 2));
    a_.rol(out.r16(), imm(8));
  } else {
    a_.mov(out, RegMem(word * 4, 4));
    a_.bswap(out);
  }
}

void Emitter::Emit(const ir::Range& e, Label next) {
  const uint32_t len = e.from.size();
  if (len != 1 && len != 2 && len != 4) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitRange), &e, next);
    return;
  }
  // inside = (v - from) <= (to - from), unsigned.
  const uint32_t from = BigEndianValue(e.from.data(), len);
  const uint32_t to = BigEndianValue(e.to.data(), len);
  EmitLoadBigEndian(ir::RegWord(e.sreg), len, x86::eax);
  if (to < from) {  // empty range: eq never matches, neq always does
    if (!e.negate) a_.jmp(next);
    return;
  }
  a_.sub(x86::eax, imm(from));
  a_.cmp(x86::eax, imm(to - from));
  if (e.negate) {
    a_.jbe(next);
  } else {
    a_.ja(next);
  }
}

void Emitter::Emit(const ir::Lookup& e, Label next) {
  JitLookupOp& op = MakeLookupOp(ruleset_, layout_, table_, e, module_.set_indexes_,
                                 module_.lookups_);
  const bool vmap = e.dreg && *e.dreg == ir::kVerdictReg;
  // A found element without a verdict leaves the verdict untouched.
  if (vmap) a_.mov(CtxField(offsetof(JitContext, verdict_reg), 4), imm(kVmapContinue));
  EmitHelperCall(reinterpret_cast<const void*>(&JitLookup), &op, next);
  if (vmap) EmitVmapDispatch(next);
}

void Emitter::EmitVmapDispatch(Label next) {
  Label cont = a_.newLabel(), accept = a_.newLabel(), drop = a_.newLabel(),
        ret = a_.newLabel(), jump = a_.newLabel();
  a_.mov(x86::eax, CtxField(offsetof(JitContext, verdict_reg), 4));
  a_.movzx(x86::ecx, x86::al);
  a_.shr(x86::eax, imm(8));  // target chain index
  a_.cmp(x86::ecx, imm(kVmapContinue));
  a_.je(cont);
  a_.cmp(x86::ecx, imm(kVmapAccept));
  a_.je(accept);
  a_.cmp(x86::ecx, imm(kVmapDrop));
  a_.je(drop);
  a_.cmp(x86::ecx, imm(kVmapReturn));
  a_.je(ret);
  a_.mov(x86::rdx, imm(reinterpret_cast<uint64_t>(module_.bodies_.data())));
  a_.mov(x86::rax, x86::qword_ptr(x86::rdx, x86::rax, 3));
  a_.cmp(x86::ecx, imm(kVmapJump));
  a_.je(jump);
  a_.add(x86::rsp, 8);  // goto: tail jump
  a_.jmp(x86::rax);
  a_.bind(jump);
  a_.call(x86::rax);
  a_.test(x86::eax, x86::eax);
  a_.jz(next);
  a_.add(x86::rsp, 8);
  a_.ret();
  a_.bind(accept);
  EmitDecide(kJitAccept);
  a_.bind(drop);
  EmitDecide(kJitDrop);
  a_.bind(ret);
  EmitReturn(kJitContinue);
  a_.bind(cont);
}

void Emitter::Emit(const ir::Immediate& e, Label next) {
  if (e.dreg != ir::kVerdictReg) {
    EmitStoreConst(ir::RegWord(e.dreg), e.data);
    return;
  }
  EmitVerdict(e.verdict, next);
}

void Emitter::EmitVerdict(const ir::Verdict& v, Label next) {
  switch (v.code) {
    case ir::VerdictCode::kAccept: EmitDecide(kJitAccept); return;
    case ir::VerdictCode::kDrop: EmitDecide(kJitDrop); return;
    case ir::VerdictCode::kReturn:
      if (inlining_) {
        a_.jmp(inline_return_);
      } else {
        EmitReturn(kJitContinue);
      }
      return;
    case ir::VerdictCode::kContinue: return;
    case ir::VerdictCode::kQueue: return;  // never an immediate (verifier)
    case ir::VerdictCode::kBreak: a_.jmp(next); return;
    case ir::VerdictCode::kJump:
      if (!inlining_ && InlinedAtJumps(v.chain)) {
        EmitInlined(v.chain, next);
        return;
      }
      a_.call(bodies_[TargetIndex(v.chain)]);
      a_.test(x86::eax, x86::eax);
      a_.jz(next);  // the callee fell off or returned: next rule
      a_.add(x86::rsp, 8);
      a_.ret();     // accept/drop: pass it up
      return;
    case ir::VerdictCode::kGoto:
      a_.add(x86::rsp, 8);
      a_.jmp(bodies_[TargetIndex(v.chain)]);
      return;
  }
}

uint32_t Emitter::TargetIndex(const std::string& name) const {
  return TargetChainIndex(ruleset_, layout_, table_, name, chain_index());
}

void Emitter::Emit(const ir::Counter&, Label) {
  Label skip = a_.newLabel();
  a_.mov(x86::rax, CtxField(offsetof(JitContext, counters), 8));
  a_.test(x86::rax, x86::rax);
  a_.jz(skip);
  const int32_t slot = static_cast<int32_t>(rule_id_ * sizeof(ir::Counter));
  a_.add(x86::qword_ptr(x86::rax, slot + offsetof(ir::Counter, packets)), imm(1));
  a_.mov(x86::ecx, CtxField(offsetof(JitContext, skb_len), 4));
  a_.add(x86::qword_ptr(x86::rax, slot + offsetof(ir::Counter, bytes)), x86::rcx);
  a_.bind(skip);
}

void Emitter::Emit(const ir::Limit& e, Label next) {
  JitLimitOp& op = module_.limits_.emplace_back(JitLimitOp{e, module_.limit_count_++});
  EmitHelperCall(reinterpret_cast<const void*>(&JitLimit), &op, next);
}

void Emitter::Emit(const ir::Log& e, Label next) {
  JitLogOp& op = module_.logs_.emplace_back(JitLogOp{&e, rule_id_});
  EmitHelperCall(reinterpret_cast<const void*>(&JitLog), &op, next);
}

void Emitter::EmitFusedValue(const ir::FusedCmp& e, uint32_t width, Label next) {
  const uint32_t len = e.load.len;
  if (const int i = SharedIndex(e.load); i >= 0) {
    EmitSharedValue(i, next);
  } else {
    EmitBoundsCheck(e.load.base, e.load.offset, len, next);
    const x86::Gp value = width == 8 ? x86::Gp(x86::rdx) : x86::Gp(x86::edx);
    x86::Mem src = x86::ptr(x86::r12, x86::rax, 0, static_cast<int32_t>(e.load.offset));
    src.setSize(len);
    if (len <= 2) {
      a_.movzx(x86::edx, src);
    } else {
      a_.mov(value, src);
    }
  }
  const uint64_t keep_bits = FusedKeepBits(e, width);
  const uint64_t all = width == 8 ? ~0ull : 0xffffffffull;
  if (keep_bits == all) return;
  if (width == 8) {
    a_.mov(x86::rcx, imm(keep_bits));
    a_.and_(x86::rdx, x86::rcx);
  } else {
    a_.and_(x86::edx, imm(keep_bits));
  }
}

void Emitter::Emit(const ir::FusedCmp& e, Label next) {
  const uint32_t len = e.load.len;
  const uint32_t width = len == 8 ? 8 : 4;
  const uint32_t cmp_len = e.data.size();
  const bool ordered = e.op != ir::CmpOp::kEq && e.op != ir::CmpOp::kNeq;
  if (!FusedCmpInline(e)) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitFusedCmp), &e, next);
    return;
  }
  EmitFusedValue(e, width, next);
  if (ordered) {
    if (cmp_len == 4) a_.bswap(x86::edx);
    if (cmp_len == 2) a_.rol(x86::dx, imm(8));
    a_.cmp(x86::edx, imm(BigEndianValue(e.data.data(), cmp_len)));
    EmitOrderBranch(e.op, next);
    return;
  }
  uint8_t want[8] = {};
  std::memcpy(want, e.data.data(), std::min<size_t>(cmp_len, width));
  const uint64_t want_bits = ChunkValue(want, width);
  if (width == 8) {
    a_.mov(x86::rcx, imm(want_bits));
    a_.cmp(x86::rdx, x86::rcx);
  } else {
    a_.cmp(x86::edx, imm(want_bits));
  }
  if (e.op == ir::CmpOp::kEq) {
    a_.jne(next);
  } else {
    a_.je(next);
  }
}

void Emitter::Emit(const ir::Reject& e, Label) {
  a_.mov(CtxField(offsetof(JitContext, rejected), 4), imm(JitRejectWord(e)));
  EmitDecide(kJitDrop);
}

void Emitter::EmitOrderBranch(ir::CmpOp op, Label next) {
  switch (op) {  // unsigned: memcmp order
    case ir::CmpOp::kLt: a_.jae(next); break;
    case ir::CmpOp::kLte: a_.ja(next); break;
    case ir::CmpOp::kGt: a_.jbe(next); break;
    case ir::CmpOp::kGte: a_.jb(next); break;
    default: break;
  }
}

}  // namespace rulejit::backend
