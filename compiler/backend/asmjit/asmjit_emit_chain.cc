// The asmjit emitter's chain structure: entry trampolines, chain bodies
// segment by segment as the plan lays them out (linear rules, set runs as
// compare trees, classified runs as a classifier call and a jump table),
// chains inlined at jumps, and the small pieces every rule ends with.
#include <cstddef>
#include <cstring>
#include <map>
#include <variant>

#include "absl/strings/str_cat.h"
#include "compiler/backend/asmjit/asmjit_emitter.h"

namespace rulejit::backend {

void Emitter::EmitAll() {
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

void Emitter::EmitTrampoline(const ir::Chain& chain) {
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

void Emitter::EmitBody(const ir::Chain& chain) {
  a_.align(asmjit::AlignMode::kCode, 16);
  a_.bind(bodies_[chain_index()]);
  a_.sub(x86::rsp, 8);  // keeps helper calls 16-byte aligned
  EmitRules(chain);
  EmitReturn(kJitContinue);
}

void Emitter::EmitRules(const ir::Chain& chain) {
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

void Emitter::EmitRule(const ir::Chain& chain, uint32_t r) {
  rule_id_ = layout_.RuleId(table_, chain_, static_cast<int>(r));
  Label next = a_.newLabel();
  for (const ir::Node& node : chain.rules[r].exprs) EmitExpr(node.expr, next);
  a_.bind(next);
}

void Emitter::EmitInlined(const std::string& name, Label next) {
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

bool Emitter::InlinedAtJumps(const std::string& name) const {
  const auto& chains = ruleset_.tables[table_].chains;
  for (size_t c = 0; c < chains.size(); ++c) {
    if (chains[c].name == name) {
      return plan_.chains[layout_.ChainIndex(table_, static_cast<int>(c))].inline_at_jumps;
    }
  }
  return false;
}

void Emitter::EmitSetRun(const ir::Chain& chain, const lower::SetRun& run) {
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

void Emitter::EmitEqualityKey(const ir::Expr& expr, Label fail) {
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

uint32_t Emitter::EqualityConstant(const ir::Expr& expr) {
  uint8_t bytes[4] = {};
  if (const auto* cmp = std::get_if<ir::Cmp>(&expr)) {
    std::memcpy(bytes, cmp->data.data(), cmp->data.size());
    return static_cast<uint32_t>(ChunkValue(bytes, cmp->data.size()));
  }
  const auto& e = std::get<ir::FusedCmp>(expr);
  std::memcpy(bytes, e.data.data(), std::min<size_t>(e.data.size(), 4));
  return static_cast<uint32_t>(ChunkValue(bytes, 4));
}

void Emitter::EmitCompareTree(const std::vector<std::pair<uint32_t, Label>>& keys, size_t lo,
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

void Emitter::EmitClassifiedRun(const ir::Chain& chain, const ClassifiedRun& run) {
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

void Emitter::EmitReturn(uint32_t code) {
  a_.mov(x86::eax, imm(code));
  a_.add(x86::rsp, 8);
  a_.ret();
}

void Emitter::EmitDecide(uint32_t code) {
  a_.mov(CtxField(offsetof(JitContext, decided_rule), 4), imm(rule_id_));
  EmitReturn(code);
}

void Emitter::EmitExpr(const ir::Expr& expr, Label next) {
  std::visit([&](const auto& e) { Emit(e, next); }, expr);
}

void Emitter::EmitHelperCall(const void* fn, const void* operand, Label next) {
  a_.mov(x86::rdi, x86::rbx);
  a_.mov(x86::rsi, imm(reinterpret_cast<uint64_t>(operand)));
  a_.mov(x86::rax, imm(reinterpret_cast<uint64_t>(fn)));
  a_.call(x86::rax);
  a_.test(x86::eax, x86::eax);
  a_.jz(next);
}

void Emitter::EmitStoreConst(uint32_t word, const ir::Bytes& bytes) {
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

}  // namespace rulejit::backend
