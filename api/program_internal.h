// What a compiled Program and a RunState hold behind their pointers,
// shared by the files that implement them: program_build.cc (the driver),
// program_run.cc (the hot path), tier_up.cc (the background LLVM compile)
// and counters.cc. Internal to api/; tests reach the plan through
// ProgramInternal::PlanOf.
#ifndef RULEJIT_API_PROGRAM_INTERNAL_H_
#define RULEJIT_API_PROGRAM_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include <vector>

#include "absl/status/status.h"
#include "api/internal.h"
#include "compiler/backend/common/compiled_code.h"
#include "compiler/lower/plan.h"
#include "ir/expr_eval.h"
#include "ir/interp.h"
#include "rulejit/rulejit.h"

namespace rulejit {

struct Program::Jit {
  Jit(lower::Plan p, std::unique_ptr<backend::CompiledCode> c)
      : plan(std::move(p)), code(std::move(c)), entries(code->entries()),
        limit_count(code->limit_count()) {
    for (size_t hook = 0; hook < plan.direct.size(); ++hook) {
      if (plan.direct[hook]) direct_hooks |= 1u << hook;
    }
  }
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
  // A bit per Hook whose plan.direct holds a table: one load where the
  // hot path asks (the optional sits behind the vector's heap pointer).
  uint32_t direct_hooks = 0;

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

struct Program::Interp {
  Interp(const ir::Ruleset& ruleset, const HostModel& host) : interpreter(ruleset, &host) {}
  ir::Interpreter interpreter;
};

// A RunState's slots, sized by Program::PrepareState for one program. The
// hot path reaches them through RunState::impl_, one pointer.
struct RunState::Impl {
  // jit: by global rule id, then by policy id (Layout::PolicyId: rule_count
  // + chain index) for the policy counts.
  std::vector<ir::Counter> counters;
  std::vector<ir::LimitBucket> buckets;  // jit: by limit expression
  ir::InterpState interp;                // interp tier
  std::vector<ir::Counter> interp_policy;  // interp: by chain index
  std::vector<uint32_t> chain_base;      // layout copies for CounterOf
  std::vector<uint32_t> rule_base;
  uint32_t rule_count = 0;
  bool jit = false;
  const void* prepared_for = nullptr;    // the Program that sized it
  uint64_t now_ns = 0;
  uint64_t packets = 0;                  // for auto's tier-up
  LogSink log_sink;                      // set_log_sink's (empty: none)

  // The slot of rule `ref`'s counter / of a chain's policy count; null
  // when the state has none (not prepared, out of range).
  ir::Counter* RuleSlot(const RuleRef& ref);
  ir::Counter* PolicySlot(int table, int chain);
  // Sizes the slots for a ruleset: the interpreter's (`plan` null) or the
  // compiled tiers' (with `limit_count` limit buckets). Program::
  // PrepareState calls it once per program.
  void SizeFor(const ir::Ruleset& rs, const lower::Plan* plan, uint32_t limit_count);
};

// Hands a log statement that ran to `sink` as a LogEvent (both tiers).
void ReportLog(const LogSink& sink, const ir::Log& log, const RuleRef& rule, Hook hook,
               const PacketView& pkt, const PacketMeta& meta, uint32_t mark);

// What tests and tools inside the project may ask of a Program beyond its
// public interface.
struct ProgramInternal {
  // The plan a compiled program runs; null for the interpreter.
  static const lower::Plan* PlanOf(const Program& program);
};

}  // namespace rulejit

#endif  // RULEJIT_API_PROGRAM_INTERNAL_H_
