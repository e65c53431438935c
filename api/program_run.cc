// Program's hot path: one frame or a burst through the running tier.
//
//   Classify ──parse (packet/)──▶ Run ──▶ RunJit: base chains of the hook in
//     priority order, each through the compiled entry (or RunInterp)
//   ClassifyBurst ──▶ classifier for the whole burst (FirstMatchBurst), then
//     RunJit per frame with its answer; or, at a hook the plan answers from
//     a table (lower::DirectVerdicts), the direct path: fast 5-tuple keys,
//     one burst lookup, verdicts and counters straight off the table.
//
// A reject leaves its type and code in the Result (compiled code stores
// them with the reject flag in one word, JitRejectWord); the direct path
// holds no reject rules (their action is no plain verdict). Log statements
// reach the RunState's sink (ReportLog): compiled code calls JitLog, which
// calls back here only when a sink is set.
//
// Nothing here allocates, locks or returns a Status (but a log sink may).
#include <algorithm>
#include <cstring>

#include "api/parse_at_hook.h"
#include "api/program_internal.h"
#include "compiler/classify/frame_key.h"
#include "ir/hook_order.h"
#include "packet/parse.h"

namespace rulejit {
namespace {

// clang's UBSan (-fsanitize=function) checks a call through a function
// pointer against type data it places just before every function it
// compiles. The jit tiers' machine code has none, so the check would read
// the bytes before it: off its page when the code starts one, a crash.
#if defined(__clang__)
__attribute__((no_sanitize("function"), noinline))
#endif
uint32_t EnterChain(backend::ChainFn entry, backend::JitContext* ctx) {
  return entry(ctx);
}

}  // namespace

Result Program::Run(Hook hook, const PacketView& pkt, const PacketMeta& meta,
                    RunState* state) const {
  if (state) {
    PrepareState(state);
    if (jit_ && jit_->tier_up_after && ++state->impl_->packets == jit_->tier_up_after) TierUp();
  }
  return compiled() ? RunJit(hook, ChainsAt(hook), pkt, meta, state)
                    : RunInterp(hook, ChainsAt(hook), pkt, meta, state);
}

Result Program::RunChains(Hook hook, std::span<const RuleRef> chains, const PacketView& pkt,
                          const PacketMeta& meta, RunState* state,
                          std::vector<uint8_t>* written) const {
  if (written != nullptr) written->clear();
  if (state) PrepareState(state);
  return compiled() ? RunJit(hook, chains, pkt, meta, state)
                    : RunInterp(hook, chains, pkt, meta, state, written);
}

std::vector<BaseChainInfo> Program::BaseChains(Hook hook) const {
  const ir::Ruleset& rs = IrOf(ruleset_);
  std::vector<BaseChainInfo> out;
  for (const RuleRef& ref : ChainsAt(hook)) {
    const ir::BaseChain& base = *rs.tables[ref.table].chains[ref.chain].base;
    out.push_back({ref, base.priority, base.type == "nat"});
  }
  return out;
}

namespace {

// Counts a packet whose verdict a policy decided.
inline void CountPolicy(ir::Counter& counter, uint32_t skb_len) {
  ++counter.packets;
  counter.bytes += skb_len;
}

// The public NatChange of the interpreter's (plain vectors for its bytes).
NatChange PublicNat(const ir::NatChange& nat) {
  auto bytes = [](const ir::Bytes& b) { return std::vector<uint8_t>(b.begin(), b.end()); };
  return {nat.kind, bytes(nat.addr_min), bytes(nat.addr_max), bytes(nat.proto_min),
          bytes(nat.proto_max), nat.flags};
}

}  // namespace

Result Program::RunInterp(Hook hook, std::span<const RuleRef> chains, const PacketView& pkt,
                          const PacketMeta& meta, RunState* state,
                          std::vector<uint8_t>* written) const {
  RunState::Impl* slots = state ? state->impl_.get() : nullptr;
  ir::InterpState* st = nullptr;
  if (slots) {
    slots->interp.now_ns = slots->now_ns;
    st = &slots->interp;
  }
  ir::EvalResult r = interp_->interpreter.RunChains(hook, chains, pkt, meta, st, written);
  Verdict verdict = r.verdict == ir::VerdictCode::kDrop    ? Verdict::kDrop
                    : r.verdict == ir::VerdictCode::kQueue ? Verdict::kQueue
                                                           : Verdict::kAccept;
  if (slots && r.decided_by.rule < 0 && r.decided_by.chain >= 0) {
    CountPolicy(slots->interp_policy[slots->chain_base[r.decided_by.table] + r.decided_by.chain],
                ir::SkbLen(pkt));
  }
  std::shared_ptr<const NatChange> nat;
  if (r.nat) nat = std::make_shared<const NatChange>(PublicNat(*r.nat));
  Result result;
  result.verdict = verdict;
  result.decided_by = r.decided_by;
  result.rejected = r.rejected;
  if (r.rejected) {
    result.reject_type = r.reject.type;
    result.reject_code = static_cast<uint8_t>(r.reject.code);
  }
  result.notrack = r.notrack;
  result.mark = r.mark;
  result.ct_mark = r.ct_mark;
  result.ct_zone = r.ct_zone;
  result.queue = r.queue;
  result.nat = std::move(nat);
  return result;
}

namespace {

// What a log statement in compiled code reports through (JitContext::log_user).
struct JitLogUser {
  const LogSink* sink;
  const lower::Layout* layout;
};

// Reads a field of the JitContext on its own, with one load of its width.
// GCC merged the reads of neighbouring fields into 8-byte loads that span
// several narrower stores (ctx setup, compiled code), which the CPU cannot
// forward from the store buffer: a stall that was ~14% of RunJit's cycles
// (perf annotate, BM_SeedJit/10000, AMD EPYC).
template <typename T>
T LoadAlone(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_RELAXED);
}

void ReportJitLog(backend::JitContext* ctx, const ir::Log& log, uint32_t rule_id) {
  const auto* user = static_cast<const JitLogUser*>(ctx->log_user);
  ReportLog(*user->sink, log, user->layout->refs[rule_id], ctx->hook, *ctx->view, *ctx->meta,
            ctx->mut.mark);
}

}  // namespace

