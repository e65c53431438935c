// The C API (include/rulejit/rulejit_c.h): a thin layer over
// rulejit::ParseRuleset, Program and RunState. Nothing here has
// semantics of its own; it converts C structs and catches every error
// before it can cross the C boundary.
#include "rulejit/rulejit_c.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>

#include "rulejit/rulejit.h"

struct rulejit_program {
  std::unique_ptr<const rulejit::Program> program;
};

struct rulejit_state {
  rulejit::RunState state;
};

namespace {

// Copies `message` into the caller's buffer, truncated and NUL-terminated.
void WriteError(const std::string& message, char* err, size_t err_len) {
  if (err == nullptr || err_len == 0) return;
  size_t n = std::min(message.size(), err_len - 1);
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}

std::optional<rulejit::InputFormat> FormatOf(rulejit_format format) {
  using rulejit::InputFormat;
  switch (format) {
    case RULEJIT_FORMAT_IPTABLES: return InputFormat::kIptables;
    case RULEJIT_FORMAT_NFT: return InputFormat::kNft;
    case RULEJIT_FORMAT_CLASSBENCH: return InputFormat::kClassbench;
    case RULEJIT_FORMAT_IPTABLES_NFT: return InputFormat::kIptablesNft;
    case RULEJIT_FORMAT_AUTO: break;
  }
  return std::nullopt;
}

rulejit::CompileOptions CompileOptionsOf(const rulejit_options& options) {
  rulejit::CompileOptions out;
  out.backend = options.backend == RULEJIT_BACKEND_INTERP ? rulejit::Backend::kInterp
                : options.backend == RULEJIT_BACKEND_JIT  ? rulejit::Backend::kJit
                                                          : rulejit::Backend::kAuto;
  out.classify = options.no_classify == 0;
  if (options.no_optimize != 0) {
    out.disabled_passes = rulejit::OptimizationNames();
  }
  return out;
}

void CopyName(char (&to)[16], const char* name) {
  std::memset(to, 0, sizeof(to));
  if (name != nullptr) std::strncpy(to, name, sizeof(to) - 1);
}

rulejit::PacketMeta MetaOf(const rulejit_meta* meta) {
  rulejit::PacketMeta out;
  if (meta == nullptr) return out;
  std::memcpy(out.iifname, meta->iifname, sizeof(out.iifname));
  std::memcpy(out.oifname, meta->oifname, sizeof(out.oifname));
  out.iif = meta->iif;
  out.oif = meta->oif;
  out.has_iif = meta->has_iif != 0;
  out.has_oif = meta->has_oif != 0;
  out.mark = meta->mark;
  out.pkttype = meta->pkttype;
  out.ct_state = meta->ct_state;
  // An entry exists for new, established and related packets; invalid and
  // untracked ones have none.
  out.ct_valid = (meta->ct_state & (RULEJIT_CT_NEW | RULEJIT_CT_ESTABLISHED |
                                    RULEJIT_CT_RELATED)) != 0;
  out.ct_mark = meta->ct_mark;
  out.ct_dir = meta->ct_dir;
  return out;
}

bool ValidHook(rulejit_hook hook) {
  return hook >= RULEJIT_HOOK_PREROUTING && hook <= RULEJIT_HOOK_EGRESS;
}

// The rule's line in its file, 0 for policies and unknown rules.
uint32_t LineOf(const rulejit::Program& program, const rulejit::RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0 || ref.rule < 0) return 0;
  const std::string where = program.ruleset().Where(ref);  // "FILE:LINE"
  const size_t colon = where.rfind(':');
  return colon == std::string::npos ? 0 : static_cast<uint32_t>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
}

rulejit_verdict CVerdict(rulejit::Verdict v) {
  switch (v) {
    case rulejit::Verdict::kAccept: return RULEJIT_ACCEPT;
    case rulejit::Verdict::kDrop: return RULEJIT_DROP;
    case rulejit::Verdict::kQueue: return RULEJIT_QUEUE;
  }
  return RULEJIT_DROP;
}

}  // namespace

