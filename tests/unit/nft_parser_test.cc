// Unit tests of the nft frontend: small lowering cases written out beside
// their expected IR text, the errors of single constructs beside them.
// (Diagnostics in general: nft_parser_errors_test.cc.)
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#include "absl/strings/str_split.h"
#include "frontends/nft/nft.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "emit/nft_print.h"
#include "ir/diag.h"
#include "ir/hook_order.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "packet/parse.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using ::testing::HasSubstr;

using nft_test::ExpectError;
using nft_test::Parse;

// Compiles the rule in a one-chain table of `family` and returns the
// printed block without its header line.
std::string Lower(const std::string& family, const std::string& rule) {
  std::string text = "table " + family + " t {\n chain c {\n  type filter hook " +
                     (family == "netdev" ? "ingress device lo" : "input") +
                     " priority 0;\n  " + rule + "\n }\n}\n";
  auto r = Parse(text);
  if (!r->rs.ok()) return "ERROR: " + r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  const ir::Chain& c = t.chains.at(0);
  if (c.rules.size() != 1) return "ERROR: rule count";
  std::string out = ir::PrintRule(t, c, c.rules[0]);
  return out.substr(out.find('\n') + 1);
}

TEST(NftParser, RulesetStructure) {
  auto r = Parse(
      "flush ruleset\n"
      "define web = { 80, 443 }\n"
      "table inet filter {\n"
      "  set allowed { type ipv4_addr; flags interval; elements = { 10.0.0.0/8, 192.168.1.1 }; }\n"
      "  chain input {\n"
      "    type filter hook input priority filter + 10; policy drop;\n"
      "    ct state established,related accept\n"
      "    tcp dport $web accept\n"
      "    ip saddr @allowed jump allowed_in\n"
      "  }\n"
      "  chain allowed_in { counter accept; }\n"
      "}\n"
      "add rule inet filter allowed_in drop\n"
      "insert rule inet filter allowed_in log\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  ASSERT_EQ(r->rs->tables.size(), 1u);
  const ir::Table& t = r->rs->tables[0];
  EXPECT_EQ(t.family, ir::Family::kInet);
  ASSERT_EQ(t.chains.size(), 2u);
  ASSERT_TRUE(t.chains[0].base.has_value());
  EXPECT_EQ(t.chains[0].base->priority, 10);
  EXPECT_EQ(t.chains[0].base->policy, ir::VerdictCode::kDrop);
  EXPECT_EQ(t.chains[0].rules.size(), 3u);
  EXPECT_EQ(t.chains[0].rules[0].loc.line, 7u);
  EXPECT_FALSE(t.chains[1].base.has_value());
  ASSERT_EQ(t.chains[1].rules.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<ir::Log>(t.chains[1].rules[0].exprs[0].expr));
  const ir::Set* s = t.FindSet("allowed");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->interval());
  EXPECT_EQ(s->elements.size(), 2u);
}

