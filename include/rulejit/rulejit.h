// rulejit: compile a firewall ruleset once, classify frames fast.
//
//   #include "rulejit/rulejit.h"
//
//   absl::StatusOr<rulejit::ir::Ruleset> ruleset =
//       rulejit::ParseRuleset(text, "rules.ipt");   // any syntax
//   if (!ruleset.ok()) { std::cerr << ruleset.status().message(); return 1; }
//   auto program = rulejit::Program::Compile(*std::move(ruleset), {});
//   if (!program.ok()) { ... }
//
//   rulejit::PacketMeta meta;                 // interfaces, marks, ct state
//   rulejit::Result r = (*program)->Classify(rulejit::Hook::kInput,
//                                            frame, frame_len, meta);
//   if (r.verdict == rulejit::Verdict::kDrop) ...
//
// A Program is immutable and may be shared by any number of threads. The
// classify calls allocate nothing, take no lock and return plain codes;
// per-thread mutable state (counters, limit buckets) lives in a RunState the
// caller owns, one per thread.
#ifndef RULEJIT_RULEJIT_H_
#define RULEJIT_RULEJIT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/passes/passes.h"
#include "frontends/frontend.h"
#include "ir/expr_eval.h"
#include "ir/interp.h"
#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit {

using Hook = ir::Hook;

using InputFormat = frontends::InputFormat;

// Parses and verifies a ruleset in any supported syntax (iptables-save, nft,
// ClassBench; detected from the text unless `format` is given). `name`
// names the text in messages; nft includes are resolved next to it. On
// error the status message holds every located diagnostic
// (`NAME:LINE:COL: error: ...`), and no ruleset is returned.
[[nodiscard]] absl::StatusOr<ir::Ruleset> ParseRuleset(
    std::string_view text, const std::string& name,
    std::optional<InputFormat> format = std::nullopt);

// kQueue: an nft `queue` statement handed the packet to a userspace queue
// (Result::queue says which). It is final for the ruleset, like drop; the
// kernel then drops the packet when no program listens on the queue, or
// accepts it with the `bypass` flag.
enum class Verdict : uint8_t { kAccept, kDrop, kQueue };

enum class Backend : uint8_t {
  kAuto,    // jit at once; llvm compiled in the background and swapped in
            // when asked (Program::TierUp) or hot, where it measurably wins
  kInterp,  // the reference interpreter
  kJit,     // asmjit native code
  kLlvm,    // LLVM (ORC LLJIT) native code: slower to build, optimized
};
const char* BackendName(Backend backend);
// "interp", "jit", "llvm", "auto"; nullopt for anything else.
std::optional<Backend> BackendFromName(std::string_view name);

// The optimizations CompileOptions::passes (`--no-pass`, `--dump-after`)
// name, in the order they run: the IR passes (compiler/passes), then the
// plan's decisions (compiler/lower).
std::vector<std::string> OptimizationNames();
bool IsOptimizationName(std::string_view name);

struct CompileOptions {
  Backend backend = Backend::kAuto;
  bool keep_assembly = false;  // record the listing for `--emit asm`
  // llvm tier: record the LLVM IR before and after optimisation
  // (`--emit llvm-ir`), and the optimisation level (0..3).
  bool keep_llvm_ir = false;
  int llvm_opt_level = 2;
  // auto: packets one RunState classifies before it asks for the llvm tier
  // (0: only Program::TierUp asks).
  uint64_t tier_up_after_packets = 1u << 16;
  // auto: a tier-up whose LLVM compile takes longer than this is discarded
  // (asmjit keeps running; WaitForTierUp reports DeadlineExceeded). The
  // compile itself can't be interrupted, so it finishes on its thread.
  uint32_t tier_up_timeout_ms = 120000;
  // Optimizer passes for the compiled tiers (the interpreter always runs the
  // ruleset as written: it is the reference).
  passes::PassOptions passes;
  // Large chains as a decision structure (compiler/classify) when that is
  // measured to be faster; false keeps every chain linear.
  bool classify = true;
  // Shortest run of liftable rules worth a decision structure. Measured on
  // ClassBench (bench/classify_bench): the linear jit costs ~0.5-1 ns a
  // rule, a classifier lookup ~100-200 ns, so the break-even is ~150-300.
  uint32_t classify_min_rules = 256;
};

// Which rule decided, for --explain and counters: `rule == -1` is the
// policy of (table, chain); table == -1 means no base chain saw the packet
// (the kernel's default: accept).
using RuleRef = ir::RuleRef;

struct Result {
  Verdict verdict = Verdict::kAccept;
  RuleRef decided_by;
  bool rejected = false;
  uint32_t mark = 0;     // meta mark after evaluation
  uint32_t ct_mark = 0;  // ct mark after evaluation
  std::optional<ir::QueueChoice> queue;  // verdict kQueue: which queue
  // A NAT statement ran (nat chains). Behind a pointer: NatChange is over
  // 100 bytes, and a Result that small is built for every packet (zeroing
  // the whole Result was the single costliest step of a classified lookup).
  std::shared_ptr<const ir::NatChange> nat;
};