extern "C" {

void rulejit_options_init(rulejit_options* options) {
  *options = rulejit_options{RULEJIT_FORMAT_AUTO, RULEJIT_BACKEND_AUTO, 0, 0};
}

void rulejit_meta_init(rulejit_meta* meta) {
  std::memset(meta, 0, sizeof(*meta));
}

void rulejit_meta_set_iifname(rulejit_meta* meta, const char* name) {
  CopyName(meta->iifname, name);
  meta->has_iif = 1;
}

void rulejit_meta_set_oifname(rulejit_meta* meta, const char* name) {
  CopyName(meta->oifname, name);
  meta->has_oif = 1;
}

rulejit_program* rulejit_compile(const char* text, size_t len, const char* name,
                                 const rulejit_options* options, char* err,
                                 size_t err_len) {
  try {
    rulejit_options opts;
    rulejit_options_init(&opts);
    if (options != nullptr) opts = *options;
    absl::StatusOr<rulejit::Ruleset> ruleset = rulejit::ParseRuleset(
        std::string_view(text == nullptr ? "" : text, text == nullptr ? 0 : len),
        name == nullptr ? "<input>" : name, FormatOf(opts.format));
    if (!ruleset.ok()) {
      WriteError(std::string(ruleset.status().message()), err, err_len);
      return nullptr;
    }
    auto program = rulejit::Program::Compile(*std::move(ruleset), CompileOptionsOf(opts));
    if (!program.ok()) {
      WriteError(std::string(program.status().message()), err, err_len);
      return nullptr;
    }
    return new rulejit_program{*std::move(program)};
  } catch (const std::bad_alloc&) {
    WriteError("out of memory", err, err_len);
    return nullptr;
  }
}

rulejit_program* rulejit_compile_file(const char* path,
                                      const rulejit_options* options, char* err,
                                      size_t err_len) {
  std::ifstream in(path == nullptr ? "" : path, std::ios::binary);
  std::ostringstream content;
  if (in) content << in.rdbuf();
  if (!in || in.bad()) {
    WriteError(std::string(path == nullptr ? "(null)" : path) +
                   ": error: cannot read: " + std::strerror(errno),
               err, err_len);
    return nullptr;
  }
  std::string text = std::move(content).str();
  return rulejit_compile(text.data(), text.size(), path, options, err, err_len);
}

void rulejit_program_free(rulejit_program* program) { delete program; }

const char* rulejit_program_backend(const rulejit_program* program) {
  return rulejit::BackendName(program->program->backend());
}

rulejit_state* rulejit_state_new(void) {
  return new (std::nothrow) rulejit_state();
}

void rulejit_state_free(rulejit_state* state) { delete state; }

void rulejit_state_set_now(rulejit_state* state, uint64_t now_ns) {
  state->state.set_now_ns(now_ns);
}

rulejit_verdict rulejit_classify(const rulejit_program* program, rulejit_hook hook,
                                 const uint8_t* frame, uint32_t len,
                                 const rulejit_meta* meta, rulejit_state* state,
                                 rulejit_result* result) {
  if (!ValidHook(hook) || (frame == nullptr && len != 0)) {
    if (result != nullptr) *result = rulejit_result{RULEJIT_DROP, 0, -1, -1, -1, 0, 0, 0, 0, 0};
    return RULEJIT_DROP;
  }
  rulejit::Result r = program->program->Classify(
      static_cast<rulejit::Hook>(hook), frame, len, MetaOf(meta),
      state == nullptr ? nullptr : &state->state);
  rulejit_verdict verdict = CVerdict(r.verdict);
  if (result != nullptr) {
    *result = rulejit_result{verdict,
                             r.rejected ? 1 : 0,
                             r.decided_by.table,
                             r.decided_by.chain,
                             r.decided_by.rule,
                             LineOf(*program->program, r.decided_by),
                             r.mark,
                             r.ct_mark,
                             static_cast<int>(r.reject_type),
                             r.reject_code};
  }
  return verdict;
}

void rulejit_classify_burst(const rulejit_program* program, rulejit_hook hook,
                            const uint8_t* const* frames, const uint32_t* lens,
                            uint32_t n, const rulejit_meta* meta,
                            rulejit_state* state, rulejit_verdict* verdicts) {
  if (!ValidHook(hook)) {
    std::fill(verdicts, verdicts + n, RULEJIT_DROP);
    return;
  }
  // Results go through a stack buffer so the C caller needs no C++ types.
  constexpr uint32_t kChunk = 64;
  rulejit::Result results[kChunk];
  rulejit::PacketMeta m = MetaOf(meta);
  rulejit::RunState* st = state == nullptr ? nullptr : &state->state;
  for (uint32_t done = 0; done < n; done += kChunk) {
    uint32_t count = std::min(kChunk, n - done);
    program->program->ClassifyBurst(static_cast<rulejit::Hook>(hook), frames + done,
                                    lens + done, count, m, results, st);
    for (uint32_t i = 0; i < count; ++i) {
      verdicts[done + i] = CVerdict(results[i].verdict);
    }
  }
}

int rulejit_counter(const rulejit_program* program, const rulejit_state* state,
                    int table, int chain, int rule, uint64_t* packets,
                    uint64_t* bytes) {
  const rulejit::Ruleset& rs = program->program->ruleset();
  bool exists = table >= 0 && table < rs.table_count() && chain >= 0 &&
                chain < rs.chain_count(table) && rule >= 0 && rule < rs.rule_count(table, chain);
  if (!exists) return -1;
  rulejit::Counter c =
      state == nullptr ? rulejit::Counter{} : state->state.CounterOf({table, chain, rule});
  if (packets != nullptr) *packets = c.packets;
  if (bytes != nullptr) *bytes = c.bytes;
  return 0;
}

}  // extern "C"
