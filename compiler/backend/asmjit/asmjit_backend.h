// asmjit backend: compiles every chain of a ruleset into x86-64 code.
//
//   ruleset ──layout (global chain and rule ids)──▶ one Assembler
//     per base chain: trampoline  (saves rbx/r12/r13, loads ctx/data/len,
//                                  calls the body, applies the policy)
//     per chain:      body        (rules in order; a rule is its
//                                  expressions, each jumping to the next
//                                  rule on no-match)
//   ──JitRuntime::add──▶ executable code + operand tables (JitModule)
//
// Register use in generated code: rbx = JitContext*, r12 = frame bytes,
// r13 = frame length; rax, rcx, rdx, rsi, rdi are scratch. Chain bodies
// return kJitContinue / kJitAccept / kJitDrop in eax. `jump` is a call,
// `goto` a tail jump, so the machine stack is the nf_tables jump stack.
#ifndef RULEJIT_COMPILER_BACKEND_ASMJIT_ASMJIT_BACKEND_H_
#define RULEJIT_COMPILER_BACKEND_ASMJIT_ASMJIT_BACKEND_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/asmjit/jit_context.h"
#include "compiler/classify/classifier.h"
#include "compiler/backend/asmjit/jit_helpers.h"
#include "ir/interp.h"
#include "ir/ir.h"

namespace rulejit::backend {

// Global numbering of chains and rules across the ruleset's tables: chains
// in table order then chain order; rule ids likewise; the policy of chain c
// has id rule_count + c.
struct Layout {
  explicit Layout(const ir::Ruleset& ruleset);
  uint32_t ChainIndex(int table, int chain) const {
    return chain_base[table] + chain;
  }
  uint32_t RuleId(int table, int chain, int rule) const {
    return rule_base[ChainIndex(table, chain)] + rule;
  }
  uint32_t PolicyId(int table, int chain) const {
    return rule_count + ChainIndex(table, chain);
  }
  std::vector<uint32_t> chain_base;   // per table: first chain index
  std::vector<uint32_t> rule_base;    // per chain index: first rule id
  std::vector<ir::RuleRef> refs;      // per rule id and policy id
  uint32_t rule_count = 0;
  uint32_t chain_count = 0;
};

using ChainFn = uint32_t (*)(JitContext*);

// Rules [begin, end) of a chain answered by a decision structure: the code
// asks the classifier for the first matching rule, then jumps through a
// table straight to that rule's action (counter, log, verdict).
struct ClassifiedRun {
  uint32_t begin = 0;
  uint32_t end = 0;
  const classify::Classifier* classifier = nullptr;
};
// Per global chain index, its classified runs in rule order.
using ClassifyPlan = std::vector<std::vector<ClassifiedRun>>;

// Operand of the classifier helper: rule index relative to `begin`, or -1.
struct JitClassifyOp {
  const classify::Classifier* classifier;
  uint32_t begin;
};
uint32_t JitClassify(JitContext* ctx, const JitClassifyOp* op);

// Compiled code plus everything it points at. Immutable once built.
class JitModule {
 public:
  ~JitModule();
  ChainFn entry(uint32_t chain_index) const { return entries_[chain_index]; }
  const ChainFn* entries() const { return entries_.data(); }
  const std::string& assembly() const { return assembly_; }
  uint32_t limit_count() const { return limit_count_; }
  size_t code_size() const { return code_size_; }

 private:
  friend class Emitter;
  friend absl::StatusOr<std::unique_ptr<JitModule>> CompileAsmjit(
      const ir::Ruleset&, const Layout&, const ClassifyPlan&, bool);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<ChainFn> entries_;  // trampolines of base chains, else null
  std::vector<void*> bodies_;     // chain bodies, for verdict-map jumps
  std::deque<ir::SetIndex> set_indexes_;
  std::deque<JitLookupOp> lookups_;
  std::deque<JitLimitOp> limits_;
  std::deque<JitClassifyOp> classify_ops_;
  std::string assembly_;
  uint32_t limit_count_ = 0;
  size_t code_size_ = 0;
};

// Compiles all chains; `plan` names the runs a classifier answers (empty:
// all linear). `keep_assembly` records the listing for --emit asm.
[[nodiscard]] absl::StatusOr<std::unique_ptr<JitModule>> CompileAsmjit(
    const ir::Ruleset& ruleset, const Layout& layout, const ClassifyPlan& plan,
    bool keep_assembly);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_ASMJIT_ASMJIT_BACKEND_H_
