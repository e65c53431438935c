// auto's tier-up: the program starts on asmjit's code, and where LLVM's
// code measured faster (program_build.cc, TierUpPays) compiles the same
// plan with LLVM on a background thread, once, when asked (Program::TierUp)
// or after tier_up_after packets on one RunState; the entries pointer is
// swapped atomically, so each packet runs wholly on one tier. A failed or
// late compile leaves asmjit running.
#include <chrono>

#include "absl/strings/str_cat.h"
#include "api/program_internal.h"
#include "compiler/backend/llvm/llvm_backend.h"

namespace rulejit {
namespace {

// The LLVM compile, with the timeout and the bucket-numbering check.
absl::StatusOr<std::unique_ptr<backend::CompiledCode>> CompileLlvmTier(
    const ir::Ruleset& ruleset, const lower::Plan& plan, int opt_level, uint32_t timeout_ms,
    uint32_t limit_count) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<backend::LlvmModule>> llvm =
      backend::CompileLlvm(ruleset, plan, {.llvm_opt_level = opt_level});
  if (!llvm.ok()) return llvm.status();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (took.count() > timeout_ms) {
    return absl::DeadlineExceededError(absl::StrCat(
        "llvm: compile took ", took.count(), " ms, over the ", timeout_ms, " ms tier-up timeout"));
  }
  if ((*llvm)->limit_count() != limit_count) {
    return absl::InternalError("llvm: limit buckets numbered differently");
  }
  return std::unique_ptr<backend::CompiledCode>(*std::move(llvm));
}

}  // namespace

void Program::ArmTierUp(const CompileOptions& options) {
  jit_->tier_up = Jit::TierUp::kIdle;
  jit_->llvm_opt_level = options.llvm_opt_level;
  jit_->tier_up_after = options.tier_up_after_packets;
  jit_->tier_up_timeout_ms = options.tier_up_timeout_ms;
}

Backend Program::backend() const {
  if (jit_ && jit_->tier_up.load(std::memory_order_acquire) == Jit::TierUp::kRunning) {
    return Backend::kLlvm;
  }
  return backend_;
}

bool Program::TierUp() const {
  if (!jit_ || jit_->tier_up.load() == Jit::TierUp::kNone) return false;
  Jit& jit = *jit_;
  std::call_once(jit.tier_up_once, [&] {
    jit.tier_up = Jit::TierUp::kCompiling;
    jit.tier_up_thread = std::thread([&jit, &rs = IrOf(ruleset_)] {
      absl::StatusOr<std::unique_ptr<backend::CompiledCode>> llvm = CompileLlvmTier(
          rs, jit.plan, jit.llvm_opt_level, jit.tier_up_timeout_ms, jit.limit_count);
      if (!llvm.ok()) {
        jit.tier_up_status = llvm.status();
        jit.tier_up.store(Jit::TierUp::kFailed, std::memory_order_release);
        return;  // asmjit keeps running
      }
      jit.llvm = *std::move(llvm);
      jit.entries.store(jit.llvm->entries(), std::memory_order_release);
      jit.tier_up.store(Jit::TierUp::kRunning, std::memory_order_release);
    });
  });
  return true;
}

absl::Status Program::WaitForTierUp() const {
  if (!jit_ || jit_->tier_up.load() == Jit::TierUp::kNone) {
    return absl::FailedPreconditionError("no tier-up for this program");
  }
  while (true) {
    switch (jit_->tier_up.load(std::memory_order_acquire)) {
      case Jit::TierUp::kRunning: return absl::OkStatus();
      case Jit::TierUp::kFailed: return jit_->tier_up_status;
      case Jit::TierUp::kIdle: return absl::FailedPreconditionError("tier-up not started");
      default: std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

}  // namespace rulejit