TEST(NftParser, AddElementUsesDeclaredType) {
  auto r = Parse("table ip t {\n set marks { type mark; }\n set ports { type inet_service; }\n}\n"
                 "add element ip t marks { 0x10 }\n"
                 "add element ip t ports { ssh }\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Set* marks = r->rs->tables[0].FindSet("marks");
  ASSERT_NE(marks, nullptr);
  ASSERT_EQ(marks->elements.size(), 1u);
  // mark is host order: 0x10 sits in the first byte.
  EXPECT_EQ(marks->elements[0].key, ir::Bytes({0x10, 0, 0, 0}));
  const ir::Set* ports = r->rs->tables[0].FindSet("ports");
  ASSERT_NE(ports, nullptr);
  EXPECT_EQ(ports->elements.at(0).key, ir::Bytes({0, 22}));
}

TEST(NftParser, IncludeRelativeToBaseDir) {
  std::string dir = ::testing::TempDir();
  {
    std::ofstream out(dir + "/nft_inc_test.nft");
    out << "define port = 22\n";
  }
  ir::Diagnostics diags;
  std::string text = "include \"nft_inc_test.nft\"\ntable ip t {\n chain c {\n  tcp dport $port\n }\n}\n";
  int file = diags.AddFile("main.nft", text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags, dir);
  ASSERT_TRUE(rs.ok()) << diags.Format();
  EXPECT_EQ(rs->tables.at(0).chains.at(0).rules.size(), 1u);
  ir::Diagnostics diags2;
  int f2 = diags2.AddFile("main.nft", "include \"missing.nft\"\n");
  EXPECT_FALSE(frontends::ParseNft("include \"missing.nft\"\n", f2, diags2, dir).ok());
  EXPECT_EQ(diags2.all().at(0).loc.line, 1u);
}

TEST(NftParser, RuleEntryPointAddsToTable) {
  ir::Table t;
  t.family = ir::Family::kIp;
  t.name = "t";
  ir::Chain c;
  c.name = "in";
  t.chains.push_back(c);
  for (int i = 0; i < 2; ++i) {
    ir::Diagnostics diags;
    std::string rule = "tcp dport { 22, 23 } accept";
    int f = diags.AddFile("<rule>", rule);
    ASSERT_TRUE(frontends::ParseNftRule(t, "in", rule, f, diags).ok()) << diags.Format();
  }
  ASSERT_EQ(t.chains[0].rules.size(), 2u);
  ASSERT_EQ(t.sets.size(), 2u);
  EXPECT_NE(t.sets[0].name, t.sets[1].name);  // fresh anonymous names
  ir::Diagnostics diags;
  int f = diags.AddFile("<rule>", "tcp dport 99999");
  EXPECT_FALSE(frontends::ParseNftRule(t, "in", "tcp dport 99999", f, diags).ok());
  EXPECT_EQ(t.chains[0].rules.size(), 2u);  // nothing appended on error
  ir::Diagnostics diags2;
  int f2 = diags2.AddFile("<rule>", "tcp dport { 1, 2 } accept }");
  EXPECT_FALSE(frontends::ParseNftRule(t, "in", "tcp dport { 1, 2 } accept }", f2, diags2).ok());
  EXPECT_EQ(t.chains[0].rules.size(), 2u);
  EXPECT_EQ(t.sets.size(), 2u);
  // A rule that binds a chain and then fails: the bound chain and the
  // rule's set are taken off as well (no copy of the table to fall back on).
  const std::string bound = "tcp dport { 3, 4 } jump { accept; } }";
  ir::Diagnostics diags3;
  int f3 = diags3.AddFile("<rule>", bound);
  EXPECT_FALSE(frontends::ParseNftRule(t, "in", bound, f3, diags3).ok());
  EXPECT_EQ(t.chains.size(), 1u);
  EXPECT_EQ(t.chains[0].rules.size(), 2u);
  EXPECT_EQ(t.sets.size(), 2u);
  // The same rule without the stray brace is added whole.
  ir::Diagnostics diags4;
  const std::string good = bound.substr(0, bound.size() - 2);
  int f4 = diags4.AddFile("<rule>", good);
  ASSERT_TRUE(frontends::ParseNftRule(t, "in", good, f4, diags4).ok()) << diags4.Format();
  EXPECT_EQ(t.chains.size(), 2u);
  EXPECT_EQ(t.chains[0].rules.size(), 3u);
  EXPECT_EQ(t.sets.size(), 3u);
}

TEST(NftParser, NamedPriorities) {
  auto r = Parse("table ip t {\n chain a { type filter hook prerouting priority raw; }\n"
                 " chain b { type filter hook input priority mangle - 5; }\n"
                 " chain c { type filter hook input priority -150; }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  EXPECT_EQ(r->rs->tables[0].chains[0].base->priority, -300);
  EXPECT_EQ(r->rs->tables[0].chains[1].base->priority, -155);
  EXPECT_EQ(r->rs->tables[0].chains[2].base->priority, -150);
  // nft 1.0.6 takes dstnat at prerouting and srcnat at postrouting only.
  ExpectError("table ip6 t {\n chain c {\n  type nat hook output priority dstnat;\n }\n}\n", 3, 33,
              "priority 'dstnat' is not valid at hook output");
  ExpectError("table inet t {\n chain c {\n  type filter hook input priority srcnat;\n }\n}\n", 3,
              35, "priority 'srcnat' is not valid at hook input");
}

// Bridge standard priorities (filter -200, dstnat -300, out 100, srcnat
// 300), arp's filter 0.
TEST(NftParser, LinkLayerPriorities) {
  auto r = Parse("table bridge b {\n chain a { type filter hook prerouting priority dstnat; }\n"
                 " chain b { type filter hook input priority filter + 3; }\n"
                 " chain c { type filter hook output priority out; }\n"
                 " chain d { type filter hook postrouting priority srcnat; }\n}\n"
                 "table arp a {\n chain i { type filter hook input priority filter; }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  std::vector<int32_t> got;
  for (const ir::Table& t : r->rs->tables) {
    for (const ir::Chain& c : t.chains) got.push_back(c.base->priority);
  }
  EXPECT_EQ(got, (std::vector<int32_t>{-300, -197, 100, 300, 0}));
}

// `jump { ... }` binds a new chain "__chainN" holding the body's rules; a
// dormant table's chains are not at their hooks.
TEST(NftParser, ChainBindingsAndDormantTables) {
  auto r = Parse("table ip t {\n chain __chain1 {\n }\n chain c {\n  type filter hook input priority 0;\n"
                 "  tcp dport 1 jump {\n   udp dport 2 drop\n   accept\n  }\n"
                 "  goto { accept; }\n  drop\n }\n}\n"
                 "table ip off {\n chain c {\n  type filter hook input priority 0;\n }\n"
                 " flags dormant\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables[0];
  ASSERT_EQ(t.chains.size(), 4u);
  ASSERT_EQ(t.chains[1].rules.size(), 3u);
  EXPECT_EQ(t.chains[2].name, "__chain0");
  EXPECT_EQ(t.chains[2].rules.size(), 2u);
  EXPECT_EQ(t.chains[3].name, "__chain2");  // __chain1 is taken
  EXPECT_EQ(t.chains[3].rules.size(), 1u);
  EXPECT_TRUE(t.chains[1].base.has_value());
  EXPECT_FALSE(r->rs->tables[1].chains[0].base.has_value());
  // The last declaration of a table sets its flags (as `nft -f` does).
  for (const auto& [text, dormant] : std::vector<std::pair<std::string, bool>>{
           {"table ip t {\n flags dormant\n chain b {\n  type filter hook output priority 0;\n }\n}\n"
            "add table ip t\n", false},
           {"table ip t {\n chain b {\n  type filter hook input priority 0;\n }\n}\n"
            "add table ip t { flags dormant; }\n", true}}) {
    auto d = Parse(text);
    ASSERT_TRUE(d->rs.ok()) << d->diags.Format();
    EXPECT_EQ(d->rs->tables[0].chains.back().base.has_value(), !dormant) << text;
  }
  ExpectError("table ip t {\n chain c {\n  jump { accept; }\n }\n chain __chain0 {\n }\n}\n", 5, 8,
              "chain '__chain0' is the name of an anonymous chain binding");
}

TEST(NftLowering, InetSaddrPrefix) {
  EXPECT_EQ(Lower("inet", "ip saddr 10.0.0.0/10 drop"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ]\n"
            "  [ cmp eq reg 1 0x0000000a ]\n"
            "  [ immediate reg 0 drop ]\n");
}

TEST(NftLowering, TcpDportInIpTable) {
  EXPECT_EQ(Lower("ip", "tcp dport 22 counter accept"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00001600 ]\n"
            "  [ counter pkts 0 bytes 0 ]\n"
            "  [ immediate reg 0 accept ]\n");
}

TEST(NftLowering, IifnameWildcard) {
  EXPECT_EQ(Lower("ip", "iifname \"eth*\""),
            "  [ meta load iifname => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00687465 ]\n");
}

TEST(NftLowering, CtStateFlags) {
  EXPECT_EQ(Lower("ip", "ct state established,related"),
            "  [ ct load state => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x00000006 ) ^ 0x00000000 ]\n"
            "  [ cmp neq reg 1 0x00000000 ]\n");
}

TEST(NftLowering, ConcatRegisters) {
  std::string out = Lower("ip", "ip saddr . tcp dport { 10.0.0.1 . 22 }");
  EXPECT_THAT(out, HasSubstr("[ payload load 4b @ network header + 12 => reg 1 ]"));
  EXPECT_THAT(out, HasSubstr("[ payload load 2b @ transport header + 2 => reg 9 ]"));
  EXPECT_THAT(out, HasSubstr("[ lookup reg 1 set __set%d ]"));
}

TEST(NftLowering, MetaMarkSet) {
  EXPECT_EQ(Lower("ip", "meta mark set 0xffffffc8 xor 0x16"),
            "  [ immediate reg 1 0xffffffde ]\n"
            "  [ meta set mark with reg 1 ]\n");
}

TEST(NftLowering, HostOrderRangeIsSwapped) {
  EXPECT_EQ(Lower("ip", "meta length 33-45"),
            "  [ meta load len => reg 1 ]\n"
            "  [ byteorder reg 1 = hton(reg 1, 4, 4) ]\n"
            "  [ range eq reg 1 0x21000000 0x2d000000 ]\n");
}

TEST(NftLowering, TcpOptionFieldAndPresence) {
  EXPECT_EQ(Lower("inet", "tcp option maxseg size 1"),
            "  [ exthdr load tcpopt 2b @ 2 + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000100 ]\n");
  EXPECT_EQ(Lower("ip", "tcp option sack-perm missing"),
            "  [ exthdr load tcpopt 1b @ 4 + 0 present => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000000 ]\n");
  EXPECT_EQ(Lower("ip", "tcp option @255,8,8 255"),
            "  [ exthdr load tcpopt 1b @ 255 + 1 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x000000ff ]\n");
  EXPECT_EQ(Lower("ip", "tcp option mptcp subtype mp-join"),
            "  [ exthdr load tcpopt 1b @ 30 + 2 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x000000f0 ) ^ 0x00000000 ]\n"
            "  [ cmp eq reg 1 0x00000010 ]\n");
}

TEST(NftLowering, Ipv6ExtensionHeaders) {
  // inet needs the IPv6 dependency; the bit field gets its mask.
  EXPECT_EQ(Lower("inet", "frag frag-off 22"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000000a ]\n"
            "  [ exthdr load ipv6 2b @ 44 + 2 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x0000f8ff ) ^ 0x00000000 ]\n"
            "  [ cmp eq reg 1 0x0000b000 ]\n");
  EXPECT_EQ(Lower("ip6", "exthdr hbh != exists"),
            "  [ exthdr load ipv6 1b @ 0 + 0 present => reg 1 ]\n"
            "  [ cmp neq reg 1 0x00000001 ]\n");
  EXPECT_EQ(Lower("ip6", "srh sid[2] dead::beef"),
            "  [ exthdr load ipv6 16b @ 43 + 24 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000adde 0x00000000 0x00000000 0xefbe0000 ]\n");
  EXPECT_EQ(Lower("ip6", "mh type home-agent-switch-message"),
            "  [ exthdr load ipv6 1b @ 135 + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000000c ]\n");
}

TEST(NftLowering, SctpChunk) {
  EXPECT_EQ(Lower("ip", "sctp chunk init initial-tsn 5"),
            "  [ exthdr load 4b @ 1 + 16 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x05000000 ]\n");
  EXPECT_EQ(Lower("inet", "sctp chunk asconf exists"),
            "  [ exthdr load 1b @ 193 + 0 present => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n");
}

TEST(NftParserErrors, ExthdrMistakes) {
  ExpectError("table ip t {\n chain c {\n  tcp option maxsgg exists\n }\n}\n", 3, 14,
              "unknown tcp option 'maxsgg'", "maxseg");
  ExpectError("table ip t {\n chain c {\n  tcp option eol left 1\n }\n}\n", 3, 18,
              "invalid value 'left'");
  ExpectError("table ip t {\n chain c {\n  tcp option 256 exists\n }\n}\n", 3, 14,
              "unknown tcp option '256'");
  ExpectError("table ip6 t {\n chain c {\n  exthdr hpp exists\n }\n}\n", 3, 10,
              "unknown extension header 'hpp'", "hbh");
  ExpectError("table ip t {\n chain c {\n  frag nexthdr tcp\n }\n}\n", 3, 3,
              "IPv6 expression in an ip table");
}

TEST(NftParserErrors, SetTypeChangedAfterItsElements) {
  // Found by ruleset_parse_fuzz: elements of one field, then a two-field type.
  ExpectError("table ip t {\n set s {\n  type ifname\n  elements = { \"eth0\" }\n"
              "  type ifname . mark\n }\n}\n",
              4, 16, "element has 1 field(s), the set type 2");
}

TEST(NftLowering, PayloadSetMergesIntoWholeWords) {
  // ttl is one byte: with the ip checksum it is written as a 16-bit word.
  EXPECT_EQ(Lower("ip", "ip ttl set 23"),
            "  [ payload load 2b @ network header + 8 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x0000ff00 ) ^ 0x00000017 ]\n"
            "  [ payload write reg 1 => 2b @ network header + 8 csum_type 1 csum_off 10 csum_flags 0x0 ]\n");
  EXPECT_EQ(Lower("ip", "ip ecn set ip ecn | ect0"),
            "  [ payload load 2b @ network header + 0 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x0000fdff ) ^ 0x00000200 ]\n"
            "  [ payload write reg 1 => 2b @ network header + 0 csum_type 1 csum_off 10 csum_flags 0x0 ]\n");
  EXPECT_EQ(Lower("ip", "ip daddr set 127.0.0.1"),
            "  [ immediate reg 1 0x0100007f ]\n"
            "  [ payload write reg 1 => 4b @ network header + 16 csum_type 1 csum_off 10 csum_flags 0x1 ]\n");
  EXPECT_EQ(Lower("inet", "udp dport set 65535"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000011 ]\n"
            "  [ immediate reg 1 0x0000ffff ]\n"
            "  [ payload write reg 1 => 2b @ transport header + 2 csum_type 0 csum_off 0 csum_flags 0x1 ]\n");
  EXPECT_EQ(Lower("ip", "ct original zone set 1"),
            "  [ immediate reg 1 0x00000001 ]\n"
            "  [ ct set zone with reg 1 , dir original ]\n");
}

TEST(NftParserErrors, PayloadSetMistakes) {
  ExpectError("table ip t {\n chain c {\n  ip ttl set 256\n }\n}\n", 3, 14, "exceeds");
  ExpectError("table ip t {\n chain c {\n  ip ttl set ip id\n }\n}\n", 3, 14,
              "a field of the same size");
  ExpectError("table ip t {\n chain c {\n  ip dscp set ip ecn\n }\n}\n", 3, 15,
              "a field of part of a byte");
  // A TCP option takes 2- or 4-byte writes only (nft_tcpopt_test.cc has
  // the writes that load).
  ExpectError("table inet t {\n chain c {\n  tcp flags syn tcp option window count set 4\n"
              " }\n}\n",
              3, 17, "cannot set this TCP option field");
}

// A header field set from another field or a map, as nft 1.0.6 sends it
// (`nft --debug=netlink`): the value into reg 1, then the write.
TEST(NftLowering, PayloadSetFromAFieldOrAMap) {
  EXPECT_EQ(Lower("ip", "ip daddr set ip saddr"),
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ payload write reg 1 => 4b @ network header + 16 csum_type 1 csum_off 10 "
            "csum_flags 0x1 ]\n");
  EXPECT_EQ(Lower("inet", "tcp dport set tcp sport"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 0 => reg 1 ]\n"
            "  [ payload write reg 1 => 2b @ transport header + 2 csum_type 1 csum_off 16 "
            "csum_flags 0x0 ]\n");
  EXPECT_EQ(Lower("ip", "ip daddr set numgen inc mod 16 map { 0-7 : 10.0.1.1, 8-15 : 10.0.1.2 }"),
            "  [ numgen reg 1 = inc mod 16 ]\n"
            "  [ byteorder reg 1 = hton(reg 1, 4, 4) ]\n"
            "  [ lookup reg 1 set __map%d dreg 1 ]\n"
            "  [ payload write reg 1 => 4b @ network header + 16 csum_type 1 csum_off 10 "
            "csum_flags 0x1 ]\n");
  EXPECT_EQ(Lower("ip", "ip daddr set iifname map { \"eth0\" : 1.1.1.1 }"),
            "  [ meta load iifname => reg 1 ]\n"
            "  [ lookup reg 1 set __map%d dreg 1 ]\n"
            "  [ payload write reg 1 => 4b @ network header + 16 csum_type 1 csum_off 10 "
            "csum_flags 0x1 ]\n");
}

// A rule in a `type nat hook HOOK` chain of a FAMILY table, printed.
std::string LowerNat(const std::string& family, const std::string& hook, const std::string& rule) {
  std::string text = "table " + family + " t {\n chain c {\n  type nat hook " + hook +
                     " priority 0;\n  " + rule + "\n }\n}\n";
  auto r = Parse(text);
  if (!r->rs.ok()) return "ERROR: " + r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  const ir::Chain& c = t.chains.at(0);
  std::string out = ir::PrintRule(t, c, c.rules.at(0));
  return out.substr(out.find('\n') + 1);
}

TEST(NftLowering, QueueAndQuota) {
  EXPECT_EQ(Lower("ip", "queue"), "  [ queue num 0 ]\n");
  EXPECT_EQ(Lower("inet", "queue num 4-5 fanout bypass"), "  [ queue num 4-5 bypass fanout ]\n");
  EXPECT_EQ(Lower("ip", "queue flags bypass to 65535"), "  [ queue num 65535 bypass ]\n");
  EXPECT_EQ(Lower("ip", "quota over 2 kbytes"), "  [ quota bytes 2048 consumed 0 flags 1 ]\n");
  EXPECT_EQ(Lower("ip", "quota 1 mbytes used 1024 bytes"),
            "  [ quota bytes 1048576 consumed 1024 flags 0 ]\n");
}

TEST(NftLowering, NatStatements) {
  EXPECT_EQ(LowerNat("ip", "prerouting", "tcp dport 81 dnat to 192.168.3.2-192.168.3.4:8080-8999"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00005100 ]\n"
            "  [ immediate reg 1 0x0203a8c0 ]\n"
            "  [ immediate reg 2 0x0403a8c0 ]\n"
            "  [ immediate reg 3 0x0000901f ]\n"
            "  [ immediate reg 4 0x00002723 ]\n"
            "  [ nat dnat ip addr_min reg 1 addr_max reg 2 proto_min reg 3 proto_max reg 4 flags 0x2 ]\n");
  EXPECT_EQ(LowerNat("ip6", "postrouting", "snat to [2001:db8::1]:100"),
            "ERROR: t.nft:4:11: error: snat to a port needs a transport protocol: match one "
            "first (tcp dport, meta l4proto)\n  snat to [2001:db8::1]:100\n          ^\n");
  // An address from a map lookup.
  EXPECT_EQ(LowerNat("inet", "prerouting", "dnat ip to ct mark map { 0x14 : 1.2.3.4 }"),
            "  [ ct load mark => reg 1 ]\n"
            "  [ lookup reg 1 set __map%d dreg 1 ]\n"
            "  [ nat dnat ip addr_min reg 1 ]\n");
  // Ports alone in an inet table: the nat family is the table's.
  EXPECT_EQ(LowerNat("inet", "prerouting", "meta l4proto tcp dnat to :80"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ immediate reg 1 0x00005000 ]\n"
            "  [ nat dnat inet proto_min reg 1 flags 0x2 ]\n");
  EXPECT_EQ(LowerNat("ip6", "prerouting", "dnat to 2001:db8::/64"),
            "  [ immediate reg 1 0xb80d0120 0x00000000 0x00000000 0x00000000 ]\n"
            "  [ immediate reg 2 0xb80d0120 0x00000000 0xffffffff 0xffffffff ]\n"
            "  [ nat dnat ip6 addr_min reg 1 addr_max reg 2 ]\n");
  EXPECT_EQ(LowerNat("inet", "postrouting", "ip saddr 10.0.0.0/8 masquerade random,persistent"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ payload load 1b @ network header + 12 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000000a ]\n"
            "  [ masq flags 0xc ]\n");
  EXPECT_EQ(LowerNat("ip", "output", "udp dport 53 redirect to :5353"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000011 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00003500 ]\n"
            "  [ immediate reg 1 0x0000e914 ]\n"
            "  [ redir proto_min reg 1 flags 0x2 ]\n");
}

TEST(NftParserErrors, NatMistakes) {
  ExpectError("table inet t {\n chain c {\n  type nat hook postrouting priority 0\n"
              "  snat to 1.2.3.4\n }\n}\n",
              4, 3, "needs an address family");
  ExpectError("table ip t {\n chain c {\n  type nat hook postrouting priority 0\n"
              "  tcp dport 22 masquerade accept\n }\n}\n",
              4, 27, "terminal statement");
  ExpectError("table ip t {\n chain c {\n  type nat hook forward priority 0\n }\n}\n", 3, 17,
              "nat chains hook");
  ExpectError("table ip t {\n chain c {\n  queue num 65536\n }\n}\n", 3, 13,
              "queue number out of range");
  ExpectError("table ip t {\n chain c {\n  quota 5 kbites\n }\n}\n", 3, 11,
              "unknown unit 'kbites'", "kbytes");
}

TEST(NftLowering, MarkValueExpressions) {
  EXPECT_EQ(Lower("ip", "ct mark set 0x1 or ct mark"),
            "  [ ct load mark => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0xfffffffe ) ^ 0x00000001 ]\n"
            "  [ ct set mark with reg 1 ]\n");
  EXPECT_EQ(Lower("ip", "meta mark set ip dscp << 2 | 0x10"),
            "  [ payload load 1b @ network header + 1 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x000000fc ) ^ 0x00000000 ]\n"
            "  [ bitwise reg 1 = ( reg 1 >> 0x00000002 ) ]\n"
            "  [ bitwise reg 1 = ( reg 1 << 0x00000002 ) ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0xffffffef ) ^ 0x00000010 ]\n"
            "  [ meta set mark with reg 1 ]\n");
  // << binds tighter than &.
  EXPECT_EQ(Lower("ip", "ct mark set ip dscp & 0x0f << 1"),
            "  [ payload load 1b @ network header + 1 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x000000fc ) ^ 0x00000000 ]\n"
            "  [ bitwise reg 1 = ( reg 1 >> 0x00000002 ) ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x0000001e ) ^ 0x00000000 ]\n"
            "  [ ct set mark with reg 1 ]\n");
  EXPECT_EQ(Lower("ip", "meta mark set 0x32 or 0xfffff"),
            "  [ immediate reg 1 0x000fffff ]\n"
            "  [ meta set mark with reg 1 ]\n");
  // Two fields: the second is computed in reg 2 and combined with a
  // register-operand bitwise.
  EXPECT_EQ(Lower("ip", "ct mark set ct mark and 0xffff0000 or meta mark and 0xffff"),
            "  [ ct load mark => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0xffff0000 ) ^ 0x00000000 ]\n"
            "  [ meta load mark => reg 2 ]\n"
            "  [ bitwise reg 2 = ( reg 2 & 0x0000ffff ) ^ 0x00000000 ]\n"
            "  [ bitwise reg 1 = ( reg 1 | reg 2 ) ]\n"
            "  [ ct set mark with reg 1 ]\n");
  // Dependencies come before the value's registers are filled.
  EXPECT_EQ(Lower("inet", "meta mark set meta mark ^ ip dscp"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ meta load mark => reg 1 ]\n"
            "  [ payload load 1b @ network header + 1 => reg 2 ]\n"
            "  [ bitwise reg 2 = ( reg 2 & 0x000000fc ) ^ 0x00000000 ]\n"
            "  [ bitwise reg 2 = ( reg 2 >> 0x00000002 ) ]\n"
            "  [ bitwise reg 1 = ( reg 1 ^ reg 2 ) ]\n"
            "  [ meta set mark with reg 1 ]\n");
  ExpectError("table ip t {\n chain c {\n  ct mark set ct mark << meta mark\n }\n}\n", 3, 23,
              "shift by a non-constant amount");
  ExpectError("table ip t {\n chain c {\n  ct mark set ct mark << 32\n }\n}\n", 3, 23,
              "shift by 32 bits or more");
}

TEST(NftLowering, MetaHourAndTimeAreUtc) {
  // Hours and dates are local time: fix the zone (UTC+2) for the test.
  const char* saved = std::getenv("TZ");
  std::string old = saved ? saved : "";
  setenv("TZ", "UTC-2", 1);
  tzset();
  EXPECT_EQ(Lower("ip", "meta hour \"17:00\" drop"),
            "  [ meta load hour => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000d2f0 ]\n"
            "  [ immediate reg 0 drop ]\n");
  // 00:00-02:02 local is 22:00-00:02 UTC: outside [00:02, 22:00].
  EXPECT_EQ(Lower("ip", "meta hour \"00:00\"-\"02:02\" drop"),
            "  [ meta load hour => reg 1 ]\n"
            "  [ byteorder reg 1 = hton(reg 1, 4, 4) ]\n"
            "  [ range neq reg 1 0x78000000 0x60350100 ]\n"
            "  [ immediate reg 0 drop ]\n");
  EXPECT_EQ(Lower("ip", "meta time \"1970-05-23 21:07:14\" drop"),
            "  [ meta load time => reg 1 ]\n"
            "  [ cmp eq reg 1 0x43f05400 0x002bd503 ]\n"
            "  [ immediate reg 0 drop ]\n");
  ExpectError("table ip t {\n chain c {\n  meta hour \"24:00\" drop\n }\n}\n", 3, 13,
              "invalid value");
  if (saved) {
    setenv("TZ", old.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

// nft tracks every protocol of `meta l4proto { tcp, udp }`: a later tcp
// header field cannot hold for all of them (th fields can).
TEST(NftParserErrors, TransportFieldAfterProtocolSet) {
  ExpectError("table inet t {\n chain c {\n  ip protocol { tcp, udp } tcp dport 20\n }\n}\n",
              3, 28, "conflicting protocols specified: udp vs. tcp");
  ExpectError("table ip t {\n chain c {\n  meta l4proto { udp, tcp } udp dport 20\n }\n}\n",
              3, 29, "conflicting protocols specified: tcp vs. udp");
  EXPECT_EQ(Lower("ip", "meta l4proto { tcp, udp } th dport 20"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ lookup reg 1 set __set%d ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00001400 ]\n");
  EXPECT_EQ(Lower("ip", "meta l4proto { tcp } tcp dport 20"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00001400 ]\n");
}

// A prefix on a bitfield is a mask on the field's value (nft lists
// `ip dscp 1/6` as `ip dscp & 0x3f == lephb`).
TEST(NftLowering, BitfieldPrefixMasksTheShiftedValue) {
  EXPECT_EQ(Lower("ip", "ip dscp 1/6"),
            "  [ payload load 1b @ network header + 1 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x000000fc ) ^ 0x00000000 ]\n"
            "  [ bitwise reg 1 = ( reg 1 >> 0x00000002 ) ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x0000003f ) ^ 0x00000000 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n");
  EXPECT_EQ(Lower("ip", "ip dscp & 0x38 == 0x08"),
            "  [ payload load 1b @ network header + 1 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x000000fc ) ^ 0x00000000 ]\n"
            "  [ bitwise reg 1 = ( reg 1 >> 0x00000002 ) ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x00000038 ) ^ 0x00000000 ]\n"
            "  [ cmp eq reg 1 0x00000008 ]\n");
}

// An ICMP type set is the context that `icmp id` checks: no second test.
TEST(NftLowering, IcmpTypeSetSatisfiesFieldDependency) {
  EXPECT_EQ(Lower("ip", "icmp type { echo-reply, echo-request } icmp id 1"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n"
            "  [ payload load 1b @ transport header + 0 => reg 1 ]\n"
            "  [ lookup reg 1 set __set%d ]\n"
            "  [ payload load 2b @ transport header + 4 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000100 ]\n");
}

// nft sorts a rule's payload equalities by offset before merging adjacent
// ones, so order in the rule does not matter; other matches in between
// do not stop it, statements do.
TEST(NftLowering, PayloadMergeSortsByOffset) {
  EXPECT_EQ(Lower("ip", "icmp code 1 icmp type 2"),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n"
            "  [ payload load 2b @ transport header + 0 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000102 ]\n");
  EXPECT_EQ(Lower("ip", "ip ttl 3 meta mark 1 ip protocol 2"),
            "  [ meta load mark => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n"
            "  [ payload load 2b @ network header + 8 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000203 ]\n");
  EXPECT_EQ(Lower("ip", "ip ttl 3 counter ip protocol 2"),
            "  [ payload load 1b @ network header + 8 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000003 ]\n"
            "  [ counter pkts 0 bytes 0 ]\n"
            "  [ payload load 1b @ network header + 9 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n");
}

// A named set of `type dscp` (or `typeof ip6 dscp`) holds dscp values, so
// the lookup key is the field shifted down; an anonymous set holds the
// values shifted up instead.
TEST(NftLowering, NamedSetKeyedByBitfieldShiftsItDown) {
  for (const char* decl : {"type dscp", "typeof ip6 dscp"}) {
    std::string text = std::string("table ip6 t {\n set s { ") + decl +
                       "; elements = { cs1, af41 }; }\n chain c {\n"
                       "  type filter hook input priority 0;\n  ip6 dscp @s accept\n }\n}\n";
    auto r = Parse(text);
    ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
    const ir::Table& t = r->rs->tables.at(0);
    const ir::Chain& c = t.chains.at(0);
    std::string out = ir::PrintRule(t, c, c.rules.at(0));
    EXPECT_EQ(out.substr(out.find('\n') + 1),
              "  [ payload load 2b @ network header + 0 => reg 1 ]\n"
              "  [ bitwise reg 1 = ( reg 1 & 0x0000c00f ) ^ 0x00000000 ]\n"
              "  [ byteorder reg 1 = ntoh(reg 1, 2, 2) ]\n"
              "  [ bitwise reg 1 = ( reg 1 >> 0x00000006 ) ]\n"
              "  [ lookup reg 1 set s ]\n"
              "  [ immediate reg 0 accept ]\n")
        << decl;
    EXPECT_EQ(t.sets.at(0).key_len, 1u) << decl;
    EXPECT_THAT(ir::PrintSet(t, t.sets.at(0)), HasSubstr("element 00000008")) << decl;
  }
}

// The verdict the reference interpreter gives a frame with `tos` (IPv4
// TOS / IPv6 traffic class) under `rule ... drop` in a FAMILY input chain.
ir::VerdictCode VerdictForTos(const std::string& family, const std::string& sets,
                              const std::string& rule, uint8_t tos) {
  std::string text = "table " + family + " t {\n" + sets +
                     " chain c {\n  type filter hook input priority 0;\n  " + rule +
                     " drop\n }\n}\n";
  auto r = Parse(text);
  EXPECT_TRUE(r->rs.ok()) << r->diags.Format();
  if (!r->rs.ok()) return ir::VerdictCode::kContinue;
  testing::FrameSpec spec;
  if (family == "ip6") {
    spec.src = "2001:db8::1";
    spec.dst = "2001:db8::2";
  }
  spec.tos = tos;
  std::vector<uint8_t> frame = testing::BuildFrame(spec);
  PacketView v = packet::ParseEthernet(frame.data(), static_cast<uint32_t>(frame.size()));
  return ir::Interpreter(*r->rs).Run(ir::Hook::kInput, v, {}).verdict;
}

// What the lowerings above mean: the interpreter drops exactly the frames
// whose DSCP the rule names.
TEST(NftSemantics, DscpPrefixAndNamedDscpSets) {
  const uint8_t cs1 = 8 << 2, af41 = 34 << 2, dscp1 = 1 << 2;
  EXPECT_EQ(VerdictForTos("ip", "", "ip dscp 1/6", dscp1), ir::VerdictCode::kDrop);
  EXPECT_EQ(VerdictForTos("ip", "", "ip dscp 1/6", cs1), ir::VerdictCode::kAccept);
  EXPECT_EQ(VerdictForTos("ip", "", "ip dscp & 0x38 == 0x20", af41), ir::VerdictCode::kDrop);
  for (const char* decl : {"type dscp", "typeof ip6 dscp"}) {
    std::string set = std::string(" set s { ") + decl + "; elements = { cs1, af41 }; }\n";
    EXPECT_EQ(VerdictForTos("ip6", set, "ip6 dscp @s", af41 | 1), ir::VerdictCode::kDrop) << decl;
    EXPECT_EQ(VerdictForTos("ip6", set, "ip6 dscp @s", cs1), ir::VerdictCode::kDrop) << decl;
    EXPECT_EQ(VerdictForTos("ip6", set, "ip6 dscp @s", dscp1), ir::VerdictCode::kAccept) << decl;
  }
}

// ICMPv6 in IPv4 (or ICMP in IPv6) is a match nft allows: the network
// protocol already named stays, and no conflict is reported.
TEST(NftLowering, IcmpOnTheOtherIpVersion) {
  EXPECT_EQ(Lower("inet", "meta nfproto ipv4 icmpv6 type echo-request"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000003a ]\n"
            "  [ payload load 1b @ transport header + 0 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000080 ]\n");
  // Without one, icmp implies IPv4.
  EXPECT_EQ(Lower("inet", "icmp type echo-request"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n"
            "  [ payload load 1b @ transport header + 0 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000008 ]\n");
}

// `meta protocol ip` in an ip table: nft drops it only when another
// statement follows (its stmt_reduce deletes it on meeting the next one).
TEST(NftLowering, MetaProtocolOfTheFamilyAloneStays) {
  EXPECT_EQ(Lower("ip", "meta protocol ip"),
            "  [ meta load protocol => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000008 ]\n");
  EXPECT_EQ(Lower("ip", "meta protocol ip accept"), "  [ immediate reg 0 accept ]\n");
}

// `ct original saddr` without ip/ip6 is the family-sized NFT_CT_SRC.
TEST(NftLowering, PlainCtAddressIsCtSrc) {
  EXPECT_EQ(Lower("inet", "meta nfproto ipv4 ct original saddr 1.2.3.4"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ ct load src => reg 1 , dir original ]\n"
            "  [ cmp eq reg 1 0x04030201 ]\n");
  EXPECT_EQ(Lower("ip", "ct original ip saddr 1.2.3.4"),
            "  [ ct load src_ip => reg 1 , dir original ]\n"
            "  [ cmp eq reg 1 0x04030201 ]\n");
}

// Realm names come from rt_realms (0 cosmos), device groups from group.
TEST(NftLowering, RealmAndDevgroupNames) {
  EXPECT_EQ(Lower("ip", "meta rtclassid \"cosmos\""),
            "  [ meta load rtclassid => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000000 ]\n");
  EXPECT_EQ(Lower("ip", "meta iifgroup \"default\""),
            "  [ meta load iifgroup => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000000 ]\n");
  EXPECT_THAT(Lower("ip", "meta rtclassid \"default\""), HasSubstr("ERROR"));
}

// In a concatenation nft shifts a bitfield down and the elements hold
// its values (mp-join is 1, not 0x10).
TEST(NftLowering, BitfieldInConcatenationIsShiftedDown) {
  std::string text =
      "table ip t {\n chain c {\n  type filter hook input priority 0;\n"
      "  tcp option mptcp subtype . tcp dport { mp-join . 100 }\n }\n}\n";
  auto r = Parse(text);
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  const ir::Chain& c = t.chains.at(0);
  std::string out = ir::PrintRule(t, c, c.rules.at(0));
  EXPECT_THAT(out, HasSubstr("  [ bitwise reg 1 = ( reg 1 & 0x000000f0 ) ^ 0x00000000 ]\n"
                             "  [ bitwise reg 1 = ( reg 1 >> 0x00000004 ) ]\n"
                             "  [ payload load 2b @ transport header + 2 => reg 9 ]\n"));
  EXPECT_THAT(ir::PrintSet(t, t.sets.at(0)), HasSubstr("element 00000001 00006400"));
}

// `meta ipsec` is nft's other name of `meta secpath`.
TEST(NftLowering, MetaIpsecIsSecpath) {
  EXPECT_EQ(Lower("inet", "meta ipsec exists"),
            "  [ meta load secpath => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n");
}

// `meta mark set meta mark | ip dscp` in the interpreter: the mark the
// packet leaves with combines both values.
TEST(NftSemantics, RegisterOperandBitwise) {
  auto r = Parse("table ip t {\n chain c {\n  type filter hook input priority 0;\n"
                 "  meta mark set meta mark | ip dscp\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  testing::FrameSpec spec;
  spec.tos = 34 << 2;  // af41
  std::vector<uint8_t> frame = testing::BuildFrame(spec);
  PacketView v = packet::ParseEthernet(frame.data(), static_cast<uint32_t>(frame.size()));
  PacketMeta meta;
  meta.mark = 0x100;
  EXPECT_EQ(ir::Interpreter(*r->rs).Run(ir::Hook::kInput, v, meta).mark, 0x100u | 34u);
}

// A masked map key: the bitwise follows the load, the lookup reads it.
TEST(NftLowering, MaskedMapKey) {
  EXPECT_EQ(Lower("ip6", "meta mark set ip6 saddr & ::ffff map { ::2 : 42 }"),
            "  [ payload load 16b @ network header + 8 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x00000000 0x00000000 0x00000000 0xffff0000 ) ^ "
            "0x00000000 0x00000000 0x00000000 0x00000000 ]\n"
            "  [ lookup reg 1 set __map%d dreg 1 ]\n"
            "  [ meta set mark with reg 1 ]\n");
  ExpectError("table ip t {\n chain c {\n  meta mark set ip dscp & 3 map { 1 : 2 }\n }\n}\n",
              3, 29, "unsupported binary operation before map");
}

// An IPv6 range as a map key: the word holds colons, and the last one is
// not where the data starts (`dead::beef-dead::1:aced : 1`).
TEST(NftLowering, Ipv6RangeAsMapKey) {
  auto r = nft_test::Parse(
      "table ip6 t {\n map m {\n  typeof ip6 saddr : meta mark\n  flags interval\n"
      "  elements = { dead::beef-dead::1:aced : 7 }\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Set* m = r->rs->tables.at(0).FindSet("m");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->elements.size(), 1u);
  ASSERT_TRUE(m->elements[0].key_end.has_value());
  EXPECT_EQ((*m->elements[0].key_end)[13], 0x01);  // dead::1:aced
  EXPECT_EQ((*m->elements[0].key_end)[14], 0xac);
  EXPECT_EQ(m->elements[0].data, (ir::Bytes{7, 0, 0, 0}));
}

// A netdev chain on several devices (`devices = { ... }`, kernel 5.5+):
// a packet on any of them passes it, on another device none.
TEST(NftLowering, ChainOnSeveralDevices) {
  const std::string text =
      "table netdev t {\n chain c {\n  type filter hook ingress devices = { \"eth0\", "
      "\"d23456789012345\", \"eth0\" } priority -500; policy accept;\n  drop\n }\n"
      " chain d {\n  type filter hook egress device \"lo\" priority 0;\n }\n}\n";
  auto r = Parse(text);
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  EXPECT_EQ(t.chains.at(0).base->devices,
            (std::vector<std::string>{"eth0", "d23456789012345"}));
  EXPECT_EQ(t.chains.at(1).base->devices, (std::vector<std::string>{"lo"}));
  auto sees = [&](const char* dev) {
    PacketMeta meta;
    meta.has_iif = true;
    std::strncpy(meta.iifname, dev, sizeof meta.iifname - 1);
    return ir::ChainSeesFamily(t, t.chains.at(0), ir::Hook::kIngress, kNfProtoIpv4, meta);
  };
  EXPECT_TRUE(sees("eth0"));
  EXPECT_TRUE(sees("d23456789012345"));
  EXPECT_FALSE(sees("eth1"));
  // Printed back as nft prints it, and read again the same.
  absl::StatusOr<std::string> printed = emit::PrintNft(*r->rs);
  ASSERT_TRUE(printed.ok()) << printed.status();
  EXPECT_THAT(*printed, HasSubstr("devices = { \"eth0\", \"d23456789012345\" }"));
  auto again = Parse(*printed);
  ASSERT_TRUE(again->rs.ok()) << again->diags.Format();
  EXPECT_EQ(again->rs->tables.at(0).chains.at(0).base->devices, t.chains.at(0).base->devices);
}

}  // namespace
}  // namespace rulejit
