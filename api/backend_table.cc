// The backend table (see backend_table.h).
#include "api/backend_table.h"

#include "absl/strings/str_cat.h"
#include "compiler/backend/asmjit/asmjit_backend.h"
#include "compiler/backend/common/capabilities.h"
#include "compiler/backend/llvm/llvm_backend.h"

namespace rulejit {
namespace {

bool Always() { return true; }

std::string RefusesNothing(const ir::Ruleset&) { return ""; }

// The compiled tiers read the packet as immutable and keep no state beyond
// counters and limit buckets (backend/common/capabilities.h).
std::string RefusesInterpreterOnly(const ir::Ruleset& ruleset) {
  std::string what;
  const ir::Node* only = backend::FirstInterpreterOnly(ruleset, &what);
  if (only == nullptr) return "";
  const std::string where = ruleset.Where(only->loc);
  return absl::StrCat(where.empty() ? "" : where + ": ", what,
                      ": the compiled tiers do not run it, the whole ruleset runs "
                      "in the interpreter");
}

// A code generator's module as the CompiledCode the driver keeps.
template <typename Module>
absl::StatusOr<std::unique_ptr<backend::CompiledCode>> AsCompiledCode(
    absl::StatusOr<std::unique_ptr<Module>> module) {
  if (!module.ok()) return module.status();
  return std::unique_ptr<backend::CompiledCode>(*std::move(module));
}

absl::StatusOr<std::unique_ptr<backend::CompiledCode>> Asmjit(
    const ir::Ruleset& ruleset, const lower::Plan& plan, const backend::CodeOptions& options) {
  return AsCompiledCode(backend::CompileAsmjit(ruleset, plan, options));
}

absl::StatusOr<std::unique_ptr<backend::CompiledCode>> Llvm(
    const ir::Ruleset& ruleset, const lower::Plan& plan, const backend::CodeOptions& options) {
  return AsCompiledCode(backend::CompileLlvm(ruleset, plan, options));
}

}  // namespace

const std::vector<BackendInfo>& Backends() {
  static const std::vector<BackendInfo> kBackends = {
      {Backend::kInterp, "interp", &Always, &RefusesNothing, nullptr},
      {Backend::kJit, "jit", &Always, &RefusesInterpreterOnly, &Asmjit},
      {Backend::kLlvm, "llvm", &Always, &RefusesInterpreterOnly, &Llvm},
  };
  return kBackends;
}

const BackendInfo& BackendFor(Backend kind) {
  if (kind == Backend::kAuto) kind = Backend::kJit;
  for (const BackendInfo& info : Backends()) {
    if (info.kind == kind) return info;
  }
  return Backends().front();
}

BackendChoice ChooseBackend(const ir::Ruleset& ruleset, Backend requested) {
  const BackendInfo& interp = BackendFor(Backend::kInterp);
  const BackendInfo& wanted = BackendFor(requested);
  if (wanted.kind == Backend::kInterp) return {&interp, ""};
  if (!wanted.available()) {
    return {&interp, absl::StrCat(wanted.name, ": not available on this build or CPU, "
                                               "the ruleset runs in the interpreter")};
  }
  std::string reason = wanted.refuses(ruleset);
  if (!reason.empty()) return {&interp, std::move(reason)};
  return {&wanted, ""};
}

}  // namespace rulejit
