// asmjit backend: runs the emitter (asmjit_emitter.h) over the ruleset and
// the plan into one code buffer and makes it executable (see the header for
// the code layout and register conventions).
#include "compiler/backend/asmjit/asmjit_backend.h"

#include <asmjit/x86.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/backend/asmjit/asmjit_emitter.h"

namespace rulejit::backend {
namespace {

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

}  // namespace

struct JitModule::Impl {
  asmjit::JitRuntime runtime;
  void* code = nullptr;
};

JitModule::~JitModule() {
  if (impl_ && impl_->code) impl_->runtime.release(impl_->code);
}

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

  // A ruleset without chains (a file of sets) has no code to run.
  if (code.codeSize() == 0) return module;
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
