// The esp, ah, frag, hbh, dst, mh, ecn and tcpmss matches: what they lower
// to, and the rules iptables or the kernel refuse (the kernel's verdicts
// on packets: tests/kernel/ext_match_kernel_test.cc).
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

std::string Rule4(const std::string& rule) { return Lower(rule, IpVersion::kIpv4); }
std::string Rule6(const std::string& rule) { return Lower(rule, IpVersion::kIpv6); }
std::string Legacy6(const std::string& rule) {
  return Lower(rule, IpVersion::kIpv6, "filter", "INPUT", IptablesFlavor::kLegacy);
}

constexpr const char* kProtoEsp4 =
    "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000032 ]\n";
constexpr const char* kProtoAh4 =
    "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000033 ]\n";

TEST(IptablesEsp, SpiAtTheTransportHeader) {
  EXPECT_EQ(Rule4("-p esp -m esp --espspi 500:600 -j DROP"),
            std::string(kProtoEsp4) +
                "[ payload load 4b @ transport header + 0 => reg 1 ]\n"
                "[ range eq reg 1 0xf4010000 0x58020000 ]\n[ immediate reg 0 drop ]");
  EXPECT_EQ(Rule4("-p 50 -m esp ! --espspi 7 -j DROP"),
            std::string(kProtoEsp4) +
                "[ payload load 4b @ transport header + 0 => reg 1 ]\n"
                "[ cmp neq reg 1 0x07000000 ]\n[ immediate reg 0 drop ]");
  // The whole range checks nothing; inverted, nothing matches.
  EXPECT_EQ(Rule4("-p esp -m esp --espspi 0:4294967295 -j DROP"),
            std::string(kProtoEsp4) + "[ immediate reg 0 drop ]");
  EXPECT_EQ(Rule4("-p esp -m esp ! --espspi : -j DROP"),
            std::string(kProtoEsp4) +
                "[ payload load 4b @ transport header + 0 => reg 1 ]\n"
                "[ range neq reg 1 0x00000000 0xffffffff ]\n[ immediate reg 0 drop ]");
}

TEST(IptablesEsp, LegacyRefusesNonFirstFragments) {
  const std::string lowered =
      Lower("-p esp -m esp --espspi 5", IpVersion::kIpv4, "filter", "INPUT",
            IptablesFlavor::kLegacy);
  EXPECT_NE(lowered.find("[ payload load 2b @ network header + 6 => reg 1 ]\n"
                         "[ bitwise reg 1 = ( reg 1 & 0x0000ff1f ) ^ 0x00000000 ]\n"
                         "[ cmp eq reg 1 0x00000000 ]"),
            std::string::npos)
      << lowered;
  // ip6tables: the SPI is read at ip6tables' own transport offset (absent
  // on non-first fragments).
  EXPECT_NE(Legacy6("-p esp -m esp --espspi 5").find("@ ip6t-transport header + 0"),
            std::string::npos);
}

TEST(IptablesEsp, RefusedAsTheKernelRefusesThem) {
  EXPECT_TRUE(Refused(Rule4("-m esp --espspi 5"), "requires '-p esp'"));
  EXPECT_TRUE(Refused(Rule4("-p esp -m esp --espspi 4:3"), "start is greater than end"));
  EXPECT_TRUE(Refused(Rule4("-p esp -m esp --espspi -1"), "invalid SPI"));
  EXPECT_TRUE(Refused(Rule4("-p esp -m esp --espspi 4294967296"), "invalid SPI"));
}

TEST(IptablesAh, Ipv4SpiAfterTheFirstWord) {
  EXPECT_EQ(Rule4("-p ah -m ah --ahspi 3:9 -j DROP"),
            std::string(kProtoAh4) +
                "[ payload load 4b @ transport header + 4 => reg 1 ]\n"
                "[ range eq reg 1 0x03000000 0x09000000 ]\n[ immediate reg 0 drop ]");
  EXPECT_TRUE(Refused(Rule4("-m ah --ahspi 0"), "requires '-p ah'"));
  EXPECT_TRUE(Refused(Rule4("-p ah -m ah --ahres"), "ip6tables only"));
}

