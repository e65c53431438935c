// asmjit backend: one small emitter per expression kind (see the header for
// the code layout and register conventions).
#include "compiler/backend/asmjit/asmjit_backend.h"

#include <asmjit/x86.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/backend/common/emit_util.h"

namespace rulejit::backend {
namespace {

namespace x86 = asmjit::x86;
using asmjit::imm;
using asmjit::Label;

// The one place asmjit errors become absl::Status.
absl::Status FromAsmjit(asmjit::Error err, const char* what) {
  if (err == asmjit::kErrorOk) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("asmjit: ", what, ": ", asmjit::DebugUtils::errorAsString(err)));
}

// Records the first error the assembler reports; emission goes on and the
// error is returned at the end.
class ErrorRecorder : public asmjit::ErrorHandler {
 public:
  void handleError(asmjit::Error err, const char* message,
                   asmjit::BaseEmitter*) override {
    if (first == asmjit::kErrorOk) {
      first = err;
      text = message;
    }
  }
  asmjit::Error first = asmjit::kErrorOk;
  std::string text;
};

constexpr int32_t kRegsOff = offsetof(JitContext, regs);

x86::Mem CtxField(size_t offset, uint32_t size) {
  return x86::Mem(x86::rbx, static_cast<int32_t>(offset), size);
}
x86::Mem RegMem(uint32_t byte_offset, uint32_t size) {
  return CtxField(kRegsOff + byte_offset, size);
}

// A general-purpose register of `size` bytes from the rdx family / rax family.
x86::Gp Sized(const x86::Gp& reg64, uint32_t size) {
  switch (size) {
    case 8: return reg64.r64();
    case 4: return reg64.r32();
    case 2: return reg64.r16();
    default: return reg64.r8();
  }
}

}  // namespace

struct JitModule::Impl {
  asmjit::JitRuntime runtime;
  void* code = nullptr;
};

JitModule::~JitModule() {
  if (impl_ && impl_->code) impl_->runtime.release(impl_->code);
}

// Emits the whole ruleset into one code buffer.
class Emitter {
 public:
  Emitter(const ir::Ruleset& ruleset, const lower::Plan& plan, JitModule& module,
          x86::Assembler& a)
      : ruleset_(ruleset), layout_(plan.layout), plan_(plan), module_(module), a_(a) {}

  void EmitAll() {
    bodies_.resize(layout_.chain_count);
    trampolines_.resize(layout_.chain_count);
    for (auto& l : bodies_) l = a_.newLabel();
    for (size_t i = 0; i < plan_.shared_loads.size(); ++i) loaders_.push_back(a_.newLabel());
    ForEachChain(ruleset_, [&](int t, int c, const ir::Chain& chain) {
      table_ = t;
      chain_ = c;
      if (chain.base) EmitTrampoline(chain);
      EmitBody(chain);
    });
    for (size_t i = 0; i < loaders_.size(); ++i) EmitSharedLoader(i);
    for (const SharedMiss& miss : shared_misses_) EmitSharedMiss(miss);
  }

  const std::vector<Label>& bodies() const { return bodies_; }
  const std::vector<Label>& trampolines() const { return trampolines_; }

 private:
  uint32_t chain_index() const { return layout_.ChainIndex(table_, chain_); }

  // push callee-saved, set up rbx/r12/r13, call the body, apply the policy.
  void EmitTrampoline(const ir::Chain& chain) {
    Label& entry = trampolines_[chain_index()];
    entry = a_.newLabel();
    a_.align(asmjit::AlignMode::kCode, 16);
    a_.bind(entry);
    a_.push(x86::rbx);
    a_.push(x86::r12);
    a_.push(x86::r13);
    if (!loaders_.empty()) {  // shared loads: nothing loaded yet this packet
      a_.push(x86::r14);      // (two more pushes keep the body's stack aligned)
      a_.push(x86::r15);
      a_.xor_(x86::r14d, x86::r14d);
      a_.xor_(x86::r15d, x86::r15d);
    }
    a_.mov(x86::rbx, x86::rdi);
    a_.mov(x86::r12, CtxField(offsetof(JitContext, data), 8));
    a_.mov(x86::r13, CtxField(offsetof(JitContext, len), 8));
    a_.call(bodies_[chain_index()]);
    Label done = a_.newLabel();
    a_.test(x86::eax, x86::eax);
    a_.jnz(done);
    a_.mov(CtxField(offsetof(JitContext, decided_rule), 4),
           imm(layout_.PolicyId(table_, chain_)));
    a_.mov(x86::eax, imm(chain.base->policy == ir::VerdictCode::kDrop ? kJitDrop
                                                                     : kJitAccept));
    a_.bind(done);
    if (!loaders_.empty()) {
      a_.pop(x86::r15);
      a_.pop(x86::r14);
    }
    a_.pop(x86::r13);
    a_.pop(x86::r12);
    a_.pop(x86::rbx);
    a_.ret();
  }