// Runs the base chains of the hook in order: accept goes on to the next
// chain, drop is final (nf_hook_slow).
Result Program::RunJit(Hook hook, std::span<const RuleRef> chains, const PacketView& pkt,
                       const PacketMeta& meta, RunState* state, int pre_rule) const {
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
  ctx.notrack = 0;
  ctx.mut = ir::MutableMeta::Of(meta);
  RunState::Impl* slots = state ? state->impl_.get() : nullptr;
  ctx.counters = slots ? slots->counters.data() : nullptr;
  ctx.buckets = slots ? slots->buckets.data() : nullptr;
  ctx.now_ns = slots ? slots->now_ns : 0;
  ctx.pre_classifier = pre_rule == -2 ? nullptr : &jit_->plan.classifiers.front();
  ctx.pre_rule = pre_rule;
  ctx.host = host_.get();
  ctx.hook = hook;
  ctx.log_fn = nullptr;
  JitLogUser log_user{slots ? &slots->log_sink : nullptr, &jit_->plan.layout};
  if (slots && slots->log_sink) {
    ctx.log_fn = &ReportJitLog;
    ctx.log_user = &log_user;
  }

  Result result;
  const lower::Layout& layout = jit_->plan.layout;
  const ir::Ruleset& rs = IrOf(ruleset_);
  // One tier for the whole packet, even if a tier-up lands meanwhile.
  const backend::ChainFn* entries = jit_->entries.load(std::memory_order_acquire);
  for (const RuleRef& ref : chains) {
    const ir::Table& table = rs.tables[ref.table];
    const ir::Chain& chain = table.chains[ref.chain];
    if (!ir::ChainSeesPacket(table, chain, hook, pkt, meta)) continue;
    ctx.family = table.family;
    std::memset(ctx.regs, 0, sizeof(ctx.regs));
    uint32_t v = EnterChain(entries[layout.ChainIndex(ref.table, ref.chain)], &ctx);
    result.decided_by = layout.refs[ctx.decided_rule];
    if (v == backend::kJitDrop) {
      result.verdict = Verdict::kDrop;
      break;
    }
  }
  // A policy decided: ctx.decided_rule is its policy id.
  if (slots && result.decided_by.rule < 0 && result.decided_by.chain >= 0) {
    CountPolicy(ctx.counters[ctx.decided_rule], ctx.skb_len);
  }
  result.rejected = ctx.rejected != 0;
  result.reject_type = static_cast<RejectType>(ctx.rejected >> 8 & 0xff);
  result.reject_code = static_cast<uint8_t>(ctx.rejected >> 16);
  result.notrack = ctx.notrack != 0;
  result.mark = LoadAlone(ctx.mut.mark);
  result.ct_mark = LoadAlone(ctx.mut.ct_mark);
  result.ct_zone.id = LoadAlone(ctx.mut.ct_zone.id);
  result.ct_zone.dirs = LoadAlone(ctx.mut.ct_zone.dirs);
  return result;
}