// Per-thread mutable state: counters per rule and limit token buckets.
class RunState {
 public:
  RunState() = default;
  // packets/bytes counted by rule `ref`'s counter expression.
  ir::Counter CounterOf(const RuleRef& ref) const;
  void set_now_ns(uint64_t now_ns) { now_ns_ = now_ns; }

 private:
  friend class Program;
  std::vector<ir::Counter> counters_;       // jit: by global rule id
  std::vector<ir::LimitBucket> buckets_;    // jit: by limit expression
  ir::InterpState interp_;                  // interp tier
  std::vector<uint32_t> chain_base_;        // layout copies for CounterOf
  std::vector<uint32_t> rule_base_;
  bool jit_ = false;
  const void* prepared_for_ = nullptr;      // the Program that sized it
  uint64_t now_ns_ = 0;
  uint64_t packets_ = 0;                    // for auto's tier-up
};

class Program {
 public:
  ~Program();

  // Verifies and compiles `ruleset`. Errors (verification, code generation)
  // come back as a Status; nothing is half-built.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<const Program>> Compile(
      ir::Ruleset ruleset, const CompileOptions& options);

  // Classifies one parsed packet at `hook`.
  Result Run(Hook hook, const PacketView& pkt, const PacketMeta& meta,
             RunState* state = nullptr) const;
  // Parses an Ethernet frame (or, at output hooks, strips nothing: the
  // link header is hidden as the kernel has none there) and classifies it.
  Result Classify(Hook hook, const uint8_t* frame, uint32_t len,
                  const PacketMeta& meta, RunState* state = nullptr) const;
  // Burst form: classifies n frames sharing `meta`, writing n results.
  void ClassifyBurst(Hook hook, const uint8_t* const* frames,
                     const uint32_t* lens, uint32_t n, const PacketMeta& meta,
                     Result* results, RunState* state = nullptr) const;

  // Sizes `state` for this program once: afterwards classifying with it
  // never reallocates it, so another thread may read CounterOf while this
  // one classifies (each counter an aligned 64-bit word, read whole). The
  // classify calls do this themselves on first use.
  void PrepareState(RunState* state) const;

  // The running tier (auto: jit, then llvm once a tier-up landed).
  Backend backend() const;
  // Why a compiled backend was asked for but the interpreter runs the
  // ruleset ("FILE:LINE: quota statement: ..."); empty otherwise.
  const std::string& interpreter_reason() const { return interpreter_reason_; }
  // auto: starts compiling the llvm tier on a background thread (once) and
  // switches to it atomically when done; a compile error leaves the jit
  // tier running. False when this program has no tier-up (other backends,
  // or auto where llvm does not pay).
  bool TierUp() const;
  // Waits for a started tier-up: OK once llvm runs, the error otherwise.
  absl::Status WaitForTierUp() const;
  // The ruleset the backend runs (after the passes, for compiled tiers).
  const ir::Ruleset& ruleset() const { return *ruleset_; }
  // The lowered plan of a compiled program as text (`rulejit compile
  // --emit plan`): per chain its linear, set-run and classified segments,
  // inlined chains, shared loads, hooks answered from a table. Empty for
  // the interpreter.
  std::string PlanText() const;
  const std::string& assembly() const;  // empty unless keep_assembly
  // llvm tier with keep_llvm_ir: the module as emitted / as optimized.
  const std::string& llvm_ir(bool optimized) const;
  size_t code_size() const;
  // Bytes of the built structures the hot path reads (machine code, and
  // decision structures when present).
  size_t memory_bytes() const;
  // Rules answered by decision structures rather than linear code.
  size_t classified_rules() const;
  // Whether ClassifyBurst at `hook` answers from the decision structure and
  // a verdict per rule, without running chain code: when the hook has one
  // base chain, made of liftable rules whose action is accept or drop, with
  // or without a counter.
  bool answers_from_table(Hook hook) const;

 private:
  struct Jit;
  friend struct ProgramInternal;
  explicit Program(ir::Ruleset ruleset);
  void ArmTierUp(const CompileOptions& options);
  Result RunInterp(Hook hook, const PacketView& pkt, const PacketMeta& meta,
                   RunState* state) const;
  bool compiled() const { return jit_ != nullptr; }
  // `pre_rule`: the first classifier's answer for this packet, when the
  // burst path computed it ahead (-2: not computed).
  Result RunJit(Hook hook, const PacketView& pkt, const PacketMeta& meta,
                RunState* state, int pre_rule = -2) const;
  // auto: counts packets a RunState classified; starts the tier-up when
  // they reach the threshold.
  void CountTowardTierUp(RunState* state, uint32_t packets) const;

  std::unique_ptr<ir::Ruleset> ruleset_;
  std::unique_ptr<ir::Interpreter> interp_;
  std::unique_ptr<Jit> jit_;
  std::vector<std::vector<RuleRef>> hook_chains_;  // per Hook, in order
  Backend backend_ = Backend::kInterp;
  std::string interpreter_reason_;
};

}  // namespace rulejit

#endif  // RULEJIT_RULEJIT_H_