  void EmitBody(const ir::Chain& chain) {
    a_.align(asmjit::AlignMode::kCode, 16);
    a_.bind(bodies_[chain_index()]);
    a_.sub(x86::rsp, 8);  // keeps helper calls 16-byte aligned
    EmitRules(chain);
    EmitReturn(kJitContinue);
  }

  // The chain's rules in order, for a body or inlined at a jump: its
  // segments as the plan has them.
  void EmitRules(const ir::Chain& chain) {
    const lower::ChainPlan& chain_plan = plan_.chains[chain_index()];
    for (const lower::Segment& seg : lower::Segments(chain_plan, chain.rules.size())) {
      switch (seg.kind) {
        case lower::Segment::kClassified:
          EmitClassifiedRun(chain, chain_plan.classified[seg.index]);
          break;
        case lower::Segment::kSetRun:
          EmitSetRun(chain, chain_plan.set_runs[seg.index]);
          break;
        case lower::Segment::kLinear:
          for (uint32_t r = seg.begin; r < seg.end; ++r) EmitRule(chain, r);
          break;
      }
    }
  }

  void EmitRule(const ir::Chain& chain, uint32_t r) {
    rule_id_ = layout_.RuleId(table_, chain_, static_cast<int>(r));
    Label next = a_.newLabel();
    for (const ir::Node& node : chain.rules[r].exprs) EmitExpr(node.expr, next);
    a_.bind(next);
  }

  // `jump` to a chain the plan inlines at jumps (compiler/lower/
  // inline_chains.cc): its rules in place, under its own chain and rule
  // ids; `return` and falling off go to the jumping rule's next rule.
  // Inlined chains never jump, so this never nests.
  void EmitInlined(const std::string& name, Label next) {
    const auto& chains = ruleset_.tables[table_].chains;
    int target = 0;
    while (chains[target].name != name) ++target;
    const int saved_chain = chain_;
    const uint32_t saved_rule = rule_id_;
    chain_ = target;
    inline_return_ = next;
    inlining_ = true;
    EmitRules(chains[target]);
    a_.jmp(next);
    inlining_ = false;
    chain_ = saved_chain;
    rule_id_ = saved_rule;
  }

  bool InlinedAtJumps(const std::string& name) const {
    const auto& chains = ruleset_.tables[table_].chains;
    for (size_t c = 0; c < chains.size(); ++c) {
      if (chains[c].name == name) {
        return plan_.chains[layout_.ChainIndex(table_, static_cast<int>(c))].inline_at_jumps;
      }
    }
    return false;
  }

  // Rules [begin, end) alike but for the constant of equality `node`
  // (compiler/lower/set_runs.cc):
  //   shared prefix (exprs [0, node) of rule begin)    ; fails: after
  //   edx = the compared value (register bytes or masked payload)
  //   compare tree over the sorted constants          ; none equal: after
  //   key k: rest of each rule with constant k, in rule order, each
  //          going on to the next such rule, the last to after
  void EmitSetRun(const ir::Chain& chain, const lower::SetRun& run) {
    Label after = a_.newLabel();
    const ir::Rule& lead = chain.rules[run.begin];
    rule_id_ = layout_.RuleId(table_, chain_, static_cast<int>(run.begin));
    for (uint32_t e = 0; e < run.node; ++e) EmitExpr(lead.exprs[e].expr, after);
    EmitEqualityKey(lead.exprs[run.node].expr, after);
    // Distinct keys in ascending order, each with its rules in rule order.
    std::map<uint32_t, std::vector<uint32_t>> rules_by_key;
    for (uint32_t r = run.begin; r < run.end; ++r) {
      rules_by_key[EqualityConstant(chain.rules[r].exprs[run.node].expr)].push_back(r);
    }
    std::vector<std::pair<uint32_t, Label>> keys;
    for (const auto& entry : rules_by_key) keys.emplace_back(entry.first, a_.newLabel());
    EmitCompareTree(keys, 0, keys.size(), after);
    size_t k = 0;
    for (const auto& [key, rules] : rules_by_key) {
      a_.bind(keys[k++].second);
      for (size_t i = 0; i < rules.size(); ++i) {
        const ir::Rule& rule = chain.rules[rules[i]];
        rule_id_ = layout_.RuleId(table_, chain_, static_cast<int>(rules[i]));
        // Failing or matching without ending the chain, the packet goes on
        // to the next rule with this constant (the others can't match).
        Label next = i + 1 < rules.size() ? a_.newLabel() : after;
        for (size_t e = run.node + 1; e < rule.exprs.size(); ++e) EmitExpr(rule.exprs[e].expr, next);
        if (i + 1 < rules.size()) {
          a_.bind(next);
        } else {
          a_.jmp(after);
        }
      }
    }
    a_.bind(after);
  }

