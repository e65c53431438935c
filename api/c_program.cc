// What a C caller may ask of a compiled rulejit_program (rulejit_c.h):
// its ruleset, tier, texts and sizes, its base chains per hook, and the
// llvm tier-up. Thin wrappers over Program's const interface.
#include "api/c_internal.h"

using rulejit::c_api::CopyOut;
using rulejit::c_api::ValidHook;

extern "C" {

const rulejit_ruleset* rulejit_program_ruleset(const rulejit_program* program) {
  return program == nullptr ? nullptr : &program->ruleset;
}

const char* rulejit_program_backend(const rulejit_program* program) {
  return program == nullptr ? nullptr : rulejit::BackendName(program->program->backend());
}

const char* rulejit_program_interpreter_reason(const rulejit_program* program) {
  return program == nullptr ? nullptr : program->program->interpreter_reason().c_str();
}

int64_t rulejit_program_plan_text(const rulejit_program* program, char* buf, size_t len) {
  return program == nullptr ? RULEJIT_EINVAL : CopyOut(program->program->PlanText(), buf, len);
}

int64_t rulejit_program_assembly(const rulejit_program* program, char* buf, size_t len) {
  return program == nullptr ? RULEJIT_EINVAL : CopyOut(program->program->assembly(), buf, len);
}

int64_t rulejit_program_llvm_ir(const rulejit_program* program, int optimized, char* buf,
                                size_t len) {
  if (program == nullptr) return RULEJIT_EINVAL;
  return CopyOut(program->program->llvm_ir(optimized != 0), buf, len);
}

size_t rulejit_program_code_size(const rulejit_program* program) {
  return program == nullptr ? 0 : program->program->code_size();
}

size_t rulejit_program_memory_bytes(const rulejit_program* program) {
  return program == nullptr ? 0 : program->program->memory_bytes();
}

size_t rulejit_program_classified_rules(const rulejit_program* program) {
  return program == nullptr ? 0 : program->program->classified_rules();
}

int rulejit_program_tracks_connections(const rulejit_program* program) {
  if (program == nullptr) return RULEJIT_EINVAL;
  return program->program->TracksConnections() ? 1 : 0;
}

int rulejit_program_random_inputs(const rulejit_program* program) {
  if (program == nullptr) return RULEJIT_EINVAL;
  const rulejit::RandomInputs& reads = program->program->random_inputs();
  return (reads.random ? RULEJIT_READS_RANDOM : 0) | (reads.symhash ? RULEJIT_READS_SYMHASH : 0) |
         (reads.jhash_seed ? RULEJIT_READS_JHASH_SEED : 0);
}

int rulejit_program_answers_from_table(const rulejit_program* program, rulejit_hook hook) {
  if (program == nullptr || !ValidHook(hook)) return RULEJIT_EINVAL;
  return program->program->answers_from_table(static_cast<rulejit::Hook>(hook)) ? 1 : 0;
}

int rulejit_program_hook_may_see(const rulejit_program* program, rulejit_hook hook,
                                 const rulejit_meta* meta) {
  rulejit::PacketMeta m;
  if (program == nullptr || !ValidHook(hook) || !rulejit::c_api::MetaOf(meta, &m)) {
    return RULEJIT_EINVAL;
  }
  return program->program->HookMaySee(static_cast<rulejit::Hook>(hook), m) ? 1 : 0;
}

void rulejit_base_chain_init(rulejit_base_chain* chain) {
  if (chain == nullptr) return;
  *chain = rulejit_base_chain{};
  chain->size = sizeof(*chain);
}

int rulejit_program_base_chain_count(const rulejit_program* program, rulejit_hook hook) {
  if (program == nullptr || !ValidHook(hook)) return RULEJIT_EINVAL;
  return static_cast<int>(program->program->BaseChains(static_cast<rulejit::Hook>(hook)).size());
}

int rulejit_program_base_chain(const rulejit_program* program, rulejit_hook hook, int i,
                               rulejit_base_chain* out) {
  if (program == nullptr || !ValidHook(hook) || i < 0) return RULEJIT_EINVAL;
  const std::vector<rulejit::BaseChainInfo> chains =
      program->program->BaseChains(static_cast<rulejit::Hook>(hook));
  if (static_cast<size_t>(i) >= chains.size()) return RULEJIT_EINVAL;
  rulejit_base_chain value;
  rulejit_base_chain_init(&value);
  value.table = chains[i].chain.table;
  value.chain = chains[i].chain.chain;
  value.priority = chains[i].priority;
  value.nat = chains[i].nat ? 1 : 0;
  return rulejit::c_api::WriteSized(value, out) ? 0 : RULEJIT_EINVAL;
}

int rulejit_program_tier_up(const rulejit_program* program) {
  if (program == nullptr) return RULEJIT_EINVAL;
  return program->program->TierUp() ? 1 : 0;
}

int rulejit_program_wait_tier_up(const rulejit_program* program, rulejit_error** error) {
  if (program == nullptr) return rulejit::c_api::Fail(error, RULEJIT_EINVAL, "no program");
  absl::Status status = program->program->WaitForTierUp();
  return status.ok() ? 0 : rulejit::c_api::FailStatus(error, status);
}

}  // extern "C"
