// End-to-end tests of `rulejit compile`: the IR, the optimised IR,
// --dump-after, machine code and LLVM IR it prints, and its usage errors
// (cli_fixture.h runs the built binary).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"

namespace rulejit::testing {
namespace {

// ---------------------------------------------------------------------------
// compile

// The IR of a small dump, written out by hand from iptables-nft's lowering
// (l4proto first, then the masked source, then the port; counter; verdict).
TEST_F(CliTest, CompileEmitIrPrintsTheIr) {
  std::string path =
      Write("small.ipt",
            "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n"
            ":OUTPUT ACCEPT [0:0]\n:WEB - [0:0]\n"
            "-A INPUT -s 10.0.0.0/10 -p tcp -m tcp --dport 22 -j ACCEPT\n"
            "-A INPUT -p tcp -j WEB\n"
            "-A WEB -p tcp -m tcp --dport 443 -j ACCEPT\n"
            "COMMIT\n");
  const std::string expected =
      "# table ip filter\n"
      "# chain INPUT type filter hook input priority 0 policy drop\n"
      "ip filter INPUT\n"
      "  [ meta load l4proto => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00000006 ]\n"
      "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
      "  [ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]\n"
      "  [ cmp eq reg 1 0x0000000a ]\n"
      "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00001600 ]\n"
      "  [ counter pkts 0 bytes 0 ]\n"
      "  [ immediate reg 0 accept ]\n"
      "\n"
      "ip filter INPUT\n"
      "  [ meta load l4proto => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00000006 ]\n"
      "  [ counter pkts 0 bytes 0 ]\n"
      "  [ immediate reg 0 jump -> WEB ]\n"
      "\n"
      "# chain FORWARD type filter hook forward priority 0 policy accept\n"
      "# chain OUTPUT type filter hook output priority 0 policy accept\n"
      "# chain WEB\n"
      "ip filter WEB\n"
      "  [ meta load l4proto => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00000006 ]\n"
      "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
      "  [ cmp eq reg 1 0x0000bb01 ]\n"
      "  [ counter pkts 0 bytes 0 ]\n"
      "  [ immediate reg 0 accept ]\n"
      "\n";
  // As iptables-nft loads the dump: its exact bytecode.
  ToolResult r = Run({"compile", path, "--emit", "ir", "--format", "iptables-nft"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected);
  // --emit ir is the default.
  EXPECT_EQ(Run({"compile", path, "--format", "iptables-nft"}).out, expected);
  // As iptables-legacy loads it (the default): the tcp matches refuse
  // non-first fragments, so each such rule checks the fragment offset first.
  const std::string not_fragment =
      "  [ payload load 2b @ network header + 6 => reg 1 ]\n"
      "  [ bitwise reg 1 = ( reg 1 & 0x0000ff1f ) ^ 0x00000000 ]\n"
      "  [ cmp eq reg 1 0x00000000 ]\n";
  std::string legacy = expected;
  for (const char* before : {"  [ payload load 2b @ transport header + 2 => reg 1 ]\n  [ cmp eq reg 1 0x00001600 ]",
                             "  [ payload load 2b @ transport header + 2 => reg 1 ]\n  [ cmp eq reg 1 0x0000bb01 ]"}) {
    legacy.insert(legacy.find(before), not_fragment);
  }
  EXPECT_EQ(Run({"compile", path}).out, legacy);
}

TEST_F(CliTest, CompileOptIrFusesTheSeedCase) {
  std::string path = Write("seed.ipt", Dump("-A INPUT ! -s 10.0.0.0/10 -j DROP\n"));
  ToolResult r = Run({"compile", path, "--emit", "opt-ir"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[ fused payload 4b @ network header + 12 & 0x0000c0ff "
                               "neq 0x0000000a ]"));
  // Turned off, the three nf_tables expressions stay.
  r = Run({"compile", path, "--emit", "opt-ir", "--no-pass", "fold-masked-compare"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("fused")));
  EXPECT_THAT(r.out, HasSubstr("[ cmp neq reg 1 0x0000000a ]"));
}

TEST_F(CliTest, CompileDumpAfterShowsBeforeAndAfter) {
  std::string path = Write("seed.ipt", Dump("-A INPUT ! -s 10.0.0.0/10 -j DROP\n"));
  ToolResult r = Run({"compile", path, "--emit", "opt-ir", "--dump-after",
                      "fold-masked-compare"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("=== before fold-masked-compare"));
  EXPECT_THAT(r.err, HasSubstr("=== after fold-masked-compare"));
  EXPECT_THAT(r.err, HasSubstr("[ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]"));
  r = Run({"compile", path, "--dump-after", "no-such-pass"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown pass 'no-such-pass'"));
}

TEST_F(CliTest, CompileEmitAsmPrintsMachineCode) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "asm"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("push rbx"));
  EXPECT_THAT(r.out, HasSubstr("ret"));
  r = Run({"compile", kExampleRules, "--emit", "asm", "--backend", "interp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, IsEmpty());
}

// --emit llvm-ir: the module as emitted (helper calls, one function per
// chain) and after O2 (the INPUT body inlined into its entry, no dead blocks).
TEST_F(CliTest, CompileEmitLlvmIrShowsBeforeAndAfterOptimisation) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "llvm-ir"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t after = r.out.find("; ==== LLVM IR after optimisation (O2, host CPU)");
  ASSERT_NE(after, std::string::npos) << r.out;
  ASSERT_THAT(r.out, StartsWith("; ==== LLVM IR as emitted\n"));
  const std::string before_text = r.out.substr(0, after);
  const std::string after_text = r.out.substr(after);
  EXPECT_THAT(before_text, HasSubstr("define internal i32 @body.filter.INPUT(ptr"));
  EXPECT_THAT(before_text, HasSubstr("define internal i32 @body.filter.SSH_IN(ptr"));
  EXPECT_THAT(before_text, HasSubstr("call i32 @body.filter.SSH_IN(ptr"));
  EXPECT_THAT(before_text, HasSubstr("call i32 @rulejit_ct_load(ptr"));
  EXPECT_THAT(before_text, HasSubstr("dead"));
  EXPECT_THAT(after_text, HasSubstr("i32 @entry.0(ptr"));
  EXPECT_THAT(after_text, HasSubstr("call i32 @rulejit_ct_load(ptr"));
  // The optimizer drops the blocks after verdicts and inlines the body
  // that only its entry calls.
  EXPECT_THAT(after_text, Not(HasSubstr("dead")));
  EXPECT_THAT(after_text, Not(HasSubstr("@body.filter.INPUT(")));
  // Only the llvm tier has LLVM IR.
  r = Run({"compile", kExampleRules, "--emit", "llvm-ir", "--backend", "jit"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--emit llvm-ir needs --backend llvm"));
}

// --emit llvm-asm: LLVM's machine code (AT&T syntax), with the helper calls.
TEST_F(CliTest, CompileEmitLlvmAsmPrintsMachineCode) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "llvm-asm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nentry.0:"));
  EXPECT_THAT(r.out, HasSubstr("rulejit_ct_load"));
  EXPECT_THAT(r.out, HasSubstr("retq"));
  EXPECT_THAT(r.out, Not(HasSubstr("push rbx")));  // not asmjit's listing
  r = Run({"compile", kExampleRules, "--emit", "llvm-asm", "--backend", "interp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, CompileUnknownEmitIsUsageError) {
  ToolResult r = Run({"compile", kExampleRules, "--emit", "bytecode"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown --emit 'bytecode'"));
}

TEST_F(CliTest, CompileBadInputFails) {
  std::string path = Write("t.ipt", Dump("-A INPUT -j NOSUCH\n"));
  ToolResult r = Run({"compile", path, "--emit", "ir"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, IsEmpty());
}

}  // namespace
}  // namespace rulejit::testing