// The frame as the hook sees it: locally generated packets have no link
// header at output/postrouting.
PacketView ParseAtHook(Hook hook, const uint8_t* frame, uint32_t len) {
  PacketView pkt = packet::ParseEthernet(frame, len);
  if (hook == Hook::kOutput || hook == Hook::kPostrouting) {
    pkt.link_off = kAbsent;
  }
  // At netdev egress skb->data is the link header (meta len, byte counters).
  if (hook == Hook::kEgress) pkt.skb_off = pkt.link_off;
  return pkt;
}

namespace {

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
// 16 frames, one burst walk's lanes: the
// next chunk's frames load while this chunk walks (32 at once waited on
// the frames' cache misses before any walk could start).
constexpr uint32_t kDirectChunk = 16;
struct DirectChunk {
  classify::Key keys[kDirectChunk];
  uint32_t skb_len[kDirectChunk];
  bool sees[kDirectChunk];
  int answers[kDirectChunk];
};

// One frame's classifier key and skb length; returns whether the chain
// sees the packet. The common IPv4 frame is read straight from its bytes
// (FastIpv4FrameKey); the others are parsed in full. `sees_ipv4`: whether
// the chain sees an IPv4 packet (ChainSeesPacket reads no more of a packet
// than its family, so one answer serves every fast-path frame).
[[gnu::always_inline]] inline bool DirectKeyOf(const classify::Classifier& classifier, const ir::Table& table,
                        const ir::Chain& chain, Hook hook, bool sees_ipv4, const uint8_t* frame,
                        uint32_t len, const PacketMeta& meta, classify::Key* key,
                        uint32_t* skb_len) {
  const bool skb_at_link = hook == Hook::kEgress;  // ParseAtHook's skb_off
  if (classify::FastIpv4FrameKey(frame, len, skb_at_link, key, skb_len)) return sees_ipv4;
  const PacketView pkt = ParseAtHook(hook, frame, len);
  *key = classifier.KeyOf(pkt);
  *skb_len = ir::SkbLen(pkt);
  return ir::ChainSeesPacket(table, chain, hook, pkt, meta);
}

void KeysOfChunk(const classify::Classifier& classifier, const ir::Table& table,
                 const ir::Chain& chain, Hook hook, bool sees_ipv4, const uint8_t* const* frames,
                 const uint32_t* lens, uint32_t count, const PacketMeta& meta,
                 DirectChunk& chunk) {
  for (uint32_t i = 0; i < count; ++i) {
    chunk.sees[i] = DirectKeyOf(classifier, table, chain, hook, sees_ipv4, frames[i], lens[i],
                                meta, &chunk.keys[i], &chunk.skb_len[i]);
  }
}

// The public verdict of a table's accept or drop.
inline Verdict VerdictOf(ir::VerdictCode code) {
  return code == ir::VerdictCode::kDrop ? Verdict::kDrop : Verdict::kAccept;
}

// A direct-path result, field by field: assigning a Result{} temporary
// stored it to the stack and read it back across two stores, a failed
// store forward that was the single costliest step of the loop (perf
// annotate, acl1_10K). The size check is there to make whoever adds a
// field to Result add it here too.
void SetEveryField(Result& r, Verdict verdict, const RuleRef& decided_by, const PacketMeta& meta) {
  static_assert(sizeof(Result) == 64, "set the new Result field here");
  r.verdict = verdict;
  r.decided_by = decided_by;
  r.rejected = false;
  r.reject_type = RejectType::kIcmpUnreach;
  r.reject_code = 0;
  r.mark = meta.mark;
  r.ct_mark = meta.ct_mark;
  r.ct_zone = meta.ct_zone;
  r.queue.reset();
  r.nat.reset();
  r.notrack = false;
}

// One frame's direct-path result from the classifier's answer (`rule`, or
// -1 for the policy), counted in `counters` (may be null) when the chain
// sees the packet; a chain that does not see it accepts.
[[gnu::always_inline]] inline void SetDirectResult(const lower::DirectVerdicts& direct, const lower::Layout& layout,
                            bool sees, int rule, uint32_t skb_len, const PacketMeta& meta,
                            Result& result, ir::Counter* counters) {
  if (!sees) {
    SetEveryField(result, Verdict::kAccept, RuleRef{}, meta);
    return;
  }
  SetEveryField(result, VerdictOf(rule >= 0 ? direct.verdicts[rule] : direct.policy),
                layout.refs[rule >= 0 ? direct.rule_base + rule : direct.policy_id], meta);
  if (!counters) return;
  if (rule < 0) {
    CountPolicy(counters[direct.policy_id], skb_len);
  } else if (direct.counted[rule]) {
    ir::Counter& c = counters[direct.rule_base + rule];
    ++c.packets;
    c.bytes += skb_len;
  }
}

// The burst path of a DirectVerdicts hook: what the compiled chain would
// compute (its only code asks the classifier, then counts and returns the
// rule's verdict, or the policy), without entering it. `counters`: the
// RunState's, by rule id then policy id.
void ClassifyBurstDirect(const lower::DirectVerdicts& direct, const ir::Ruleset& rs,
                         const lower::Layout& layout, Hook hook, const uint8_t* const* frames,
                         const uint32_t* lens, uint32_t n, const PacketMeta& meta,
                         Result* results, ir::Counter* counters) {
  const ir::Table& table = rs.tables[direct.chain.table];
  const ir::Chain& chain = table.chains[direct.chain.chain];
  const bool sees_ipv4 = ir::ChainSeesFamily(table, chain, hook, kNfProtoIpv4, meta);
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
      SetDirectResult(direct, layout, chunk.sees[i], chunk.answers[i], chunk.skb_len[i], meta,
                      results[done + i], counters);
    }
  }
}

