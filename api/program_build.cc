// Program::Compile, the driver: it reads as the pipeline.
//
//   text ──ParseRuleset (frontends)──▶ ir::Ruleset ──verify──▶ choose backend
//     ──passes (IR → IR)──▶ plan (compiler/lower) ──backend──▶ Program
//
// The hot path is program_run.cc, the background LLVM compile tier_up.cc.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/backend_table.h"
#include "api/link_type_host.h"
#include "api/parse_diagnosed.h"
#include "api/program_internal.h"
#include "api/rpfilter_host.h"
#include "api/socket_host.h"
#include "compiler/passes/passes.h"
#include "frontends/frontend.h"
#include "ir/diag.h"
#include "ir/hook_order.h"
#include "ir/random_inputs.h"
#include "ir/verifier.h"

namespace rulejit {
namespace {

absl::Status Verify(const ir::Ruleset& ruleset) {
  ir::Diagnostics diags;
  if (ir::Verify(ruleset, diags)) return absl::OkStatus();
  const ir::Diagnostic& first = diags.all().front();
  const std::string where = ruleset.Where(first.loc);
  return absl::InvalidArgumentError(absl::StrCat(
      where.empty() ? "" : where + ": ", "ruleset does not verify: ", first.message));
}

lower::LowerOptions LowerOptionsOf(const CompileOptions& options) {
  return {.classify = options.classify, .classify_min_rules = options.classify_min_rules,
          .disabled = options.disabled_passes, .dump_after = options.dump_after,
          .dump = options.dump};
}

passes::PassOptions PassOptionsOf(const CompileOptions& options) {
  return {.disabled = options.disabled_passes, .dump_after = options.dump_after,
          .dump = options.dump};
}

backend::CodeOptions CodeOptionsOf(const CompileOptions& options) {
  return {.keep_assembly = options.keep_assembly, .keep_llvm_ir = options.keep_llvm_ir,
          .llvm_opt_level = options.llvm_opt_level};
}

// Whether auto should tier up to llvm: where bench/jit_bench measured it
// faster. LLVM's code wins on the rules the tiers run as code (linear
// chains, CPU ns/packet asmjit vs llvm: 100 rules 118 vs 65, 1000 rules
// 1785 vs 1278; at 10 rules 34 vs 26-33, within noise), not on rules both
// answer through the same classifier (1000/10000 rules: within noise).
// Its compile time (~2 ms a rule, on a background thread) caps the size.
bool TierUpPays(const lower::Plan& plan) {
  constexpr size_t kMinLinearRules = 100;
  constexpr size_t kMaxLinearRules = 10000;
  const size_t linear = plan.layout.rule_count - plan.ClassifiedRules();
  return linear >= kMinLinearRules && linear <= kMaxLinearRules;
}

}  // namespace

const char* BackendName(Backend backend) {
  if (backend == Backend::kAuto) return "auto";
  return BackendFor(backend).name;
}

std::optional<Backend> BackendFromName(std::string_view name) {
  for (Backend b : {Backend::kAuto, Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    if (name == BackendName(b)) return b;
  }
  return std::nullopt;
}

std::vector<std::string> OptimizationNames() {
  std::vector<std::string> names;
  for (const passes::PassInfo& pass : passes::AllPasses()) names.push_back(pass.name);
  for (const lower::DecisionInfo& decision : lower::AllDecisions()) names.push_back(decision.name);
  return names;
}

bool IsOptimizationName(std::string_view name) {
  return passes::IsPassName(std::string(name)) || lower::IsDecisionName(std::string(name));
}

absl::StatusOr<Ruleset> ParseRuleset(std::string_view text, const std::string& name,
                                     std::optional<InputFormat> format) {
  return ParseRuleset(text, name, ParseOptions{.format = format});
}

std::optional<Ruleset> ParseRulesetDiagnosed(std::string_view text, const std::string& name,
                                             const ParseOptions& options,
                                             ir::Diagnostics& diags) {
  InputFormat used = InputFormat::kIptables;
  std::optional<frontends::IpsetInput> ipsets;
  if (options.ipset_save) ipsets = frontends::IpsetInput{options.ipset_name, *options.ipset_save};
  std::optional<ir::Ruleset> ruleset = frontends::ParseRuleset(
      text, name, options.format, diags, &used, ipsets ? &*ipsets : nullptr);
  if (!ruleset) return std::nullopt;
  return RulesetInternal::Make(
      {.ir = *std::move(ruleset), .source = std::string(text), .format = used});
}

absl::StatusOr<Ruleset> ParseRuleset(std::string_view text, const std::string& name,
                                     const ParseOptions& options) {
  ir::Diagnostics diags;
  std::optional<Ruleset> ruleset = ParseRulesetDiagnosed(text, name, options, diags);
  if (!ruleset) return absl::InvalidArgumentError(diags.Format());
  return *std::move(ruleset);
}

Program::~Program() = default;

absl::StatusOr<std::unique_ptr<const Program>> Program::Compile(
    Ruleset ruleset, const CompileOptions& options) {
  ir::Ruleset& ir = MutableIrOf(ruleset);
  if (absl::Status s = Verify(ir); !s.ok()) return s;
  if (options.host) {
    if (absl::Status s = CheckRpfilterHost(ir, *options.host); !s.ok()) return s;
    if (absl::Status s = CheckLinkTypeHost(ir, *options.host); !s.ok()) return s;
    if (absl::Status s = CheckSocketHost(ir, *options.host); !s.ok()) return s;
  }
  BackendChoice choice = ChooseBackend(ir, options.backend);
  if (choice.info->compile) passes::RunPasses(ir, PassOptionsOf(options));
  auto program = std::unique_ptr<Program>(new Program(std::move(ruleset), options.host));
  program->backend_ = choice.info->kind;
  program->interpreter_reason_ = std::move(choice.reason);
  if (!choice.info->compile) return program;
  const ir::Ruleset& rs = IrOf(program->ruleset_);
  absl::StatusOr<lower::Plan> plan = lower::BuildPlan(rs, LowerOptionsOf(options));
  if (!plan.ok()) return plan.status();
  if (absl::Status s = lower::VerifyPlan(*plan, rs); !s.ok()) return s;
  auto code = choice.info->compile(rs, *plan, CodeOptionsOf(options));
  if (!code.ok()) return code.status();
  program->jit_ = std::make_unique<Jit>(*std::move(plan), *std::move(code));
  if (options.backend == Backend::kAuto && TierUpPays(program->jit_->plan)) {
    program->ArmTierUp(options);
  }
  return program;
}

// The interpreter runs every program (the reference, and the tier for
// anything the compiled code hands back).
Program::Program(Ruleset ruleset, std::shared_ptr<const HostModel> host)
    : ruleset_(std::move(ruleset)),
      host_(host ? std::move(host) : std::make_shared<const HostModel>(LoopbackHost())),
      interp_(std::make_unique<Interp>(IrOf(ruleset_), *host_)) {
  for (int h = 0; h < lower::kHookCount; ++h) {
    hook_chains_.push_back(ir::BaseChainsAt(IrOf(ruleset_), static_cast<ir::Hook>(h)));
  }
  random_inputs_ = ir::RandomInputsRead(IrOf(ruleset_));
}

bool Program::TracksConnections() const { return ir::UsesConntrack(IrOf(ruleset_)); }

bool Program::HookMaySee(Hook hook, const PacketMeta& meta) const {
  const ir::Ruleset& rs = IrOf(ruleset_);
  for (const RuleRef& ref : hook_chains_[static_cast<int>(hook)]) {
    if (hook != Hook::kIngress && hook != Hook::kEgress) return true;  // IP hooks: every chain
    const char* device = hook == Hook::kIngress ? meta.iifname : meta.oifname;
    const std::vector<std::string>& devices = rs.tables[ref.table].chains[ref.chain].base->devices;
    if (std::find(devices.begin(), devices.end(), device) != devices.end()) return true;
  }
  return false;
}

const backend::CompiledCode& Program::Jit::running() const {
  return tier_up.load(std::memory_order_acquire) == TierUp::kRunning ? *llvm : *code;
}

const std::string& Program::assembly() const {
  static const std::string kNone;
  return jit_ ? jit_->running().assembly() : kNone;
}

const std::string& Program::llvm_ir(bool optimized) const {
  static const std::string kNone;
  return jit_ ? jit_->running().llvm_ir(optimized) : kNone;
}

size_t Program::code_size() const { return jit_ ? jit_->running().code_size() : 0; }

size_t Program::classified_rules() const { return jit_ ? jit_->plan.ClassifiedRules() : 0; }

size_t Program::memory_bytes() const {
  return code_size() + (jit_ ? jit_->plan.ClassifierBytes() : 0);
}

std::string Program::PlanText() const {
  return jit_ ? lower::PrintPlan(jit_->plan, IrOf(ruleset_)) : "";
}

const lower::Plan* ProgramInternal::PlanOf(const Program& program) {
  return program.jit_ ? &program.jit_->plan : nullptr;
}

}  // namespace rulejit
