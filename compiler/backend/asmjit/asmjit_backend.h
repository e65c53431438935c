// asmjit backend: compiles every chain of a ruleset into x86-64 code.
//
//   (ruleset, lower::Plan) ──▶ one Assembler
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
#include "compiler/backend/common/compiled_code.h"
#include "compiler/backend/common/jit_context.h"
#include "compiler/backend/common/jit_helpers.h"
#include "compiler/lower/plan.h"
#include "ir/ir.h"

namespace rulejit::backend {

// Compiled code plus everything it points at. Immutable once built.
class JitModule : public CompiledCode {
 public:
  ~JitModule() override;
  const ChainFn* entries() const override { return entries_.data(); }
  const std::string& assembly() const override { return assembly_; }
  uint32_t limit_count() const override { return limit_count_; }
  size_t code_size() const override { return code_size_; }

 private:
  friend class Emitter;
  friend absl::StatusOr<std::unique_ptr<JitModule>> CompileAsmjit(
      const ir::Ruleset&, const lower::Plan&, const CodeOptions&);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<ChainFn> entries_;  // trampolines of base chains, else null
  std::vector<void*> bodies_;     // chain bodies, for verdict-map jumps
  std::deque<ir::SetIndex> set_indexes_;
  std::deque<JitLookupOp> lookups_;
  std::deque<JitLimitOp> limits_;
  std::deque<JitLogOp> logs_;
  std::deque<JitClassifyOp> classify_ops_;
  std::string assembly_;
  uint32_t limit_count_ = 0;
  size_t code_size_ = 0;
};

// Compiles all chains as `plan` says (its classified runs, set runs,
// inlined chains and shared loads); options.keep_assembly records the
// listing for --emit asm. The ruleset must be one the backend table lets
// asmjit run (no interpreter-only expressions).
[[nodiscard]] absl::StatusOr<std::unique_ptr<JitModule>> CompileAsmjit(
    const ir::Ruleset& ruleset, const lower::Plan& plan, const CodeOptions& options);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_ASMJIT_ASMJIT_BACKEND_H_
