// The asmjit backend's emitter (internal to compiler/backend/asmjit): one
// object per compile that writes the whole ruleset into one code buffer.
// Its methods are split by concern: asmjit_emit_chain.cc (trampolines,
// chain bodies, set runs, classified runs, inlined chains) and
// asmjit_emit_expr.cc (one emitter per expression kind, shared loads);
// asmjit_backend.cc drives it (CompileAsmjit). Register conventions and
// the code layout: asmjit_backend.h.
#ifndef RULEJIT_COMPILER_BACKEND_ASMJIT_ASMJIT_EMITTER_H_
#define RULEJIT_COMPILER_BACKEND_ASMJIT_ASMJIT_EMITTER_H_

#include <asmjit/x86.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/backend/asmjit/asmjit_backend.h"
#include "compiler/backend/common/emit_util.h"

namespace rulejit::backend {

namespace x86 = asmjit::x86;
using asmjit::imm;
using asmjit::Label;

inline constexpr int32_t kRegsOff = offsetof(JitContext, regs);

inline x86::Mem CtxField(size_t offset, uint32_t size) {
  return x86::Mem(x86::rbx, static_cast<int32_t>(offset), size);
}
inline x86::Mem RegMem(uint32_t byte_offset, uint32_t size) {
  return CtxField(kRegsOff + byte_offset, size);
}

// A general-purpose register of `size` bytes from the rdx family / rax family.
inline x86::Gp Sized(const x86::Gp& reg64, uint32_t size) {
  switch (size) {
    case 8: return reg64.r64();
    case 4: return reg64.r32();
    case 2: return reg64.r16();
    default: return reg64.r8();
  }
}

// Emits the whole ruleset into one code buffer.
class Emitter {
 public:
  Emitter(const ir::Ruleset& ruleset, const lower::Plan& plan, JitModule& module,
          x86::Assembler& a)
      : ruleset_(ruleset), layout_(plan.layout), plan_(plan), module_(module), a_(a) {}

  void EmitAll();

  const std::vector<Label>& bodies() const { return bodies_; }
  const std::vector<Label>& trampolines() const { return trampolines_; }

 private:
  uint32_t chain_index() const { return layout_.ChainIndex(table_, chain_); }

  // push callee-saved, set up rbx/r12/r13, call the body, apply the policy.
  void EmitTrampoline(const ir::Chain& chain);

  void EmitBody(const ir::Chain& chain);

  // The chain's rules in order, for a body or inlined at a jump: its
  // segments as the plan has them.
  void EmitRules(const ir::Chain& chain);

  void EmitRule(const ir::Chain& chain, uint32_t r);

  // `jump` to a chain the plan inlines at jumps (compiler/lower/
  // inline_chains.cc): its rules in place, under its own chain and rule
  // ids; `return` and falling off go to the jumping rule's next rule.
  // Inlined chains never jump, so this never nests.
  void EmitInlined(const std::string& name, Label next);

  bool InlinedAtJumps(const std::string& name) const;

  // Rules [begin, end) alike but for the constant of equality `node`
  // (compiler/lower/set_runs.cc):
  //   shared prefix (exprs [0, node) of rule begin)    ; fails: after
  //   edx = the compared value (register bytes or masked payload)
  //   compare tree over the sorted constants          ; none equal: after
  //   key k: rest of each rule with constant k, in rule order, each
  //          going on to the next such rule, the last to after
  void EmitSetRun(const ir::Chain& chain, const lower::SetRun& run);

  // edx = the value an equality of a set run compares, as ChunkValue of
  // its bytes (any consistent order serves the compare tree).
  void EmitEqualityKey(const ir::Expr& expr, Label fail);

  static uint32_t EqualityConstant(const ir::Expr& expr);

  // Binary search of edx over keys[lo, hi) (ascending), small ranges as a
  // row of compares; no key equal: jump to `none`.
  void EmitCompareTree(const std::vector<std::pair<uint32_t, Label>>& keys, size_t lo,
                       size_t hi, Label none);

