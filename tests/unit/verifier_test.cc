// Unit tests for ir/verifier.h: one test per error class (each asserting the
// message and the location), valid rulesets that must pass, and every rule
// block of the nftables corpus that the reader accepts (no false positives
// on real nft output).
#include "ir/verifier.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/reader.h"

namespace rulejit::ir {
namespace {

using ::testing::HasSubstr;

SourceLoc At(uint32_t line, uint32_t col = 3) { return {0, line, col}; }

Node N(Expr e, uint32_t line) { return Node{std::move(e), At(line)}; }

Rule R(std::vector<Node> exprs, uint32_t line = 1) {
  Rule r;
  r.exprs = std::move(exprs);
  r.loc = At(line, 1);
  return r;
}

Chain Base(std::string name, Hook hook = Hook::kInput,
           VerdictCode policy = VerdictCode::kAccept) {
  Chain c;
  c.name = std::move(name);
  c.base = BaseChain{"filter", hook, 0, {}, policy};
  c.loc = At(100, 1);
  return c;
}

Chain Regular(std::string name, uint32_t line = 200) {
  Chain c;
  c.name = std::move(name);
  c.loc = At(line, 1);
  return c;
}

Immediate Jump(std::string chain, VerdictCode code = VerdictCode::kJump) {
  Immediate imm;
  imm.verdict = {code, std::move(chain)};
  return imm;
}

Immediate Accept() {
  Immediate imm;
  imm.verdict.code = VerdictCode::kAccept;
  return imm;
}

PayloadLoad Load(uint32_t offset, uint32_t len, Reg dreg = 1) {
  return PayloadLoad{PayloadBase::kNetwork, offset, len, dreg};
}

Cmp Eq(Bytes data, Reg sreg = 1) { return Cmp{CmpOp::kEq, sreg, std::move(data)}; }

Lookup In(std::string set, std::optional<Reg> dreg = std::nullopt, Reg sreg = 1) {
  return Lookup{sreg, std::move(set), dreg, false};
}

Set MakeSet(std::string name, uint32_t key_len) {
  Set s;
  s.name = std::move(name);
  s.key_len = key_len;
  s.loc = At(50, 1);
  return s;
}

Ruleset OneTable(std::vector<Chain> chains, std::vector<Set> sets = {},
                 Family family = Family::kIp) {
  Table t;
  t.family = family;
  t.name = "filter";
  t.chains = std::move(chains);
  t.sets = std::move(sets);
  Ruleset rs;
  rs.files = {"rules.nft"};
  rs.tables = {t};
  return rs;
}

Ruleset OneRule(std::vector<Node> exprs, std::vector<Set> sets = {}) {
  Chain input = Base("input");
  input.rules = {R(std::move(exprs))};
  return OneTable({input}, std::move(sets));
}

// All error diagnostics of verifying `rs`.
std::vector<Diagnostic> Errors(const Ruleset& rs) {
  Diagnostics diags;
  bool ok = Verify(rs, diags);
  EXPECT_EQ(ok, !diags.has_errors());
  return diags.all();
}

// Exactly one error, containing `message`, at `line`.
void ExpectOneError(const Ruleset& rs, const std::string& message,
                    uint32_t line) {
  std::vector<Diagnostic> errors = Errors(rs);
  std::string all;
  for (const Diagnostic& d : errors) all += d.message + "\n";
  ASSERT_EQ(errors.size(), 1u) << all;
  EXPECT_THAT(errors[0].message, HasSubstr(message));
  EXPECT_EQ(errors[0].loc.line, line) << errors[0].message;
}

void ExpectValid(const Ruleset& rs) {
  Diagnostics diags;
  EXPECT_TRUE(Verify(rs, diags)) << diags.Format();
}

// --- registers ------------------------------------------------------------------

TEST(VerifyRegisters, ReadBeforeWrite) {
  ExpectOneError(OneRule({N(Eq({10, 0, 0, 1}), 7)}),
                 "cmp: reads 4 bytes of reg 1 before any expression of the "
                 "rule wrote it", 7);
}

TEST(VerifyRegisters, ReadPastWhatWasWritten) {
  // 4 bytes loaded, 8 compared: the second word (reg 9) was never written.
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(Eq(Bytes(8, 0)), 2)}),
                 "its word 1, reg 9", 2);
}

