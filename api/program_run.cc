// Program's hot path: one frame or a burst through the running tier.
//
//   Classify ──parse (packet/)──▶ Run ──▶ RunJit: base chains of the hook in
//     priority order, each through the compiled entry (or RunInterp)
//   ClassifyBurst ──▶ classifier for the whole burst (FirstMatchBurst), then
//     RunJit per frame with its answer; or, at a hook the plan answers from
//     a table (lower::DirectVerdicts), the direct path: fast 5-tuple keys,
//     one burst lookup, verdicts and counters straight off the table.
//
// Nothing here allocates, locks or returns a Status.
#include <algorithm>
#include <cstring>

#include "api/program_internal.h"
#include "compiler/classify/frame_key.h"
#include "ir/hook_order.h"
#include "packet/parse.h"

namespace rulejit {

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
  ctx.pre_classifier = pre_rule == -2 ? nullptr : &jit_->plan.classifiers.front();
  ctx.pre_rule = pre_rule;

  Result result;
  const lower::Layout& layout = jit_->plan.layout;
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
  PacketView pkt = packet::ParseEthernet(frame, len);
  if (hook == Hook::kOutput || hook == Hook::kPostrouting) {
    pkt.link_off = kAbsent;
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
                 const uint32_t* lens, uint32_t count, const PacketMeta& meta,
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
void ClassifyBurstDirect(const lower::DirectVerdicts& direct, const ir::Ruleset& rs,
                         const lower::Layout& layout, Hook hook, const uint8_t* const* frames,
                         const uint32_t* lens, uint32_t n, const PacketMeta& meta,
                         Result* results, ir::Counter* counters) {
  const ir::Table& table = rs.tables[direct.chain.table];
  const ir::Chain& chain = table.chains[direct.chain.chain];
  PacketView ipv4;
  ipv4.nfproto = kNfProtoIpv4;
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
      SetEveryField(results[done + i], VerdictOf(rule >= 0 ? direct.verdicts[rule] : direct.policy),
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
  if (!compiled() || jit_->plan.classifiers.empty()) {
    for (uint32_t i = 0; i < n; ++i) {
      results[i] = Classify(hook, frames[i], lens[i], meta, state);
    }
    return;
  }
  if (state) PrepareState(state);
  if (const std::optional<lower::DirectVerdicts>& direct = jit_->plan.direct[static_cast<int>(hook)]) {
    ClassifyBurstDirect(*direct, *ruleset_, jit_->plan.layout, hook, frames, lens, n, meta, results,
                        state ? state->counters_.data() : nullptr);
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
      if (state) __builtin_prefetch(&state->counters_[id], 1);
    }
    CountTowardTierUp(state, count);
    for (uint32_t i = 0; i < count; ++i) {
      results[done + i] = RunJit(hook, pkts[i], meta, state, answers[i]);
    }
  }
}

bool Program::answers_from_table(Hook hook) const {
  return compiled() && jit_->plan.direct[static_cast<int>(hook)].has_value();
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
  const lower::Layout& layout = jit_->plan.layout;
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
