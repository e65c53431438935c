// rulejit_classify_chains (rulejit_c.h): one step of a packet's whole path
// for a C caller, over Program::RunChains. The chains are checked to be
// base chains of the hook, the frame parsed as the hook sees it
// (api/parse_at_hook.h); the written bytes, when asked for and a rule
// wrote the packet, are copied into the caller's buffer.
#include "api/c_internal.h"
#include "api/parse_at_hook.h"

namespace rulejit::c_api {
namespace {

constexpr uint32_t kMaxChains = 64;

// The chains as RuleRefs into `refs`; false unless each is a base chain of
// `hook`.
bool ChainsOf(const Ruleset& rs, rulejit_hook hook, const int32_t* tables,
              const int32_t* chains, uint32_t n, RuleRef* refs) {
  if (n > kMaxChains || (n != 0 && (tables == nullptr || chains == nullptr))) return false;
  for (uint32_t i = 0; i < n; ++i) {
    const int t = tables[i];
    const int c = chains[i];
    if (t < 0 || t >= rs.table_count() || c < 0 || c >= rs.chain_count(t)) return false;
    std::optional<Hook> at = rs.chain_hook(t, c);
    if (!at || static_cast<rulejit_hook>(*at) != hook) return false;
    refs[i] = RuleRef{t, c, -1};
  }
  return true;
}

}  // namespace
}  // namespace rulejit::c_api

using namespace rulejit::c_api;  // NOLINT: this file implements it

extern "C" {

rulejit_verdict rulejit_classify_chains(const rulejit_program* program, rulejit_hook hook,
                                        const int32_t* tables, const int32_t* chains,
                                        uint32_t n, const uint8_t* frame, uint32_t len,
                                        const rulejit_meta* meta, rulejit_state* state,
                                        rulejit_result* result, uint8_t* written,
                                        uint32_t written_cap, uint32_t* written_len) {
  if (written_len != nullptr) *written_len = 0;
  rulejit::PacketMeta m;
  rulejit::RuleRef refs[kMaxChains];
  const bool result_ok = result == nullptr || result->size >= sizeof(rulejit_result);
  if (!Prepare(program, hook, meta, state, &m) || (frame == nullptr && len != 0) ||
      !result_ok || (written != nullptr && written_len == nullptr) ||
      !ChainsOf(program->program->ruleset(), hook, tables, chains, n, refs)) {
    if (result != nullptr && result_ok) {
      rulejit_result dropped;
      rulejit_result_init(&dropped);
      WriteSized(dropped, result);
    }
    return RULEJIT_DROP;
  }
  const rulejit::Hook h = static_cast<rulejit::Hook>(hook);
  std::vector<uint8_t> bytes;
  if (state != nullptr) state->meta = meta;
  const rulejit::Result r = program->program->RunChains(
      h, std::span<const rulejit::RuleRef>(refs, n), rulejit::ParseAtHook(h, frame, len), m,
      state == nullptr ? nullptr : &state->state, written != nullptr ? &bytes : nullptr);
  if (state != nullptr) state->meta = nullptr;
  if (written != nullptr && !bytes.empty()) {
    std::memcpy(written, bytes.data(), std::min<size_t>(bytes.size(), written_cap));
    *written_len = static_cast<uint32_t>(bytes.size());
  }
  if (result != nullptr) WriteSized(CResultOf(*program, r), result);
  return CVerdict(r.verdict);
}

}  // extern "C"