TEST(VerifyRegisters, WritesDoNotLeakAcrossRules) {
  Chain input = Base("input");
  input.rules = {R({N(Load(12, 4), 1), N(Eq({1, 2, 3, 4}), 2)}),
                 R({N(Eq({1, 2, 3, 4}), 3)})};
  ExpectOneError(OneTable({input}), "before any expression", 3);
}

TEST(VerifyRegisters, InvalidRegisterNumbers) {
  ExpectOneError(OneRule({N(Load(12, 4, 5), 4)}), "reg 5 is not a register", 4);
  ExpectOneError(OneRule({N(Load(12, 4, 0), 4)}), "reg 0 is the verdict register", 4);
  ExpectOneError(OneRule({N(Load(12, 4, 24), 4)}), "data registers are 1..4 and 8..23", 4);
}

TEST(VerifyRegisters, DataBeyondTheRegisterFile) {
  // reg 4 is words 12..15: 16 bytes fit, 20 do not.
  ExpectValid(OneRule({N(Load(8, 16, 4), 1), N(Eq(Bytes(16, 0), 4), 2)}));
  ExpectOneError(OneRule({N(Load(8, 20, 4), 3)}),
                 "20 bytes from reg 4 run past the end of the 64-byte register file", 3);
  ExpectOneError(OneRule({N(Load(0, 8, 23), 3)}), "past the end", 3);
}

// --- lengths --------------------------------------------------------------------------

TEST(VerifyLengths, PayloadLoadLength) {
  ExpectOneError(OneRule({N(Load(0, 0), 2)}), "payload load of 0 bytes", 2);
  ExpectOneError(OneRule({N(Load(0, 65), 2)}), "payload load of 65 bytes", 2);
  ExpectValid(OneRule({N(Load(0, 64), 2)}));
}

// ip6tables' own header and protocol are loads only: nothing writes them.
TEST(VerifyLengths, Ip6tablesFormsAreLoadOnly) {
  ExpectValid(OneRule({N(PayloadLoad{PayloadBase::kIp6tTransport, 2, 2, 1}, 2),
                       N(MetaLoad{MetaKey::kIp6tL4Proto, 9}, 3), N(Eq({0, 22}), 4),
                       N(Eq({6}, 9), 5)}));
  ExpectOneError(OneRule({N(PayloadLoad{PayloadBase::kIp6tTransport, 2, 2, 1}, 2),
                          N(PayloadWrite{PayloadBase::kIp6tTransport, 2, 2, 1}, 3)}),
                 "payload write: invalid header base", 3);
  ExpectOneError(OneRule({N(Load(0, 4), 2), N(MetaSet{MetaKey::kIp6tL4Proto, 1}, 3)}),
                 "meta set: invalid meta key", 3);
}

TEST(VerifyLengths, CmpAndRangeNeedData) {
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(Eq({}), 2)}), "cmp with no data", 2);
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(Range{false, 1, {1, 2}, {1, 2, 3}}, 5)}),
                 "range bounds", 5);
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(Range{true, 1, {}, {}}, 5)}),
                 "range bounds", 5);
}

TEST(VerifyLengths, BitwiseAndByteorderShapes) {
  Bitwise bad;
  bad.len = 4;
  bad.mask = {0xff, 0xff, 0xff, 0};
  bad.xor_ = {0};
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(bad, 2)}), "mask (4 bytes) and xor (1 bytes)", 2);
  Byteorder order{ByteorderOp::kNtoh, 1, 1, 4, 3};
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(order, 2)}),
                 "byteorder element size 3", 2);
}

// --- lookups ----------------------------------------------------------------------------

