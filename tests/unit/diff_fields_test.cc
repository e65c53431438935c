// Tests of the header-space dimensions added for `diff` on real rulesets
// (issue 24, "every field exact"): ct status (a bitmask dimension) and
// meta iif / oif (the interface index, exact for lo's index 1). Each pair
// differs in just that field (an exact answer, every witness replayed
// through both rulesets by the reference interpreter: CheckWitnesses in
// diff_test_util.h) or is equal ("equivalent").
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "compiler/analysis/diff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rulejit/host.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::analysis::diff_test {
namespace {

using ::testing::HasSubstr;

// The regions' descriptions, one per region.
std::vector<std::string> Described(const DiffResult& d) {
  std::vector<std::string> out;
  for (const DiffRegion& r : d.regions) out.push_back(DescribeCube(r.cube, d.space));
  return out;
}

TEST(DiffFieldsTest, CtStatusIsADimension) {
  DiffResult d = Diff(Nft(InputChain("    ct status dnat drop\n")),
                      Nft(InputChain("    ct status snat drop\n")));
  ASSERT_EQ(d.regions.size(), 2u);
  // dnat without snat: OLD drops; snat without dnat: NEW drops.
  EXPECT_THAT(Described(d), ::testing::UnorderedElementsAre(
                                HasSubstr("ct status & 0x30 == 0x20"),
                                HasSubstr("ct status & 0x30 == 0x10")));
  for (const DiffRegion& r : d.regions) {
    EXPECT_THAT(DescribePoint(r.witness, d.space), HasSubstr(" ct status 0x"));
  }
}

TEST(DiffFieldsTest, CtStatusEqualForms) {
  // `ct status dnat` is `ct status & dnat != 0`: the same packets.
  DiffResult same = Diff(Nft(InputChain("    ct status dnat drop\n")),
                         Nft(InputChain("    ct status and dnat == dnat drop\n")));
  EXPECT_TRUE(same.regions.empty());
  // Packets without an entry fail both loads: neither rule drops them.
  DiffResult same2 = Diff(
      Nft(InputChain("    ct status assured,confirmed accept\n"
                     "    ct state { new, established, related } drop\n")),
      Nft(InputChain("    ct status and (assured|confirmed) == 0 drop\n")));
  EXPECT_TRUE(same2.regions.empty()) << DescribeCube(same2.regions[0].cube, same2.space);
}

TEST(DiffFieldsTest, CtStatusOnlyForPacketsWithAnEntry) {
  // A ct status load fails without a conntrack entry: even a test that
  // every status passes never matches invalid or untracked packets.
  for (const char* match : {"ct status and dnat == 0", "ct status and 0 == 0"}) {
    const std::string rule = absl::StrCat("    ", match, " drop\n");
    EXPECT_TRUE(Diff(Nft(InputChain(rule)),
                     Nft(InputChain("    ct state { new, established, related } " +
                                    rule.substr(4))))
                    .regions.empty())
        << match;
    DiffResult d = Diff(Nft(InputChain(rule)),
                        Nft(InputChain("    ct state invalid drop\n" + rule)));
    ASSERT_EQ(d.regions.size(), 1u) << match;
    EXPECT_THAT(DescribeCube(d.regions[0].cube, d.space), HasSubstr("ct state invalid"));
  }
}

TEST(DiffFieldsTest, IifLoIsIifnameLo) {
  // lo has index 1 in every kernel: `iif lo` is `iifname "lo"`.
  const std::pair<const char*, const char*> kEqual[] = {
      {"    iif lo accept\n    drop\n", "    iifname \"lo\" accept\n    drop\n"},
      {"    iif != lo drop\n", "    iifname != \"lo\" drop\n"},
  };
  for (const auto& [by_index, by_name] : kEqual) {
    EXPECT_TRUE(Diff(Nft(InputChain(by_index)), Nft(InputChain(by_name))).regions.empty())
        << by_index;
  }
  DiffResult d = Diff(Nft(InputChain("    iif lo accept\n    drop\n")),
                      Nft(InputChain("    iifname \"eth0\" accept\n    drop\n")));
  EXPECT_THAT(Described(d), ::testing::UnorderedElementsAre(HasSubstr("iifname \"lo\""),
                                                            HasSubstr("iifname \"eth0\"")));
}

TEST(DiffFieldsTest, OifLoIsOifnameLo) {
  const std::string out =
      "table ip filter {\n  chain output {\n    type filter hook output priority 0; "
      "policy accept;\n    oif lo accept\n    drop\n  }\n}\n";
  const std::string by_name =
      "table ip filter {\n  chain output {\n    type filter hook output priority 0; "
      "policy accept;\n    oifname \"lo\" accept\n    drop\n  }\n}\n";
  const std::string other =
      "table ip filter {\n  chain output {\n    type filter hook output priority 0; "
      "policy accept;\n    oifname \"lo0\" accept\n    drop\n  }\n}\n";
  SpaceOptions options{.hook = ir::Hook::kOutput};
  EXPECT_TRUE(Diff(Nft(out), Nft(by_name), options).regions.empty());
  DiffResult d = Diff(Nft(out), Nft(other), options);
  EXPECT_EQ(d.regions.size(), 2u);
}

TEST(DiffFieldsTest, IifOtherIndexIsNotExact) {
  // Which device has index 5 depends on the host: named, not guessed.
  DiffResult d = DiffRulesets(Nft(InputChain("    iif 5 drop\n")), Nft(InputChain("")), {});
  ASSERT_FALSE(d.exact());
  EXPECT_THAT(d.old_inexact[0].reason, HasSubstr("depends on the host"));
}

TEST(DiffFieldsTest, DeviceTypesAreFreeWithoutAHost) {
  // Any device may be of any type: a loopback test is not a name test, nor
  // always true or always false.
  DiffResult d = Diff(Nft(InputChain("    meta iiftype loopback drop\n")), Nft(InputChain("")));
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_THAT(Described(d), ::testing::ElementsAre(HasSubstr("meta iiftype loopback")));
  EXPECT_THAT(DescribePoint(d.regions[0].witness, d.space), HasSubstr("iiftype loopback"));
  EXPECT_TRUE(Diff(Nft(InputChain("    meta iiftype != ether drop\n")),
                   Nft(InputChain("    meta iiftype { 0-0, 2-65535 } drop\n")))
                  .regions.empty());
  // -m mac's implied `meta iiftype ether`: a packet from a non-Ethernet
  // device never matches it.
  DiffResult mac = Diff(Nft(InputChain("    ether saddr 02:00:00:00:00:01 drop\n")),
                        Nft(InputChain("    ether saddr 02:00:00:00:00:01 meta iiftype ether drop\n")));
  EXPECT_TRUE(mac.regions.empty());
  // At output no input device: the load breaks the rule.
  const std::string at_output =
      "table ip filter {\n  chain output {\n    type filter hook output priority 0; "
      "policy accept;\n    meta iiftype loopback drop\n  }\n}\n";
  const std::string empty =
      "table ip filter {\n  chain output {\n    type filter hook output priority 0; "
      "policy accept;\n  }\n}\n";
  EXPECT_TRUE(Diff(Nft(at_output), Nft(empty), {.hook = ir::Hook::kOutput}).regions.empty());
}

TEST(DiffFieldsTest, DeviceTypesAreTheHostsOnAHost) {
  // lo is loopback, eth0 Ethernet, tun0 none (65534): the type is the name's.
  HostModel host = LoopbackHost();
  host.interfaces[0].link_type = 772;
  host.interfaces.push_back(HostInterface{.name = "eth0", .index = 2, .link_type = 1});
  host.interfaces.push_back(HostInterface{.name = "tun0", .index = 3, .link_type = 65534});
  const SpaceOptions on_host{.hook = ir::Hook::kInput, .host = &host};
  EXPECT_TRUE(Diff(Nft(InputChain("    meta iiftype loopback drop\n")),
                   Nft(InputChain("    iifname \"lo\" drop\n")), on_host)
                  .regions.empty());
  EXPECT_TRUE(Diff(Nft(InputChain("    meta iiftype { 772, 65534 } drop\n")),
                   Nft(InputChain("    iifname { \"lo\", \"tun0\" } drop\n")), on_host)
                  .regions.empty());
  // Without the host the two differ (a device named lo of another type).
  EXPECT_FALSE(Diff(Nft(InputChain("    meta iiftype loopback drop\n")),
                    Nft(InputChain("    iifname \"lo\" drop\n")))
                   .regions.empty());
  // Where they differ on the host: tun0 only.
  DiffResult d = Diff(Nft(InputChain("    meta iiftype != ether drop\n")),
                      Nft(InputChain("    iifname \"lo\" drop\n")), on_host);
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_THAT(Described(d), ::testing::ElementsAre(HasSubstr("iifname \"tun0\"")));
  // A device the host model gives no type: not guessed.
  host.interfaces[2].link_type.reset();
  DiffResult untyped = DiffRulesets(Nft(InputChain("    meta iiftype loopback drop\n")),
                                    Nft(InputChain("")), on_host);
  ASSERT_FALSE(untyped.exact());
  EXPECT_THAT(untyped.old_inexact[0].reason, HasSubstr("gives device tun0 no link_type"));
}

TEST(DiffFieldsTest, DeviceGroupsAreFreeWithoutAHostAndTheHostsOnOne) {
  // Without a host any device may be in any group: a witness names it.
  DiffResult d = Diff(Nft(InputChain("    meta iifgroup 5 drop\n")), Nft(InputChain("")));
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_THAT(DescribePoint(d.regions[0].witness, d.space), HasSubstr("iifgroup 5"));
  // iptables' devgroup and nft's masked form mean the same.
  EXPECT_TRUE(Diff(Ipt("*filter\n:INPUT ACCEPT [0:0]\n"
                       "-A INPUT -m devgroup ! --src-group 0x7/0xff -j DROP\nCOMMIT\n"),
                   Nft(InputChain("    meta iifgroup and 0xff != 7 drop\n")))
                  .regions.empty());
  // On a host: eth0 in group 5, lo in the default group 0.
  HostModel host = LoopbackHost();
  host.interfaces.push_back(HostInterface{.name = "eth0", .index = 2, .group = 5});
  const SpaceOptions on_host{.hook = ir::Hook::kInput, .host = &host};
  EXPECT_TRUE(Diff(Nft(InputChain("    meta iifgroup 5 drop\n")),
                   Nft(InputChain("    iifname \"eth0\" drop\n")), on_host)
                  .regions.empty());
  EXPECT_FALSE(Diff(Nft(InputChain("    meta iifgroup 5 drop\n")),
                    Nft(InputChain("    iifname \"eth0\" drop\n")))
                   .regions.empty());
  // No device of the host is in group 6.
  EXPECT_TRUE(Diff(Nft(InputChain("    meta iifgroup 6 drop\n")), Nft(InputChain("")), on_host)
                  .regions.empty());
}

TEST(DiffFieldsTest, TheCpuIsADimension) {
  // Any CPU may process a packet: a witness names one.
  DiffResult d = Diff(Nft(InputChain("    meta cpu 1 drop\n")), Nft(InputChain("")));
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_THAT(DescribePoint(d.regions[0].witness, d.space), HasSubstr("cpu 1"));
  EXPECT_TRUE(Diff(Ipt("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m cpu ! --cpu 1 -j DROP\nCOMMIT\n"),
                   Nft(InputChain("    meta cpu { 0, 2-4294967295 } drop\n")))
                  .regions.empty());
}

TEST(DiffFieldsTest, Ipv6ExtensionHeadersAreAbsentInTheModel) {
  // The model's IPv6 packets have no extension header: `exists` is false
  // for all of them, `missing` true, a field of one never loads.
  DiffResult d = Diff(Nft(FamilyChain("ip6", "    udp dport 1000 exthdr rt missing drop\n")),
                      Nft(FamilyChain("ip6", "    udp dport 1000 exthdr rt exists drop\n")));
  ASSERT_FALSE(d.regions.empty());
  for (const DiffRegion& r : d.regions) {
    EXPECT_EQ(r.old_side.verdict, ir::VerdictCode::kDrop);
    EXPECT_EQ(r.new_side.verdict, ir::VerdictCode::kAccept);
  }
  // ip6tables' rt match (ipv6_mailserver.ipt): never matches in the model.
  DiffResult same = Diff(Ipt("# Generated by ip6tables-save v1.8.9\n*filter\n:INPUT ACCEPT [0:0]\n"
                             "-A INPUT -m rt --rt-type 0 --rt-segsleft 0 -j DROP\nCOMMIT\n"),
                         Ipt("# Generated by ip6tables-save v1.8.9\n*filter\n:INPUT ACCEPT [0:0]\n"
                             "COMMIT\n"));
  EXPECT_TRUE(same.regions.empty());
  // A TCP option is not modelled (yet): no verdict.
  DiffResult opt = DiffRulesets(Nft(FamilyChain("ip6", "    tcp option maxseg exists drop\n")),
                                Nft(FamilyChain("ip6", "")), {});
  EXPECT_FALSE(opt.exact());
}

}  // namespace
}  // namespace rulejit::analysis::diff_test