  // edx = the value an equality of a set run compares, as ChunkValue of
  // its bytes (any consistent order serves the compare tree).
  void EmitEqualityKey(const ir::Expr& expr, Label fail) {
    if (const auto* cmp = std::get_if<ir::Cmp>(&expr)) {
      const uint32_t word = ir::RegWord(cmp->sreg);
      const uint32_t len = cmp->data.size();
      if (len == 4) {
        a_.mov(x86::edx, RegMem(word * 4, 4));
      } else {
        a_.movzx(x86::edx, RegMem(word * 4, len));
      }
      return;
    }
    const auto& e = std::get<ir::FusedCmp>(expr);
    EmitFusedValue(e, 4, fail);
  }

  static uint32_t EqualityConstant(const ir::Expr& expr) {
    uint8_t bytes[4] = {};
    if (const auto* cmp = std::get_if<ir::Cmp>(&expr)) {
      std::memcpy(bytes, cmp->data.data(), cmp->data.size());
      return static_cast<uint32_t>(ChunkValue(bytes, cmp->data.size()));
    }
    const auto& e = std::get<ir::FusedCmp>(expr);
    std::memcpy(bytes, e.data.data(), std::min<size_t>(e.data.size(), 4));
    return static_cast<uint32_t>(ChunkValue(bytes, 4));
  }