// One frame of a DirectVerdicts hook: ClassifyBurstDirect's work without
// its chunk of 16 (no arrays to fill and read back, no burst walk), the
// single lookup straight from the frame's key.
// Returns one named Result everywhere, so that it is built in the
// caller's (a move of it from a local read back bytes just stored
// narrower: a failed store forward, 39% of Program::Classify's samples).
Result ClassifyOneDirect(const lower::DirectVerdicts& direct, const ir::Ruleset& rs,
                         const lower::Layout& layout, Hook hook, const uint8_t* frame,
                         uint32_t len, const PacketMeta& meta, ir::Counter* counters) {
  Result result;
  const ir::Table& table = rs.tables[direct.chain.table];
  const ir::Chain& chain = table.chains[direct.chain.chain];
  classify::Key key;
  uint32_t skb_len;
  const bool sees_ipv4 = ir::ChainSeesFamily(table, chain, hook, kNfProtoIpv4, meta);
  const bool sees = DirectKeyOf(*direct.classifier, table, chain, hook, sees_ipv4, frame, len,
                                meta, &key, &skb_len);
  // A chain that does not see the packet needs no lookup.
  const int rule = sees ? direct.classifier->FirstMatch(key) : -1;
  SetDirectResult(direct, layout, sees, rule, skb_len, meta, result, counters);
  return result;
}

}  // namespace

