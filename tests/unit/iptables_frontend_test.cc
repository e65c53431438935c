// Unit tests for the iptables-save frontend (frontends/iptables): the IR each
// option lowers to, printed with ir/printer.h in `nft --debug=netlink` form
// (the expected lines were checked against the nftables payload corpus and
// iptables-nft's behaviour), the table/chain structure, and located errors
// (line:col) for bad input.
#include "frontends/iptables/iptables.h"

#include <cstring>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/interp.h"
#include "packet/parse.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

using ::testing::HasSubstr;


// --- base options -------------------------------------------------------------

TEST(IptablesLower, SourcePrefixNeedsBitwise) {
  EXPECT_EQ(Lower("-s 10.0.0.0/10"),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x0000000a ]");
}

TEST(IptablesLower, NegatedSourceIsNeq) {
  EXPECT_EQ(Lower("! -s 10.0.0.0/10"),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x0000000a ]");
}

TEST(IptablesLower, WholeBytePrefixesAreTrimmed) {
  // iptables-nft loads only the bytes the mask covers.
  EXPECT_EQ(Lower("-s 10.11.12.13/8"),
            "[ payload load 1b @ network header + 12 => reg 1 ]\n"
            "[ cmp eq reg 1 0x0000000a ]");
  EXPECT_EQ(Lower("-d 192.168.2.0/24"),
            "[ payload load 3b @ network header + 16 => reg 1 ]\n"
            "[ cmp eq reg 1 0x0002a8c0 ]");
  EXPECT_EQ(Lower("-s 1.2.3.4"),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ cmp eq reg 1 0x04030201 ]");
  EXPECT_EQ(Lower("-s 0.0.0.0/0"), "");
}

TEST(IptablesLower, NonContiguousMask) {
  EXPECT_EQ(Lower("-s 10.11.12.13/255.0.255.0"),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00ff00ff ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x000c000a ]");
}

TEST(IptablesLower, NegatedZeroPrefixNeverMatches) {
  EXPECT_EQ(Lower("! -s 0.0.0.0/0"),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000000 ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000000 ]");
}

TEST(IptablesLower, Ipv6Addresses) {
  EXPECT_EQ(Lower("-s feed::/16"),
            "[ payload load 2b @ network header + 8 => reg 1 ]\n"
            "[ cmp eq reg 1 0x0000edfe ]");
  EXPECT_EQ(Lower("-d ::1"),
            "[ payload load 16b @ network header + 24 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000000 0x00000000 0x00000000 0x01000000 ]");
}

