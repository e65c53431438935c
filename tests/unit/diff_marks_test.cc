// Tests of `diff` at one hook on rulesets whose rules set a mark that later
// rules read (issue 24: meta mark set, ct mark set, MARK and CONNMARK):
// the walk carries the marks (compiler/analysis/mark_now.h), so each pair
// that differs only in a mark write gets an exact answer, every witness
// replayed through both rulesets by the reference interpreter
// (CheckWitnesses in diff_test_util.h), and equal pairs are "equivalent".
// Also the preimage of mark sets under a mask-and-xor, by brute force.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "compiler/analysis/mark_now.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::analysis::diff_test {
namespace {

using ::testing::HasSubstr;

std::string Described(const DiffResult& d) {
  std::string out;
  for (const DiffRegion& r : d.regions) {
    absl::StrAppend(&out, DescribeCube(r.cube, d.space), " | ",
                    DescribePoint(r.witness, d.space), "\n");
  }
  return out;
}

TEST(DiffMarksTest, ConstantMarkReadByALaterRule) {
  // Only the value written differs: udp dport 1000 is dropped by OLD (its
  // mark is 7 whatever it arrived with), accepted by NEW.
  const char* kRead = "    meta mark 7 drop\n";
  DiffResult d = Diff(Nft(InputChain(absl::StrCat("    udp dport 1000 meta mark set 7\n", kRead))),
                      Nft(InputChain(absl::StrCat("    udp dport 1000 meta mark set 8\n", kRead))));
  // udp dport 1000, whatever mark it arrived with: OLD drops, NEW accepts.
  ASSERT_FALSE(d.regions.empty());
  for (const DiffRegion& r : d.regions) {
    EXPECT_EQ(r.old_side.verdict, ir::VerdictCode::kDrop);
    EXPECT_EQ(r.new_side.verdict, ir::VerdictCode::kAccept);
    EXPECT_THAT(DescribeCube(r.cube, d.space), HasSubstr("1000"));
    EXPECT_THAT(DescribeCube(r.cube, d.space), ::testing::Not(HasSubstr("mark")));
  }
}

TEST(DiffMarksTest, MarkSetThenReadIsTheSameAsTheMatch) {
  // Setting mark 7 on udp dport 1000 and dropping mark 7 drops udp dport
  // 1000 and whatever arrives with mark 7.
  DiffResult same = Diff(
      Nft(InputChain("    udp dport 1000 meta mark set 7\n    meta mark 7 drop\n")),
      Nft(InputChain("    udp dport 1000 drop\n    meta mark 7 drop\n")));
  EXPECT_TRUE(same.regions.empty()) << Described(same);
  // Without the arriving mark 7 rule: those packets differ.
  DiffResult d = Diff(
      Nft(InputChain("    udp dport 1000 meta mark set 7\n    meta mark 7 drop\n")),
      Nft(InputChain("    udp dport 1000 drop\n")));
  ASSERT_FALSE(d.regions.empty());
  for (const DiffRegion& r : d.regions) {
    EXPECT_THAT(DescribeCube(r.cube, d.space), HasSubstr("meta mark 0x7"));
  }
}

TEST(DiffMarksTest, MarkCarriedThroughJumpsAndReturns) {
  // The mark set in a jumped-to chain is seen after the return, and in the
  // next base chain.
  const std::string extra = "  chain sub {\n    tcp dport 22 meta mark set 0x10\n  }\n";
  const std::string next =
      "  chain later {\n    type filter hook input priority 10; policy accept;\n"
      "    meta mark 0x10 drop\n  }\n";
  auto ruleset = [&](const char* sub_mark) {
    return Nft(absl::StrCat("table ip filter {\n  chain sub {\n    tcp dport 22 meta mark set ",
                            sub_mark,
                            "\n  }\n  chain input {\n"
                            "    type filter hook input priority 0; policy accept;\n"
                            "    jump sub\n  }\n",
                            next, "}\n"));
  };
  DiffResult same = Diff(ruleset("0x10"), ruleset("0x10"));
  EXPECT_TRUE(same.regions.empty());
  DiffResult d = Diff(ruleset("0x10"), ruleset("0x20"));
  ASSERT_FALSE(d.regions.empty());
  EXPECT_THAT(Described(d), HasSubstr("22"));
}

TEST(DiffMarksTest, XmarkAndOrThroughMasks) {
  // kube-proxy's `mark set mark or 0x4000` then a test of that bit: every
  // packet that went through the or has it.
  DiffResult same = Diff(
      Nft(InputChain("    tcp dport 80 meta mark set mark or 0x4000\n"
                     "    meta mark and 0x4000 == 0x4000 drop\n")),
      Nft(InputChain("    tcp dport 80 drop\n    meta mark and 0x4000 == 0x4000 drop\n")));
  EXPECT_TRUE(same.regions.empty()) << Described(same);
  // An xor flips the bit: packets arriving with it set now pass.
  DiffResult d = Diff(
      Nft(InputChain("    tcp dport 80 meta mark set mark xor 0x4000\n"
                     "    meta mark and 0x4000 == 0x4000 drop\n")),
      Nft(InputChain("    meta mark and 0x4000 == 0x4000 drop\n")));
  ASSERT_FALSE(d.regions.empty());
  EXPECT_THAT(Described(d), HasSubstr("80"));
}

TEST(DiffMarksTest, ConnmarkSaveAndRestore) {
  // iptables: MARK then CONNMARK --save-mark, and a connmark test: a
  // packet with a conntrack entry gets ct mark 2.
  auto ipt = [](const char* value) {
    return Ipt(absl::StrCat("*filter\n:INPUT ACCEPT [0:0]\n"
                            "-A INPUT -p udp --dport 53 -j MARK --set-xmark ",
                            value,
                            "/0xffffffff\n"
                            "-A INPUT -j CONNMARK --save-mark --nfmask 0xffffffff --ctmask "
                            "0xffffffff\n"
                            "-A INPUT -m connmark --mark 0x2 -j DROP\nCOMMIT\n"));
  };
  DiffResult same = Diff(ipt("0x2"), ipt("0x2"));
  EXPECT_TRUE(same.regions.empty());
  DiffResult d = Diff(ipt("0x2"), ipt("0x3"));
  ASSERT_FALSE(d.regions.empty());
  EXPECT_THAT(Described(d), HasSubstr("53"));
  // Packets without an entry keep no ct mark: never dropped by either.
  EXPECT_THAT(Described(d), ::testing::Not(HasSubstr("ct state invalid")));
}

TEST(DiffMarksTest, CtMarkSetFromAConstantIsRead) {
  DiffResult d = Diff(
      Nft(InputChain("    tcp dport 443 ct mark set 5\n    ct mark 5 drop\n")),
      Nft(InputChain("    tcp dport 443 ct mark set 6\n    ct mark 5 drop\n")));
  ASSERT_FALSE(d.regions.empty());
  for (const DiffRegion& r : d.regions) {
    EXPECT_EQ(r.old_side.verdict, ir::VerdictCode::kDrop);
  }
}

TEST(DiffMarksTest, ManyDistinctMarksStopWithAReason) {
  // Each distinct mark walks the rest of the chain on its own: 1000 rules
  // each setting another mark would take ~500,000 rule walks; the walk
  // stops at its budget and says so, rather than answering slowly.
  std::string rules;
  for (int i = 0; i < 1000; ++i) {
    absl::StrAppend(&rules, "    ip saddr 10.", i / 250, ".", i % 250, ".1 meta mark set ",
                    i + 1, "\n");
  }
  absl::StrAppend(&rules, "    meta mark 5 drop\n");
  const ir::Ruleset rs = Nft(InputChain(rules));
  DiffResult d = DiffRulesets(rs, rs, {});
  ASSERT_FALSE(d.exact());
  EXPECT_THAT(d.old_inexact[0].reason, HasSubstr("too many marks"));
}

TEST(DiffMarksTest, PreimageMatchesBruteForce) {
  // Masks whose zero bits are low (few intervals), against every mark below 2^10.
  const std::vector<MarkNow> fs = {{Dim::kMark, 0xfffff3f0, 0x005}, {Dim::kMark, 0xfffffeaa, 0x100},
                                   {Dim::kMark, 0, 0x42},      {Dim::kMark, 0xffffffff, 0x3}};
  const std::vector<IntervalSet> sets = {IntervalSet::Range(3, 700), IntervalSet::Single(0x42),
                                         IntervalSet::Range(0x100, 0x1ff).Union(
                                             IntervalSet::Range(0x2f0, 0x2ff))};
  for (const MarkNow& f : fs) {
    for (const IntervalSet& s : sets) {
      std::optional<IntervalSet> pre = Preimage(s, f, 1 << 20);
      ASSERT_TRUE(pre.has_value());
      for (uint32_t x = 0; x < 0x400; ++x) {
        EXPECT_EQ(pre->Contains(x), s.Contains((x & f.mask) ^ f.xor_))
            << std::hex << x << " mask " << f.mask << " xor " << f.xor_;
      }
    }
  }
}

}  // namespace
}  // namespace rulejit::analysis::diff_test