// A hook that answers from its table reads the frame's key without the
// full parse and enters no chain code (ClassifyOneDirect). Both paths
// return their callee's Result as is (no local to move from).
Result Program::Classify(Hook hook, const uint8_t* frame, uint32_t len,
                         const PacketMeta& meta, RunState* state) const {
  if (!answers_from_table(hook)) return Run(hook, ParseAtHook(hook, frame, len), meta, state);
  if (state) {
    PrepareState(state);
    CountTowardTierUp(state, 1);
  }
  return ClassifyOneDirect(*jit_->plan.direct[static_cast<int>(hook)], IrOf(ruleset_),
                           jit_->plan.layout, hook, frame, len, meta,
                           state ? state->impl_->counters.data() : nullptr);
}

// With a decision structure, the burst first asks it for every packet at
// once (FirstMatchBurst interleaves the tree walks, overlapping their
// cache misses), then runs the chains, which take the answer from there.
void Program::ClassifyBurst(Hook hook, const uint8_t* const* frames,
                            const uint32_t* lens, uint32_t n,
                            const PacketMeta& meta, Result* results,
                            RunState* state) const {
  if (!compiled() || jit_->plan.classifiers.empty()) {
    for (uint32_t i = 0; i < n; ++i) {
      results[i] = Classify(hook, frames[i], lens[i], meta, state);
    }
    return;
  }
  if (state) PrepareState(state);
  if (const std::optional<lower::DirectVerdicts>& direct = jit_->plan.direct[static_cast<int>(hook)]) {
    ClassifyBurstDirect(*direct, IrOf(ruleset_), jit_->plan.layout, hook, frames, lens, n, meta,
                        results, state ? state->impl_->counters.data() : nullptr);
    CountTowardTierUp(state, n);
    return;
  }
  constexpr uint32_t kChunk = kBurstChunk;
  PacketView pkts[kChunk];
  int answers[kChunk];
  const classify::Classifier& first = jit_->plan.classifiers.front();
  const uint32_t first_rule_base = jit_->plan.first_classified_rule_base;
  for (uint32_t done = 0; done < n; done += kChunk) {
    const uint32_t count = std::min(kChunk, n - done);
    ParseAndClassify(first, hook, frames + done, lens + done, count, pkts, answers);
    // Start loading the per-rule slots the answers lead to (the deciding
    // rule's reference and counter), which a large chain has far apart.
    for (uint32_t i = 0; i < count; ++i) {
      if (answers[i] < 0) continue;
      const uint32_t id = first_rule_base + static_cast<uint32_t>(answers[i]);
      __builtin_prefetch(&jit_->plan.layout.refs[id]);
      if (state) __builtin_prefetch(&state->impl_->counters[id], 1);
    }
    CountTowardTierUp(state, count);
    for (uint32_t i = 0; i < count; ++i) {
      results[done + i] = RunJit(hook, ChainsAt(hook), pkts[i], meta, state, answers[i]);
    }
  }
}

// Here, not in tier_up.cc, so the hot path inlines the common "no tier-up"
// test (a call per burst cost the one-frame direct path 8%).
void Program::CountTowardTierUp(RunState* state, uint32_t packets) const {
  if (!state || !jit_->tier_up_after) return;
  uint64_t& count = state->impl_->packets;
  const uint64_t before = count;
  count += packets;
  if (before < jit_->tier_up_after && count >= jit_->tier_up_after) TierUp();
}

bool Program::answers_from_table(Hook hook) const {
  return compiled() && (jit_->direct_hooks >> static_cast<int>(hook) & 1) != 0;
}

// Sizes the per-thread slots for this program (first use only). The check
// is all a frame pays: the sizing is a call apart, so the check inlines
// where frames are classified (it was a call per frame).
void Program::PrepareState(RunState* state) const {
  RunState::Impl& slots = *state->impl_;
  if (slots.prepared_for == this) [[likely]] return;
  slots.prepared_for = this;
  slots.SizeFor(IrOf(ruleset_), compiled() ? &jit_->plan : nullptr,
                compiled() ? jit_->limit_count : 0);
}

}  // namespace rulejit
