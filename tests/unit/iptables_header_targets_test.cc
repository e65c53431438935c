// DSCP, TOS, TTL, HL, CLASSIFY and NFQUEUE: what they lower to, and what
// iptables and the kernel refuse. (The bytes they write are compared with
// the kernel's in tests/kernel/path_kernel_test.cc, *_header_targets.)
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

std::string Mangle(const std::string& rule, IpVersion v = IpVersion::kIpv4) {
  return Lower(rule, v, "mangle", "FORWARD");
}

TEST(IptablesHeaderTargets, WritesAsNftWritesTheField) {
  // ip dscp set 0x2e (ECN kept, the header checksum fixed).
  EXPECT_EQ(Mangle("-j DSCP --set-dscp 0x2e"),
            "[ payload load 2b @ network header + 0 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x000003ff ) ^ 0x0000b800 ]\n"
            "[ payload write reg 1 => 2b @ network header + 0 csum_type 1 csum_off 10 csum_flags 0x0 ]");
  // IPv6: the traffic class straddles bytes 0 and 1; no checksum.
  EXPECT_EQ(Mangle("-j DSCP --set-dscp-class EF", IpVersion::kIpv6),
            "[ payload load 2b @ network header + 0 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00003ff0 ) ^ 0x0000800b ]\n"
            "[ payload write reg 1 => 2b @ network header + 0 csum_type 0 csum_off 0 csum_flags 0x0 ]");
  // --and-tos 0x0f is 0x00/0xf0: keep the low nibble.
  EXPECT_EQ(Mangle("-j TOS --and-tos 0x0f"),
            "[ payload load 2b @ network header + 0 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000fff ) ^ 0x00000000 ]\n"
            "[ payload write reg 1 => 2b @ network header + 0 csum_type 1 csum_off 10 csum_flags 0x0 ]");
  EXPECT_EQ(Mangle("-j TTL --ttl-set 64"),
            "[ immediate reg 1 0x00000040 ]\n"
            "[ payload write reg 1 => 1b @ network header + 8 csum_type 1 csum_off 10 csum_flags 0x0 ]");
  // inc/dec: a 256-entry map from the old value.
  EXPECT_EQ(Mangle("-j HL --hl-dec 1", IpVersion::kIpv6),
            "[ payload load 1b @ network header + 7 => reg 1 ]\n"
            "[ lookup reg 1 set __set%d dreg 1 ]\n"
            "[ payload write reg 1 => 1b @ network header + 7 csum_type 0 csum_off 0 csum_flags 0x0 ]");
  EXPECT_EQ(Lower("-j CLASSIFY --set-class 1:2", IpVersion::kIpv4, "filter", "FORWARD"),
            "[ immediate reg 1 0x00010002 ]\n[ meta set priority with reg 1 ]");
  EXPECT_EQ(Lower("-j NFQUEUE --queue-balance 2:5 --queue-bypass --queue-cpu-fanout",
                  IpVersion::kIpv4, "filter", "FORWARD"),
            "[ queue num 2-5 bypass fanout ]");
}

TEST(IptablesHeaderTargets, RefusedWhereTheKernelRefuses) {
  auto refused = [](const std::string& out, const std::string& what) {
    return out.find(what) != std::string::npos;
  };
  EXPECT_TRUE(refused(Lower("-j DSCP --set-dscp 1", IpVersion::kIpv4, "filter", "FORWARD"),
                      "only valid in the mangle table"));
  EXPECT_TRUE(refused(Mangle("-j TTL --ttl-inc 0"), "bad value"));
  EXPECT_TRUE(refused(Mangle("-j HL --hl-set 1"), "ip6tables only"));
  EXPECT_TRUE(refused(Mangle("-j DSCP --set-dscp 64"), "invalid DSCP"));
  EXPECT_TRUE(refused(Lower("-j CLASSIFY --set-class 1:2", IpVersion::kIpv4, "mangle", "INPUT"),
                      "not valid in chain 'INPUT'"));
  EXPECT_TRUE(refused(Lower("-j NFQUEUE --queue-cpu-fanout", IpVersion::kIpv4, "filter", "FORWARD"),
                      "needs --queue-balance"));
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
