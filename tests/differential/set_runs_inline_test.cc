// merge-set-runs and inline-chains keep every observable result:
// generated nft chains made of runs of rules alike but for one constant
// (ports, addresses, masked addresses, protocols; repeated constants;
// rules whose action part fails or does not end the chain), and base
// chains jumping to small chains, run by the interpreter and by the JIT
// with the passes on agree on verdict, deciding rule and every counter;
// and the passes find the runs and chains.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "gtest/gtest.h"
#include "api/program_internal.h"
#include "rulejit/rulejit.h"
#include "tests/support/agree.h"

namespace rulejit {
namespace {

constexpr const char* kPorts[] = {"0", "22", "53", "80", "443", "1024", "8080", "65535", "9"};
constexpr const char* kAddrs[] = {"10.0.0.1", "10.0.0.2", "10.1.2.3", "192.168.1.9",
                                  "10.64.0.1", "172.16.0.1"};
constexpr const char* kNets[] = {"10.0.0.0/24", "10.1.2.0/24", "192.168.1.0/24",
                                 "10.64.0.0/24", "10.9.9.0/24"};
constexpr const char* kProtos[] = {"tcp", "udp", "icmp", "sctp"};
constexpr const char* kActions[] = {"accept", "drop", "counter accept", "counter drop",
                                    "counter", "meta mark 0x00000001 accept", "return"};

template <typename T, size_t N>
const char* Pick(std::mt19937& rng, const T (&pool)[N]) {
  return pool[rng() % N];
}

// One run: a shared prefix, then a field compared to a varying constant.
std::string RandomRun(std::mt19937& rng) {
  const int n = 3 + static_cast<int>(rng() % 10);
  const int kind = static_cast<int>(rng() % 5);
  const std::string proto = rng() % 2 ? "tcp" : "udp";
  std::string out;
  for (int i = 0; i < n; ++i) {
    std::string match;
    switch (kind) {
      case 0: match = absl::StrCat(proto, " dport ", Pick(rng, kPorts)); break;
      case 1: match = absl::StrCat("ip saddr 10.0.0.0/8 ", proto, " sport ", Pick(rng, kPorts)); break;
      case 2: match = absl::StrCat("ip daddr ", Pick(rng, kAddrs)); break;
      case 3: match = absl::StrCat("ip saddr ", Pick(rng, kNets)); break;
      default: match = absl::StrCat("meta l4proto ", Pick(rng, kProtos)); break;
    }
    absl::StrAppend(&out, "  ", match, " ", Pick(rng, kActions), "\n");
  }
  return out;
}

std::string RandomChain(std::mt19937& rng) {
  std::string s = "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy ";
  s += rng() % 2 ? "accept;\n" : "drop;\n";
  const int runs = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < runs; ++i) s += RandomRun(rng);
  return s + " }\n}\n";
}

const lower::Plan& PlanOf(const Program& program) {
  return *ProgramInternal::PlanOf(program);
}

size_t SetRuns(const Program& program) {
  size_t n = 0;
  for (const lower::ChainPlan& c : PlanOf(program).chains) n += c.set_runs.size();
  return n;
}

// The plan of chain `name` of table 0.
const lower::ChainPlan& ChainPlanOf(const Program& program, const std::string& name) {
  const auto& chains = IrOf(program.ruleset()).tables[0].chains;
  int c = 0;
  while (chains[c].name != name) ++c;
  return PlanOf(program).chains[PlanOf(program).layout.ChainIndex(0, c)];
}

TEST(SetRuns, JitAgreesWithTheInterpreter) {
  constexpr int kRulesets = 300;
  constexpr int kFrames = 200;
  size_t runs = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 6151);
    const std::string text = RandomChain(rng);
    absl::StatusOr<Ruleset> rs = ParseRuleset(text, "gen.nft");
    ASSERT_TRUE(rs.ok()) << rs.status() << "\n" << text;
    auto interp = Program::Compile(*rs, {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();
    CompileOptions options{.backend = Backend::kJit};
    options.classify_min_rules = seed % 3 ? 1u << 30 : 4;  // sometimes the classifier too
    auto jit = Program::Compile(*rs, options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    runs += SetRuns(**jit);
    EXPECT_TRUE(testing::AgreeOnRandomFrames(**interp, **jit, IrOf(*rs), rng, kFrames))
        << "seed " << seed << "\n" << text;
  }
  std::printf("%zu set runs compiled\n", runs);
  EXPECT_GT(runs, static_cast<size_t>(kRulesets / 2));  // the pass did run
}

TEST(SetRuns, FindsRunsOfOneVaryingConstant) {
  const std::string text =
      "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy accept;\n"
      "  tcp dport 22 accept\n  tcp dport 80 counter drop\n  tcp dport 22 accept\n"
      "  tcp dport 443 accept\n"                                   // 0-3: a run
      "  udp dport 53 accept\n"                                    // 4: other shape
      "  ip saddr 10.0.0.1 accept\n  ip saddr 10.0.0.2 accept\n"
      "  ip saddr 10.0.0.3 accept\n"                                // 5-7: too short
      "  meta mark set 1\n"                                        // 8: changes state
      "  ip daddr 1.1.1.1 drop\n  ip daddr 1.1.1.2 drop\n  ip daddr 1.1.1.3 drop\n"
      "  ip daddr 1.1.1.4 drop\n  ip daddr 1.1.1.5 drop\n"         // 9-13: a run
      " }\n}\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "fixed.nft");
  ASSERT_TRUE(rs.ok()) << rs.status();
  CompileOptions options{.backend = Backend::kJit};
  options.disabled_passes.push_back("remove-shadowed-rules");  // keep rule 2
  options.disabled_passes.push_back("drop-repeated-rules");
  auto jit = Program::Compile(*rs, options);
  ASSERT_TRUE(jit.ok()) << jit.status();
  const auto& runs = PlanOf(**jit).chains[0].set_runs;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].begin, 0u);
  EXPECT_EQ(runs[0].end, 4u);
  EXPECT_EQ(runs[1].begin, 9u);
  EXPECT_EQ(runs[1].end, 14u);
  options.disabled_passes.push_back("merge-set-runs");
  auto off = Program::Compile(*rs, options);
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(PlanOf(**off).chains[0].set_runs.empty());
}

