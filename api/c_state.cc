// Per-thread state for the C API (rulejit_c.h): a rulejit_state wraps a
// RunState and remembers the one program it belongs to (a RunState sized
// for one program must not be used with another), the log sink and the
// meta of the call in progress (which the sink's events point at). Also
// the counters a state holds and carrying them over a reload.
#include <new>

#include "api/c_internal.h"

namespace rulejit::c_api {
namespace {

// Binds `state` to `program` on first use; false when it belongs to another.
bool Bind(rulejit_state* state, const Program* program) {
  if (state->bound == nullptr) state->bound = program;
  return state->bound == program;
}

void Deliver(const rulejit_state& state, const LogEvent& e) {
  // NUL-terminated on the stack (nft prefixes are at most 127 bytes,
  // iptables' 29): the classify calls allocate nothing.
  char prefix[256];
  const size_t n = std::min(e.prefix.size(), sizeof(prefix) - 1);
  std::memcpy(prefix, e.prefix.data(), n);
  prefix[n] = '\0';
  rulejit_log_event event{};
  event.size = sizeof(event);
  event.hook = static_cast<rulejit_hook>(e.hook);
  event.table = e.rule.table;
  event.chain = e.rule.chain;
  event.rule = e.rule.rule;
  event.flags = e.flags;
  event.level = e.level ? static_cast<int32_t>(*e.level) : -1;
  event.has_group = e.group ? 1 : 0;
  event.group = e.group.value_or(0);
  event.mark = e.mark;
  event.prefix = prefix;
  event.packet = e.packet ? e.packet->data : nullptr;
  event.packet_len = e.packet ? e.packet->len : 0;
  event.network_offset = e.packet ? e.packet->network_off : kAbsent;
  event.meta = state.meta;
  state.log_fn(state.log_user, &event);
}

}  // namespace

bool PrepareFor(rulejit_state* state, const rulejit_program* program) {
  if (state == nullptr) return true;
  return Bind(state, program->program.get());
}

}  // namespace rulejit::c_api

extern "C" {

rulejit_state* rulejit_state_new(void) { return new (std::nothrow) rulejit_state(); }

void rulejit_state_free(rulejit_state* state) { delete state; }

void rulejit_state_set_now(rulejit_state* state, uint64_t now_ns) {
  if (state != nullptr) state->state.set_now_ns(now_ns);
}

int rulejit_state_prepare(rulejit_state* state, const rulejit_program* program) {
  if (state == nullptr || program == nullptr ||
      !rulejit::c_api::PrepareFor(state, program)) {
    return RULEJIT_EINVAL;
  }
  program->program->PrepareState(&state->state);
  return 0;
}

int rulejit_state_set_log_sink(rulejit_state* state, rulejit_log_fn fn, void* user) {
  if (state == nullptr) return RULEJIT_EINVAL;
  state->log_fn = fn;
  state->log_user = user;
  if (fn == nullptr) {
    state->state.set_log_sink(nullptr);
    return 0;
  }
  state->state.set_log_sink(
      [state](const rulejit::LogEvent& e) { rulejit::c_api::Deliver(*state, e); });
  return 0;
}

int rulejit_counter(const rulejit_program* program, const rulejit_state* state, int table,
                    int chain, int rule, uint64_t* packets, uint64_t* bytes) {
  if (program == nullptr) return RULEJIT_EINVAL;
  const rulejit::Ruleset& rs = program->program->ruleset();
  const bool exists = table >= 0 && table < rs.table_count() && chain >= 0 &&
                      chain < rs.chain_count(table) && rule >= 0 &&
                      rule < rs.rule_count(table, chain);
  if (!exists) return RULEJIT_EINVAL;
  rulejit::Counter c;
  if (state != nullptr && state->bound == program->program.get()) {
    c = state->state.CounterOf({table, chain, rule});
  }
  if (packets != nullptr) *packets = c.packets;
  if (bytes != nullptr) *bytes = c.bytes;
  return 0;
}

int rulejit_policy_counter(const rulejit_program* program, const rulejit_state* state,
                           int table, int chain, uint64_t* packets, uint64_t* bytes) {
  if (program == nullptr) return RULEJIT_EINVAL;
  const rulejit::Ruleset& rs = program->program->ruleset();
  const bool exists = table >= 0 && table < rs.table_count() && chain >= 0 &&
                      chain < rs.chain_count(table) && rs.chain_hook(table, chain).has_value();
  if (!exists) return RULEJIT_EINVAL;
  rulejit::Counter c;
  if (state != nullptr && state->bound == program->program.get()) {
    c = state->state.PolicyCounterOf(table, chain);
  }
  if (packets != nullptr) *packets = c.packets;
  if (bytes != nullptr) *bytes = c.bytes;
  return 0;
}

int rulejit_program_carry_counters(const rulejit_program* program,
                                   const rulejit_program* old,
                                   const rulejit_state* const* old_states, size_t n,
                                   rulejit_state* state) {
  if (program == nullptr || old == nullptr || state == nullptr ||
      (old_states == nullptr && n != 0) || !rulejit::c_api::PrepareFor(state, program)) {
    return RULEJIT_EINVAL;
  }
  std::vector<const rulejit::RunState*> olds;
  for (size_t i = 0; i < n; ++i) {
    const rulejit_state* s = old_states[i];
    if (s == nullptr || s == state) return RULEJIT_EINVAL;
    // A state that never classified with `old` holds nothing of it.
    if (s->bound == old->program.get()) olds.push_back(&s->state);
  }
  try {
    program->program->CarryCountersFrom(*old->program, olds, &state->state);
  } catch (const std::bad_alloc&) {
    return RULEJIT_ENOMEM;
  }
  return 0;
}

}  // extern "C"
