// rulejit: compile a firewall ruleset once, classify frames fast.
//
//   #include "rulejit/rulejit.h"
//
//   absl::StatusOr<rulejit::Ruleset> ruleset =
//       rulejit::ParseRuleset(text, "rules.ipt");   // any syntax
//   if (!ruleset.ok()) { std::cerr << ruleset.status().message(); return 1; }
//   auto program = rulejit::Program::Compile(*std::move(ruleset), {});
//   if (!program.ok()) { ... }
//
//   rulejit::PacketMeta meta;                 // interfaces, marks, ct state
//   rulejit::Result r = (*program)->Classify(rulejit::Hook::kInput,
//                                            frame, frame_len, meta);
//   if (r.verdict == rulejit::Verdict::kDrop)
//     std::cout << (*program)->ruleset().Where(r.decided_by);  // "rules.ipt:12"
//
// A Program is immutable and may be shared by any number of threads. The
// classify calls allocate nothing, take no lock and return plain codes;
// per-thread mutable state (counters, limit buckets) lives in a RunState the
// caller owns, one per thread.
#ifndef RULEJIT_RULEJIT_H_
#define RULEJIT_RULEJIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rulejit/host.h"
#include "rulejit/packet.h"
#include "rulejit/types.h"

namespace rulejit {

// A parsed, verified ruleset: an opaque handle (copying copies it). What an
// embedder needs to explain a verdict and count things: its tables, chains
// and rules by index (RuleRef's), and where each rule came from. A
// moved-from Ruleset may only be assigned to or destroyed.
class Ruleset {
 public:
  Ruleset();  // no tables
  Ruleset(const Ruleset& other);
  Ruleset& operator=(const Ruleset& other);
  Ruleset(Ruleset&& other) noexcept;
  Ruleset& operator=(Ruleset&& other) noexcept;
  ~Ruleset();

  int table_count() const;
  const std::string& table_name(int table) const;
  const char* table_family(int table) const;  // "ip", "ip6", "inet", ...
  int chain_count(int table) const;
  const std::string& chain_name(int table, int chain) const;
  // The hook of a base chain; nullopt for a regular chain.
  std::optional<Hook> chain_hook(int table, int chain) const;
  int rule_count(int table, int chain) const;
  size_t rule_count() const;  // of every chain

  // "FILE:LINE" of the rule `ref` names, of its chain for a policy
  // (ref.rule == -1); "" when unknown or when no chain decided.
  std::string Where(const RuleRef& ref) const;
  // The rule as the user wrote it, when its source line is known and holds
  // the whole rule; else its printed IR form. A policy: "policy accept"
  // or "policy drop"; "" when no chain decided.
  std::string RuleText(const RuleRef& ref) const;

