// Differential test: every compiled tier (asmjit, LLVM) must agree with the
// reference interpreter packet for packet (verdict, deciding rule, reject
// type and code, mark, ct mark, rule counters, and the log statements each
// packet ran, in order) over seeded random rulesets and
// frames, truncated and malformed frames included. On a mismatch it prints
// the seed, the tier, the frame and the IR so the case can be replayed.
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api/internal.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tests/support/env.h"
#include "tests/support/ir_gen.h"

namespace rulejit {
namespace {

std::string Hex(const std::vector<uint8_t>& f) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : f) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string RefString(const RuleRef& r) {
  return std::to_string(r.table) + "/" + std::to_string(r.chain) + "/" + std::to_string(r.rule);
}

// The log statements one packet ran, as a tier reported them.
std::string LogText(const LogEvent& e) {
  return std::string(e.prefix) + RefString(e.rule) + " level " +
         std::to_string(e.level.value_or(99)) + " mark " + std::to_string(e.mark) + " len " +
         std::to_string(e.packet->len) + ";";
}

struct Stats {
  int compared = 0, drops = 0, by_rule = 0, rejects = 0, fused = 0, logs = 0;
  size_t classified = 0;
};

// One seeded ruleset, `frames` frames: every compiled tier against the
// interpreter.
void CompareSeed(int seed, const testing::IrGenOptions& gen, int frames, Stats& stats) {
  std::mt19937 rng(seed);
  ir::Ruleset rs = testing::RandomIrRuleset(rng, gen);
  auto interp = Program::Compile(RulesetOf(rs), {Backend::kInterp});
  ASSERT_TRUE(interp.ok()) << "seed " << seed << ": " << interp.status()
                           << "\n" << ir::PrintRuleset(rs);
  // Every liftable run, however short, through a decision structure, so
  // the classifier path is compared too (odd seeds), or all linear. The
  // LLVM tier at its default level (O2): ~50 ms a ruleset.
  std::vector<std::unique_ptr<const Program>> tiers;
  for (Backend backend : {Backend::kJit, Backend::kLlvm}) {
    CompileOptions options{.backend = backend};
    options.classify_min_rules = seed % 2 ? 1 : 1u << 30;
    auto compiled = Program::Compile(RulesetOf(rs), options);
    ASSERT_TRUE(compiled.ok()) << "seed " << seed << " " << BackendName(backend) << ": "
                               << compiled.status() << "\n" << ir::PrintRuleset(rs);
    ASSERT_EQ((*compiled)->backend(), backend);
    tiers.push_back(*std::move(compiled));
  }
  stats.classified += tiers[0]->classified_rules();
  for (const auto& table : IrOf(tiers[0]->ruleset()).tables) {
    for (const auto& chain : table.chains) {
      for (const auto& rule : chain.rules) {
        for (const auto& node : rule.exprs) stats.fused += std::holds_alternative<ir::FusedCmp>(node.expr);
      }
    }
  }
  RunState interp_state;
  std::vector<RunState> tier_states(tiers.size());
  std::string interp_logs;
  std::vector<std::string> tier_logs(tiers.size());
  interp_state.set_log_sink([&](const LogEvent& e) { interp_logs += LogText(e); });
  for (size_t t = 0; t < tiers.size(); ++t) {
    tier_states[t].set_log_sink([&, t](const LogEvent& e) { tier_logs[t] += LogText(e); });
  }
  for (int i = 0; i < frames; ++i) {
    std::vector<uint8_t> frame = testing::RandomFrame(rng);
    PacketMeta meta = testing::RandomMeta(rng);
    interp_logs.clear();
    Result a = (*interp)->Classify(Hook::kForward, frame.data(), frame.size(), meta,
                                   &interp_state);
    stats.logs += !interp_logs.empty();
    ++stats.compared;
    stats.drops += a.verdict == Verdict::kDrop;
    stats.by_rule += a.decided_by.rule >= 0;
    stats.rejects += a.rejected;
    for (size_t t = 0; t < tiers.size(); ++t) {
      tier_logs[t].clear();
      Result b = tiers[t]->Classify(Hook::kForward, frame.data(), frame.size(), meta,
                                    &tier_states[t]);
      ASSERT_EQ(interp_logs, tier_logs[t]) << "seed " << seed << " frame " << i << " "
                                           << BackendName(tiers[t]->backend()) << "\n"
                                           << ir::PrintRuleset(rs);
      bool same = a.verdict == b.verdict && a.rejected == b.rejected && a.mark == b.mark &&
                  a.ct_mark == b.ct_mark && RefString(a.decided_by) == RefString(b.decided_by) &&
                  (!a.rejected ||
                   (a.reject_type == b.reject_type && a.reject_code == b.reject_code));
      ASSERT_TRUE(same) << "seed " << seed << " frame " << i << " " << Hex(frame)
                        << "\ninterp: verdict " << int(a.verdict) << " rule "
                        << RefString(a.decided_by) << " mark " << a.mark << " ct mark "
                        << a.ct_mark << "\n" << BackendName(tiers[t]->backend())
                        << ": verdict " << int(b.verdict) << " rule " << RefString(b.decided_by)
                        << " mark " << b.mark << " ct mark " << b.ct_mark << "\n"
                        << ir::PrintRuleset(rs);
    }
  }
  // Counters agree rule by rule.
  for (size_t t = 0; t < rs.tables.size(); ++t) {
    for (size_t c = 0; c < rs.tables[t].chains.size(); ++c) {
      for (size_t r = 0; r < rs.tables[t].chains[c].rules.size(); ++r) {
        RuleRef ref{static_cast<int>(t), static_cast<int>(c), static_cast<int>(r)};
        ir::Counter x = interp_state.CounterOf(ref);
        for (size_t k = 0; k < tiers.size(); ++k) {
          ir::Counter y = tier_states[k].CounterOf(ref);
          const char* tier = BackendName(tiers[k]->backend());
          ASSERT_EQ(x.packets, y.packets) << "seed " << seed << " " << tier << " rule " << RefString(ref);
          ASSERT_EQ(x.bytes, y.bytes) << "seed " << seed << " " << tier << " rule " << RefString(ref);
        }
      }
    }
  }
}

// A longer campaign: RULEJIT_DIFF_RULESETS=5000 [RULEJIT_DIFF_SEED=N].
TEST(CompiledTiersVsInterp, RandomRulesetsAndFrames) {
  const int kRulesets = testing::EnvInt("RULEJIT_DIFF_RULESETS", 300);
  const int first = testing::EnvInt("RULEJIT_DIFF_SEED", 1);
  constexpr int kFrames = 200;
  Stats stats;
  for (int seed = first; seed < first + kRulesets; ++seed) {
    CompareSeed(seed, {}, kFrames, stats);
    if (::testing::Test::HasFatalFailure()) return;
  }
  const int compared = stats.compared, drops = stats.drops, by_rule = stats.by_rule,
            rejects = stats.rejects, fused = stats.fused, logs = stats.logs;
  const size_t classified = stats.classified;
  EXPECT_EQ(compared, kRulesets * kFrames);
  // The generator must exercise both verdicts and real rule decisions, or
  // agreement would mean little.
  std::printf("compared %d packets: %d drops, %d decided by a rule, %d rejects, %d logged; "
              "%d fused compares in the jit's ruleset\n",
              compared, drops, by_rule, rejects, logs, fused);
  EXPECT_GT(fused, kRulesets);  // the fold pass ran on the compiled tier
  std::printf("%zu rules answered by classifiers\n", classified);
  EXPECT_GT(classified, static_cast<size_t>(kRulesets));
  EXPECT_GT(drops, compared / 10);
  EXPECT_LT(drops, compared * 9 / 10);
  EXPECT_GT(by_rule, compared / 5);
  EXPECT_GT(rejects, 0);
  EXPECT_GT(logs, compared / 50);
}

// Chains longer than the llvm tier's rules per generated function, so a
// chain runs through several functions joined by tail calls.
TEST(CompiledTiersVsInterp, LongChains) {
  Stats stats;
  for (int seed = 1001; seed <= 1012; ++seed) {
    CompareSeed(seed, {.regular_chains = 2, .max_rules_per_chain = 150}, 300, stats);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(stats.by_rule, stats.compared / 10);
}

}  // namespace
}  // namespace rulejit