TEST(VerifyLookup, UnknownSetWithHint) {
  std::vector<Diagnostic> errors = Errors(
      OneRule({N(Load(12, 4), 1), N(In("blocklist"), 2)}, {MakeSet("blocklst", 4)}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("lookup in unknown set 'blocklist'"));
  EXPECT_EQ(errors[0].hint, "did you mean 'blocklst'?");
  EXPECT_EQ(errors[0].loc.line, 2u);
}

TEST(VerifyLookup, KeyLengthMismatch) {
  // An IPv6 address looked up in a set of IPv4 addresses.
  ExpectOneError(OneRule({N(Load(8, 16), 1), N(In("v4"), 2)}, {MakeSet("v4", 4)}),
                 "key length mismatch: set 'v4' has 4-byte keys", 2);
  // A 4-byte mark looked up in a set of 2-byte keys.
  ExpectOneError(OneRule({N(MetaLoad{MetaKey::kMark, 1}, 1), N(In("ports"), 2)},
                         {MakeSet("ports", 2)}),
                 "set 'ports' has 2-byte keys but the value read ends inside a 4-byte value",
                 2);
  // A 2-byte port in a 4-byte key: the register is zero-padded, so it is fine.
  ExpectValid(OneRule({N(Load(2, 2), 1), N(In("wide"), 2)}, {MakeSet("wide", 4)}));
  // An IPv4 address looked up in a set of IPv6 addresses: reads unwritten words.
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(In("v6"), 2)}, {MakeSet("v6", 16)}),
                 "lookup in 'v6' (16-byte key): reads 16 bytes of reg 1", 2);
}

TEST(VerifyLookup, ConcatenatedKeyReadsTheWholeKey) {
  Set concat = MakeSet("pairs", 8);
  concat.flags = kSetConcat;
  concat.field_lens = {4, 2};
  ExpectValid(OneRule({N(Load(12, 4, 1), 1),
                       N(PayloadLoad{PayloadBase::kTransport, 2, 2, 9}, 2),
                       N(In("pairs"), 3)},
                      {concat}));
  ExpectOneError(OneRule({N(Load(12, 4, 1), 1), N(In("pairs"), 3)}, {concat}),
                 "its word 1, reg 9", 3);
}

TEST(VerifyLookup, MapDestinations) {
  Set vmap = MakeSet("vm", 4);
  vmap.flags = kSetMap;
  vmap.verdict_map = true;
  Set dmap = MakeSet("dm", 4);
  dmap.flags = kSetMap;
  dmap.data_len = 4;
  Set plain = MakeSet("plain", 4);
  ExpectValid(OneRule({N(Load(12, 4), 1), N(In("vm", Reg{0}), 2)}, {vmap}));
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(In("vm", Reg{1}), 2)}, {vmap}),
                 "verdict map 'vm' needs dreg 0, not reg 1", 2);
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(In("dm", Reg{0}), 2)}, {dmap}),
                 "map 'dm' holds data, not verdicts", 2);
  ExpectOneError(OneRule({N(Load(12, 4), 1), N(In("plain", Reg{1}), 2)}, {plain}),
                 "set 'plain' is not a map", 2);
  // A data map's lookup defines its destination register.
  ExpectValid(OneRule({N(Load(12, 4), 1), N(In("dm", Reg{9}), 2),
                       N(MetaSet{MetaKey::kMark, 9}, 3)},
                      {dmap}));
}

TEST(VerifyLookup, SetElementShapes) {
  Set s = MakeSet("s", 4);
  SetElement e;
  e.key = {1, 2};
  e.loc = At(51, 5);
  s.elements = {e};
  ExpectOneError(OneTable({Base("input")}, {s}), "has a 2-byte key, the set's keys are 4 bytes", 51);
}

// --- jumps ------------------------------------------------------------------------------

