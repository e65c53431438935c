// LLVM backend: verify the emitted module, optimise it for the host CPU,
// keep the texts --emit asks for, and link it with ORC LLJIT.
#include "compiler/backend/llvm/llvm_backend.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rulejit::backend {
namespace {

// The one place LLVM errors become absl::Status.
absl::Status FromLlvm(llvm::Error err, const char* what) {
  if (!err) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("llvm: ", what, ": ", llvm::toString(std::move(err))));
}

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // X86 domain reassignment (AVX-512 mask registers, which rule code never
    // uses) took ~40% of code generation on long chains.
    const char* args[] = {"rulejit", "-disable-x86-domain-reassignment"};
    llvm::cl::ParseCommandLineOptions(2, args);
  });
}

std::string Print(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

// The host: its CPU name and every feature it has (-march=native).
llvm::Expected<llvm::orc::JITTargetMachineBuilder> HostMachine(int opt_level) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return jtmb.takeError();
  static constexpr llvm::CodeGenOptLevel kLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  jtmb->setCodeGenOptLevel(kLevels[std::clamp(opt_level, 0, 3)]);
  return jtmb;
}

// The default new-pass-manager pipeline at `opt_level`, tuned for `tm`.
void Optimise(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel kLevels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  const llvm::OptimizationLevel& level = kLevels[std::clamp(opt_level, 0, 3)];
  llvm::ModulePassManager mpm = opt_level == 0 ? pb.buildO0DefaultPipeline(level)
                                               : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

// The machine code of `module` as assembly text (codegen of a copy).
absl::StatusOr<std::string> Assembly(const llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError("llvm: the target cannot emit assembly");
  }
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
  pm.run(*copy);
  return std::string(text.str());
}

// Binds the helper symbols the module declares to their addresses.
absl::Status DefineHelpers(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : LlvmHelperSymbols()) {
    symbols[jit.mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  return FromLlvm(jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols))),
                  "define helpers");
}

}  // namespace

LlvmModule::~LlvmModule() = default;

absl::StatusOr<std::unique_ptr<LlvmModule>> CompileLlvm(
    const ir::Ruleset& ruleset, const lower::Plan& plan, const CodeOptions& options) {
  const lower::Layout& layout = plan.layout;
  InitializeLlvmOnce();
  auto out = std::unique_ptr<LlvmModule>(new LlvmModule());
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module =
      EmitLlvmModule(ruleset, plan, *context, out->operands_);
  std::string problems;
  llvm::raw_string_ostream problem_os(problems);
  if (llvm::verifyModule(*module, &problem_os)) {
    return absl::InternalError(absl::StrCat("llvm: emitted module does not verify: ", problems));
  }
  if (options.keep_llvm_ir) out->ir_before_ = Print(*module);

  auto jtmb = HostMachine(options.llvm_opt_level);
  if (!jtmb) return FromLlvm(jtmb.takeError(), "host target");
  auto tm = jtmb->createTargetMachine();
  if (!tm) return FromLlvm(tm.takeError(), "target machine");
  module->setDataLayout((*tm)->createDataLayout());
  module->setTargetTriple((*tm)->getTargetTriple().str());
  Optimise(*module, **tm, options.llvm_opt_level);
  if (options.keep_llvm_ir) out->ir_after_ = Print(*module);
  if (options.keep_assembly) {
    absl::StatusOr<std::string> text = Assembly(*module, **tm);
    if (!text.ok()) return text.status();
    out->assembly_ = *std::move(text);
  }

  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*std::move(jtmb)).create();
  if (!jit) return FromLlvm(jit.takeError(), "LLJIT");
  out->jit_ = std::move(*jit);
  if (absl::Status s = DefineHelpers(*out->jit_); !s.ok()) return s;
  size_t* object_bytes = &out->object_bytes_;
  out->jit_->getObjTransformLayer().setTransform(
      [object_bytes](std::unique_ptr<llvm::MemoryBuffer> object)
          -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
        *object_bytes += object->getBufferSize();
        return object;
      });
  if (absl::Status s = FromLlvm(
          out->jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))),
          "add module");
      !s.ok()) {
    return s;
  }
  out->entries_.assign(layout.chain_count, nullptr);
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    for (size_t c = 0; c < ruleset.tables[t].chains.size(); ++c) {
      if (!ruleset.tables[t].chains[c].base) continue;
      const uint32_t index = layout.ChainIndex(static_cast<int>(t), static_cast<int>(c));
      auto address = out->jit_->lookup(LlvmEntryName(index));
      if (!address) return FromLlvm(address.takeError(), "lookup entry");
      out->entries_[index] = address->toPtr<ChainFn>();
    }
  }
  return out;
}

}  // namespace rulejit::backend
