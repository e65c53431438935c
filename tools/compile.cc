// `rulejit compile FILE [--emit ir|opt-ir|plan|asm|llvm-ir|llvm-asm] [--backend B]
//                       [--dump-after PASS] [--no-pass P1,P2] [--format F] [--ipset FILE]`
//
// Shows a compilation stage:
//   ir      the IR as the frontend lowered it (nft --debug=netlink form)
//   opt-ir  the IR after the optimizer passes, as the compiled tier runs it
//   plan    the lowered plan the code follows (compiler/lower): per chain
//           its linear, set-run and classified segments, inlined chains,
//           shared loads, hooks answered from a table
//   asm       the x86-64 code of the compiled tier (jit: asmjit's listing)
//   llvm-ir   the llvm tier's LLVM IR before and after optimisation
//   llvm-asm  the llvm tier's machine code (--emit asm --backend llvm)
//   nft       the ruleset as an nft script (emit/nft_print.h)
//   nft-json  the same as libnftables JSON (`nft -j -f` loads it)
//   iptables  the ip tables as iptables-save text (emit/ipt_print.h)
// --dump-after PASS prints the IR (for a plan decision: the plan) before and
// after that pass (to stderr, so the stage on stdout stays clean); --no-pass
// turns passes and plan decisions off.
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/internal.h"
#include "emit/ipt_print.h"
#include "emit/nft_print.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tools/commands.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "compile";

struct CompileRequest {
  std::string emit;
  CompileOptions options;
};

absl::StatusOr<CompileRequest> ReadRequest(const Args& args, std::ostream& err) {
  CompileRequest req;
  req.emit = args.value_or("emit", "ir");
  const bool llvm_emit = req.emit == "llvm-ir" || req.emit == "llvm-asm";
  if (req.emit != "ir" && req.emit != "nft" && req.emit != "nft-json" && req.emit != "iptables" && req.emit != "opt-ir" && req.emit != "plan" && req.emit != "asm" &&
      !llvm_emit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --emit '", req.emit, "' (expected ir, nft, nft-json, iptables, opt-ir, plan, asm, llvm-ir or llvm-asm)"));
  }
  std::string backend = args.value_or("backend", llvm_emit ? "llvm" : "auto");
  std::optional<Backend> chosen = BackendFromName(backend);
  if (!chosen) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --backend '", backend, "' (expected interp, jit, llvm or auto)"));
  }
  if ((req.emit == "asm" || req.emit == "plan") && *chosen == Backend::kInterp) {
    return absl::InvalidArgumentError(
        absl::StrCat("--emit ", req.emit, " needs a compiled backend (jit, llvm or auto)"));
  }
  if (llvm_emit && *chosen != Backend::kLlvm) {
    return absl::InvalidArgumentError(absl::StrCat("--emit ", req.emit, " needs --backend llvm"));
  }
  req.options.backend = *chosen;
  req.options.keep_assembly = req.emit == "asm" || req.emit == "llvm-asm";
  req.options.keep_llvm_ir = req.emit == "llvm-ir";
  for (absl::string_view name : absl::StrSplit(args.value_or("no-pass", ""), ',',
                                               absl::SkipEmpty())) {
    if (!IsOptimizationName(std::string(name))) {
      return absl::InvalidArgumentError(absl::StrCat("unknown pass '", name, "'"));
    }
    req.options.disabled_passes.emplace_back(name);
  }
  if (std::optional<std::string> pass = args.value("dump-after")) {
    if (!IsOptimizationName(*pass)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown pass '", *pass, "'"));
    }
    req.options.dump_after = *pass;
    req.options.dump = [&err, name = *pass](const std::string& before,
                                                   const std::string& after) {
      err << "=== before " << name << "\n" << before << "=== after " << name << "\n" << after;
    };
  }
  return req;
}

int RunCompile(const Args& args, Streams io) {
  absl::StatusOr<CompileRequest> req = ReadRequest(args, io.err);
  if (!req.ok()) return UsageError(kName, req.status().message(), io.err);
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  std::optional<LoadedRuleset> loaded = LoadRuleset(args.positional(0), *format, io.err);
  if (!loaded) return kExitInputError;
  if (req->emit == "ir") {
    ir::PrintRuleset(loaded->ruleset, [&](std::string_view piece) { io.out << piece; });
    return kExitOk;
  }
  if (req->emit == "nft" || req->emit == "nft-json" || req->emit == "iptables") {
    absl::StatusOr<std::string> text = req->emit == "nft"        ? emit::PrintNft(loaded->ruleset)
                                       : req->emit == "nft-json" ? emit::PrintNftJson(loaded->ruleset)
                                                                 : emit::PrintIptables(loaded->ruleset);
    if (!text.ok()) {
      io.err << "rulejit compile: error: " << text.status().message() << "\n";
      return kExitInputError;
    }
    io.out << *text;
    return kExitOk;
  }
  std::unique_ptr<const Program> program =
      CompileOrReport(kName, std::move(loaded->ruleset), req->options, io.err);
  if (!program) return kExitInputError;
  if (req->emit == "llvm-ir") {
    io.out << "; ==== LLVM IR as emitted\n" << program->llvm_ir(false)
           << "; ==== LLVM IR after optimisation (O" << req->options.llvm_opt_level
           << ", host CPU)\n" << program->llvm_ir(true);
    return kExitOk;
  }
  // Say so when the interpreter runs what a compiled tier was asked for.
  if (!program->interpreter_reason().empty()) {
    io.err << "note: " << program->interpreter_reason() << "\n";
  }
  if (req->emit == "plan") {
    io.out << program->PlanText();
    return kExitOk;
  }
  const bool code = req->emit == "asm" || req->emit == "llvm-asm";
  io.out << (code ? program->assembly() : ir::PrintRuleset(IrOf(program->ruleset())));
  return kExitOk;
}

}  // namespace

Command CompileCommand() {
  return Command{
      .name = kName,
      .synopsis = "compile FILE [--emit ir|nft|nft-json|iptables|opt-ir|plan|asm|llvm-ir|llvm-asm] [--backend interp|jit|llvm|auto] "
                  "[--dump-after PASS] [--no-pass P1,P2] [--format F] [--ipset FILE]",
      .summary = "print a compilation stage: the IR, the optimized IR, the plan, or the machine code",
      .spec = {.flags = {{"emit", true},
                         {"backend", true},
                         {"dump-after", true},
                         {"no-pass", true},
                         {"format", true}, {"ipset", true}},
               .positionals = {"FILE"}},
      .run = RunCompile,
      .description =
          "Prints one stage of the compilation of FILE to stdout: ir (the IR as the frontend "
          "lowered it), nft (the ruleset as an nft script that means the same; a located error "
          "names a rule nft cannot express exactly), nft-json (the same ruleset as the JSON `nft -j list ruleset` prints, "
          "which `nft -j -f` loads), iptables (the ip tables as iptables-save text, for rulesets whose rules have "
          "the shapes iptables generates; a located error otherwise), opt-ir (after the optimizer passes), plan (the lowered plan the code "
          "follows), asm (the x86-64 code of the compiled tier), llvm-ir or llvm-asm (the llvm "
          "tier's LLVM IR or machine code). --dump-after PASS prints the IR before and after "
          "that pass to stderr; --no-pass turns passes off.",
      .examples = {{"rulejit compile rules.nft", "The IR of an nft ruleset."},
                   {"rulejit compile rules.ipt --emit asm --backend jit",
                    "The machine code the jit tier generates."}},
  };
}

}  // namespace rulejit::tools