  //   call JitClassify          ; eax = matching rule - begin, or -1
  //   cmp eax, -1 ; je after
  //   jmp [table + rax*8]       ; to that rule's action
  // action_k: counter/log/verdict of rule begin+k   (each ends the chain)
  // accept:   decided_rule = id(begin) + eax; return accept
  // drop:     decided_rule = id(begin) + eax; return drop
  // table: dq action_0, accept, drop, action_3, ...
  // after:
  // Rules whose action is a bare accept or drop share one action per
  // verdict, so a long run jumps to two targets, not to a block per rule
  // (far apart in the code: an instruction cache miss and a mispredicted
  // jump per packet).
  void EmitClassifiedRun(const ir::Chain& chain, const ClassifiedRun& run);

  void EmitReturn(uint32_t code);

  void EmitDecide(uint32_t code);

  void EmitExpr(const ir::Expr& expr, Label next);

  // Calls helper(ctx, operand); a zero result ends the rule.
  void EmitHelperCall(const void* fn, const void* operand, Label next);

  // Stores `bytes` into the register file at word `word`, zeroing the rest
  // of a partial last word (nft_data_copy).
  void EmitStoreConst(uint32_t word, const ir::Bytes& bytes);

  // ---- one emitter per expression kind ----------------------------------

  // Leaves the header's offset in rax, or ends the rule when the header is
  // absent or [offset, offset + len) is not inside the frame. The load's
  // (base, offset, len) pick the header slot statically, as the kernel
  // picks the fast or generic payload path (ir::PayloadSlot).
  void EmitBoundsCheck(ir::PayloadBase base, uint32_t offset, uint32_t len, Label next);

  // ---- shared loads (compiler/lower/shared_loads.cc) --------------------
  // r14 bit i: field i was read this packet; r15 bit i: it was present (in
  // the frame), its value in JitContext::shared_values[i] (zero-extended).

  int SharedIndex(const ir::PayloadLoad& e) const;

  // Field i's loader, called at most once a packet: marks it read, and
  // when its bytes are in the frame keeps them and marks it present.
  void EmitSharedLoader(size_t i);

  // edx = shared field i (loading it if this packet has not yet); a field
  // not in the frame ends the rule, as its load would.
  // A present field (the common case) costs one test and one branch
  // inline; the rest is out of line after all chains (EmitSharedMiss), so
  // a long chain's hot code stays small.
  void EmitSharedValue(int i, Label next);

  // Field i not present (yet): absent when read before, else read it now.
  struct SharedMiss {
    int field;
    Label entry, back, next;
  };
  void EmitSharedMiss(const SharedMiss& miss);

  // [ payload load LEN @ BASE + OFF => reg D ]: bounds-checked copy.
  void Emit(const ir::PayloadLoad& e, Label next);

  void Emit(const ir::MetaLoad& e, Label next);

  void Emit(const ir::MetaSet& e, Label next);

  // Never reached: CompileAsmjit refuses rulesets that write packets.
  void Emit(const ir::PayloadWrite&, Label) {}

  void Emit(const ir::Exthdr& e, Label next);
  void Emit(const ir::Fib& e, Label next);
  void Emit(const ir::TimeMatch& e, Label next);
  void Emit(const ir::StringMatch& e, Label next);
  void Emit(const ir::Hash& e, Label next);
  void Emit(const ir::Ipv6HeaderMatch& e, Label next);
  void Emit(const ir::Socket& e, Label next);
  void Emit(const ir::Tproxy& e, Label next);

  void Emit(const ir::CtLoad& e, Label next);

  void Emit(const ir::CtSet& e, Label next);

  // Mask/xor works on whole 32-bit words (nft_bitwise_eval_bool); bytes
  // past `len` in the last word see a zero mask.
  void Emit(const ir::Bitwise& e, Label next);

  void Emit(const ir::Byteorder& e, Label next);