 private:
  friend struct RulesetInternal;  // api/internal.h
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses and verifies a ruleset in any supported syntax (iptables-save, nft,
// ClassBench; detected from the text unless `format` is given). `name`
// names the text in messages; nft includes are resolved next to it. On
// error the status message holds every located diagnostic
// (`NAME:LINE:COL: error: ...`), and no ruleset is returned.
[[nodiscard]] absl::StatusOr<Ruleset> ParseRuleset(
    std::string_view text, const std::string& name,
    std::optional<InputFormat> format = std::nullopt);

// What a ruleset's text does not hold but its meaning needs.
struct ParseOptions {
  std::optional<InputFormat> format;  // detected when not given
  // The ipsets an iptables dump's `-m set --match-set` names, as `ipset
  // save` prints them (the command line's `--ipset FILE`); `ipset_name`
  // names that text in messages. Empty: no sets are given, and a dump
  // naming one is refused. An nft ruleset given ipsets is refused.
  std::optional<std::string> ipset_save;
  std::string ipset_name = "<ipset>";
};
[[nodiscard]] absl::StatusOr<Ruleset> ParseRuleset(std::string_view text,
                                                   const std::string& name,
                                                   const ParseOptions& options);

const char* BackendName(Backend backend);
// "interp", "jit", "llvm", "auto"; nullopt for anything else.
std::optional<Backend> BackendFromName(std::string_view name);

// The optimizations CompileOptions::disabled_passes and dump_after
// (`--no-pass`, `--dump-after`)
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
  // Optimizations (OptimizationNames) the compiled tiers skip (the
  // interpreter always runs the ruleset as written: it is the reference).
  std::vector<std::string> disabled_passes;
  // An optimization whose before and after to hand to `dump` (as text: the
  // IR for a pass, the plan for a plan decision); empty for none.
  std::string dump_after;
  std::function<void(const std::string& before, const std::string& after)> dump;
  // Large chains as a decision structure (compiler/classify) when that is
  // measured to be faster; false keeps every chain linear.
  bool classify = true;
  // Shortest run of liftable rules worth a decision structure. Measured on
  // ClassBench (bench/classify_bench): the linear jit costs ~0.5-1 ns a
  // rule, a classifier lookup ~100-200 ns, so the break-even is ~150-300.
  uint32_t classify_min_rules = 256;
  // The host fib and addrtype ask about (its addresses, routes); null is
  // LoopbackHost() (rulejit/host.h). Every tier reads this one model.
  std::shared_ptr<const HostModel> host;
};

struct Result {
  Verdict verdict = Verdict::kAccept;
  RuleRef decided_by;
  // A reject statement decided (verdict is kDrop): the kernel then sends
  // the reply reject_type and reject_code say (runtime/reject.h builds it).
  bool rejected = false;
  RejectType reject_type = RejectType::kIcmpUnreach;
  uint8_t reject_code = 0;
  // A notrack statement ran (raw priority): conntrack leaves the packet
  // untracked.
  bool notrack = false;
  uint32_t mark = 0;     // meta mark after evaluation
  uint32_t ct_mark = 0;  // ct mark after evaluation
  // The zone after evaluation: a `ct zone set` on a packet that has no
  // conntrack entry yet chooses the zone conntrack looks it up in.
  CtZone ct_zone;
  std::optional<QueueChoice> queue;  // verdict kQueue: which queue
  // A NAT statement ran (nat chains). Behind a pointer: NatChange is over
  // 100 bytes, and a Result that small is built for every packet (zeroing
  // the whole Result was the single costliest step of a classified lookup).
  std::shared_ptr<const NatChange> nat;
};

// A log statement that ran (nft `log ...`, iptables LOG; `log group N` and
// NFLOG, which hand the packet to nfnetlink_log in the kernel, too), as
// RunState's log sink receives it while the packet is evaluated. The
// pointers and the prefix are valid only during the call.
struct LogEvent {
  std::string_view prefix;        // "" when none
  std::optional<uint32_t> level;  // syslog level as written (none: the default, 4)
  std::optional<uint32_t> group;  // nflog group (`log group N`, NFLOG)
  uint32_t flags = 0;             // kLogTcpSeq | kLogTcpOpt | ... (rulejit/types.h)
  RuleRef rule;                   // the rule holding the statement
  Hook hook = Hook::kInput;
  uint32_t mark = 0;              // meta mark as the rule saw it
  const PacketView* packet = nullptr;  // the packet as the rule saw it
  const PacketMeta* meta = nullptr;
};
using LogSink = std::function<void(const LogEvent&)>;

// Per-thread mutable state: counters per rule and per policy, limit token
// buckets, quota counts. Move-only; a moved-from RunState may only be
// assigned to or destroyed.
class RunState {
 public:
  RunState();
  RunState(RunState&& other) noexcept;
  RunState& operator=(RunState&& other) noexcept;
  ~RunState();
  // packets/bytes counted by rule `ref`'s counter expression.
  Counter CounterOf(const RuleRef& ref) const;
  // packets/bytes whose verdict at a hook the policy of base chain
  // (table, chain) decided (Result::decided_by with rule -1): iptables'
  // chain counters.
  Counter PolicyCounterOf(int table, int chain) const;
  // The clock limit expressions see.
  void set_now_ns(uint64_t now_ns);
  // Receives every log statement that runs, in order, on the classifying
  // thread (none set: they run and report nothing). A ruleset without log
  // statements never calls it.
  void set_log_sink(LogSink sink);

