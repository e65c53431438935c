// The C API's option structs (rulejit_parse_options,
// rulejit_compile_options) and names (hooks, backends, optimizations):
// their defaults, and their conversion to ParseOptions / CompileOptions,
// refusing a malformed struct or an unknown name with a message.
#include <optional>

#include "absl/strings/str_split.h"
#include "api/c_internal.h"

namespace rulejit::c_api {
namespace {

std::optional<InputFormat> FormatOf(rulejit_format format, bool* ok) {
  *ok = true;
  switch (format) {
    case RULEJIT_FORMAT_AUTO: return std::nullopt;
    case RULEJIT_FORMAT_IPTABLES: return InputFormat::kIptables;
    case RULEJIT_FORMAT_NFT: return InputFormat::kNft;
    case RULEJIT_FORMAT_CLASSBENCH: return InputFormat::kClassbench;
    case RULEJIT_FORMAT_IPTABLES_NFT: return InputFormat::kIptablesNft;
    default: *ok = false; return std::nullopt;
  }
}

std::optional<Backend> BackendOf(rulejit_backend backend) {
  switch (backend) {
    case RULEJIT_BACKEND_AUTO: return Backend::kAuto;
    case RULEJIT_BACKEND_INTERP: return Backend::kInterp;
    case RULEJIT_BACKEND_JIT: return Backend::kJit;
    case RULEJIT_BACKEND_LLVM: return Backend::kLlvm;
    default: return std::nullopt;
  }
}

}  // namespace

bool ValidHook(rulejit_hook hook) {
  return hook >= RULEJIT_HOOK_PREROUTING && hook <= RULEJIT_HOOK_EGRESS;
}

bool ParseOptionsOf(const rulejit_parse_options* in, ParseOptions* out, rulejit_error** error) {
  rulejit_parse_options o;
  rulejit_parse_options_init(&o);
  if (in != nullptr && !ReadSized(in, &o)) {
    Fail(error, RULEJIT_EINVAL, "rulejit_parse_options: size not set (rulejit_parse_options_init)");
    return false;
  }
  bool ok = false;
  out->format = FormatOf(o.format, &ok);
  if (!ok) {
    Fail(error, RULEJIT_EINVAL, "rulejit_parse_options: unknown format");
    return false;
  }
  if (o.ipset_save != nullptr) out->ipset_save = std::string(o.ipset_save, o.ipset_save_len);
  if (o.ipset_name != nullptr) out->ipset_name = o.ipset_name;
  return true;
}

bool CompileOptionsOf(const rulejit_compile_options* in, CompileOptions* out,
                      rulejit_error** error) {
  rulejit_compile_options o;
  rulejit_compile_options_init(&o);
  if (in != nullptr && !ReadSized(in, &o)) {
    Fail(error, RULEJIT_EINVAL,
         "rulejit_compile_options: size not set (rulejit_compile_options_init)");
    return false;
  }
  std::optional<Backend> backend = BackendOf(o.backend);
  if (!backend || o.llvm_opt_level < 0 || o.llvm_opt_level > 3) {
    Fail(error, RULEJIT_EINVAL, "rulejit_compile_options: unknown backend or llvm_opt_level");
    return false;
  }
  out->backend = *backend;
  out->classify = o.no_classify == 0;
  out->keep_assembly = o.keep_assembly != 0;
  out->keep_llvm_ir = o.keep_llvm_ir != 0;
  out->llvm_opt_level = o.llvm_opt_level;
  out->classify_min_rules = o.classify_min_rules;
  out->tier_up_timeout_ms = o.tier_up_timeout_ms;
  out->tier_up_after_packets = o.tier_up_after_packets;
  if (o.no_optimize != 0) out->disabled_passes = OptimizationNames();
  if (o.disabled_passes != nullptr) {
    for (absl::string_view name : absl::StrSplit(o.disabled_passes, ',', absl::SkipEmpty())) {
      if (!IsOptimizationName(std::string(name))) {
        Fail(error, RULEJIT_EINVAL, "unknown optimization '" + std::string(name) + "'");
        return false;
      }
      out->disabled_passes.push_back(std::string(name));
    }
  }
  if (o.dump_after != nullptr && *o.dump_after != '\0') {
    if (!IsOptimizationName(o.dump_after)) {
      Fail(error, RULEJIT_EINVAL, "unknown optimization '" + std::string(o.dump_after) + "'");
      return false;
    }
    out->dump_after = o.dump_after;
    if (o.dump != nullptr) {
      out->dump = [fn = o.dump, user = o.dump_user](const std::string& before,
                                                    const std::string& after) {
        fn(user, before.c_str(), after.c_str());
      };
    }
  }
  if (o.host != nullptr) out->host = std::make_shared<const HostModel>(o.host->model);
  return true;
}

}  // namespace rulejit::c_api

extern "C" {

void rulejit_parse_options_init(rulejit_parse_options* options) {
  if (options == nullptr) return;
  *options = rulejit_parse_options{};
  options->size = sizeof(*options);
  options->format = RULEJIT_FORMAT_AUTO;
}

void rulejit_compile_options_init(rulejit_compile_options* options) {
  if (options == nullptr) return;
  const rulejit::CompileOptions defaults;
  *options = rulejit_compile_options{};
  options->size = sizeof(*options);
  options->backend = RULEJIT_BACKEND_AUTO;
  options->llvm_opt_level = defaults.llvm_opt_level;
  options->classify_min_rules = defaults.classify_min_rules;
  options->tier_up_timeout_ms = defaults.tier_up_timeout_ms;
  options->tier_up_after_packets = defaults.tier_up_after_packets;
}

const char* rulejit_hook_name(rulejit_hook hook) {
  if (!rulejit::c_api::ValidHook(hook)) return nullptr;
  return rulejit::HookName(static_cast<rulejit::Hook>(hook));
}

int32_t rulejit_hook_from_name(const char* name) {
  if (name == nullptr) return RULEJIT_EINVAL;
  std::optional<rulejit::Hook> hook = rulejit::HookFromName(name);
  return hook ? static_cast<int32_t>(*hook) : RULEJIT_EINVAL;
}

const char* rulejit_backend_name(rulejit_backend backend) {
  std::optional<rulejit::Backend> b = rulejit::c_api::BackendOf(backend);
  return b ? rulejit::BackendName(*b) : nullptr;
}

int32_t rulejit_backend_from_name(const char* name) {
  if (name == nullptr) return RULEJIT_EINVAL;
  for (rulejit_backend b = RULEJIT_BACKEND_AUTO; b <= RULEJIT_BACKEND_LLVM; ++b) {
    if (std::string(name) == rulejit_backend_name(b)) return b;
  }
  return RULEJIT_EINVAL;
}

const char* rulejit_optimization_name(size_t i) {
  static const std::vector<std::string>* const names =
      new std::vector<std::string>(rulejit::OptimizationNames());
  return i < names->size() ? (*names)[i].c_str() : nullptr;
}

}  // extern "C"
