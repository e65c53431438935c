// The nft fib expression in the frontend: the hooks where Linux 6.18
// loads each form (measured with `nft -f` in a namespace: every form below
// at every hook; the table is that measurement), and the flag rules of
// nft_fib_init. Its bytecode is checked against nft's by the py corpus
// (inet/fib.t) and its meaning against the kernel by
// tests/kernel/fib_kernel_test.cc.
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"

namespace rulejit {
namespace {

bool Loads(const std::string& expr, const std::string& hook) {
  const bool netdev = hook == "ingress" || hook == "egress";
  const std::string text = absl::StrCat(
      "table ", netdev ? "netdev" : "inet", " t {\n chain c {\n  type filter hook ", hook,
      netdev ? " device v0" : "", " priority 0;\n  ", expr, " accept\n }\n}\n");
  return ParseRuleset(text, "fib.nft").ok();
}

TEST(NftFib, LoadsAtTheHooksTheKernelTakes) {
  const char* kHooks[] = {"prerouting", "input", "forward", "output", "postrouting",
                          "ingress", "egress"};
  struct Row {
    std::string expr;
    std::string loads;  // one letter per hook of kHooks: y / n
  };
  const Row kRows[] = {
      {"fib daddr type local", "yyyyyyy"},
      {"fib daddr . iif type local", "yyynnyn"},
      {"fib daddr . oif type local", "nnyyyny"},
      {"fib daddr oif 1", "yyynnyn"},
      {"fib saddr . iif oif 1", "yyynnyn"},
      {"fib daddr oifname \"lo\"", "yyynnyn"},
      {"fib saddr oifname \"lo\"", "yyynnyn"},
      {"fib saddr . mark oif 1", "yyynnyn"},
      {"fib daddr oif exists", "yyynnyn"},
  };
  for (const Row& row : kRows) {
    for (size_t h = 0; h < std::size(kHooks); ++h) {
      EXPECT_EQ(Loads(row.expr, kHooks[h]), row.loads[h] == 'y') << row.expr << " at " << kHooks[h];
    }
  }
}

TEST(NftFib, FlagRulesOfTheKernel) {
  for (const char* bad : {"fib saddr . daddr oif 1", "fib mark oif 1", "fib daddr . iif . oif type local",
                          "fib daddr . oif oif 1", "fib daddr nexthop"}) {
    absl::StatusOr<Ruleset> rs = ParseRuleset(
        absl::StrCat("table ip t {\n chain c {\n  type filter hook forward priority 0;\n  ", bad,
                     " accept\n }\n}\n"),
        "bad.nft");
    EXPECT_FALSE(rs.ok()) << bad;
  }
}

}  // namespace
}  // namespace rulejit