TEST(VerifyJumps, UnknownTargetWithHint) {
  Chain input = Base("input");
  input.rules = {R({N(Jump("tcp_in"), 4)})};
  std::vector<Diagnostic> errors = Errors(OneTable({input, Regular("tcp-in")}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("jump to unknown chain 'tcp_in'"));
  EXPECT_EQ(errors[0].hint, "did you mean 'tcp-in'?");
  EXPECT_EQ(errors[0].loc.line, 4u);
}

TEST(VerifyJumps, TargetIsBaseChain) {
  Chain input = Base("input");
  input.rules = {R({N(Jump("output", VerdictCode::kGoto), 6)})};
  ExpectOneError(OneTable({input, Base("output", Hook::kOutput)}),
                 "goto to base chain 'output'", 6);
}

TEST(VerifyJumps, LoopReportsThePath) {
  Chain input = Base("input");
  input.rules = {R({N(Jump("a"), 1)})};
  Chain a = Regular("a");
  a.rules = {R({N(Jump("b"), 2)})};
  Chain b = Regular("b");
  b.rules = {R({N(Jump("a", VerdictCode::kGoto), 3)})};
  ExpectOneError(OneTable({input, a, b}),
                 "jump loop: chain 'a' is reachable from itself (a -> b -> a)", 3);
}

TEST(VerifyJumps, LoopThroughVerdictMap) {
  Set vmap = MakeSet("vm", 4);
  vmap.flags = kSetMap;
  vmap.verdict_map = true;
  SetElement e;
  e.key = {1, 0, 0, 0};
  e.verdict = Verdict{VerdictCode::kJump, "a"};
  vmap.elements = {e};
  Chain input = Base("input");
  input.rules = {R({N(Jump("a"), 1)})};
  Chain a = Regular("a");
  a.rules = {R({N(Load(12, 4), 2), N(In("vm", Reg{0}), 3)})};
  ExpectOneError(OneTable({input, a}, {vmap}), "(a -> a)", 3);
}

TEST(VerifyJumps, DeepButAcyclicIsFineUpToTheKernelLimit) {
  std::vector<Chain> chains = {Base("input")};
  chains[0].rules = {R({N(Jump("c0"), 1)})};
  for (int i = 0; i < 20; ++i) {
    Chain c = Regular("c" + std::to_string(i));
    if (i + 1 < 20) c.rules = {R({N(Jump("c" + std::to_string(i + 1)), 10 + i)})};
    chains.push_back(c);
  }
  ExpectOneError(OneTable(chains), "nests jumps 20 deep; the kernel allows 16", 100);
  chains.resize(1 + 10);
  chains.back().rules.clear();
  ExpectValid(OneTable(chains));
}

// --- base chains and names ----------------------------------------------------------------

TEST(VerifyChains, HookMustSuitTheFamily) {
  ExpectOneError(OneTable({Base("in", Hook::kIngress)}, {}, Family::kIp),
                 "hook ingress is not valid in family ip", 100);
  ExpectOneError(OneTable({Base("in", Hook::kInput)}, {}, Family::kNetdev),
                 "hook input is not valid in family netdev", 100);
  ExpectOneError(OneTable({Base("in", Hook::kForward)}, {}, Family::kArp),
                 "hook forward is not valid in family arp", 100);
  ExpectValid(OneTable({Base("in", Hook::kIngress)}, {}, Family::kInet));
  ExpectValid(OneTable({Base("in", Hook::kEgress)}, {}, Family::kNetdev));
}

TEST(VerifyChains, PolicyAcceptOrDrop) {
  ExpectOneError(OneTable({Base("input", Hook::kInput, VerdictCode::kReturn)}),
                 "policy must be accept or drop", 100);
  ExpectValid(OneTable({Base("input", Hook::kInput, VerdictCode::kDrop)}));
}

TEST(VerifyChains, UnknownChainType) {
  Chain c = Base("input");
  c.base->type = "filtre";
  std::vector<Diagnostic> errors = Errors(OneTable({c}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("unknown chain type 'filtre'"));
  EXPECT_EQ(errors[0].hint, "did you mean 'filter'?");
}

TEST(VerifyNames, DuplicateChainsSetsAndTables) {
  ExpectOneError(OneTable({Base("input"), Regular("input", 300)}),
                 "duplicate chain 'input' (first defined at rules.nft:100)", 300);
  Set second = MakeSet("s", 4);
  second.loc = At(60, 1);
  ExpectOneError(OneTable({Base("input")}, {MakeSet("s", 4), second}),
                 "duplicate set 's'", 60);
  Ruleset rs = OneTable({Base("input")});
  rs.tables.push_back(rs.tables[0]);
  rs.tables[1].loc = At(400, 1);
  rs.tables[1].chains.clear();
  ExpectOneError(rs, "duplicate table ip filter", 400);
}

// --- valid rulesets ---------------------------------------------------------------------------

TEST(VerifyValid, TypicalFilterRuleset) {
  Set ports = MakeSet("__set0", 2);
  ports.flags = kSetAnonymous | kSetConstant;
  ports.elements.resize(2);
  ports.elements[0].key = {0, 22};
  ports.elements[1].key = {0, 80};
  Bitwise mask;
  mask.len = 4;
  mask.mask = {0xff, 0xc0, 0, 0};
  mask.xor_ = {0, 0, 0, 0};
  Chain input = Base("input", Hook::kInput, VerdictCode::kDrop);
  input.rules = {
      // ! ip saddr 10.0.0.0/10 jump tcp_in
      R({N(Load(12, 4), 1), N(mask, 2), N(Cmp{CmpOp::kNeq, 1, {10, 0, 0, 0}}, 3),
         N(Jump("tcp_in"), 4)}),
      // ct state established,related accept
      R({N(CtLoad{CtKey::kState, 1, CtDir::kNone}, 5), N(Counter{}, 6), N(Accept(), 7)}),
  };
  Chain tcp_in = Regular("tcp_in");
  tcp_in.rules = {
      R({N(MetaLoad{MetaKey::kL4Proto, 1}, 8), N(Eq({6}), 9),
         N(PayloadLoad{PayloadBase::kTransport, 2, 2, 1}, 10), N(In("__set0"), 11),
         N(Limit{10, 1, 5, false, false}, 12), N(Log{}, 13), N(Accept(), 14)}),
      R({N(Immediate{kVerdictReg, {}, {VerdictCode::kReturn, ""}}, 15)}),
  };
  ExpectValid(OneTable({input, tcp_in}, {ports}));
}

// Every rule block of the nftables corpus that uses only IR expressions and
// no sets must verify cleanly (in a table with one base chain of a hook that
// suits the family).
TEST(VerifyValid, CorpusRuleBlocksPass) {
  namespace fs = std::filesystem;
  const fs::path corpus = fs::path(RULEJIT_SHARED_DIR) / "corpus" / "nftables-py";
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
    if (entry.path().filename().string().find(".payload") == std::string::npos) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    std::vector<std::string> blocks = absl::StrSplit(text.str(), "\n\n");
    for (const std::string& raw : blocks) {
      // Keep the header and `[` lines; blocks with sets or uncovered
      // expressions are skipped.
      std::string block;
      bool usable = true;
      for (absl::string_view line : absl::StrSplit(raw, '\n')) {
        std::string l(absl::StripAsciiWhitespace(line));
        if (l.empty() || l[0] == '#') continue;
        // Sets and named objects (anonymous blocks or named ones the corpus
        // declares in the .t file) are not rebuilt here.
        if (l[0] == '_' || l.rfind("element", 0) == 0 ||
            l.rfind("[ lookup", 0) == 0 || l.rfind("[ objref", 0) == 0 ||
            l.rfind("[ dynset", 0) == 0) {
          usable = false;
        }
        if (l[0] == '[' && !ParseExprLine(l).ok()) usable = false;
        block += l + "\n";
      }
      if (!usable || block.empty()) continue;
      absl::StatusOr<RuleBlock> rb = ParseRuleBlock(block, 0, 1);
      if (!rb.ok()) continue;  // e.g. a header without table/chain
      Hook hook = rb->family == Family::kNetdev ? Hook::kIngress : Hook::kInput;
      Chain chain = Base(rb->chain, hook);
      chain.rules = {rb->rule};
      Ruleset rs = OneTable({chain}, {}, rb->family);
      Diagnostics diags;
      EXPECT_TRUE(Verify(rs, diags)) << entry.path() << "\n" << block << diags.Format();
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(VerifyValid, AppendsToExistingDiagnostics) {
  Diagnostics diags;
  diags.Error(At(1), "earlier problem");
  EXPECT_TRUE(Verify(OneTable({Base("input")}), diags));
  EXPECT_EQ(diags.error_count(), 1);
}

}  // namespace
}  // namespace rulejit::ir
