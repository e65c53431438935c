// LLVM IR emission: the same (ruleset after passes, lower::Plan) pair the
// asmjit backend consumes, as one llvm::Module.
//
//   per chain:      internal  i32 @body.<table>.<chain>(ptr %ctx)
//                   rules in order; each expression branches to the next
//                   rule's block on no-match; verdicts `ret`.
//   per base chain: external  i32 @entry.<chain index>(ptr %ctx)
//                   calls the body, applies the policy on kJitContinue.
//
// The functions have the asmjit entry signature (ChainFn) over the same
// JitContext, return kJitContinue/kJitAccept/kJitDrop, and call the same
// out-of-line helpers (jit_helpers.h, JitClassify) for what asmjit calls
// out for. `jump` is a call, `goto` a musttail call, so the machine stack is
// the nf_tables jump stack as in asmjit.
#ifndef RULEJIT_COMPILER_BACKEND_LLVM_LLVM_EMIT_H_
#define RULEJIT_COMPILER_BACKEND_LLVM_LLVM_EMIT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/backend/common/jit_helpers.h"
#include "compiler/lower/plan.h"
#include "ir/ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace rulejit::backend {

// Operand tables the generated code points at (by address, as constants).
// Lives as long as the compiled code.
struct LlvmOperands {
  std::deque<ir::SetIndex> set_indexes;
  std::deque<JitLookupOp> lookups;
  std::deque<JitLimitOp> limits;
  std::deque<JitLogOp> logs;
  std::deque<JitClassifyOp> classify_ops;
  uint32_t limit_count = 0;  // numbered in the asmjit order: buckets agree
};

// The helper functions the module declares, by symbol name and address;
// the JIT binds each name to its address.
std::vector<std::pair<std::string, void*>> LlvmHelperSymbols();

// Symbol of base chain `chain_index`'s entry function.
std::string LlvmEntryName(uint32_t chain_index);

std::unique_ptr<llvm::Module> EmitLlvmModule(const ir::Ruleset& ruleset,
                                             const lower::Plan& plan,
                                             llvm::LLVMContext& context,
                                             LlvmOperands& operands);

}  // namespace rulejit::backend

#endif  // RULEJIT_COMPILER_BACKEND_LLVM_LLVM_EMIT_H_