TEST(IptablesAh, Ipv6HeaderFoundByItsType) {
  EXPECT_EQ(Rule6("-m ah --ahspi 500 -j DROP"),
            "[ exthdr load ipv6 4b @ 51 + 4 => reg 1 ]\n[ cmp eq reg 1 0xf4010000 ]\n"
            "[ immediate reg 0 drop ]");
  // --ahlen counts bytes: 16 is hdrlen 2; --ahres wants the field zero.
  EXPECT_EQ(Rule6("-m ah ! --ahlen 16 --ahres"),
            "[ exthdr load ipv6 1b @ 51 + 1 => reg 1 ]\n[ cmp neq reg 1 0x00000002 ]\n"
            "[ exthdr load ipv6 2b @ 51 + 2 => reg 1 ]\n[ cmp eq reg 1 0x00000000 ]");
  // A length no header has; 0 (no test); nothing: the header's presence.
  EXPECT_EQ(Rule6("-m ah --ahlen 10"),
            "[ exthdr load ipv6 1b @ 51 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000002 ]");
  EXPECT_EQ(Rule6("-m ah --ahlen 0"), Rule6("-m ah"));
  EXPECT_EQ(Rule6("-m ah --ahspi :"),
            "[ exthdr load ipv6 1b @ 51 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
}

TEST(IptablesFrag, FieldsOfTheFragmentHeader) {
  EXPECT_EQ(Rule6("-m frag --fragid 100:200 --fragmore -j ACCEPT"),
            "[ exthdr load ipv6 4b @ 44 + 4 => reg 1 ]\n"
            "[ range eq reg 1 0x64000000 0xc8000000 ]\n"
            "[ exthdr load ipv6 2b @ 44 + 2 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000100 ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000000 ]\n[ immediate reg 0 accept ]");
  EXPECT_EQ(Rule6("-m frag --fragres"),
            "[ exthdr load ipv6 1b @ 44 + 1 => reg 1 ]\n[ cmp eq reg 1 0x00000000 ]\n"
            "[ exthdr load ipv6 2b @ 44 + 2 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000600 ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000000 ]");
  EXPECT_EQ(Rule6("-m frag --fragfirst"),
            "[ exthdr load ipv6 2b @ 44 + 2 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000f8ff ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000000 ]");
  // --fraglen is not compared by the kernel: the header's presence only.
  EXPECT_EQ(Rule6("-m frag --fraglen 42"), Rule6("-m frag"));
  EXPECT_EQ(Rule6("-m frag"),
            "[ exthdr load ipv6 1b @ 44 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_TRUE(Refused(Rule6("-m frag --fraglast --fragmore"), "cannot be combined"));
  EXPECT_TRUE(Refused(Rule6("-m frag --fragid 4:3"), "start is greater than end"));
  EXPECT_TRUE(Refused(Rule4("-m frag --fragfirst"), "ip6tables only"));
}

TEST(IptablesHbhDst, LengthInBytes) {
  EXPECT_EQ(Rule6("-m hbh --hbh-len 16"),
            "[ exthdr load ipv6 1b @ 0 + 1 => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_EQ(Rule6("-m dst ! --dst-len 8"),
            "[ exthdr load ipv6 1b @ 60 + 1 => reg 1 ]\n[ cmp neq reg 1 0x00000000 ]");
  // 22 bytes: no header is that long (inverted: any header).
  EXPECT_EQ(Rule6("-m hbh --hbh-len 22"),
            "[ exthdr load ipv6 1b @ 0 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000002 ]");
  EXPECT_EQ(Rule6("-m hbh ! --hbh-len 22"),
            "[ exthdr load ipv6 1b @ 0 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_EQ(Rule6("-m dst"),
            "[ exthdr load ipv6 1b @ 60 + 0 present => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_TRUE(Refused(Rule6("-m hbh --hbh-len 42 --hbh-opts 1:2,23"), "unsupported hbh option"));
  EXPECT_TRUE(Refused(Rule6("-m dst --dst-opts 149:92"), "not modelled"));
}

TEST(IptablesMh, TypeOfTheMobilityHeader) {
  const std::string proto =
      "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000087 ]\n"
      "[ payload load 1b @ transport header + 0 => reg 1 ]\n[ cmp eq reg 1 0x0000003b ]\n";
  EXPECT_EQ(Rule6("-p mh --mh-type 1:3 -j ACCEPT"),
            proto + "[ payload load 1b @ transport header + 2 => reg 1 ]\n"
                    "[ range eq reg 1 0x00000001 0x00000003 ]\n[ immediate reg 0 accept ]");
  EXPECT_EQ(Rule6("-p mobility-header -m mh ! --mh-type binding-update"),
            proto + "[ payload load 1b @ transport header + 2 => reg 1 ]\n"
                    "[ cmp neq reg 1 0x00000005 ]");
  EXPECT_EQ(Rule6("-p mh -m mh --mh-type :"), Rule6("-p mh -m mh"));
  EXPECT_TRUE(Refused(Rule6("-m mh --mh-type 1"), "requires '-p mh'"));
  EXPECT_TRUE(Refused(Rule6("-p mh -m mh --mh-type 4:3"), "start is greater than end"));
}

TEST(IptablesEcn, IpAndTcpBits) {
  EXPECT_EQ(Rule4("-m ecn --ecn-ip-ect 3"),
            "[ payload load 1b @ network header + 1 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000003 ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000003 ]");
  // IPv6: the traffic class's low bits are the high nibble's low bits of byte 1.
  EXPECT_EQ(Rule6("-m ecn ! --ecn-ip-ect 2"),
            "[ payload load 1b @ network header + 1 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000030 ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000020 ]");
  const std::string tcp = Rule4("-p tcp -m ecn --ecn-tcp-cwr ! --ecn-tcp-ece");
  EXPECT_NE(tcp.find("[ payload load 1b @ transport header + 13 => reg 1 ]\n"
                     "[ bitwise reg 1 = ( reg 1 & 0x00000080 ) ^ 0x00000000 ]\n"
                     "[ cmp neq reg 1 0x00000000 ]\n"
                     "[ payload load 1b @ transport header + 13 => reg 1 ]\n"
                     "[ bitwise reg 1 = ( reg 1 & 0x00000040 ) ^ 0x00000000 ]\n"
                     "[ cmp eq reg 1 0x00000000 ]"),
            std::string::npos)
      << tcp;
  EXPECT_TRUE(Refused(Rule4("-m ecn --ecn-tcp-cwr"), "requires '-p tcp'"));
  EXPECT_TRUE(Refused(Rule4("-m ecn --ecn-ip-ect 4"), "invalid ECT"));
  EXPECT_TRUE(Refused(Rule4("-m ecn"), "needs an option"));
}

TEST(IptablesTcpmss, TheMssOption) {
  const std::string lowered = Rule4("-p tcp -m tcpmss --mss 42:1024");
  EXPECT_NE(lowered.find("[ exthdr load tcpopt 2b @ 2 + 2 => reg 1 ]\n"
                         "[ range eq reg 1 0x00002a00 0x00000004 ]"),
            std::string::npos)
      << lowered;
  EXPECT_NE(Rule4("-p tcp -m tcpmss --mss 1460").find("[ cmp eq reg 1 0x0000b405 ]"),
            std::string::npos);
  EXPECT_TRUE(Refused(Rule4("-p tcp -m tcpmss ! --mss 42"), "without an MSS option"));
  EXPECT_TRUE(Refused(Rule4("-m tcpmss --mss 42"), "requires '-p tcp'"));
  EXPECT_TRUE(Refused(Rule4("-p tcp -m tcpmss --mss 65535:1000"), "start is greater"));
  EXPECT_TRUE(Refused(Rule4("-p tcp -m tcpmss --mss 42:65536"), "invalid MSS"));
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
