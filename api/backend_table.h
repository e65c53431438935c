// The backends, in one table that says for each what this build and CPU
// can run and what it cannot run of a ruleset; the driver picks from it,
// with the interpreter as the fallback that always exists (DPDK ACL's
// habit: one table checks build and CPU, a portable path is always there).
//
//   name     available                 refuses                     compile
//   interp   always                    nothing                     (none)
//   jit      x86-64 (asmjit)           interpreter-only exprs      CompileAsmjit
//   llvm     this build has LLVM 19    interpreter-only exprs      CompileLlvm
#ifndef RULEJIT_API_BACKEND_TABLE_H_
#define RULEJIT_API_BACKEND_TABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/common/compiled_code.h"
#include "compiler/lower/plan.h"
#include "ir/ir.h"
#include "rulejit/rulejit.h"

namespace rulejit {

struct BackendInfo {
  Backend kind;
  const char* name;
  // Whether this build and CPU can run it.
  bool (*available)();
  // Why it cannot run `ruleset` ("FILE:LINE: quota statement: ..."), or "".
  std::string (*refuses)(const ir::Ruleset& ruleset);
  // Compiles a planned ruleset; null for the interpreter.
  absl::StatusOr<std::unique_ptr<backend::CompiledCode>> (*compile)(
      const ir::Ruleset& ruleset, const lower::Plan& plan, const backend::CodeOptions& options);
};

// interp, jit, llvm.
const std::vector<BackendInfo>& Backends();
const BackendInfo& BackendFor(Backend kind);

// The backend that runs `ruleset` when `requested` is asked for (auto asks
// for jit first), and why it is the interpreter when a compiled backend
// was asked for ("" otherwise).
struct BackendChoice {
  const BackendInfo* info;
  std::string reason;
};
BackendChoice ChooseBackend(const ir::Ruleset& ruleset, Backend requested);

}  // namespace rulejit

#endif  // RULEJIT_API_BACKEND_TABLE_H_
