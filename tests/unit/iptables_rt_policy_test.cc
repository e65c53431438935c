// ip6tables' rt match and the policy match: what they lower to, and the
// dumps iptables itself refuses (the kernel's own verdicts on packets:
// tests/kernel/kernel_diff_test.cc, Ip6tablesRoutingHeaderAndPolicy).
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

std::string Rule6(const std::string& rule, const std::string& chain = "INPUT") {
  return Lower(rule, IpVersion::kIpv6, "filter", chain);
}

TEST(IptablesRt, FieldsOfTheRoutingHeader) {
  EXPECT_EQ(Rule6("-m rt --rt-type 0 --rt-segsleft 0 -j DROP"),
            "[ exthdr load ipv6 1b @ 43 + 2 => reg 1 ]\n[ cmp eq reg 1 0x00000000 ]\n"
            "[ exthdr load ipv6 1b @ 43 + 3 => reg 1 ]\n[ cmp eq reg 1 0x00000000 ]\n"
            "[ immediate reg 0 drop ]");
  EXPECT_EQ(Rule6("-m rt ! --rt-segsleft 1:3 -j DROP"),
            "[ exthdr load ipv6 1b @ 43 + 3 => reg 1 ]\n[ range neq reg 1 0x00000001 0x00000003 ]\n"
            "[ immediate reg 0 drop ]");
  // --rt-len counts bytes: 24 is hdrlen 2.
  EXPECT_EQ(Rule6("-m rt --rt-len 24 -j DROP"),
            "[ exthdr load ipv6 1b @ 43 + 1 => reg 1 ]\n[ cmp eq reg 1 0x00000002 ]\n"
            "[ immediate reg 0 drop ]");
  // Alone, the header's presence; a length no header has, never.
  EXPECT_EQ(Rule6("-m rt -j DROP"),
            "[ exthdr load ipv6 1b @ 43 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]\n"
            "[ immediate reg 0 drop ]");
  EXPECT_EQ(Rule6("-m rt --rt-len 20 -j DROP"),
            "[ exthdr load ipv6 1b @ 43 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000002 ]\n"
            "[ immediate reg 0 drop ]");
}

TEST(IptablesRt, RefusedAsIptablesRefusesThem) {
  EXPECT_NE(Rule6("-m rt --rt-0-res -j DROP").find("`--rt-type 0' required"), std::string::npos);
  EXPECT_NE(Rule6("-m rt --rt-type 0 --rt-0-addrs ::1 -j DROP").find("unsupported rt option"),
            std::string::npos);
  EXPECT_NE(Lower("-m rt --rt-type 0 -j DROP", IpVersion::kIpv4).find("ip6tables only"),
            std::string::npos);
}

TEST(IptablesPolicy, NoIpsecOnTheModelledHost) {
  // --pol none: every packet; --pol ipsec: `meta secpath exists`, none.
  EXPECT_EQ(Lower("-m policy --dir in --pol none -j DROP"), "[ immediate reg 0 drop ]");
  EXPECT_EQ(Lower("-m policy --dir in --pol ipsec --proto esp -j ACCEPT"),
            "[ meta load secpath => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]\n"
            "[ immediate reg 0 accept ]");
}

TEST(IptablesPolicy, RefusedAsIptablesAndTheKernelRefuseThem) {
  EXPECT_NE(Lower("-m policy --dir out --pol none -j DROP").find("not valid in chain 'INPUT'"),
            std::string::npos);
  EXPECT_NE(Lower("-m policy --dir in --pol ipsec -j DROP", IpVersion::kAuto, "filter", "OUTPUT")
                .find("not valid"),
            std::string::npos);
  EXPECT_NE(Lower("-m policy --dir in --pol none --strict -j DROP").find("--strict given"),
            std::string::npos);
  EXPECT_NE(Lower("-m policy --dir in --pol none --proto esp -j DROP").find("policy given"),
            std::string::npos);
  EXPECT_NE(Lower("-m policy --dir in --pol ipsec --proto esp --next --proto ah -j DROP")
                .find("no --strict"),
            std::string::npos);
  EXPECT_NE(Lower("-m policy --dir in --pol ipsec --tunnel-src 10.0.0.1 -j DROP")
                .find("only valid in tunnel mode"),
            std::string::npos);
  EXPECT_EQ(Lower("-m policy --dir in --pol ipsec --strict --mode tunnel --tunnel-src 10.0.0.1 "
                  "--next --proto ah -j DROP")
                .rfind("[ meta load secpath", 0),
            0u);
  // Through a user chain, the hooks that reach it count (as the kernel's
  // translate_table checks them).
  EXPECT_NE(FirstError("*filter\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:pol - [0:0]\n"
                       "-A OUTPUT -j pol\n-A pol -m policy --dir in --pol none\nCOMMIT\n")
                .find("reached from the output hook"),
            std::string::npos);
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