// sctp and dccp ports read where tcp's do; dccp's type is bits 1-4 of
// byte 8 (tests/kernel/ext_match_kernel_test.cc checks the meaning).
TEST(IptablesLower, SctpAndDccp) {
  EXPECT_EQ(Lower("-p sctp --dport 50000"),
            "[ meta load l4proto => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000084 ]\n"
            "[ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "[ cmp eq reg 1 0x000050c3 ]");
  EXPECT_EQ(Lower("-p dccp -m dccp ! --dccp-types DATA"),
            "[ meta load l4proto => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000021 ]\n"
            "[ payload load 1b @ transport header + 8 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000001e ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000004 ]");
  EXPECT_TRUE(Refused(Lower("-p sctp -m sctp --chunk-types any INIT"),
                      "3:26: error: --chunk-types is not modelled"));
  EXPECT_TRUE(Refused(Lower("-p dccp -m dccp --dccp-option 4"), "--dccp-option is not modelled"));
  EXPECT_TRUE(Refused(Lower("-p dccp -m dccp --dccp-types NOPE"), "invalid DCCP type 'NOPE'"));
  EXPECT_TRUE(Refused(Lower("-p udp -m sctp --dport 1"), "match 'sctp' requires '-p sctp'"));
}

TEST(IptablesLower, Interfaces) {
  EXPECT_EQ(Lower("-i eth0"),
            "[ meta load iifname => reg 1 ]\n"
            "[ cmp eq reg 1 0x30687465 0x00000000 ]");
  EXPECT_EQ(Lower("-o eth+"),
            "[ meta load oifname => reg 1 ]\n"
            "[ cmp eq reg 1 0x00687465 ]");
  EXPECT_EQ(Lower("! -i eth0"),
            "[ meta load iifname => reg 1 ]\n"
            "[ cmp neq reg 1 0x30687465 0x00000000 ]");
  EXPECT_EQ(Lower("-i +"), "");
  EXPECT_EQ(Lower("! -i +"),
            "[ meta load iifname => reg 1 ]\n"
            "[ cmp eq reg 1 0x41564e49 0x00442f4c ]");
}

TEST(IptablesLower, Protocol) {
  EXPECT_EQ(Lower("-p tcp"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000006 ]");
  EXPECT_EQ(Lower("! -p udp"),
            "[ meta load l4proto => reg 1 ]\n[ cmp neq reg 1 0x00000011 ]");
  EXPECT_EQ(Lower("-p 132"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000084 ]");
  EXPECT_EQ(Lower("-p all"), "");
}

TEST(IptablesLower, Fragment) {
  EXPECT_EQ(Lower("-f"),
            "[ payload load 2b @ network header + 6 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000ff1f ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000000 ]");
}

TEST(IptablesLower, GetoptForms) {
  EXPECT_EQ(Lower("--protocol=tcp --in-interface=eth0"),
            Lower("-ptcp -ieth0"));
}

// --- tcp / udp / multiport ------------------------------------------------------

constexpr char kTcp[] =
    "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000006 ]\n";

TEST(IptablesLower, TcpPorts) {
  EXPECT_EQ(Lower("-p tcp -m tcp --dport 22"),
            std::string(kTcp) +
                "[ payload load 2b @ transport header + 2 => reg 1 ]\n"
                "[ cmp eq reg 1 0x00001600 ]");
  EXPECT_EQ(Lower("-p tcp --sport 1:1023"),  // implicit -m tcp
            std::string(kTcp) +
                "[ payload load 2b @ transport header + 0 => reg 1 ]\n"
                "[ range eq reg 1 0x00000100 0x0000ff03 ]");
  EXPECT_EQ(Lower("-p tcp -m tcp ! --dport 1024:"),
            std::string(kTcp) +
                "[ payload load 2b @ transport header + 2 => reg 1 ]\n"
                "[ range neq reg 1 0x00000004 0x0000ffff ]");
  EXPECT_EQ(Lower("-p tcp -m tcp --sport :"), "[ meta load l4proto => reg 1 ]\n"
                                              "[ cmp eq reg 1 0x00000006 ]");
}

// iptables-legacy's tcp/udp/icmp/multiport matches never match a non-first
// fragment: the legacy flavour (the default) puts `! -f` in front of the
// rule's first such match, once; iptables-nft emits no such check.
TEST(IptablesLower, LegacyFlavourRefusesFragments) {
  auto legacy = [](const std::string& rule) {
    return Lower(rule, IpVersion::kAuto, "filter", "INPUT", IptablesFlavor::kLegacy);
  };
  const std::string not_fragment =
      "[ payload load 2b @ network header + 6 => reg 1 ]\n"
      "[ bitwise reg 1 = ( reg 1 & 0x0000ff1f ) ^ 0x00000000 ]\n"
      "[ cmp eq reg 1 0x00000000 ]\n";
  EXPECT_EQ(legacy("-p tcp -m tcp --dport 22"),
            std::string(kTcp) + not_fragment +
                "[ payload load 2b @ transport header + 2 => reg 1 ]\n"
                "[ cmp eq reg 1 0x00001600 ]");
  // Even a tcp match with no test refuses fragments.
  EXPECT_EQ(legacy("-p tcp -m tcp --sport :"), std::string(kTcp) + not_fragment.substr(0, not_fragment.size() - 1));
  // Two such matches, one check.
  const std::string two = legacy("-p udp -m udp --dport 53 -m multiport --sports 1,2");
  EXPECT_NE(two.find("network header + 6"), std::string::npos);
  EXPECT_EQ(two.find("network header + 6"), two.rfind("network header + 6"));
  // The protocol alone, and other matches, match fragments in both tools.
  EXPECT_EQ(legacy("-p tcp"), Lower("-p tcp"));
  EXPECT_EQ(legacy("-m mark --mark 1"), Lower("-m mark --mark 1"));
  EXPECT_EQ(legacy("-p icmp --icmp-type 8"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]\n" + not_fragment +
                Lower("-p icmp --icmp-type 8").substr(
                    std::string("[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]\n").size()));
}

// ip6tables-legacy: no fragment test, but its own protocol and transport
// header (the AH-walking ipv6_find_hdr of ip6_packet_match, absent on
// non-first fragments); ip6tables-nft's bytecode is nft's.
TEST(IptablesLower, Ip6tablesLegacyFlavour) {
  auto legacy6 = [](const std::string& rule) {
    return Lower(rule, IpVersion::kIpv6, "filter", "INPUT", IptablesFlavor::kLegacy);
  };
  EXPECT_EQ(legacy6("-p tcp -m tcp --dport 22"),
            "[ meta load ip6t_l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000006 ]\n"
            "[ payload load 2b @ ip6t-transport header + 2 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00001600 ]");
  EXPECT_EQ(legacy6("! -p udp"), "[ meta load ip6t_l4proto => reg 1 ]\n[ cmp neq reg 1 0x00000011 ]");
  EXPECT_EQ(legacy6("-p ipv6-icmp -m icmp6 --icmpv6-type 128"),
            "[ meta load ip6t_l4proto => reg 1 ]\n[ cmp eq reg 1 0x0000003a ]\n"
            "[ payload load 1b @ ip6t-transport header + 0 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000080 ]");
  EXPECT_EQ(Lower("-p tcp -m tcp --dport 22", IpVersion::kIpv6),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000006 ]\n"
            "[ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00001600 ]");
  // A match that reads nothing still refuses non-first fragments.
  const std::string present =
      "[ payload load 1b @ ip6t-transport header + 0 => reg 1 ]\n[ cmp gte reg 1 0x00000000 ]";
  EXPECT_EQ(legacy6("-p tcp -m tcp --sport :"),
            "[ meta load ip6t_l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000006 ]\n" + present);
  EXPECT_EQ(legacy6("-p udp -m udp --dport 0:65535"),
            "[ meta load ip6t_l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000011 ]\n" + present);
  // A match that loads: no second test.
  EXPECT_EQ(legacy6("-p udp -m multiport --sports 0:65535"),
            "[ meta load ip6t_l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000011 ]\n"
            "[ payload load 2b @ ip6t-transport header + 0 => reg 1 ]\n"
            "[ range eq reg 1 0x00000000 0x0000ffff ]");
  // Matches on other headers are the same in both flavours.
  EXPECT_EQ(legacy6("-m hl --hl-eq 42"), Lower("-m hl --hl-eq 42", IpVersion::kIpv6));
}

TEST(IptablesLower, TcpFlags) {
  EXPECT_EQ(Lower("-p tcp --syn"),
            std::string(kTcp) +
                "[ payload load 1b @ transport header + 13 => reg 1 ]\n"
                "[ bitwise reg 1 = ( reg 1 & 0x00000017 ) ^ 0x00000000 ]\n"
                "[ cmp eq reg 1 0x00000002 ]");
  EXPECT_EQ(Lower("-p tcp ! --tcp-flags ACK,FIN FIN"),
            std::string(kTcp) +
                "[ payload load 1b @ transport header + 13 => reg 1 ]\n"
                "[ bitwise reg 1 = ( reg 1 & 0x00000011 ) ^ 0x00000000 ]\n"
                "[ cmp neq reg 1 0x00000001 ]");
}

TEST(IptablesLower, UdpNeedsProtocolAnywhereInRule) {
  EXPECT_EQ(Lower("-m udp --dport 53 -p udp"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000011 ]\n"
            "[ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00003500 ]");
}

TEST(IptablesLower, MultiportBuildsAnonymousIntervalSet) {
  Parsed p = Parse(Wrap("-p tcp -m multiport --dports 53,1024:65535 -j ACCEPT"),
                   IpVersion::kAuto, IptablesFlavor::kNft);
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  const ir::Table& t = p.rs->tables[0];
  ASSERT_EQ(t.sets.size(), 1u);
  const ir::Set& s = t.sets[0];
  EXPECT_EQ(s.name, "__set0");
  EXPECT_EQ(s.flags, ir::kSetAnonymous | ir::kSetConstant | ir::kSetInterval);
  EXPECT_EQ(s.key_len, 2u);
  ASSERT_EQ(s.elements.size(), 2u);
  EXPECT_EQ(s.elements[1].key, (ir::Bytes{0x04, 0x00}));
  EXPECT_EQ(*s.elements[1].key_end, (ir::Bytes{0xff, 0xff}));
  const ir::Rule& r = t.chains[0].rules[0];
  EXPECT_EQ(ir::PrintExpr(r.exprs[2].expr),
            "[ payload load 2b @ transport header + 2 => reg 1 ]");
  EXPECT_EQ(ir::PrintExpr(r.exprs[3].expr), "[ lookup reg 1 set __set%d ]");
}

TEST(IptablesLower, MultiportEitherPortIsOneConcatLookup) {
  Parsed p = Parse(Wrap("-p udp -m multiport ! --ports 10"));
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  const ir::Set& s = p.rs->tables[0].sets.at(0);
  EXPECT_EQ(s.flags & ir::kSetConcat, ir::kSetConcat);
  EXPECT_EQ(s.field_lens, (std::vector<uint32_t>{2, 2}));
  ASSERT_EQ(s.elements.size(), 2u);
  // 10 . 0-65535 and 0-65535 . 10
  EXPECT_EQ(s.elements[0].key, (ir::Bytes{0, 10, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(*s.elements[0].key_end, (ir::Bytes{0, 10, 0, 0, 0xff, 0xff, 0, 0}));
  EXPECT_EQ(Lower("-p udp -m multiport ! --ports 10"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000011 ]\n"
            "[ payload load 2b @ transport header + 0 => reg 1 ]\n"
            "[ payload load 2b @ transport header + 2 => reg 9 ]\n"
            "[ lookup reg 1 set __set%d 0x1 ]");
}

TEST(IptablesLower, SetNamesAreUniquePerTable) {
  Parsed p = Parse(
      "*filter\n:INPUT ACCEPT [0:0]\n"
      "-A INPUT -p tcp -m multiport --dports 1,2\n"
      "-A INPUT -p tcp -m multiport --sports 3,4\nCOMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  ASSERT_EQ(p.rs->tables[0].sets.size(), 2u);
  EXPECT_EQ(p.rs->tables[0].sets[1].name, "__set1");
  // Single ports only: a plain (non-interval) set.
  EXPECT_EQ(p.rs->tables[0].sets[1].flags, ir::kSetAnonymous | ir::kSetConstant);
  EXPECT_FALSE(p.rs->tables[0].sets[1].elements[0].key_end.has_value());
}

// --- other matches ----------------------------------------------------------------

TEST(IptablesLower, Icmp) {
  EXPECT_EQ(Lower("-p icmp -m icmp --icmp-type echo-request"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]\n"
            "[ payload load 1b @ transport header + 0 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000008 ]");
  EXPECT_EQ(Lower("-p icmp --icmp-type 3/1"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]\n"
            "[ payload load 2b @ transport header + 0 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000103 ]");
  EXPECT_EQ(Lower("-p icmp -m icmp --icmp-type any"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
}

TEST(IptablesLower, Icmp6) {
  EXPECT_EQ(Lower("-p ipv6-icmp -m icmp6 --icmpv6-type neighbour-solicitation"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x0000003a ]\n"
            "[ payload load 1b @ transport header + 0 => reg 1 ]\n"
            "[ cmp eq reg 1 0x00000087 ]");
}

TEST(IptablesLower, ConntrackState) {
  EXPECT_EQ(Lower("-m conntrack --ctstate RELATED,ESTABLISHED"),
            "[ ct load state => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000006 ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000000 ]");
  EXPECT_EQ(Lower("-m state ! --state INVALID,UNTRACKED"),
            "[ ct load state => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000041 ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000000 ]");
  EXPECT_EQ(Lower("-m conntrack --ctstate SNAT"),
            "[ ct load status => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000010 ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000000 ]");
}

TEST(IptablesLower, ConntrackOtherKeys) {
  EXPECT_THAT(Lower("-m conntrack --ctdir REPLY"),
              HasSubstr("[ ct load direction => reg 1 ]"));
  EXPECT_THAT(Lower("-m conntrack --ctproto udp"),
              HasSubstr("[ cmp eq reg 1 0x00000011 ]"));
  EXPECT_THAT(Lower("-m conntrack --ctstatus ASSURED"),
              HasSubstr("( reg 1 & 0x00000004 )"));
}

TEST(IptablesLower, MarkAndConnmark) {
  EXPECT_EQ(Lower("-m mark --mark 0x1"),
            "[ meta load mark => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_EQ(Lower("-m mark ! --mark 0xa/0xa"),
            "[ meta load mark => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000000a ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x0000000a ]");
  EXPECT_EQ(Lower("-m connmark --mark 2"),
            "[ ct load mark => reg 1 ]\n[ cmp eq reg 1 0x00000002 ]");
}

TEST(IptablesLower, Length) {
  EXPECT_EQ(Lower("-m length --length 40"),
            "[ meta load len => reg 1 ]\n[ cmp eq reg 1 0x00000028 ]");
  EXPECT_EQ(Lower("-m length --length 33:45"),
            "[ meta load len => reg 1 ]\n"
            "[ byteorder reg 1 = hton(reg 1, 4, 4) ]\n"
            "[ range eq reg 1 0x21000000 0x2d000000 ]");
}

TEST(IptablesLower, TtlAndHopLimit) {
  EXPECT_EQ(Lower("-m ttl --ttl-lt 5"),
            "[ payload load 1b @ network header + 8 => reg 1 ]\n"
            "[ cmp lt reg 1 0x00000005 ]");
  EXPECT_EQ(Lower("-m hl ! --hl-eq 42", IpVersion::kIpv6),
            "[ payload load 1b @ network header + 7 => reg 1 ]\n"
            "[ cmp neq reg 1 0x0000002a ]");
}

TEST(IptablesLower, DscpAndTos) {
  EXPECT_EQ(Lower("-m dscp --dscp-class CS1"),
            "[ payload load 1b @ network header + 1 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x000000fc ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000020 ]");
  // Same bytes as nft's `ip6 dscp cs1`.
  EXPECT_EQ(Lower("-m dscp --dscp 8", IpVersion::kIpv6),
            "[ payload load 2b @ network header + 0 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000c00f ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000002 ]");
  EXPECT_EQ(Lower("-m tos --tos Minimize-Delay"),
            "[ payload load 1b @ network header + 1 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x0000003f ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000010 ]");
}

TEST(IptablesLower, PkttypeMacIprangeLimit) {
  EXPECT_EQ(Lower("-m pkttype --pkt-type broadcast"),
            "[ meta load pkttype => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]");
  EXPECT_EQ(Lower("-m mac --mac-source 00:0f:54:0c:11:04"),
            "[ meta load iiftype => reg 1 ]\n[ cmp eq reg 1 0x00000001 ]\n"
            "[ payload load 6b @ link header + 6 => reg 1 ]\n"
            "[ cmp eq reg 1 0x0c540f00 0x00000411 ]");
  EXPECT_EQ(Lower("-m iprange ! --src-range 1.1.1.1-1.1.1.10"),
            "[ payload load 4b @ network header + 12 => reg 1 ]\n"
            "[ range neq reg 1 0x01010101 0x0a010101 ]");
  EXPECT_EQ(Lower("-m limit --limit 3/min --limit-burst 7"),
            "[ limit rate 3/minute burst 7 type packets flags 0x0 ]");
}

TEST(IptablesLower, CommentGoesToRule) {
  Parsed p = Parse(Wrap("-p tcp -m comment --comment \"allow ssh\" -j ACCEPT"));
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  EXPECT_EQ(p.rs->tables[0].chains[0].rules[0].comment, "allow ssh");
}

// --- targets ----------------------------------------------------------------------

TEST(IptablesTarget, VerdictsAndCounter) {
  Parsed p = Parse(
      "*filter\n:INPUT DROP [1:2]\n:chk - [0:0]\n"
      "[5:300] -A INPUT -j chk\n-A INPUT -g chk\n-A chk -j RETURN\nCOMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  const ir::Table& t = p.rs->tables[0];
  ASSERT_EQ(t.chains.size(), 2u);
  EXPECT_EQ(t.chains[0].base->policy, ir::VerdictCode::kDrop);
  EXPECT_FALSE(t.chains[1].base.has_value());
  const ir::Rule& r = t.chains[0].rules[0];
  EXPECT_EQ(ir::PrintExpr(r.exprs[0].expr), "[ counter pkts 5 bytes 300 ]");
  EXPECT_EQ(ir::PrintExpr(r.exprs[1].expr), "[ immediate reg 0 jump -> chk ]");
  EXPECT_EQ(ir::PrintExpr(t.chains[0].rules[1].exprs[1].expr),
            "[ immediate reg 0 goto -> chk ]");
  EXPECT_EQ(ir::PrintExpr(t.chains[1].rules[0].exprs[1].expr),
            "[ immediate reg 0 return ]");
}

TEST(IptablesTarget, Reject) {
  EXPECT_EQ(Lower("-j REJECT"), "[ reject type 0 code 3 ]");
  EXPECT_EQ(Lower("-j REJECT --reject-with icmp-admin-prohibited"),
            "[ reject type 0 code 13 ]");
  EXPECT_EQ(Lower("-p tcp -j REJECT --reject-with tcp-reset"),
            std::string(kTcp) + "[ reject type 1 code 0 ]");
  EXPECT_EQ(Lower("-j REJECT --reject-with icmp6-adm-prohibited",
                  IpVersion::kIpv6),
            "[ reject type 0 code 1 ]");
}

TEST(IptablesTarget, LogIsNotTerminal) {
  EXPECT_EQ(Lower("-j LOG --log-prefix \"x: \" --log-level alert"),
            "[ log prefix x:  level 1 ]");
}

TEST(IptablesTarget, MarkAndConnmark) {
  EXPECT_EQ(Lower("-j MARK --set-mark 0x40", IpVersion::kAuto, "mangle",
                  "PREROUTING"),
            "[ immediate reg 1 0x00000040 ]\n[ meta set mark with reg 1 ]");
  EXPECT_EQ(Lower("-j MARK --set-xmark 0x40/0x32", IpVersion::kAuto, "mangle",
                  "PREROUTING"),
            "[ meta load mark => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0xffffffcd ) ^ 0x00000040 ]\n"
            "[ meta set mark with reg 1 ]");
  EXPECT_EQ(Lower("-j CONNMARK --restore-mark", IpVersion::kAuto, "mangle",
                  "PREROUTING"),
            "[ ct load mark => reg 1 ]\n[ meta set mark with reg 1 ]");
  EXPECT_EQ(Lower("-j CONNMARK --save-mark --nfmask 0xff", IpVersion::kAuto,
                  "mangle", "PREROUTING"),
            "[ meta load mark => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x000000ff ) ^ 0x00000000 ]\n"
            "[ ct set mark with reg 1 ]");
}

// --- structure ----------------------------------------------------------------------

TEST(IptablesStructure, TablesChainsPriorities) {
  Parsed p = Parse(
      "# Generated by iptables-save\n*raw\n:PREROUTING ACCEPT [0:0]\n"
      ":OUTPUT ACCEPT [0:0]\nCOMMIT\n*mangle\n:POSTROUTING ACCEPT [0:0]\n"
      "COMMIT\n\n*filter\n:FORWARD DROP [0:0]\n-A OUTPUT -j ACCEPT\nCOMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  ASSERT_EQ(p.rs->tables.size(), 3u);
  EXPECT_EQ(p.rs->tables[0].name, "raw");
  EXPECT_EQ(p.rs->tables[0].family, ir::Family::kIp);
  EXPECT_EQ(p.rs->tables[0].chains[1].base->priority, -300);
  EXPECT_EQ(p.rs->tables[1].chains[0].base->priority, -150);
  EXPECT_EQ(p.rs->tables[1].chains[0].base->hook, ir::Hook::kPostrouting);
  const ir::Table& filter = p.rs->tables[2];
  ASSERT_EQ(filter.chains.size(), 2u);  // OUTPUT created on first use
  EXPECT_EQ(filter.chains[1].name, "OUTPUT");
  EXPECT_EQ(filter.chains[1].base->hook, ir::Hook::kOutput);
  EXPECT_EQ(filter.chains[1].base->priority, 0);
}

TEST(IptablesStructure, RuleAndExprLocations) {
  Parsed p = Parse("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 22 -j ACCEPT\nCOMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  const ir::Rule& r = p.rs->tables[0].chains[0].rules[0];
  EXPECT_EQ(r.loc.line, 3u);
  EXPECT_EQ(r.loc.col, 1u);
  EXPECT_EQ(r.exprs[0].loc.col, 10u);  // -p
  EXPECT_EQ(r.exprs[2].loc.col, 17u);  // --dport
  EXPECT_EQ(r.exprs.back().loc.col, 31u);  // ACCEPT
  EXPECT_EQ(p.rs->Where(r.loc), "t.ipt:3");
}

TEST(IptablesStructure, Ip6Detection) {
  Parsed p = Parse(Wrap("-s 2001:db8::/32 -j DROP"));
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  EXPECT_EQ(p.rs->tables[0].family, ir::Family::kIp6);
  Parsed q = Parse(Wrap("-p ipv6-icmp -j ACCEPT"));
  ASSERT_TRUE(q.rs.ok()) << q.diags;
  EXPECT_EQ(q.rs->tables[0].family, ir::Family::kIp6);
  Parsed header = Parse("# Generated by ip6tables-save v1.8.9\n" +
                        Wrap("-j ACCEPT"));
  ASSERT_TRUE(header.rs.ok()) << header.diags;
  EXPECT_EQ(header.rs->tables[0].family, ir::Family::kIp6);
  Parsed plain = Parse(Wrap("-j ACCEPT"));
  ASSERT_TRUE(plain.rs.ok());
  EXPECT_EQ(plain.rs->tables[0].family, ir::Family::kIp);
  Parsed forced = Parse(Wrap("-j ACCEPT"), IpVersion::kIpv6);
  ASSERT_TRUE(forced.rs.ok());
  EXPECT_EQ(forced.rs->tables[0].family, ir::Family::kIp6);
}

// Extensions that exist only for ip6tables say so without any address.
TEST(IptablesStructure, Ip6OnlyExtensionsMeanIp6) {
  for (const char* rule : {"-m frag --fragid 5 -j DROP", "-m rt --rt-type 0 -j DROP",
                           "-m hbh -j DROP", "-m dst -j DROP",
                           "-p tcp -j HL --hl-set 3"}) {
    const std::string dump = std::string(rule).find("HL") != std::string::npos
                                 ? "*mangle\n:FORWARD ACCEPT [0:0]\n-A FORWARD " + std::string(rule) +
                                       "\nCOMMIT\n"
                                 : Wrap(rule);
    Parsed p = Parse(dump);
    ASSERT_TRUE(p.rs.ok()) << rule << ": " << p.diags;
    EXPECT_EQ(p.rs->tables[0].family, ir::Family::kIp6) << rule;
  }
}

// A dump as iptables-save writes it, every feature at once: it parses, and
// the IR it yields passes the verifier (registers, sets, jump targets).
constexpr char kRealisticDump[] = R"(# Generated by iptables-save v1.8.9 (nf_tables) on Tue Dec  1 10:00:00 2026
*raw
:PREROUTING ACCEPT [10:600]
:OUTPUT ACCEPT [5:300]
-A PREROUTING -i lo -j NOTRACK
COMMIT
*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p tcp -m tcp --dport 80 -j MARK --set-xmark 0x1/0xffffffff
-A PREROUTING -j CONNMARK --save-mark --nfmask 0xffffffff --ctmask 0xffffffff
COMMIT
*filter
:INPUT DROP [100:5000]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [50:4000]
:LOGDROP - [0:0]
:ssh-in - [0:0]
[12:720] -A INPUT -i lo -j ACCEPT
-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A INPUT -m conntrack --ctstate INVALID -j DROP
-A INPUT -p icmp -m icmp --icmp-type 8 -m limit --limit 5/sec -j ACCEPT
-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j ssh-in
-A INPUT -p tcp -m multiport --dports 80,443,8000:8100 -m comment --comment "web servers" -j ACCEPT
-A INPUT -p udp -m udp --sport 53 -m length --length 0:512 -j ACCEPT
-A INPUT -m pkttype --pkt-type broadcast -j DROP
-A INPUT -m mac --mac-source 00:11:22:33:44:55 -j LOGDROP
-A INPUT -p tcp -j REJECT --reject-with tcp-reset
-A INPUT -j REJECT --reject-with icmp-host-prohibited
-A ssh-in -m iprange --src-range 10.1.0.1-10.1.0.50 -j ACCEPT
-A ssh-in -m mark --mark 0x1/0x1 -g LOGDROP
-A LOGDROP -j LOG --log-prefix "dropped: " --log-level 4
-A LOGDROP -j DROP
-A OUTPUT -o eth+ -m ttl --ttl-lt 2 -j DROP
-A OUTPUT -m dscp --dscp-class EF -m tos --tos 0x10/0x3f
COMMIT
# Completed on Tue Dec  1 10:00:00 2026
)";

TEST(IptablesStructure, RealisticDumpVerifies) {
  ir::Diagnostics diags;
  const int file = diags.AddFile("real.ipt", kRealisticDump);
  absl::StatusOr<ir::Ruleset> rs = ParseIptablesSave(kRealisticDump, file, diags);
  ASSERT_TRUE(rs.ok()) << diags.Format();
  ASSERT_EQ(rs->tables.size(), 3u);
  const ir::Table& filter = rs->tables[2];
  EXPECT_EQ(filter.chains.size(), 5u);
  EXPECT_EQ(filter.chains[0].rules.size(), 11u);
  EXPECT_EQ(filter.sets.size(), 1u);
  EXPECT_EQ(filter.chains[0].rules[5].comment, "web servers");
  EXPECT_TRUE(ir::Verify(*rs, diags)) << diags.Format();
  // Handles are unique across the ruleset.
  std::set<uint64_t> handles;
  size_t rules = 0;
  for (const ir::Table& t : rs->tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        handles.insert(r.handle);
        ++rules;
      }
    }
  }
  EXPECT_EQ(handles.size(), rules);
}

// The lowered rules mean what iptables means: frames through the reference
// interpreter.
ir::VerdictCode Eval(const ir::Ruleset& rs, const testing::FrameSpec& spec) {
  std::vector<uint8_t> frame = testing::BuildFrame(spec);
  PacketView view =
      packet::ParseEthernet(frame.data(), static_cast<uint32_t>(frame.size()));
  PacketMeta meta;
  meta.has_iif = true;
  std::memcpy(meta.iifname, "eth0", 4);
  return ir::Interpreter(rs).Run(ir::Hook::kInput, view, meta).verdict;
}

TEST(IptablesSemantics, FramesThroughInterpreter) {
  Parsed p = Parse(
      "*filter\n:INPUT DROP [0:0]\n"
      "-A INPUT -p tcp -m multiport --ports 8080,9000:9001 -j ACCEPT\n"
      "-A INPUT -s 10.0.0.0/10 -p udp --dport 1000:2000 -j ACCEPT\n"
      "-A INPUT -p icmp --icmp-type 3/1 -j ACCEPT\n"
      "-A INPUT -i eth+ -p tcp --syn --dport 22 -j ACCEPT\n"
      "COMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  using testing::FrameSpec;
  const auto kAccept = ir::VerdictCode::kAccept;
  const auto kDrop = ir::VerdictCode::kDrop;
  // multiport --ports: either port.
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.proto = 6, .sport = 8080, .dport = 1}), kAccept);
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.proto = 6, .sport = 1, .dport = 9001}), kAccept);
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.proto = 6, .sport = 1, .dport = 8081}), kDrop);
  // -s 10.0.0.0/10 covers 10.0.0.0-10.63.255.255.
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.src = "10.63.0.1", .proto = 17, .dport = 1500}),
            kAccept);
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.src = "10.64.0.1", .proto = 17, .dport = 1500}),
            kDrop);
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.src = "10.1.0.1", .proto = 17, .dport = 999}),
            kDrop);
  // icmp type/code.
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.proto = 1, .icmp_type = 3, .icmp_code = 1}),
            kAccept);
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.proto = 1, .icmp_type = 3, .icmp_code = 2}),
            kDrop);
  // --syn: SYN accepted, SYN+ACK not.
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.proto = 6, .dport = 22, .tcp_flags = 0x02}),
            kAccept);
  EXPECT_EQ(Eval(*p.rs, FrameSpec{.proto = 6, .dport = 22, .tcp_flags = 0x12}),
            kDrop);
}

