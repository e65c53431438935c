// What a code generator hands back: the chain entry points of a compiled
// plan and what the driver reports about them. asmjit's JitModule and
// LLVM's LlvmModule implement it; the hot path calls entries() only.
#ifndef RULEJIT_COMPILER_BACKEND_COMMON_COMPILED_CODE_H_
#define RULEJIT_COMPILER_BACKEND_COMMON_COMPILED_CODE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/backend/common/jit_context.h"

namespace rulejit::backend {

// Immutable once built; owns the code and every operand it points at.
class CompiledCode {
 public:
  virtual ~CompiledCode() = default;
  // Per global chain index (lower::Layout): base chains' entries, else null.
  virtual const ChainFn* entries() const = 0;
  // Limit token buckets the code uses (JitContext::buckets).
  virtual uint32_t limit_count() const = 0;
  virtual size_t code_size() const = 0;
  // The listing, when asked to keep it; empty otherwise.
  virtual const std::string& assembly() const = 0;
  // LLVM IR before and after optimisation, when kept (llvm only).
  virtual const std::string& llvm_ir(bool optimized) const;
};

// What the driver asks of a code generator beyond the plan.
struct CodeOptions {
  bool keep_assembly = false;  // record the listing
  bool keep_llvm_ir = false;   // llvm: record its IR before and after
  int llvm_opt_level = 2;      // llvm: 0..3
};

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_COMMON_COMPILED_CODE_H_
