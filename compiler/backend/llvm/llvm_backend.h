// LLVM backend: the optimizing tier.
//
//   (ruleset, lower::Plan) ──llvm_emit──▶ llvm::Module
//     ──new pass manager, O2/O3, host CPU and features──▶ optimized module
//     ──ORC LLJIT──▶ entry functions with the asmjit signature (ChainFn)
//
// The module runs over the same JitContext and calls the same helpers as
// the asmjit tier (compiler/backend/common), so the hot path drives either.
#ifndef RULEJIT_COMPILER_BACKEND_LLVM_LLVM_BACKEND_H_
#define RULEJIT_COMPILER_BACKEND_LLVM_LLVM_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/common/compiled_code.h"
#include "compiler/backend/llvm/llvm_emit.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace rulejit::backend {

// Compiled code plus everything it points at. Immutable once built.
class LlvmModule : public CompiledCode {
 public:
  ~LlvmModule() override;
  const ChainFn* entries() const override { return entries_.data(); }
  uint32_t limit_count() const override { return operands_.limit_count; }
  size_t code_size() const override { return object_bytes_; }
  const std::string& assembly() const override { return assembly_; }
  const std::string& llvm_ir(bool optimized) const override {
    return optimized ? ir_after_ : ir_before_;
  }

 private:
  friend absl::StatusOr<std::unique_ptr<LlvmModule>> CompileLlvm(
      const ir::Ruleset&, const lower::Plan&, const CodeOptions&);
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  LlvmOperands operands_;
  std::vector<ChainFn> entries_;  // base chains' entries, else null
  size_t object_bytes_ = 0;       // size of the object file(s) linked
  std::string ir_before_;
  std::string ir_after_;
  std::string assembly_;
};

// Compiles all chains as `plan` says; errors (LLVM verifier, codegen,
// linking) come back as a Status. The ruleset must be one the backend
// table lets LLVM run (no interpreter-only expressions).
[[nodiscard]] absl::StatusOr<std::unique_ptr<LlvmModule>> CompileLlvm(
    const ir::Ruleset& ruleset, const lower::Plan& plan, const CodeOptions& options);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_LLVM_LLVM_BACKEND_H_
