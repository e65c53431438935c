// The statistic, u32 and quota matches: what they lower to and what is
// refused. The kernel's verdicts on packets (numgen's count across
// packets, u32's reads past the end, quota's bytes):
// tests/kernel/ext_match_kernel_test.cc.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {


TEST(IptablesStatistic, NthIsNumgenEqualToThePacket) {
  // Packets P, P+N, ...: numgen counts 0, 1, ... (as iptables-translate).
  EXPECT_EQ(Lower("-m statistic --mode nth --every 10 --packet 1"),
            "[ numgen reg 1 = inc mod 10 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_EQ(Lower("-m statistic --mode nth ! --every 10 --packet 5"),
            "[ numgen reg 1 = inc mod 10 ]\n[ cmp neq reg 1 0x00000005 ]");
}

TEST(IptablesStatistic, RandomComparesTheDrawsLow31Bits) {
  // 0.1 * 2^31 rounded: 214748365 = 0x0ccccccd, compared in network order.
  EXPECT_EQ(Lower("-m statistic --mode random --probability 0.1"),
            "[ meta load prandom => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x7fffffff ) ^ 0x00000000 ]\n"
            "[ byteorder reg 1 = hton(reg 1, 4, 4) ]\n[ cmp lt reg 1 0xcdcccc0c ]");
  EXPECT_NE(Lower("-m statistic --mode random ! --probability 1").find("[ cmp gte reg 1 0x00000080 ]"),
            std::string::npos);
}

TEST(IptablesStatistic, RefusedAsLibxtStatisticRefusesThem) {
  EXPECT_TRUE(Refused(Lower("-m statistic"), "needs --mode"));
  EXPECT_TRUE(Refused(Lower("-m statistic --probability 1"), "needs --mode"));
  EXPECT_TRUE(Refused(Lower("-m statistic --mode random ! --probability 1.1"), "invalid probability"));
  EXPECT_TRUE(Refused(Lower("-m statistic --mode nth ! --every 5"), "needs --every and --packet"));
  EXPECT_TRUE(Refused(Lower("-m statistic --mode nth --every 5 --packet 5"), "0 <= p <= n-1"));
  EXPECT_TRUE(Refused(Lower("-m statistic --mode random --every 5 --packet 1"), "nth mode"));
  EXPECT_TRUE(Refused(Lower("-m statistic --mode nth --every 5 --packet 1 --probability 0.5"),
                      "random mode"));
}

TEST(IptablesU32, WordsMasksShiftsAndValues) {
  // The IPv4 total length: bytes 2-3 of word 0.
  EXPECT_EQ(Lower("-m u32 --u32 \"0&0xFFFF=0x100:0xFFFF\""),
            "[ payload load 4b @ network header + 0 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0xffff0000 ) ^ 0x00000000 ]\n"
            "[ range eq reg 1 0x00010000 0xffff0000 ]");
  // A shift: in host order between two byte order swaps.
  EXPECT_EQ(Lower("-m u32 --u32 \"6 >> 8 & 0xFF = 17\""),
            "[ payload load 4b @ network header + 6 => reg 1 ]\n"
            "[ byteorder reg 1 = ntoh(reg 1, 4, 4) ]\n"
            "[ bitwise reg 1 = ( reg 1 >> 0x00000008 ) ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x000000ff ) ^ 0x00000000 ]\n"
            "[ byteorder reg 1 = hton(reg 1, 4, 4) ]\n[ cmp eq reg 1 0x11000000 ]");
  // Several values: an interval set (overlaps merged); two tests.
  const std::string two = Lower("-m u32 --u32 \"0>>28=4 && 8&0xff0000>>16=6,17,1:5\"");
  EXPECT_NE(two.find("[ lookup reg 1 set __set"), std::string::npos) << two;
  EXPECT_NE(two.find("[ payload load 4b @ network header + 8 => reg 1 ]"), std::string::npos);
}

TEST(IptablesU32, RefusedOrRejectedAsLocatedErrors) {
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0>>22&0x3C@0>>16=80\""), "'@' operator"));
  EXPECT_TRUE(Refused(Lower("-m u32 ! --u32 \"0=1\""), "'! --u32' is not supported"));
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0<<32=1\""), "shift by 32"));
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0=\""), "expected number"));
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0 1\""), "expected \"=\""));
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0=1 & 2=3\""), "expected \"&&\""));
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0=0x100000000\""), "too large"));
  // XT_U32_MAXSIZE, as iptables-legacy-restore counts: 10 numbers in a
  // location, 10 values, 10 tests.
  EXPECT_FALSE(Refused(Lower("-m u32 --u32 \"0&1&1&1&1&1&1&1&1&1=1\""), "u32"));
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0&1&1&1&1&1&1&1&1&1&1=1\""), "too many operators"));
  EXPECT_TRUE(Refused(Lower("-m u32 --u32 \"0=1,2,3,4,5,6,7,8,9,10,11\""), "too many values"));
  // Octal, as strtoul base 0 reads it: 010 is 8.
  EXPECT_EQ(Lower("-m u32 --u32 \"010=010\""), Lower("-m u32 --u32 \"8=8\""));
}


TEST(IptablesQuota, NftsQuotaOfTheSameBytes) {
  EXPECT_EQ(Lower("-m quota --quota 111"), "[ quota bytes 111 consumed 0 flags 0 ]");
  EXPECT_EQ(Lower("-m quota ! --quota 111"), "[ quota bytes 111 consumed 0 flags 1 ]");
  EXPECT_TRUE(Refused(Lower("-m quota --quota 18446744073709551616"), "invalid quota"));
  EXPECT_TRUE(Refused(Lower("-m quota"), "needs an option"));
}


TEST(IptablesUnsupportedMatches, RefusedWithTheReason) {
  EXPECT_TRUE(Refused(Lower("-m connlimit --connlimit-above 2"), "conntrack table"));
  EXPECT_TRUE(Refused(Lower("-m physdev --physdev-in eth0"), "bridge ports"));
  EXPECT_TRUE(Refused(Lower("-m set --match-set s src"), "ipset 's' is not given"));
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
