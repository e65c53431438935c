// iptables port rules carry the kernel's "not a later fragment" test
// (frag-off & 0x1fff == 0, as xt_tcp/xt_udp check); in an ip table the
// classifier lifts them with ports read as absent on non-first fragments
// (LiftContext::ports_first_fragment_only). Generated iptables chains of
// port, address and protocol rules, classified, agree with the
// interpreter on random frames (fragments among them: RandomFrame makes
// first and later fragments), verdicts, deciding rules and counters.
#include <cstdio>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "compiler/classify/lift.h"
#include "tests/support/agree.h"

namespace rulejit {
namespace {

// Pools of tests/support/ir_gen.cc's frames.
constexpr const char* kAddrs[] = {"10.0.0.1", "10.0.0.2", "10.1.2.3", "192.168.1.9", "10.64.0.1"};
constexpr int kPrefixes[] = {8, 16, 24, 32};
constexpr int kPorts[] = {0, 22, 53, 80, 443, 1024, 8080, 65535};

template <typename T, size_t N>
T Pick(std::mt19937& rng, const T (&pool)[N]) {
  return pool[rng() % N];
}

std::string RandomRule(std::mt19937& rng) {
  std::string r = "-A FORWARD";
  if (rng() % 3 == 0) absl::StrAppend(&r, " -s ", Pick(rng, kAddrs), "/", Pick(rng, kPrefixes));
  if (rng() % 4 == 0) absl::StrAppend(&r, " ! -d ", Pick(rng, kAddrs), "/", Pick(rng, kPrefixes));
  const char* proto = rng() % 2 ? "tcp" : "udp";
  switch (rng() % 5) {
    case 0: absl::StrAppend(&r, " -p ", proto, " --dport ", Pick(rng, kPorts)); break;
    case 1: {
      const int lo = Pick(rng, kPorts);
      absl::StrAppend(&r, " -p ", proto, " --sport ", lo, ":", std::min(65535, lo + 500));
      break;
    }
    case 2: absl::StrAppend(&r, " -p ", proto, " --sport 22 --dport ", Pick(rng, kPorts)); break;
    case 3: absl::StrAppend(&r, " -p ", proto); break;
    default: if (r == "-A FORWARD") absl::StrAppend(&r, " -p icmp"); break;  // no catch-all
  }
  absl::StrAppend(&r, rng() % 2 ? " -j ACCEPT\n" : " -j DROP\n");
  return r;
}

TEST(IptablesPortsClassify, ClassifiedChainsAgreeWithTheInterpreter) {
  constexpr int kRulesets = 60;
  constexpr int kFrames = 400;
  size_t classified = 0, lifted = 0, rules = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 2749);
    std::string text = "*filter\n:FORWARD ACCEPT [0:0]\n";
    for (int i = 0, n = 20 + static_cast<int>(rng() % 60); i < n; ++i) text += RandomRule(rng);
    text += "COMMIT\n";
    absl::StatusOr<ir::Ruleset> rs = ParseRuleset(text, "gen.ipt");
    ASSERT_TRUE(rs.ok()) << rs.status() << "\n" << text;
    auto interp = Program::Compile(*rs, {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();
    CompileOptions options{.backend = Backend::kJit};
    options.classify_min_rules = 1;
    auto jit = Program::Compile(*rs, options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    classified += (*jit)->classified_rules();
    const ir::Table& table = rs->tables[0];
    const classify::LiftContext context = classify::ContextForChain(table, table.chains[0]);
    for (const ir::Rule& rule : table.chains[0].rules) {
      lifted += classify::LiftRule(rule, context).ok();
      rules += 1;
    }
    EXPECT_TRUE(testing::AgreeOnRandomFrames(**interp, **jit, *rs, rng, kFrames))
        << "seed " << seed << "\n" << text;
  }
  std::printf("%zu of %zu rules lift, %zu classified (the rest shadowed)\n", lifted, rules,
              classified);
  // All but `! -d` rules (two intervals) lift, port rules included.
  EXPECT_GT(lifted * 10, rules * 6);
  EXPECT_GT(classified, static_cast<size_t>(kRulesets * 5));
}

}  // namespace
}  // namespace rulejit
