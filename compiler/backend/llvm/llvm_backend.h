// LLVM backend: the optimizing tier.
//
//   (ruleset, Layout, ClassifyPlan) ──llvm_emit──▶ llvm::Module
//     ──new pass manager, O2/O3, host CPU and features──▶ optimized module
//     ──ORC LLJIT──▶ entry functions with the asmjit signature (ChainFn)
//
// The module runs over the same JitContext and calls the same helpers as
// the asmjit tier, so Program::RunJit drives either.
#ifndef RULEJIT_COMPILER_BACKEND_LLVM_LLVM_BACKEND_H_
#define RULEJIT_COMPILER_BACKEND_LLVM_LLVM_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/asmjit/asmjit_backend.h"
#include "compiler/backend/llvm/llvm_emit.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace rulejit::backend {

struct LlvmOptions {
  int opt_level = 2;          // 0..3: the pass pipeline and codegen level
  bool keep_ir = false;       // record the IR before and after optimisation
  bool keep_assembly = false; // record the machine code listing
};

// Compiled code plus everything it points at. Immutable once built.
class LlvmModule {
 public:
  ~LlvmModule();
  const ChainFn* entries() const { return entries_.data(); }
  uint32_t limit_count() const { return operands_.limit_count; }
  size_t code_size() const { return object_bytes_; }
  const std::string& ir_before() const { return ir_before_; }
  const std::string& ir_after() const { return ir_after_; }
  const std::string& assembly() const { return assembly_; }

 private:
  friend absl::StatusOr<std::unique_ptr<LlvmModule>> CompileLlvm(
      const ir::Ruleset&, const Layout&, const ClassifyPlan&, const LlvmOptions&);
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  LlvmOperands operands_;
  std::vector<ChainFn> entries_;  // base chains' entries, else null
  size_t object_bytes_ = 0;       // size of the object file(s) linked
  std::string ir_before_;
  std::string ir_after_;
  std::string assembly_;
};

// Compiles all chains; errors (LLVM verifier, codegen, linking) come back
// as a Status.
[[nodiscard]] absl::StatusOr<std::unique_ptr<LlvmModule>> CompileLlvm(
    const ir::Ruleset& ruleset, const Layout& layout, const ClassifyPlan& plan,
    const LlvmOptions& options);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_LLVM_LLVM_BACKEND_H_