// --- errors -------------------------------------------------------------------------

TEST(IptablesErrors, TruncatedDump) {
  EXPECT_EQ(FirstError("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j DROP\n"),
            "1:1: missing COMMIT for table 'filter'");
}

TEST(IptablesErrors, RuleOutsideTable) {
  EXPECT_EQ(FirstError("-A INPUT -j DROP\n"), "1:1: line outside of a table");
}

TEST(IptablesErrors, UnknownOptionWithHint) {
  const std::string text = Wrap("-p tcp --dprot 22");
  EXPECT_EQ(FirstError(text), "3:17: unknown option '--dprot'");
  Parsed p = Parse(text);
  EXPECT_THAT(p.diags, HasSubstr("did you mean '--dport'?"));
  EXPECT_THAT(p.diags, HasSubstr("t.ipt:3:17: error:"));
}

TEST(IptablesErrors, UnsupportedMatchAndTarget) {
  EXPECT_EQ(FirstError(Wrap("-m set --match-set foo src")),
            "3:29: ipset 'foo' is not given");
  EXPECT_EQ(FirstError(Wrap("-j TEE")),
            "3:13: unsupported target 'TEE'");
}

TEST(IptablesErrors, UnknownAndDuplicateChains) {
  EXPECT_EQ(FirstError("*filter\n-A nosuch -j DROP\nCOMMIT\n"),
            "2:4: unknown chain 'nosuch'");
  EXPECT_EQ(FirstError("*filter\n:a - [0:0]\n:a - [0:0]\nCOMMIT\n"),
            "3:2: duplicate chain 'a'");
  EXPECT_EQ(FirstError("*filter\n:a ACCEPT [0:0]\nCOMMIT\n"),
            "2:4: policy 'ACCEPT' on user chain 'a'");
  EXPECT_EQ(FirstError("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j nowhere\nCOMMIT\n"),
            "3:13: unknown chain or target 'nowhere'");
  EXPECT_EQ(FirstError("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j OUTPUT\nCOMMIT\n"),
            "3:13: cannot jump to built-in chain 'OUTPUT'");
  EXPECT_EQ(FirstError("*filter\n-N x\n-N x\nCOMMIT\n"),
            "3:4: duplicate chain 'x'");
  EXPECT_EQ(FirstError("*filter\n:INPUT - [0:0]\nCOMMIT\n"),
            "2:8: invalid policy '-' for built-in chain 'INPUT'");
  EXPECT_EQ(FirstError("*natt\nCOMMIT\n"), "1:1: unknown table 'natt'");
  EXPECT_EQ(FirstError("*filter\nCOMMIT\nCOMMIT\n"),
            "3:1: COMMIT outside of a table");
}