  // Binary search of edx over keys[lo, hi) (ascending), small ranges as a
  // row of compares; no key equal: jump to `none`.
  void EmitCompareTree(const std::vector<std::pair<uint32_t, Label>>& keys, size_t lo,
                       size_t hi, Label none) {
    if (hi - lo <= 4) {
      for (size_t i = lo; i < hi; ++i) {
        a_.cmp(x86::edx, imm(keys[i].first));
        a_.je(keys[i].second);
      }
      a_.jmp(none);
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    Label below = a_.newLabel();
    a_.cmp(x86::edx, imm(keys[mid].first));
    a_.je(keys[mid].second);
    a_.jb(below);
    EmitCompareTree(keys, mid + 1, hi, none);
    a_.bind(below);
    EmitCompareTree(keys, lo, mid, none);
  }

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
  void EmitClassifiedRun(const ir::Chain& chain, const ClassifiedRun& run) {
    JitClassifyOp& op = module_.classify_ops_.emplace_back(JitClassifyOp{run.classifier, run.begin});
    Label after = a_.newLabel(), table = a_.newLabel();
    a_.mov(x86::rdi, x86::rbx);
    a_.mov(x86::rsi, imm(reinterpret_cast<uint64_t>(&op)));
    a_.mov(x86::rax, imm(reinterpret_cast<uint64_t>(&JitClassify)));
    a_.call(x86::rax);
    a_.cmp(x86::eax, imm(-1));
    a_.je(after);
    a_.lea(x86::rcx, x86::ptr(table));
    a_.jmp(x86::qword_ptr(x86::rcx, x86::rax, 3));
    const uint32_t begin_id = layout_.RuleId(table_, chain_, static_cast<int>(run.begin));
    Label shared[2] = {a_.newLabel(), a_.newLabel()};  // accept, drop
    bool shared_used[2] = {false, false};
    std::vector<Label> actions;
    for (uint32_t r = run.begin; r < run.end; ++r) {
      const ir::Rule& rule = chain.rules[r];
      if (rule.exprs.empty()) {  // blanked by a pass: never the answer
        actions.push_back(after);
        continue;
      }
      const std::optional<ir::VerdictCode> bare = BareVerdict(rule);
      if (bare == ir::VerdictCode::kAccept || bare == ir::VerdictCode::kDrop) {
        const int k = bare == ir::VerdictCode::kAccept ? 0 : 1;
        actions.push_back(shared[k]);
        shared_used[k] = true;
        continue;
      }
      actions.push_back(a_.newLabel());
      a_.bind(actions.back());
      rule_id_ = layout_.RuleId(table_, chain_, static_cast<int>(r));
      for (size_t e = run.action_begin[r - run.begin]; e < rule.exprs.size(); ++e) {
        EmitExpr(rule.exprs[e].expr, after);
      }
      a_.jmp(after);  // an action that does not end the chain (none lift today)
    }
    for (int k = 0; k < 2; ++k) {
      if (!shared_used[k]) continue;
      a_.bind(shared[k]);
      a_.lea(x86::ecx, x86::ptr(x86::rax, static_cast<int32_t>(begin_id)));
      a_.mov(CtxField(offsetof(JitContext, decided_rule), 4), x86::ecx);
      EmitReturn(k == 0 ? kJitAccept : kJitDrop);
    }
    a_.align(asmjit::AlignMode::kData, 8);
    a_.bind(table);
    for (const Label& l : actions) a_.embedLabel(l);
    a_.bind(after);
  }

  void EmitReturn(uint32_t code) {
    a_.mov(x86::eax, imm(code));
    a_.add(x86::rsp, 8);
    a_.ret();
  }

  void EmitDecide(uint32_t code) {
    a_.mov(CtxField(offsetof(JitContext, decided_rule), 4), imm(rule_id_));
    EmitReturn(code);
  }

  void EmitExpr(const ir::Expr& expr, Label next) {
    std::visit([&](const auto& e) { Emit(e, next); }, expr);
  }

  // Calls helper(ctx, operand); a zero result ends the rule.
  void EmitHelperCall(const void* fn, const void* operand, Label next) {
    a_.mov(x86::rdi, x86::rbx);
    a_.mov(x86::rsi, imm(reinterpret_cast<uint64_t>(operand)));
    a_.mov(x86::rax, imm(reinterpret_cast<uint64_t>(fn)));
    a_.call(x86::rax);
    a_.test(x86::eax, x86::eax);
    a_.jz(next);
  }

  // Stores `bytes` into the register file at word `word`, zeroing the rest
  // of a partial last word (nft_data_copy).
  void EmitStoreConst(uint32_t word, const ir::Bytes& bytes) {
    const uint32_t len = bytes.size();
    if (len % 4) a_.mov(RegMem(word * 4 + len / 4 * 4, 4), imm(0));
    ForEachChunk(len, [&](uint32_t off, uint32_t size) {
      uint64_t v = ChunkValue(bytes.data() + off, size);
      if (size == 8) {
        a_.mov(x86::rax, imm(v));
        a_.mov(RegMem(word * 4 + off, 8), x86::rax);
      } else {
        a_.mov(RegMem(word * 4 + off, size), imm(v));
      }
    });
  }

  // ---- one emitter per expression kind ----------------------------------

  // Leaves the header's offset in rax, or ends the rule when the header is
  // absent or [offset, offset + len) is not inside the frame. The load's
  // (base, offset, len) pick the header slot statically, as the kernel
  // picks the fast or generic payload path (ir::PayloadSlot).
  void EmitBoundsCheck(ir::PayloadBase base, uint32_t offset, uint32_t len, Label next) {
    const ir::HeaderSlot slot = ir::PayloadSlot(base, offset, len);
    a_.mov(x86::eax, CtxField(offsetof(JitContext, header_off) +
                                  4 * static_cast<uint32_t>(slot), 4));
    a_.cmp(x86::eax, imm(-1));
    a_.je(next);  // header absent
    a_.lea(x86::rcx, x86::ptr(x86::rax, static_cast<int32_t>(offset + len)));
    a_.cmp(x86::rcx, x86::r13);
    a_.ja(next);  // past the end of the frame
  }

  // ---- shared loads (compiler/lower/shared_loads.cc) --------------------
  // r14 bit i: field i was read this packet; r15 bit i: it was present (in
  // the frame), its value in JitContext::shared_values[i] (zero-extended).

  int SharedIndex(const ir::PayloadLoad& e) const {
    const auto& shared = plan_.shared_loads;
    for (size_t i = 0; i < shared.size(); ++i) {
      if (shared[i].base == e.base && shared[i].offset == e.offset && shared[i].len == e.len) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // Field i's loader, called at most once a packet: marks it read, and
  // when its bytes are in the frame keeps them and marks it present.
  void EmitSharedLoader(size_t i) {
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

  // edx = shared field i (loading it if this packet has not yet); a field
  // not in the frame ends the rule, as its load would.
  // A present field (the common case) costs one test and one branch
  // inline; the rest is out of line after all chains (EmitSharedMiss), so
  // a long chain's hot code stays small.
  void EmitSharedValue(int i, Label next) {
    SharedMiss miss{i, a_.newLabel(), a_.newLabel(), next};
    a_.bt(x86::r15d, imm(i));
    a_.jnc(miss.entry);
    a_.bind(miss.back);
    a_.mov(x86::edx, CtxField(offsetof(JitContext, shared_values) + 4 * i, 4));
    shared_misses_.push_back(miss);
  }

  // Field i not present (yet): absent when read before, else read it now.
  struct SharedMiss {
    int field;
    Label entry, back, next;
  };
  void EmitSharedMiss(const SharedMiss& miss) {
    a_.bind(miss.entry);
    a_.bt(x86::r14d, imm(miss.field));
    a_.jc(miss.next);  // read before: absent
    a_.call(loaders_[miss.field]);
    a_.bt(x86::r15d, imm(miss.field));
    a_.jnc(miss.next);
    a_.jmp(miss.back);
  }

  // [ payload load LEN @ BASE + OFF => reg D ]: bounds-checked copy.
  void Emit(const ir::PayloadLoad& e, Label next) {
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

  void Emit(const ir::MetaLoad& e, Label next) {
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

  void Emit(const ir::MetaSet& e, Label next) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitMetaSet), &e, next);
  }

  // Never reached: CompileAsmjit refuses rulesets that write packets.
  void Emit(const ir::PayloadWrite&, Label) {}

  void Emit(const ir::Exthdr& e, Label next) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitExthdr), &e, next);
  }

