// The C API's hot path (rulejit_c.h): rulejit_classify and
// rulejit_classify_burst over Program::Classify / ClassifyBurst, and the
// conversion of a Result into the caller's rulejit_result. Misuse (a NULL
// program, a bad hook or meta, a state of another program, a result
// without its size) answers DROP: a firewall fails closed.
#include "api/c_internal.h"

namespace rulejit::c_api {

rulejit_verdict CVerdict(Verdict v) {
  switch (v) {
    case Verdict::kAccept: return RULEJIT_ACCEPT;
    case Verdict::kDrop: return RULEJIT_DROP;
    case Verdict::kQueue: return RULEJIT_QUEUE;
  }
  return RULEJIT_DROP;
}

namespace {

// The deciding rule's line in its file (the table compile made), 0 for
// policies and unknown rules.
uint32_t LineOf(const rulejit_program& program, const RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0 || ref.rule < 0) return 0;
  const auto& lines = program.lines;
  if (static_cast<size_t>(ref.table) >= lines.size() ||
      static_cast<size_t>(ref.chain) >= lines[ref.table].size() ||
      static_cast<size_t>(ref.rule) >= lines[ref.table][ref.chain].size()) {
    return 0;
  }
  return lines[ref.table][ref.chain][ref.rule];
}

void CopyBytes(const std::vector<uint8_t>& from, uint8_t* to, size_t cap, uint8_t* len) {
  const size_t n = std::min(from.size(), cap);
  if (n != 0) std::memcpy(to, from.data(), n);  // an empty vector's data() may be null
  *len = static_cast<uint8_t>(n);
}

void FillNat(const NatChange& nat, rulejit_result* out) {
  out->has_nat = 1;
  out->nat_kind = static_cast<uint8_t>(nat.kind);
  out->nat_flags = nat.flags;
  uint8_t len = 0;
  CopyBytes(nat.addr_min, out->nat_addr_min, sizeof(out->nat_addr_min), &out->nat_addr_len);
  CopyBytes(nat.addr_max, out->nat_addr_max, sizeof(out->nat_addr_max), &len);
  CopyBytes(nat.proto_min, out->nat_proto_min, sizeof(out->nat_proto_min), &out->nat_proto_len);
  CopyBytes(nat.proto_max, out->nat_proto_max, sizeof(out->nat_proto_max), &len);
}

}  // namespace

rulejit_result CResultOf(const rulejit_program& program, const Result& r) {
  rulejit_result out;
  rulejit_result_init(&out);
  out.verdict = CVerdict(r.verdict);
  out.table = r.decided_by.table;
  out.chain = r.decided_by.chain;
  out.rule = r.decided_by.rule;
  out.line = LineOf(program, r.decided_by);
  out.mark = r.mark;
  out.ct_mark = r.ct_mark;
  out.rejected = r.rejected ? 1 : 0;
  out.reject_type = static_cast<uint8_t>(r.reject_type);
  out.reject_code = r.reject_code;
  out.notrack = r.notrack ? 1 : 0;
  out.ct_zone_id = r.ct_zone.id;
  out.ct_zone_dirs = r.ct_zone.dirs;
  if (r.queue) {
    out.has_queue = 1;
    out.queue_num = r.queue->num;
    out.queue_total = r.queue->total;
    out.queue_flags = r.queue->flags;
  }
  if (r.nat) FillNat(*r.nat, &out);
  return out;
}

// The arguments every classify call shares, checked and converted.
bool Prepare(const rulejit_program* program, rulejit_hook hook, const rulejit_meta* meta,
             rulejit_state* state, PacketMeta* m) {
  return program != nullptr && ValidHook(hook) && MetaOf(meta, m) &&
         PrepareFor(state, program);
}

}  // namespace rulejit::c_api

using namespace rulejit::c_api;  // NOLINT: this file implements it

extern "C" {

void rulejit_result_init(rulejit_result* result) {
  if (result == nullptr) return;
  *result = rulejit_result{};
  result->size = sizeof(*result);
  result->verdict = RULEJIT_DROP;
  result->table = result->chain = result->rule = -1;
  result->ct_zone_dirs = RULEJIT_CT_ZONE_ORIGINAL | RULEJIT_CT_ZONE_REPLY;
}

rulejit_verdict rulejit_classify(const rulejit_program* program, rulejit_hook hook,
                                 const uint8_t* frame, uint32_t len,
                                 const rulejit_meta* meta, rulejit_state* state,
                                 rulejit_result* result) {
  rulejit::PacketMeta m;
  const bool result_ok = result == nullptr || result->size >= sizeof(rulejit_result);
  if (!Prepare(program, hook, meta, state, &m) || (frame == nullptr && len != 0) ||
      !result_ok) {
    if (result != nullptr && result_ok) {
      rulejit_result dropped;
      rulejit_result_init(&dropped);
      WriteSized(dropped, result);
    }
    return RULEJIT_DROP;
  }
  if (state != nullptr) state->meta = meta;
  const rulejit::Result r = program->program->Classify(
      static_cast<rulejit::Hook>(hook), frame, len, m,
      state == nullptr ? nullptr : &state->state);
  if (state != nullptr) state->meta = nullptr;
  if (result != nullptr) WriteSized(CResultOf(*program, r), result);
  return CVerdict(r.verdict);
}

int rulejit_classify_burst(const rulejit_program* program, rulejit_hook hook,
                           const uint8_t* const* frames, const uint32_t* lens, uint32_t n,
                           const rulejit_meta* meta, rulejit_state* state,
                           rulejit_verdict* verdicts) {
  rulejit::PacketMeta m;
  if (verdicts == nullptr && n != 0) return RULEJIT_EINVAL;
  if (!Prepare(program, hook, meta, state, &m) ||
      (n != 0 && (frames == nullptr || lens == nullptr))) {
    std::fill(verdicts, verdicts + n, RULEJIT_DROP);
    return RULEJIT_EINVAL;
  }
  // Results go through a stack buffer so the C caller needs no C++ types.
  constexpr uint32_t kChunk = 64;
  rulejit::Result results[kChunk];
  rulejit::RunState* st = state == nullptr ? nullptr : &state->state;
  if (state != nullptr) state->meta = meta;
  for (uint32_t done = 0; done < n; done += kChunk) {
    const uint32_t count = std::min(kChunk, n - done);
    program->program->ClassifyBurst(static_cast<rulejit::Hook>(hook), frames + done,
                                    lens + done, count, m, results, st);
    for (uint32_t i = 0; i < count; ++i) verdicts[done + i] = CVerdict(results[i].verdict);
  }
  if (state != nullptr) state->meta = nullptr;
  return 0;
}

}  // extern "C"