TEST(IptablesErrors, BadValues) {
  EXPECT_EQ(FirstError(Wrap("-p tcp --dport 65536")),
            "3:25: invalid port '65536'");
  EXPECT_EQ(FirstError(Wrap("-p udp --sport 4:3")),
            "3:25: invalid port range '4:3': start is greater than end");
  EXPECT_EQ(FirstError(Wrap("-s 10.0.0.300")),
            "3:13: invalid IPv4 address '10.0.0.300'");
  EXPECT_EQ(FirstError(Wrap("-i thisinterfaceistoolong0")),
            "3:13: interface name 'thisinterfaceistoolong0' is longer than 15 "
            "characters");
  EXPECT_EQ(FirstError(Wrap("-m tcp --dport 1")),
            "3:13: match 'tcp' requires '-p tcp'");
  EXPECT_EQ(FirstError(Wrap("-j REJECT --reject-with tcp-reset")),
            "3:34: tcp-reset requires '-p tcp'");
  EXPECT_EQ(FirstError(Wrap("-m comment --comment \"unterminated")),
            "3:31: unterminated quoted string");
}

TEST(IptablesErrors, InexpressibleTargetsAreLocated) {
  // (mark & ~0xff) ^ (ct mark & 0xf): two registers would have to be merged.
  EXPECT_EQ(FirstError(Wrap("-j CONNMARK --restore-mark --nfmask 0xff "
                            "--ctmask 0xf", "mangle", "PREROUTING")),
            "3:27: unsupported CONNMARK --restore-mark: it would keep part of "
            "the old mark and copy part of the other");
  EXPECT_EQ(FirstError(Wrap("-m conntrack --ctstate NEW,SNAT")),
            "3:33: mixing SNAT/DNAT with connection states is not supported");
  EXPECT_EQ(FirstError(Wrap("-j LOG --log-level bad")),
            "3:29: invalid log level 'bad'");
}

TEST(IptablesErrors, AllErrorsReportedNoPartialRuleset) {
  ir::Diagnostics diags;
  const std::string text =
      "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 99999\n"
      "-A INPUT -j ACCEPT\n-A INPUT --bogus\nCOMMIT\n";
  const int file = diags.AddFile("t.ipt", text);
  absl::StatusOr<ir::Ruleset> rs = ParseIptablesSave(text, file, diags);
  EXPECT_FALSE(rs.ok());
  EXPECT_EQ(diags.error_count(), 2);
  EXPECT_THAT(rs.status().message(), HasSubstr("t.ipt:3:"));
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
