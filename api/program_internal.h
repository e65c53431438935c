// What a compiled Program holds behind its pointer, shared by the three
// files that implement it: program_build.cc (the driver), program_run.cc
// (the hot path) and tier_up.cc (the background LLVM compile). Internal to
// api/; tests reach the plan through ProgramInternal::PlanOf.
#ifndef RULEJIT_API_PROGRAM_INTERNAL_H_
#define RULEJIT_API_PROGRAM_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "compiler/backend/common/compiled_code.h"
#include "compiler/lower/plan.h"
#include "rulejit/rulejit.h"

namespace rulejit {

struct Program::Jit {
  Jit(lower::Plan p, std::unique_ptr<backend::CompiledCode> c)
      : plan(std::move(p)), code(std::move(c)), entries(code->entries()),
        limit_count(code->limit_count()) {}
  ~Jit() {
    if (tier_up_thread.joinable()) tier_up_thread.join();
  }

  // The tier running now: the compiled code, or LLVM once a tier-up landed.
  const backend::CompiledCode& running() const;

  lower::Plan plan;
  std::unique_ptr<backend::CompiledCode> code;  // jit or llvm, compiled at once
  // auto's llvm tier. The tier-up thread writes it once, before tier_up
  // becomes kRunning; it then lives as long as the Program, so a classify
  // call still inside the old entries is never left dangling.
  std::unique_ptr<backend::CompiledCode> llvm;
  std::atomic<const backend::ChainFn*> entries{nullptr};  // the running tier's
  uint32_t limit_count = 0;                               // limit buckets it uses

  // auto: asmjit first, LLVM compiled in the background when asked or hot.
  enum class TierUp : uint8_t { kNone, kIdle, kCompiling, kRunning, kFailed };
  std::atomic<TierUp> tier_up{TierUp::kNone};
  int llvm_opt_level = 2;
  uint64_t tier_up_after = 0;  // packets a RunState sees before asking
  uint32_t tier_up_timeout_ms = 0;
  std::once_flag tier_up_once;
  std::thread tier_up_thread;
  absl::Status tier_up_status;  // written before kFailed
};

// What tests and tools inside the project may ask of a Program beyond its
// public interface.
struct ProgramInternal {
  // The plan a compiled program runs; null for the interpreter.
  static const lower::Plan* PlanOf(const Program& program);
};

}  // namespace rulejit

#endif  // RULEJIT_API_PROGRAM_INTERNAL_H_
