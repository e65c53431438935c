// remove-shadowed-rules keeps every observable result: generated nft
// chains where later rules are narrowed copies of earlier chain-ending
// rules (shadowed by one rule) or lie across two of them (shadowed by
// their union), run by the interpreter (as written) and the compiled tiers
// (pass on), agree on verdict, deciding rule and every counter; and the
// pass does empty rules, exactly the provable ones in the fixed cases.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/ir_gen.h"
#include "tests/support/agree.h"
#include "tests/support/results.h"

namespace rulejit {
namespace {

using testing::SameResult;

// A rule as fields; prefix 0 / proto empty / port range 0-65535 = absent.
struct GenRule {
  uint32_t saddr = 0;
  int slen = 0;
  bool sneg = false;
  std::string proto;  // "", "tcp", "udp"
  int dlo = 0, dhi = 65535;
  std::string verdict;  // "accept", "drop", "" (counter only)
};

// Pools matching tests/support/ir_gen.cc's frames, so rules get hit.
constexpr uint32_t kAddrs[] = {0x0a000001, 0x0a000002, 0x0a010203, 0xc0a80109, 0x0a400001};
constexpr int kPrefixes[] = {8, 10, 16, 24, 32};
constexpr int kPorts[] = {0, 22, 53, 80, 443, 1024, 8080, 65535};

std::string Ip(uint32_t a) {
  return absl::StrCat(a >> 24, ".", (a >> 16) & 255, ".", (a >> 8) & 255, ".", a & 255);
}
uint32_t Mask(int len) { return len == 0 ? 0 : ~uint32_t{0} << (32 - len); }

std::string Text(const GenRule& r) {
  std::string s;
  if (r.slen > 0) {
    absl::StrAppend(&s, "ip saddr ", r.sneg ? "!= " : "", Ip(r.saddr & Mask(r.slen)), "/",
                    r.slen, " ");
  }
  if (!r.proto.empty()) {
    if (r.dlo == 0 && r.dhi == 65535) {
      absl::StrAppend(&s, "meta l4proto ", r.proto, " ");
    } else {
      absl::StrAppend(&s, r.proto, " dport ", r.dlo, "-", r.dhi, " ");
    }
  }
  absl::StrAppend(&s, "counter ", r.verdict);
  return s;
}

template <typename T, size_t N>
T Pick(std::mt19937& rng, const T (&pool)[N]) {
  return pool[rng() % N];
}

GenRule RandomRule(std::mt19937& rng) {
  GenRule r;
  if (rng() % 4) {
    r.saddr = Pick(rng, kAddrs);
    r.slen = Pick(rng, kPrefixes);
    r.sneg = rng() % 5 == 0;
  }
  if (rng() % 3) {
    r.proto = rng() % 2 ? "tcp" : "udp";
    if (rng() % 2) {
      r.dlo = Pick(rng, kPorts);
      r.dhi = r.dlo + static_cast<int>(rng() % 2000);
      if (r.dhi > 65535) r.dhi = 65535;
    }
  }
  r.verdict = rng() % 5 == 0 ? "" : (rng() % 2 ? "accept" : "drop");
  return r;
}

// A rule inside `outer`: a longer prefix of the same network, a narrower
// port range, a protocol where there was none.
GenRule Narrowed(const GenRule& outer, std::mt19937& rng) {
  GenRule r = outer;
  if (r.slen > 0 && !r.sneg && r.slen < 32) r.slen += 1 + rng() % (32 - r.slen);
  if (r.proto.empty()) r.proto = rng() % 2 ? "tcp" : "udp";
  const int span = r.dhi - r.dlo;
  r.dlo += span ? static_cast<int>(rng() % (span + 1)) : 0;
  r.dhi = r.dlo + static_cast<int>(rng() % (r.dhi - r.dlo + 1));
  r.verdict = rng() % 2 ? "accept" : "drop";
  return r;
}

std::string Chain(const std::vector<GenRule>& rules) {
  std::string s = "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy accept;\n";
  for (const GenRule& r : rules) absl::StrAppend(&s, "  ", Text(r), "\n");
  return s + " }\n}\n";
}

std::vector<GenRule> RandomChain(std::mt19937& rng) {
  std::vector<GenRule> rules;
  const int n = 4 + static_cast<int>(rng() % 16);
  for (int i = 0; i < n; ++i) {
    std::vector<size_t> terminal;
    for (size_t j = 0; j < rules.size(); ++j) {
      if (!rules[j].verdict.empty()) terminal.push_back(j);
    }
    const int kind = static_cast<int>(rng() % 3);
    if (kind == 0 && !terminal.empty()) {
      rules.push_back(Narrowed(rules[terminal[rng() % terminal.size()]], rng));
    } else if (kind == 1) {  // two halves of a port range, then a rule across them
      GenRule lo = RandomRule(rng);
      lo.proto = "tcp";
      lo.dlo = Pick(rng, kPorts) % 30000;
      lo.dhi = lo.dlo + 100;
      if (lo.verdict.empty()) lo.verdict = "drop";
      GenRule hi = lo;
      hi.dlo = lo.dhi + 1;
      hi.dhi = hi.dlo + 100;
      hi.verdict = rng() % 2 ? "accept" : "drop";
      GenRule across = lo;
      across.dlo = lo.dlo + 50;
      across.dhi = hi.dlo + 50;
      rules.insert(rules.end(), {lo, hi, across});
    } else {
      rules.push_back(RandomRule(rng));
    }
  }
  return rules;
}

TEST(ShadowedRules, CompiledTiersAgreeWithTheInterpreter) {
  constexpr int kRulesets = 200;
  constexpr int kFrames = 200;
  size_t emptied = 0;
  for (int seed = 1; seed <= kRulesets; ++seed) {
    std::mt19937 rng(seed * 7919);
    const std::string text = Chain(RandomChain(rng));
    absl::StatusOr<Ruleset> rs = ParseRuleset(text, "gen.nft");
    ASSERT_TRUE(rs.ok()) << rs.status() << "\n" << text;
    auto interp = Program::Compile(*rs, {.backend = Backend::kInterp});
    ASSERT_TRUE(interp.ok()) << interp.status();
    CompileOptions options{.backend = seed % 4 == 0 ? Backend::kLlvm : Backend::kJit};
    options.disabled_passes.push_back("drop-repeated-rules");  // this pass alone
    options.classify_min_rules = seed % 2 ? 1 : 1u << 30;
    auto compiled = Program::Compile(*rs, options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    emptied += testing::EmptyRules(IrOf((*compiled)->ruleset()));
    EXPECT_TRUE(testing::AgreeOnRandomFrames(**interp, **compiled, IrOf(*rs), rng, kFrames))
        << "seed " << seed << "\n" << text;
  }
  std::printf("%zu shadowed rules emptied\n", emptied);
  EXPECT_GT(emptied, static_cast<size_t>(kRulesets));  // the pass did run
}

// Which rules of a fixed chain are emptied, with the pass on and off.
std::vector<int> EmptiedIndexes(const std::string& rules, bool pass_on) {
  const std::string text =
      "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy accept;\n" +
      rules + " }\n}\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "fixed.nft");
  EXPECT_TRUE(rs.ok()) << rs.status();
  if (!rs.ok()) return {};
  CompileOptions options{.backend = Backend::kJit};
  if (!pass_on) options.disabled_passes.push_back("remove-shadowed-rules");
  auto program = Program::Compile(*rs, options);
  EXPECT_TRUE(program.ok()) << program.status();
  std::vector<int> out;
  const auto& chain = IrOf((*program)->ruleset()).tables[0].chains[0].rules;
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i].exprs.empty()) out.push_back(static_cast<int>(i));
  }
  return out;
}