  void Emit(const ir::CtLoad& e, Label next) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitCtLoad), &e, next);
  }

  void Emit(const ir::CtSet& e, Label next) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitCtSet), &e, next);
  }

  // Mask/xor works on whole 32-bit words (nft_bitwise_eval_bool); bytes
  // past `len` in the last word see a zero mask.
  void Emit(const ir::Bitwise& e, Label next) {
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

  void Emit(const ir::Byteorder& e, Label next) {
    EmitHelperCall(reinterpret_cast<const void*>(&JitByteorder), &e, next);
  }

  void Emit(const ir::Cmp& e, Label next) {
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
    switch (e.op) {  // unsigned: memcmp order
      case ir::CmpOp::kLt: a_.jae(next); break;
      case ir::CmpOp::kLte: a_.ja(next); break;
      case ir::CmpOp::kGt: a_.jbe(next); break;
      case ir::CmpOp::kGte: a_.jb(next); break;
      default: break;
    }
  }

  // eq: any differing chunk ends the rule. neq: any differing chunk lets the
  // rule go on; all equal ends it.
  void EmitEquality(uint32_t word, const ir::Bytes& data, bool eq, Label next) {
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

  // Loads 1, 2 or 4 register bytes as a big-endian integer into `out`.
  void EmitLoadBigEndian(uint32_t word, uint32_t len, const x86::Gp& out) {
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

  void Emit(const ir::Range& e, Label next) {
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

  void Emit(const ir::Lookup& e, Label next) {
    JitLookupOp& op = MakeLookupOp(ruleset_, layout_, table_, e, module_.set_indexes_,
                                   module_.lookups_);
    const bool vmap = e.dreg && *e.dreg == ir::kVerdictReg;
    // A found element without a verdict leaves the verdict untouched.
    if (vmap) a_.mov(CtxField(offsetof(JitContext, verdict_reg), 4), imm(kVmapContinue));
    EmitHelperCall(reinterpret_cast<const void*>(&JitLookup), &op, next);
    if (vmap) EmitVmapDispatch(next);
  }

  // Acts on the verdict a verdict map left in JitContext::verdict_reg.
  void EmitVmapDispatch(Label next) {
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

  void Emit(const ir::Immediate& e, Label next) {
    if (e.dreg != ir::kVerdictReg) {
      EmitStoreConst(ir::RegWord(e.dreg), e.data);
      return;
    }
    EmitVerdict(e.verdict, next);
  }

  void EmitVerdict(const ir::Verdict& v, Label next) {
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

  uint32_t TargetIndex(const std::string& name) const {
    return TargetChainIndex(ruleset_, layout_, table_, name, chain_index());
  }

  // Per-rule packet/byte counters, when the caller passed counter slots.
  void Emit(const ir::Counter&, Label) {
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

  void Emit(const ir::Limit& e, Label next) {
    JitLimitOp& op = module_.limits_.emplace_back(JitLimitOp{e, module_.limit_count_++});
    EmitHelperCall(reinterpret_cast<const void*>(&JitLimit), &op, next);
  }

  // [ fused payload LEN @ BASE + OFF & MASK OP DATA ] for loads of 1, 2, 4
  // or 8 bytes: bounds check, one load, one and, one compare, one branch.
  //   mov eax,[ctx+hdr]; cmp eax,-1; je next; lea rcx,[rax+end]; cmp rcx,r13
  //   ja next; mov edx,[r12+rax+off]; and edx,MASK; cmp edx,DATA; jne next
  // edx (rdx for width 8) = the fused load's bytes, kept to the compared
  // bytes under the mask (bytes past the load are zero already, as a load
  // leaves them); fails to `next` when the bytes are not in the frame.
  void EmitFusedValue(const ir::FusedCmp& e, uint32_t width, Label next) {
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

  void Emit(const ir::FusedCmp& e, Label next) {
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
      switch (e.op) {  // unsigned: memcmp order
        case ir::CmpOp::kLt: a_.jae(next); break;
        case ir::CmpOp::kLte: a_.ja(next); break;
        case ir::CmpOp::kGt: a_.jbe(next); break;
        case ir::CmpOp::kGte: a_.jb(next); break;
        default: break;
      }
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

  void Emit(const ir::Log&, Label) {}      // recorded, no effect on verdicts
  void Emit(const ir::Notrack&, Label) {}  // conntrack is the caller's
  // The backend table keeps rulesets with these from asmjit
  // (backend::FirstInterpreterOnly).
  void Emit(const ir::Queue&, Label) {}
  void Emit(const ir::Quota&, Label) {}
  void Emit(const ir::Nat&, Label) {}

  void Emit(const ir::Reject&, Label) {
    a_.mov(CtxField(offsetof(JitContext, rejected), 4), imm(1));
    EmitDecide(kJitDrop);
  }

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

absl::StatusOr<std::unique_ptr<JitModule>> CompileAsmjit(
    const ir::Ruleset& ruleset, const lower::Plan& plan, const CodeOptions& options) {
  const Layout& layout = plan.layout;
  const bool keep_assembly = options.keep_assembly;
  auto module = std::unique_ptr<JitModule>(new JitModule());
  module->impl_ = std::make_unique<JitModule::Impl>();
  module->bodies_.assign(layout.chain_count, nullptr);
  module->entries_.assign(layout.chain_count, nullptr);

  asmjit::CodeHolder code;
  code.init(module->impl_->runtime.environment());
  ErrorRecorder errors;
  code.setErrorHandler(&errors);
  asmjit::StringLogger logger;
  if (keep_assembly) code.setLogger(&logger);

  x86::Assembler a(&code);
  Emitter emitter(ruleset, plan, *module, a);
  emitter.EmitAll();
  if (errors.first != asmjit::kErrorOk) {
    return absl::InternalError(absl::StrCat("asmjit: emit: ", errors.text));
  }

  void* base = nullptr;
  absl::Status added = FromAsmjit(module->impl_->runtime.add(&base, &code), "add");
  if (!added.ok()) return added;
  module->impl_->code = base;
  module->code_size_ = code.codeSize();
  for (uint32_t i = 0; i < layout.chain_count; ++i) {
    module->bodies_[i] = static_cast<uint8_t*>(base) +
                         code.labelOffsetFromBase(emitter.bodies()[i]);
    const Label& t = emitter.trampolines()[i];
    if (t.isValid()) {
      module->entries_[i] = reinterpret_cast<ChainFn>(
          static_cast<uint8_t*>(base) + code.labelOffsetFromBase(t));
    }
  }
  if (keep_assembly) module->assembly_ = logger.data();
  return module;
}

}  // namespace rulejit::backend