 private:
  friend class Program;
  struct Impl;  // api/program_internal.h
  std::unique_ptr<Impl> impl_;
};

class Program {
 public:
  ~Program();

  // Verifies and compiles `ruleset`. Errors (verification, code generation)
  // come back as a Status; nothing is half-built.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<const Program>> Compile(
      Ruleset ruleset, const CompileOptions& options);

  // Classifies one parsed packet at `hook`.
  Result Run(Hook hook, const PacketView& pkt, const PacketMeta& meta,
             RunState* state = nullptr) const;
  // One step of a packet's whole path (runtime/path.h): runs only `chains`,
  // base chains of `hook` in the given order (each if it sees the packet).
  // When `written` is not null and a rule wrote the packet (payload set,
  // TCPMSS, CHECKSUM: the interpreter tier), it receives the packet's bytes
  // as the chains left them; otherwise it is left empty.
  Result RunChains(Hook hook, std::span<const RuleRef> chains, const PacketView& pkt,
                   const PacketMeta& meta, RunState* state,
                   std::vector<uint8_t>* written = nullptr) const;
  // The base chains registered at `hook`, in the order Run runs them.
  std::vector<BaseChainInfo> BaseChains(Hook hook) const;
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
  // The ruleset the backend runs (after the passes, for compiled tiers):
  // what Result::decided_by indexes.
  const Ruleset& ruleset() const { return ruleset_; }

  // Whether some base chain at `hook` may see frames with `meta`: any
  // chain at the IP hooks; at netdev ingress and egress only chains bound
  // to meta's device (iifname at ingress, oifname at egress). The
  // rest of whether a chain sees a frame (its family) is the classify
  // calls' to tell.
  bool HookMaySee(Hook hook, const PacketMeta& meta) const;
  // Whether the verdicts depend on connection tracking: some rule reads or
  // changes conntrack state (ct expressions, NAT, notrack, flow offload).
  bool TracksConnections() const;
  // The kernel's random draws the verdicts read (PacketMeta::random,
  // symhash, jhash_seed); the rest of those fields are never read.
  const RandomInputs& random_inputs() const { return random_inputs_; }

  // Reload: adds to `state` (prepared for this program) the counters of
  // `old_states`, RunStates `old` classified with, where the rules are the
  // same: a rule whose table, chain and expressions are those of a rule of
  // `old` (the n-th such rule matching the n-th) takes that rule's
  // packets/bytes; a policy count follows its family, table and chain
  // name. Everything else gains nothing. So editing one rule of a large
  // file keeps the counters of all the others, wherever they moved.
  void CarryCountersFrom(const Program& old, std::span<const RunState* const> old_states,
                         RunState* state) const;
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
  struct Interp;
  friend struct ProgramInternal;
  Program(Ruleset ruleset, std::shared_ptr<const HostModel> host);
  void ArmTierUp(const CompileOptions& options);
  Result RunInterp(Hook hook, std::span<const RuleRef> chains, const PacketView& pkt,
                   const PacketMeta& meta, RunState* state,
                   std::vector<uint8_t>* written = nullptr) const;
  bool compiled() const { return jit_ != nullptr; }
  // `pre_rule`: the first classifier's answer for this packet, when the
  // burst path computed it ahead (-2: not computed).
  Result RunJit(Hook hook, std::span<const RuleRef> chains, const PacketView& pkt,
                const PacketMeta& meta, RunState* state, int pre_rule = -2) const;
  std::span<const RuleRef> ChainsAt(Hook hook) const {
    return hook_chains_[static_cast<int>(hook)];
  }
  // auto: counts packets a RunState classified; starts the tier-up when
  // they reach the threshold.
  void CountTowardTierUp(RunState* state, uint32_t packets) const;

  Ruleset ruleset_;
  std::shared_ptr<const HostModel> host_;  // never null
  std::unique_ptr<Interp> interp_;
  std::unique_ptr<Jit> jit_;
  std::vector<std::vector<RuleRef>> hook_chains_;  // per Hook, in order
  Backend backend_ = Backend::kInterp;
  std::string interpreter_reason_;
  RandomInputs random_inputs_;
};

}  // namespace rulejit

#endif  // RULEJIT_RULEJIT_H_