  void Emit(const ir::Cmp& e, Label next);

  // eq: any differing chunk ends the rule. neq: any differing chunk lets the
  // rule go on; all equal ends it.
  void EmitEquality(uint32_t word, const ir::Bytes& data, bool eq, Label next);

  // After an unsigned compare: ends the rule unless it found `op` (lt, lte,
  // gt, gte; eq and neq branch elsewhere).
  void EmitOrderBranch(ir::CmpOp op, Label next);

  // Loads 1, 2 or 4 register bytes as a big-endian integer into `out`.
  void EmitLoadBigEndian(uint32_t word, uint32_t len, const x86::Gp& out);

  void Emit(const ir::Range& e, Label next);

  void Emit(const ir::Lookup& e, Label next);

  // Acts on the verdict a verdict map left in JitContext::verdict_reg.
  void EmitVmapDispatch(Label next);

  void Emit(const ir::Immediate& e, Label next);

  void EmitVerdict(const ir::Verdict& v, Label next);

  uint32_t TargetIndex(const std::string& name) const;

  // Per-rule packet/byte counters, when the caller passed counter slots.
  void Emit(const ir::Counter&, Label);

  void Emit(const ir::Limit& e, Label next);

  // [ fused payload LEN @ BASE + OFF & MASK OP DATA ] for loads of 1, 2, 4
  // or 8 bytes: bounds check, one load, one and, one compare, one branch.
  //   mov eax,[ctx+hdr]; cmp eax,-1; je next; lea rcx,[rax+end]; cmp rcx,r13
  //   ja next; mov edx,[r12+rax+off]; and edx,MASK; cmp edx,DATA; jne next
  // edx (rdx for width 8) = the fused load's bytes, kept to the compared
  // bytes under the mask (bytes past the load are zero already, as a load
  // leaves them); fails to `next` when the bytes are not in the frame.
  void EmitFusedValue(const ir::FusedCmp& e, uint32_t width, Label next);

  void Emit(const ir::FusedCmp& e, Label next);

  void Emit(const ir::Log& e, Label next);  // reported, no effect on verdicts
  // The caller's conntrack step reads it (Result::notrack).
  void Emit(const ir::Notrack&, Label) {
    a_.mov(CtxField(offsetof(JitContext, notrack), 4), asmjit::imm(1));
  }
  // The backend table keeps rulesets with these from asmjit
  // (backend::FirstInterpreterOnly).
  void Emit(const ir::Queue&, Label) {}
  void Emit(const ir::Quota&, Label) {}
  void Emit(const ir::Nat&, Label) {}
  void Emit(const ir::TcpMss&, Label) {}
  void Emit(const ir::ChecksumFill&, Label) {}
  void Emit(const ir::Recent&, Label) {}
  void Emit(const ir::Hashlimit&, Label) {}
  void Emit(const ir::Dynset&, Label) {}
  void Emit(const ir::FlowOffload&, Label) {}
  void Emit(const ir::Objref&, Label) {}
  void Emit(const ir::Numgen&, Label) {}
  void Emit(const ir::ExthdrWrite&, Label) {}
  void Emit(const ir::Rt&, Label) {}
  void Emit(const ir::Synproxy&, Label) {}

  void Emit(const ir::Reject&, Label);

  const ir::Ruleset& ruleset_;
  const Layout& layout_;
  const lower::Plan& plan_;
  JitModule& module_;
  x86::Assembler& a_;
  std::vector<Label> bodies_;
  std::vector<Label> trampolines_;
  int table_ = 0;
  int chain_ = 0;
  uint32_t rule_id_ = 0;
  std::vector<Label> loaders_;  // per shared load (EmitSharedLoader)
  std::vector<SharedMiss> shared_misses_;  // per use (EmitSharedMiss)
  bool inlining_ = false;  // emitting an inlined chain (EmitInlined)
  Label inline_return_;    // where its return goes
};

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_ASMJIT_ASMJIT_EMITTER_H_