TEST(ShadowedRules, EmptiesExactlyTheProvableRules) {
  const std::string rules =
      "  ip saddr 10.0.0.0/8 drop\n"                        // 0
      "  ip saddr 10.1.0.0/16 tcp dport 22 accept\n"        // 1 inside 0
      "  tcp dport 100-199 accept\n"                        // 2
      "  tcp dport 200-299 drop\n"                          // 3
      "  tcp dport 150-250 counter accept\n"                // 4 inside 2 and 3
      "  tcp dport 150-350 accept\n"                        // 5 partly outside
      "  udp dport 53 counter\n"                            // 6 no verdict: covers nothing
      "  udp dport 53 drop\n"                               // 7 kept
      "  meta mark set 1\n"                                 // 8 covers start over
      "  ip saddr 10.2.0.0/16 drop\n"                       // 9 kept (after the reset)
      "  ip saddr 1.2.3.4 ip saddr 5.6.7.8 drop\n";         // 10 unsatisfiable
  EXPECT_EQ(EmptiedIndexes(rules, true), (std::vector<int>{1, 4, 10}));
  EXPECT_EQ(EmptiedIndexes(rules, false), (std::vector<int>{}));
}

TEST(ShadowedRules, AbsentFieldsAreNotCovered) {
  // Rule 0 needs a transport header; a non-first fragment or a truncated
  // frame without one still reaches rule 1, which must stay.
  const std::string rules =
      "  meta l4proto tcp tcp dport 0-65535 drop\n"
      "  meta l4proto tcp accept\n";
  EXPECT_EQ(EmptiedIndexes(rules, true), (std::vector<int>{}));
}

}  // namespace
}  // namespace rulejit
