// Program: the compiled, immutable form of a ruleset and its classify calls.
// The driver reads as the pipeline: verify → passes → backend.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"

#include "compiler/backend/asmjit/asmjit_backend.h"
#include "compiler/backend/emit_util.h"
#include "compiler/backend/llvm/llvm_backend.h"
#include "compiler/classify/classifier.h"
#include "compiler/classify/frame_key.h"
#include "compiler/classify/segments.h"
#include "ir/diag.h"
#include "ir/hook_order.h"
#include "ir/verifier.h"
#include "rulejit/rulejit.h"
#include "runtime/packet_parse.h"

namespace rulejit {

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kAuto: return "auto";
    case Backend::kInterp: return "interp";
    case Backend::kJit: return "jit";
    case Backend::kLlvm: return "llvm";
  }
  return "?";
}

std::optional<Backend> BackendFromName(std::string_view name) {
  for (Backend b : {Backend::kAuto, Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    if (name == BackendName(b)) return b;
  }
  return std::nullopt;
}

// A hook whose verdict is a table lookup on the classifier's answer.
struct DirectVerdicts {
  RuleRef chain;
  const classify::Classifier* classifier = nullptr;
  std::vector<Verdict> verdicts;  // per rule of the chain
  std::vector<uint8_t> counted;   // per rule: it has a counter
  uint32_t rule_base = 0;         // layout id of rule 0
  uint32_t policy_id = 0;         // layout id of the chain's policy
  Verdict policy = Verdict::kAccept;
};

struct Program::Jit {
  explicit Jit(const ir::Ruleset& ruleset) : layout(ruleset) {}
  backend::Layout layout;
  std::deque<classify::Classifier> classifiers;
  backend::ClassifyPlan plan;
  // Rule id of rule 0 of the chain the first classifier belongs to (its
  // answers are that chain's rule indexes).
  uint32_t first_classified_rule_base = 0;
  // Per hook: set when the hook runs one base chain whose rules are all one
  // classified run of accepts and drops, each with or without a counter (a
  // large flat ACL). The compiled code would only ask the classifier and
  // return the rule's verdict, so the burst path does that itself.
  std::vector<std::optional<DirectVerdicts>> direct;
  ~Jit() {
    if (tier_up_thread.joinable()) tier_up_thread.join();
  }
  std::unique_ptr<backend::JitModule> module;     // jit tier
  // llvm tier. Under `auto` the tier-up thread writes it once, before
  // tier_up becomes kRunning; it then lives as long as the Program, so a
  // classify call still inside the old entries is never left dangling.
  std::unique_ptr<backend::LlvmModule> llvm;
  std::atomic<const backend::ChainFn*> entries{nullptr};  // the running tier's
  uint32_t limit_count = 0;                       // limit buckets it uses

  // auto: asmjit first, LLVM compiled in the background when asked or hot.
  enum class TierUp : uint8_t { kNone, kIdle, kCompiling, kRunning, kFailed };
  std::atomic<TierUp> tier_up{TierUp::kNone};
  int llvm_opt_level = 2;
  uint64_t tier_up_after = 0;   // packets a RunState sees before asking
  uint32_t tier_up_timeout_ms = 0;
  std::once_flag tier_up_once;
  std::thread tier_up_thread;
  absl::Status tier_up_status;  // written before kFailed
};

namespace {

// Decision structures for the long liftable runs of every chain.
absl::Status PlanClassifiers(const ir::Ruleset& rs, const CompileOptions& options,
                             std::deque<classify::Classifier>& classifiers,
                             backend::ClassifyPlan& plan) {
  for (const ir::Table& table : rs.tables) {
    for (const ir::Chain& chain : table.chains) {
      std::vector<backend::ClassifiedRun>& runs = plan.emplace_back();
      if (!options.classify) continue;
      classify::ClassifierOptions classifier_options;
      classifier_options.lift = headerspace::BoxContextForChain(table, chain);
      for (const classify::Segment& seg : classify::SplitChain(chain, classifier_options.lift)) {
        if (!seg.liftable || seg.end - seg.begin < options.classify_min_rules) continue;
        absl::StatusOr<classify::Classifier> c =
            classify::Classifier::Build(chain, seg.begin, seg.end, classifier_options);
        if (!c.ok()) return c.status();
        if (c->stats().rules == 0) continue;  // only rules that never match (blanked)
        classifiers.push_back(*std::move(c));
        runs.push_back({static_cast<uint32_t>(seg.begin), static_cast<uint32_t>(seg.end),
                        &classifiers.back()});
      }
    }
  }
  return absl::OkStatus();
}

// Whether auto should tier up to llvm: where bench/jit_bench measured it
// faster. LLVM's code wins on the rules the tiers run as code (linear
// chains, CPU ns/packet asmjit vs llvm: 100 rules 118 vs 65, 1000 rules
// 1785 vs 1278; at 10 rules 34 vs 26-33, within noise), not on rules both
// answer through the same classifier (1000/10000 rules: within noise).
// Its compile time (~2 ms a rule, on a background thread) caps the size.
size_t ClassifiedRules(const backend::ClassifyPlan& plan) {
  size_t rules = 0;
  for (const auto& runs : plan) {
    for (const backend::ClassifiedRun& run : runs) rules += run.end - run.begin;
  }
  return rules;
}

// DirectVerdicts for a hook's base chains, when they qualify.
std::optional<DirectVerdicts> FindDirectVerdicts(const ir::Ruleset& rs,
                                                 const backend::Layout& layout,
                                                 const backend::ClassifyPlan& plan,
                                                 const std::vector<RuleRef>& chains) {
  if (chains.size() != 1) return std::nullopt;
  const RuleRef ref = chains.front();
  const ir::Chain& chain = rs.tables[ref.table].chains[ref.chain];
  const std::vector<backend::ClassifiedRun>& runs = plan[layout.ChainIndex(ref.table, ref.chain)];
  if (runs.size() != 1 || runs[0].begin != 0 || runs[0].end != chain.rules.size()) {
    return std::nullopt;
  }
  DirectVerdicts direct;
  direct.chain = ref;
  direct.classifier = runs[0].classifier;
  for (const ir::Rule& rule : chain.rules) {
    if (rule.exprs.empty()) {  // never the classifier's answer
      direct.verdicts.push_back(Verdict::kAccept);
      direct.counted.push_back(false);
      continue;
    }
    const std::optional<backend::VerdictAction> action = backend::VerdictOnlyAction(rule);
    if (!action ||
        (action->verdict != ir::VerdictCode::kAccept && action->verdict != ir::VerdictCode::kDrop)) {
      return std::nullopt;
    }
    direct.verdicts.push_back(action->verdict == ir::VerdictCode::kAccept ? Verdict::kAccept
                                                                          : Verdict::kDrop);
    direct.counted.push_back(action->counted);
  }
  direct.rule_base = layout.RuleId(ref.table, ref.chain, 0);
  direct.policy_id = layout.PolicyId(ref.table, ref.chain);
  direct.policy = chain.base->policy == ir::VerdictCode::kDrop ? Verdict::kDrop : Verdict::kAccept;
  return direct;
}

bool TierUpPays(const backend::ClassifyPlan& plan, const ir::Ruleset& rs) {
  constexpr size_t kMinLinearRules = 100;
  constexpr size_t kMaxLinearRules = 10000;
  size_t rules = 0;
  for (const ir::Table& table : rs.tables) {
    for (const ir::Chain& chain : table.chains) rules += chain.rules.size();
  }
  const size_t linear = rules - ClassifiedRules(plan);
  return linear >= kMinLinearRules && linear <= kMaxLinearRules;
}

}  // namespace

absl::StatusOr<ir::Ruleset> ParseRuleset(std::string_view text,
                                         const std::string& name,
                                         std::optional<InputFormat> format) {
  ir::Diagnostics diags;
  std::optional<ir::Ruleset> ruleset =
      frontends::ParseRuleset(text, name, format, diags);
  if (!ruleset) return absl::InvalidArgumentError(diags.Format());
  return *std::move(ruleset);
}

Program::~Program() = default;

absl::StatusOr<std::unique_ptr<const Program>> Program::Compile(
    ir::Ruleset ruleset, const CompileOptions& options) {
  ir::Diagnostics diags;
  if (!ir::Verify(ruleset, diags)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ruleset does not verify: ", diags.all().front().message));
  }
  // Rules that write packet bytes, queue, count quotas or NAT run in the
  // interpreter (the compiled tiers read the packet as immutable and have
  // no such state): the whole program falls back, and backend() and
  // interpreter_reason() say so.
  std::string what;
  const ir::Node* only = ir::FirstInterpreterOnly(ruleset, &what);
  const bool interp_only = options.backend == Backend::kInterp || only != nullptr;
  std::string reason;
  if (only != nullptr && options.backend != Backend::kInterp) {
    std::string where = ruleset.Where(only->loc);
    reason = absl::StrCat(where.empty() ? "" : where + ": ", what,
                          ": the compiled tiers do not run it, the whole ruleset runs "
                          "in the interpreter");
  }
  if (!interp_only) passes::RunPasses(ruleset, options.passes);
  auto program = std::unique_ptr<Program>(new Program());
  program->ruleset_ = std::make_unique<ir::Ruleset>(std::move(ruleset));
  const ir::Ruleset& rs = *program->ruleset_;
  program->interp_ = std::make_unique<ir::Interpreter>(rs);
  for (int h = 0; h <= static_cast<int>(ir::Hook::kEgress); ++h) {
    program->hook_chains_.push_back(ir::BaseChainsAt(rs, static_cast<ir::Hook>(h)));
  }
  if (interp_only) {
    program->backend_ = Backend::kInterp;
    program->interpreter_reason_ = std::move(reason);
    return program;
  }
  program->jit_ = std::make_unique<Jit>(rs);
  Jit& jit = *program->jit_;
  if (absl::Status s = PlanClassifiers(rs, options, jit.classifiers, jit.plan); !s.ok()) {
    return s;
  }
  for (size_t c = 0; c < jit.plan.size(); ++c) {
    if (jit.plan[c].empty()) continue;
    jit.first_classified_rule_base = jit.layout.rule_base[c];
    break;
  }
  for (const std::vector<RuleRef>& chains : program->hook_chains_) {
    jit.direct.push_back(FindDirectVerdicts(rs, jit.layout, jit.plan, chains));
  }
  if (options.backend == Backend::kLlvm) {
    absl::StatusOr<std::unique_ptr<backend::LlvmModule>> module = backend::CompileLlvm(
        rs, jit.layout, jit.plan,
        {.opt_level = options.llvm_opt_level, .keep_ir = options.keep_llvm_ir,
         .keep_assembly = options.keep_assembly});
    if (!module.ok()) return module.status();
    jit.llvm = *std::move(module);
    jit.entries = jit.llvm->entries();
    jit.limit_count = jit.llvm->limit_count();
    program->backend_ = Backend::kLlvm;
    return program;
  }
  absl::StatusOr<std::unique_ptr<backend::JitModule>> module =
      backend::CompileAsmjit(rs, jit.layout, jit.plan, options.keep_assembly);
  if (!module.ok()) return module.status();
  jit.module = *std::move(module);
  jit.entries = jit.module->entries();
  jit.limit_count = jit.module->limit_count();
  program->backend_ = Backend::kJit;
  if (options.backend == Backend::kAuto && TierUpPays(jit.plan, rs)) {
    jit.tier_up = Jit::TierUp::kIdle;
    jit.llvm_opt_level = options.llvm_opt_level;
    jit.tier_up_after = options.tier_up_after_packets;
    jit.tier_up_timeout_ms = options.tier_up_timeout_ms;
  }
  return program;
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
    jit.tier_up_thread = std::thread([&jit, &rs = *ruleset_] {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<std::unique_ptr<backend::LlvmModule>> llvm =
          backend::CompileLlvm(rs, jit.layout, jit.plan, {.opt_level = jit.llvm_opt_level});
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      if (llvm.ok() && took.count() > jit.tier_up_timeout_ms) {
        llvm = absl::DeadlineExceededError(absl::StrCat(
            "llvm: compile took ", took.count(), " ms, over the ", jit.tier_up_timeout_ms,
            " ms tier-up timeout"));
      }
      if (llvm.ok() && (*llvm)->limit_count() != jit.limit_count) {
        llvm = absl::InternalError("llvm: limit buckets numbered differently");
      }
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

const std::string& Program::assembly() const {
  static const std::string kNone;
  if (!jit_) return kNone;
  return backend() == Backend::kLlvm ? jit_->llvm->assembly() : jit_->module->assembly();
}

const std::string& Program::llvm_ir(bool optimized) const {
  static const std::string kNone;
  if (backend() != Backend::kLlvm) return kNone;
  return optimized ? jit_->llvm->ir_after() : jit_->llvm->ir_before();
}

size_t Program::code_size() const {
  if (!jit_) return 0;
  return backend() == Backend::kLlvm ? jit_->llvm->code_size() : jit_->module->code_size();
}

size_t Program::classified_rules() const {
  return jit_ ? ClassifiedRules(jit_->plan) : 0;
}

size_t Program::memory_bytes() const {
  size_t bytes = code_size();
  if (jit_) {
    for (const classify::Classifier& c : jit_->classifiers) bytes += c.memory_bytes();
  }
  return bytes;
}

Result Program::Run(Hook hook, const PacketView& pkt, const PacketMeta& meta,
                    RunState* state) const {
  if (state) {
    PrepareState(state);
    if (jit_ && jit_->tier_up_after && ++state->packets_ == jit_->tier_up_after) TierUp();
  }
  return compiled() ? RunJit(hook, pkt, meta, state) : RunInterp(hook, pkt, meta, state);
}

Result Program::RunInterp(Hook hook, const PacketView& pkt,
                          const PacketMeta& meta, RunState* state) const {
  ir::InterpState* st = nullptr;
  if (state) {
    state->interp_.now_ns = state->now_ns_;
    st = &state->interp_;
  }
  ir::EvalResult r = interp_->Run(hook, pkt, meta, st);
  Verdict verdict = r.verdict == ir::VerdictCode::kDrop    ? Verdict::kDrop
                    : r.verdict == ir::VerdictCode::kQueue ? Verdict::kQueue
                                                           : Verdict::kAccept;
  std::shared_ptr<const ir::NatChange> nat;
  if (r.nat) nat = std::make_shared<const ir::NatChange>(*std::move(r.nat));
  return {verdict, r.decided_by, r.rejected, r.mark, r.ct_mark, r.queue, std::move(nat)};
}

// Runs the base chains of the hook in order: accept goes on to the next
// chain, drop is final (nf_hook_slow).
Result Program::RunJit(Hook hook, const PacketView& pkt, const PacketMeta& meta,
                       RunState* state, int pre_rule) const {
  backend::JitContext ctx;
  ctx.data = pkt.data;
  ctx.len = pkt.len;
  for (int slot = 0; slot < ir::kHeaderSlots; ++slot) {
    ctx.header_off[slot] = ir::SlotOffset(pkt, static_cast<ir::HeaderSlot>(slot));
  }
  ctx.view = &pkt;
  ctx.meta = &meta;
  ctx.verdict_reg = 0;
  ctx.decided_rule = 0;
  ctx.skb_len = ir::SkbLen(pkt);
  ctx.rejected = 0;
  ctx.mut = {meta.mark, meta.ct_mark};
  ctx.counters = state ? state->counters_.data() : nullptr;
  ctx.buckets = state ? state->buckets_.data() : nullptr;
  ctx.now_ns = state ? state->now_ns_ : 0;
  ctx.pre_classifier = pre_rule == -2 ? nullptr : &jit_->classifiers.front();
  ctx.pre_rule = pre_rule;

  Result result;
  const backend::Layout& layout = jit_->layout;
  // One tier for the whole packet, even if a tier-up lands meanwhile.
  const backend::ChainFn* entries = jit_->entries.load(std::memory_order_acquire);
  for (const RuleRef& ref : hook_chains_[static_cast<int>(hook)]) {
    const ir::Table& table = ruleset_->tables[ref.table];
    const ir::Chain& chain = table.chains[ref.chain];
    if (!ir::ChainSeesPacket(table, chain, hook, pkt, meta)) continue;
    ctx.family = table.family;
    std::memset(ctx.regs, 0, sizeof(ctx.regs));
    uint32_t v = entries[layout.ChainIndex(ref.table, ref.chain)](&ctx);
    result.decided_by = layout.refs[ctx.decided_rule];
    if (v == backend::kJitDrop) {
      result.verdict = Verdict::kDrop;
      break;
    }
  }
  result.rejected = ctx.rejected != 0;
  result.mark = ctx.mut.mark;
  result.ct_mark = ctx.mut.ct_mark;
  return result;
}

namespace {

// The frame as the hook sees it: locally generated packets have no link
// header at output/postrouting.
PacketView ParseAtHook(Hook hook, const uint8_t* frame, uint32_t len) {
  PacketView pkt = runtime::ParseEthernet(frame, len);
  if (hook == Hook::kOutput || hook == Hook::kPostrouting) {
    pkt.link_off = ir::kAbsent;
  }
  // At netdev egress skb->data is the link header (meta len, byte counters).
  if (hook == Hook::kEgress) pkt.skb_off = pkt.link_off;
  return pkt;
}

// Parses up to kBurstChunk frames and asks the classifier for all of them
// at once (FirstMatchBurst interleaves their walks).
constexpr uint32_t kBurstChunk = 32;
void ParseAndClassify(const classify::Classifier& classifier, Hook hook,
                      const uint8_t* const* frames, const uint32_t* lens, uint32_t count,
                      PacketView* pkts, int* answers) {
  classify::Key keys[kBurstChunk];
  // Start every frame's first cache line loading before parsing any.
  for (uint32_t i = 0; i < count; ++i) __builtin_prefetch(frames[i]);
  for (uint32_t i = 0; i < count; ++i) {
    // Parsed in place (placement new elides the copy): copying the view
    // back from a temporary stalled on its just-written narrow fields.
    new (&pkts[i]) PacketView(ParseAtHook(hook, frames[i], lens[i]));
    keys[i] = classifier.KeyOf(pkts[i]);
  }
  classifier.FirstMatchBurst(keys, count, answers);
}

// A chunk of frames as the direct path needs them: the classifier key,
// whether the chain sees the packet, and its skb length (for counters).
// The common IPv4 frame is read straight from its bytes (FastIpv4FrameKey);
// the others are parsed in full. 16 frames, one burst walk's lanes: the
// next chunk's frames load while this chunk walks (32 at once waited on
// the frames' cache misses before any walk could start).
constexpr uint32_t kDirectChunk = 16;
struct DirectChunk {
  classify::Key keys[kDirectChunk];
  uint32_t skb_len[kDirectChunk];
  bool sees[kDirectChunk];
  int answers[kDirectChunk];
};

// `sees_ipv4`: whether the chain sees an IPv4 packet (ChainSeesPacket reads
// no more of a packet than its family, so one answer serves every
// fast-path frame of the burst).
void KeysOfChunk(const classify::Classifier& classifier, const ir::Table& table,
                 const ir::Chain& chain, Hook hook, bool sees_ipv4, const uint8_t* const* frames,
                 const uint32_t* lens, uint32_t count, const ir::PacketMeta& meta,
                 DirectChunk& chunk) {
  const bool skb_at_link = hook == Hook::kEgress;  // ParseAtHook's skb_off
  for (uint32_t i = 0; i < count; ++i) {
    if (classify::FastIpv4FrameKey(frames[i], lens[i], skb_at_link, &chunk.keys[i],
                                   &chunk.skb_len[i])) {
      chunk.sees[i] = sees_ipv4;
      continue;
    }
    const PacketView pkt = ParseAtHook(hook, frames[i], lens[i]);
    chunk.keys[i] = classifier.KeyOf(pkt);
    chunk.skb_len[i] = ir::SkbLen(pkt);
    chunk.sees[i] = ir::ChainSeesPacket(table, chain, hook, pkt, meta);
  }
}

// A direct-path result, field by field: assigning a Result{} temporary
// stored it to the stack and read it back across two stores, a failed
// store forward that was the single costliest step of the loop (perf
// annotate, acl1_10K). The size check is there to make whoever adds a
// field to Result add it here too.
void SetEveryField(Result& r, Verdict verdict, const RuleRef& decided_by, const PacketMeta& meta) {
  static_assert(sizeof(Result) == 56, "set the new Result field here");
  r.verdict = verdict;
  r.decided_by = decided_by;
  r.rejected = false;
  r.mark = meta.mark;
  r.ct_mark = meta.ct_mark;
  r.queue.reset();
  r.nat.reset();
}

// The burst path of a DirectVerdicts hook: what the compiled chain would
// compute (its only code asks the classifier, then counts and returns the
// rule's verdict, or the policy), without entering it.
void ClassifyBurstDirect(const DirectVerdicts& direct, const ir::Ruleset& rs,
                         const backend::Layout& layout, Hook hook, const uint8_t* const* frames,
                         const uint32_t* lens, uint32_t n, const PacketMeta& meta,
                         Result* results, ir::Counter* counters) {
  const ir::Table& table = rs.tables[direct.chain.table];
  const ir::Chain& chain = table.chains[direct.chain.chain];
  ir::PacketView ipv4;
  ipv4.nfproto = ir::kNfProtoIpv4;
  const bool sees_ipv4 = ir::ChainSeesPacket(table, chain, hook, ipv4, meta);
  DirectChunk chunk;
  for (uint32_t i = 0; i < std::min(n, kDirectChunk); ++i) __builtin_prefetch(frames[i]);
  for (uint32_t done = 0; done < n; done += kDirectChunk) {
    const uint32_t count = std::min(kDirectChunk, n - done);
    for (uint32_t i = done + count; i < std::min(n, done + count + kDirectChunk); ++i) {
      __builtin_prefetch(frames[i]);
    }
    KeysOfChunk(*direct.classifier, table, chain, hook, sees_ipv4, frames + done, lens + done,
                count, meta, chunk);
    direct.classifier->FirstMatchBurst(chunk.keys, count, chunk.answers);
    for (uint32_t i = 0; i < count; ++i) {  // the rule slots, far apart in a large chain
      if (chunk.answers[i] >= 0) __builtin_prefetch(&layout.refs[direct.rule_base + chunk.answers[i]]);
    }
    for (uint32_t i = 0; i < count; ++i) {
      const int rule = chunk.answers[i];
      if (!chunk.sees[i]) {
        SetEveryField(results[done + i], Verdict::kAccept, RuleRef{}, meta);
        continue;
      }
      SetEveryField(results[done + i], rule >= 0 ? direct.verdicts[rule] : direct.policy,
                    layout.refs[rule >= 0 ? direct.rule_base + rule : direct.policy_id], meta);
      if (rule >= 0 && counters && direct.counted[rule]) {
        ir::Counter& c = counters[direct.rule_base + rule];
        ++c.packets;
        c.bytes += chunk.skb_len[i];
      }
    }
  }
}

}  // namespace

// A hook that answers from its table takes the burst path for one frame
// too: it reads the key without the full parse and enters no chain code
// (BM_ClassifyJit/10000, the distinct seed chain: 72-74 -> 66-67 ns CPU,
// with FirstMatchBurst's single-key lookup).
Result Program::Classify(Hook hook, const uint8_t* frame, uint32_t len,
                         const PacketMeta& meta, RunState* state) const {
  if (answers_from_table(hook)) {
    Result result;
    ClassifyBurst(hook, &frame, &len, 1, meta, &result, state);
    return result;
  }
  return Run(hook, ParseAtHook(hook, frame, len), meta, state);
}

// With a decision structure, the burst first asks it for every packet at
// once (FirstMatchBurst interleaves the tree walks, overlapping their
// cache misses), then runs the chains, which take the answer from there.
void Program::ClassifyBurst(Hook hook, const uint8_t* const* frames,
                            const uint32_t* lens, uint32_t n,
                            const PacketMeta& meta, Result* results,
                            RunState* state) const {
  if (!compiled() || jit_->classifiers.empty()) {
    for (uint32_t i = 0; i < n; ++i) {
      results[i] = Classify(hook, frames[i], lens[i], meta, state);
    }
    return;
  }
  if (state) PrepareState(state);
  if (const std::optional<DirectVerdicts>& direct = jit_->direct[static_cast<int>(hook)]) {
    ClassifyBurstDirect(*direct, *ruleset_, jit_->layout, hook, frames, lens, n, meta, results,
                        state ? state->counters_.data() : nullptr);
    CountTowardTierUp(state, n);
    return;
  }
  constexpr uint32_t kChunk = kBurstChunk;
  PacketView pkts[kChunk];
  int answers[kChunk];
  const classify::Classifier& first = jit_->classifiers.front();
  for (uint32_t done = 0; done < n; done += kChunk) {
    const uint32_t count = std::min(kChunk, n - done);
    ParseAndClassify(first, hook, frames + done, lens + done, count, pkts, answers);
    // Start loading the per-rule slots the answers lead to (the deciding
    // rule's reference and counter), which a large chain has far apart.
    for (uint32_t i = 0; i < count; ++i) {
      if (answers[i] < 0) continue;
      const uint32_t id = jit_->first_classified_rule_base + static_cast<uint32_t>(answers[i]);
      __builtin_prefetch(&jit_->layout.refs[id]);
      if (state) __builtin_prefetch(&state->counters_[id], 1);
    }
    CountTowardTierUp(state, count);
    for (uint32_t i = 0; i < count; ++i) {
      results[done + i] = RunJit(hook, pkts[i], meta, state, answers[i]);
    }
  }
}

bool Program::answers_from_table(Hook hook) const {
  return compiled() && jit_->direct[static_cast<int>(hook)].has_value();
}

void Program::CountTowardTierUp(RunState* state, uint32_t packets) const {
  if (!state || !jit_->tier_up_after) return;
  const uint64_t before = state->packets_;
  state->packets_ += packets;
  if (before < jit_->tier_up_after && state->packets_ >= jit_->tier_up_after) TierUp();
}

// Sizes the per-thread slots for this program (first use only).
void Program::PrepareState(RunState* state) const {
  if (state->prepared_for_ == this) return;
  state->prepared_for_ = this;
  if (!compiled()) {
    state->jit_ = false;
    // Every rule gets its slot up front (the interpreter grows lazily).
    auto& tables = state->interp_.counters;
    if (tables.size() < ruleset_->tables.size()) {
      tables.resize(ruleset_->tables.size());
    }
    for (size_t t = 0; t < ruleset_->tables.size(); ++t) {
      const auto& chains = ruleset_->tables[t].chains;
      if (tables[t].size() < chains.size()) tables[t].resize(chains.size());
      for (size_t c = 0; c < chains.size(); ++c) {
        if (tables[t][c].size() < chains[c].rules.size()) {
          tables[t][c].resize(chains[c].rules.size());
        }
      }
    }
    return;
  }
  state->jit_ = true;
  const backend::Layout& layout = jit_->layout;
  if (state->counters_.size() < layout.rule_count) {
    state->counters_.resize(layout.rule_count);
  }
  if (state->buckets_.size() < jit_->limit_count) {
    state->buckets_.resize(jit_->limit_count);
  }
  if (state->rule_base_.empty()) {
    state->chain_base_ = layout.chain_base;
    state->rule_base_ = layout.rule_base;
  }
}

ir::Counter RunState::CounterOf(const RuleRef& ref) const {
  if (ref.table < 0 || ref.chain < 0 || ref.rule < 0) return {};
  if (!jit_) {
    const auto& c = interp_.counters;
    if (static_cast<size_t>(ref.table) < c.size() &&
        static_cast<size_t>(ref.chain) < c[ref.table].size() &&
        static_cast<size_t>(ref.rule) < c[ref.table][ref.chain].size()) {
      return c[ref.table][ref.chain][ref.rule];
    }
    return {};
  }
  if (static_cast<size_t>(ref.table) >= chain_base_.size()) return {};
  size_t id = rule_base_[chain_base_[ref.table] + ref.chain] + ref.rule;
  return id < counters_.size() ? counters_[id] : ir::Counter{};
}

}  // namespace rulejit
