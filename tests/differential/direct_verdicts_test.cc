// A hook whose one base chain is a classified run of bare accepts and drops
// answers bursts from the decision structure and a verdict table, without
// running chain code (Program::answers_from_table). That path must give
// exactly what the compiled chain gives one frame at a time, and what the
// reference interpreter gives: verdict, deciding rule, marks, counters.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "frontends/classbench/classbench.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/ir_gen.h"
#include "tests/support/results.h"

namespace rulejit {
namespace {

using testing::SameResult;

// Field values from small pools, so that rules overlap and packets hit them.
struct Pools {
  uint32_t Address(std::mt19937& rng) const { return 0x0a000000u | (rng() % 4) << 16 | (rng() % 4) << 8 | rng() % 4; }
  uint16_t Port(std::mt19937& rng) const { return static_cast<uint16_t>(rng() % 3 == 0 ? rng() % 65536 : 20 + rng() % 8); }
};

std::string Dotted(uint32_t a) {
  return absl::StrCat(a >> 24, ".", (a >> 16) & 255, ".", (a >> 8) & 255, ".", a & 255);
}

// Byte-aligned prefixes (/8, /16, /24) load only their bytes (the lifter's
// partial address loads); the others load the whole address and mask it.
std::string Prefix(uint32_t address, uint32_t len) {
  const uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  return absl::StrCat(Dotted(address & mask), "/", len);
}

// An nft ruleset: forward rules over addresses, protocol and ports, half
// of them with a counter.
std::string RandomAcl(std::mt19937& rng, const Pools& pools, int rules) {
  std::string text = absl::StrCat(
      "table ip filter {\n  chain forward {\n    type filter hook forward priority 0; policy ",
      rng() % 2 ? "drop" : "accept", ";\n");
  for (int i = 0; i < rules; ++i) {
    std::string rule = "   ";
    if (rng() % 3) absl::StrAppend(&rule, " ip saddr ", Prefix(pools.Address(rng), 8 + rng() % 25));
    if (rng() % 3) absl::StrAppend(&rule, " ip daddr ", Prefix(pools.Address(rng), 8 + rng() % 25));
    const int proto = rng() % 4;
    if (proto == 1 || proto == 2) {
      const char* name = proto == 1 ? "tcp" : "udp";
      absl::StrAppend(&rule, " meta l4proto ", name);
      for (const char* port : {" sport ", " dport "}) {
        if (rng() % 2 == 0) continue;
        const uint16_t lo = pools.Port(rng);
        absl::StrAppend(&rule, " ", name, port, lo);
        if (rng() % 2) absl::StrAppend(&rule, "-", std::min<uint32_t>(65535, lo + 1 + rng() % 100));
      }
    } else if (proto == 3) {
      absl::StrAppend(&rule, " meta l4proto icmp");
    }
    if (rng() % 2) absl::StrAppend(&rule, " counter");
    absl::StrAppend(&text, rule, rng() % 2 ? " accept\n" : " drop\n");
  }
  return text + "  }\n}\n";
}

TEST(DirectVerdicts, BurstEqualsSingleAndInterpreter) {
  constexpr int kRulesets = 40;
  constexpr int kFrames = 300;
  const Pools pools;
  int compared = 0, by_rule = 0;
  uint64_t counted = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 104729);
    const std::string text = RandomAcl(rng, pools, 20 + rng() % 300);
    absl::StatusOr<Ruleset> rs = ParseRuleset(text, "acl.nft");
    ASSERT_TRUE(rs.ok()) << rs.status();
    CompileOptions options{.backend = Backend::kJit};
    options.classify_min_rules = 1;
    auto jit = Program::Compile(*rs, options);
    ASSERT_TRUE(jit.ok()) << jit.status();
    ASSERT_TRUE((*jit)->answers_from_table(Hook::kForward)) << text;
    auto interp = Program::Compile(*rs, {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();

    std::vector<std::vector<uint8_t>> frames;
    for (int i = 0; i < kFrames; ++i) {
      if (i % 4 == 0) {  // anything: other protocols, IPv6, truncated
        frames.push_back(testing::RandomFrame(rng));
        continue;
      }
      const uint8_t protos[] = {6, 17, 1, 47};
      frames.push_back(frontends::TraceFrame({pools.Address(rng), pools.Address(rng),
                                              pools.Port(rng), pools.Port(rng),
                                              protos[rng() % 4], 0}));
    }
    std::vector<const uint8_t*> ptrs;
    std::vector<uint32_t> lens;
    for (const auto& f : frames) {
      ptrs.push_back(f.data());
      lens.push_back(static_cast<uint32_t>(f.size()));
    }
    const PacketMeta meta = testing::RandomMeta(rng);
    std::vector<Result> burst(frames.size());
    RunState burst_state, single_state, interp_state;
    (*jit)->ClassifyBurst(Hook::kForward, ptrs.data(), lens.data(), ptrs.size(), meta,
                          burst.data(), &burst_state);
    for (size_t i = 0; i < frames.size(); ++i) {
      const Result one = (*jit)->Classify(Hook::kForward, ptrs[i], lens[i], meta, &single_state);
      const Result ref =
          (*interp)->Classify(Hook::kForward, ptrs[i], lens[i], meta, &interp_state);
      ASSERT_TRUE(SameResult(one, burst[i])) << "seed " << seed << " frame " << i << "\n" << text;
      ASSERT_TRUE(SameResult(ref, burst[i])) << "seed " << seed << " frame " << i << "\n" << text;
      ++compared;
      by_rule += burst[i].decided_by.rule >= 0;
    }
    const ir::Chain& forward = IrOf((*jit)->ruleset()).tables[0].chains[0];
    for (size_t r = 0; r < forward.rules.size(); ++r) {
      const RuleRef ref{0, 0, static_cast<int>(r)};
      ASSERT_EQ(burst_state.CounterOf(ref).packets, single_state.CounterOf(ref).packets);
      ASSERT_EQ(burst_state.CounterOf(ref).bytes, single_state.CounterOf(ref).bytes);
      ASSERT_EQ(burst_state.CounterOf(ref).packets, interp_state.CounterOf(ref).packets);
      counted += burst_state.CounterOf(ref).packets;
    }
  }
  EXPECT_GT(counted, 0u);
  EXPECT_EQ(compared, kRulesets * kFrames);
  EXPECT_GT(by_rule, compared / 4);  // rules decide, not only policies
}

// A log (or any statement but a counter) in one rule: the chain's code runs.
TEST(DirectVerdicts, NotTakenWhenARuleHasAStatement) {
  absl::StatusOr<Ruleset> rs = ParseRuleset(
      "*filter\n:FORWARD DROP [0:0]\n-A FORWARD -s 10.0.0.0/8 -j ACCEPT\n"
      "-A FORWARD -d 10.1.0.0/16 -j LOG\n-A FORWARD -p tcp -j DROP\nCOMMIT\n",
      "acl.ipt");
  ASSERT_TRUE(rs.ok()) << rs.status();
  CompileOptions options{.backend = Backend::kJit};
  options.classify_min_rules = 1;
  auto jit = Program::Compile(*rs, options);
  ASSERT_TRUE(jit.ok()) << jit.status();
  EXPECT_FALSE((*jit)->answers_from_table(Hook::kForward));
  EXPECT_FALSE((*jit)->answers_from_table(Hook::kInput));  // no chain there
}

}  // namespace
}  // namespace rulejit