// Anonymous sets all print as `__set%d`: rules whose shared prefixes look
// up sets of different elements are not alike (the prefix would run once,
// with the first rule's set, for the whole run).
TEST(SetRuns, PrefixesWithOtherAnonymousSetsAreNoRun) {
  const std::string text =
      "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy drop;\n"
      "  ip saddr { 10.0.0.1, 10.0.0.2 } tcp dport 1 accept\n"
      "  ip saddr { 10.0.0.3, 10.0.0.4 } tcp dport 2 accept\n"
      "  ip saddr { 10.0.0.5, 10.0.0.6 } tcp dport 3 accept\n"
      "  ip saddr { 10.0.0.7, 10.0.0.8 } tcp dport 4 accept\n"
      " }\n}\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "sets.nft");
  ASSERT_TRUE(rs.ok()) << rs.status();
  auto jit = Program::Compile(*rs, {.backend = Backend::kJit});
  ASSERT_TRUE(jit.ok()) << jit.status();
  EXPECT_TRUE(PlanOf(**jit).chains[0].set_runs.empty());
}

// A base chain whose rules jump to small chains made of runs and returns.
std::string RandomJumps(std::mt19937& rng, int* small_chains) {
  const int chains = 1 + static_cast<int>(rng() % 3);
  std::string s = "table ip t {\n";
  for (int c = 0; c < chains; ++c) {
    absl::StrAppend(&s, " chain c", c, " {\n", RandomRun(rng));
    if (rng() % 2) absl::StrAppend(&s, "  tcp dport 80 return\n  counter\n");
    s += " }\n";
  }
  s += " chain forwarding {\n  type filter hook forward priority 0; policy drop;\n";
  for (int i = 0, n = 2 + static_cast<int>(rng() % 6); i < n; ++i) {
    const int c = static_cast<int>(rng() % chains);
    switch (rng() % 3) {
      case 0: absl::StrAppend(&s, "  jump c", c, "\n"); break;
      case 1: absl::StrAppend(&s, "  meta l4proto ", Pick(rng, kProtos), " jump c", c, "\n"); break;
      default: absl::StrAppend(&s, "  ip saddr ", Pick(rng, kNets), " counter accept\n"); break;
    }
  }
  *small_chains = chains;
  return s + " }\n}\n";
}

TEST(InlineChains, JitAgreesWithTheInterpreter) {
  constexpr int kRulesets = 300;
  constexpr int kFrames = 150;
  size_t inlined = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 3571);
    int chains = 0;
    const std::string text = RandomJumps(rng, &chains);
    absl::StatusOr<Ruleset> rs = ParseRuleset(text, "gen.nft");
    ASSERT_TRUE(rs.ok()) << rs.status() << "\n" << text;
    auto interp = Program::Compile(*rs, {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();
    CompileOptions options{.backend = Backend::kJit};
    if (seed % 2) options.disabled_passes.push_back("merge-set-runs");
    options.classify_min_rules = seed % 3 ? 1u << 30 : 4;
    auto jit = Program::Compile(*rs, options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    for (const lower::ChainPlan& c : PlanOf(**jit).chains) inlined += c.inline_at_jumps;
    EXPECT_TRUE(testing::AgreeOnRandomFrames(**interp, **jit, IrOf(*rs), rng, kFrames))
        << "seed " << seed << "\n" << text;
  }
  std::printf("%zu chains inlined\n", inlined);
  EXPECT_GT(inlined, static_cast<size_t>(kRulesets / 2));
}

TEST(InlineChains, MarksOnlySmallChainsThatDoNotJump) {
  std::string text = "table ip t {\n chain small { tcp dport 22 accept\n return\n }\n"
                     " chain jumps { jump small\n }\n chain big {\n";
  for (int i = 0; i < 9; ++i) text += "  tcp dport 1 accept\n";
  text += " }\n chain forwarding {\n  type filter hook forward priority 0;\n"
          "  jump small\n  jump jumps\n  jump big\n }\n}\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "fixed.nft");
  ASSERT_TRUE(rs.ok()) << rs.status();
  auto jit = Program::Compile(*rs, {.backend = Backend::kJit});
  ASSERT_TRUE(jit.ok()) << jit.status();
  EXPECT_TRUE(ChainPlanOf(**jit, "small").inline_at_jumps);
  EXPECT_FALSE(ChainPlanOf(**jit, "jumps").inline_at_jumps);
  EXPECT_FALSE(ChainPlanOf(**jit, "big").inline_at_jumps);
  EXPECT_FALSE(ChainPlanOf(**jit, "forwarding").inline_at_jumps);
}

}  // namespace
}  // namespace rulejit
