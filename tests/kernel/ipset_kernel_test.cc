// -m set against the kernel: the ipsets below are restored into fw with
// `ipset restore` and given to `rulejit eval --ipset FILE`; every dump runs
// in the kernel (iptables-legacy) and on every tier, frame by frame. The
// sets cover hash:ip (with netmask too), hash:net with nested nomatch nets,
// hash:ip,port, hash:net,port, bitmap:port and list:set; the rules use src
// and dst in every position (a lowering that swaps them disagrees), `!`,
// --return-nomatch, fewer flags than dimensions, and non-first fragments
// and non-port protocols against port sets.
//
// Needs root, `ip netns`, iptables-legacy-restore, ipset and the rulejit
// binary; skips with the reason otherwise.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/sequence_cases.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

constexpr char kIpsets[] =
    "create ips hash:ip family inet\n"
    "add ips 10.1.0.1\n"
    "add ips 192.0.2.2\n"
    "create masked hash:ip family inet netmask 24\n"
    "add masked 10.1.3.0\n"
    "create nets hash:net family inet\n"
    "add nets 10.1.0.0/16\n"
    "add nets 10.1.2.0/24 nomatch\n"
    "add nets 10.1.2.128/25\n"
    "add nets 192.0.2.0/28\n"
    "create ipports hash:ip,port family inet\n"
    "add ipports 192.0.2.1,tcp:80\n"
    "add ipports 192.0.2.1,udp:53\n"
    "add ipports 10.1.0.1,udp:2003\n"
    "add ipports 10.1.0.1,udp:53\n"
    "create netports hash:net,port family inet\n"
    "add netports 10.1.0.0/16,udp:53\n"
    "add netports 10.1.2.0/24,udp:53 nomatch\n"
    "add netports 192.0.2.0/24,tcp:443\n"
    "create ports bitmap:port range 0-10000\n"
    "add ports 53\n"
    "add ports 443\n"
    "create ipi hash:ip,port,ip family inet\n"
    "add ipi 10.1.0.1,udp:53,192.0.2.1\n"
    "add ipi 192.0.2.1,udp:53,10.1.2.5\n"
    "create ipn hash:ip,port,net family inet\n"
    "add ipn 192.0.2.1,udp:53,10.1.0.0/16\n"
    "add ipn 192.0.2.1,udp:53,10.1.2.0/24 nomatch\n"
    "add ipn 192.0.2.2,tcp:80,10.0.0.0/8\n"
    "create netif hash:net,iface family inet\n"
    "add netif 10.1.0.0/16,fwin\n"
    "add netif 10.1.2.0/24,fwin nomatch\n"
    "add netif 192.0.2.0/30,fwout\n"
    "add netif 10.2.0.0/16,fwout\n"
    "create lst list:set\n"
    "add lst ips\n"
    "add lst masked\n"
    "create netlist list:set\n"
    "add netlist nets\n"
    "add netlist ips\n";

Frames SetFrames() {
  const char* kSources[] = {"10.1.0.1", "10.1.0.2", "10.1.2.5", "10.1.2.200",
                            "10.1.3.7", "10.2.0.9", "192.0.2.2"};
  const char* kDests[] = {"192.0.2.1", "192.0.2.2", "192.0.2.20", "10.1.2.130", "10.1.0.1"};
  const uint16_t kPorts[] = {53, 80, 443, 2003, 8080};
  const uint8_t kProtos[] = {17, 6, 17, 6, 1, 17};
  Frames frames;
  for (int i = 0; i < 48; ++i) {
    FrameSpec f{.src = kSources[i % 7], .dst = kDests[(i / 2) % 5],
                .proto = kProtos[i % 6],
                .sport = static_cast<uint16_t>(i % 4 == 0 ? 53 : 2000 + i),
                .dport = kPorts[(i / 3) % 5], .payload = std::vector<uint8_t>(8, 0)};
    f.ip_id = static_cast<uint16_t>(100 + i);
    if (i % 11 == 5) f.frag_offset = 3;  // a non-first fragment: in no port set
    frames.push_back(BuildFrame(f));
  }
  return frames;
}

std::string Drops(const std::string& match) {
  return FilterDump(absl::StrCat("-A FORWARD ", match, " -j DROP\n"));
}

std::vector<SequenceCase> Cases() {
  return {
      {"ip_src", Drops("-m set --match-set ips src")},
      {"ip_dst", Drops("-m set --match-set ips dst")},
      {"ip_not_src", Drops("-m set ! --match-set ips src")},
      {"ip_extra_flags", Drops("-m set --match-set ips dst,src")},
      {"masked_src", Drops("-m set --match-set masked src")},
      {"net_src", Drops("-m set --match-set nets src")},
      {"net_dst", Drops("-m set --match-set nets dst")},
      {"net_return_nomatch", Drops("-m set --match-set nets src --return-nomatch")},
      {"net_not", Drops("-m set ! --match-set nets src")},
      {"ipport_dst_dst", Drops("-m set --match-set ipports dst,dst")},
      {"ipport_src_src", Drops("-m set --match-set ipports src,src")},
      {"ipport_src_dst", Drops("-m set --match-set ipports src,dst")},
      {"ipport_not", Drops("-m set ! --match-set ipports dst,dst")},
      {"ipport_one_flag",
       FilterDump("-A FORWARD -m set --match-set ipports dst -j ACCEPT\n"
                  "-A FORWARD -p udp -j DROP\n")},
      {"netport_src_dst", Drops("-m set --match-set netports src,dst")},
      {"netport_dst_dst", Drops("-m set --match-set netports dst,dst")},
      {"netport_nomatch", Drops("-m set --match-set netports src,dst --return-nomatch")},
      {"ipport_one_flag_beside_two",
       FilterDump("-A FORWARD -m set --match-set ipports dst -j DROP\n"
                  "-A FORWARD -m set --match-set ipports dst,src -j DROP\n")},
      {"ipi_src_dst_dst", Drops("-m set --match-set ipi src,dst,dst")},
      {"ipi_dst_dst_src", Drops("-m set --match-set ipi dst,dst,src")},
      {"ipi_not", Drops("-m set ! --match-set ipi dst,dst,src")},
      {"ipn_dst_dst_src", Drops("-m set --match-set ipn dst,dst,src")},
      {"ipn_return_nomatch", Drops("-m set --match-set ipn dst,dst,src --return-nomatch")},
      {"ipn_two_flags", FilterDump("-A FORWARD -m set --match-set ipn dst,dst -j ACCEPT\n"
                                   "-A FORWARD -p tcp -j DROP\n")},
      {"netif_src_src", Drops("-m set --match-set netif src,src")},
      {"netif_dst_dst", Drops("-m set --match-set netif dst,dst")},
      {"netif_src_dst", Drops("-m set --match-set netif src,dst")},
      {"netif_nomatch", Drops("-m set --match-set netif src,src --return-nomatch")},
      {"netif_not", Drops("-m set ! --match-set netif dst,dst")},
      {"ports_dst", Drops("-m set --match-set ports dst")},
      {"ports_src", Drops("-m set --match-set ports src")},
      {"ports_not", Drops("-m set ! --match-set ports dst")},
      {"list_src", Drops("-m set --match-set lst src")},
      {"list_nets_dst", Drops("-m set --match-set netlist dst")},
      {"two_sets",
       Drops("-p udp -m set --match-set nets src -m set ! --match-set ips dst "
             "! --update-counters")},
  };
}

constexpr char kIpsets6[] =
    "create ips6 hash:ip family inet6\n"
    "add ips6 2001:db8:1::1\n"
    "create nets6 hash:net family inet6\n"
    "add nets6 2001:db8:1::/48\n"
    "add nets6 2001:db8:1:2::/64 nomatch\n"
    "create ipports6 hash:ip,port family inet6\n"
    "add ipports6 2001:db8:2::1,tcp:80\n"
    "add ipports6 2001:db8:2::1,udp:53\n"
    "create netports6 hash:net,port family inet6\n"
    "add netports6 2001:db8:1::/48,udp:53\n"
    "create ports bitmap:port range 0-10000\n"
    "add ports 53\n"
    "create lst6 list:set\n"
    "add lst6 ips6\n"
    "add lst6 nets6\n";

Frames SetFrames6() {
  const char* kSources[] = {"2001:db8:1::1", "2001:db8:1::2", "2001:db8:1:2::5", "2001:db8:9::9"};
  const char* kDests[] = {"2001:db8:2::1", "2001:db8:1::1", "2001:db8:3::3"};
  const uint16_t kPorts[] = {53, 80, 443};
  const uint8_t kProtos[] = {17, 6, 17, 58, 6};
  Frames frames;
  for (int i = 0; i < 30; ++i) {
    FrameSpec f{.src = kSources[i % 4], .dst = kDests[(i / 2) % 3], .proto = kProtos[i % 5],
                .sport = static_cast<uint16_t>(i % 3 == 0 ? 53 : 3000 + i),
                .dport = kPorts[(i / 4) % 3], .payload = std::vector<uint8_t>(8, 0),
                .icmp_type = 128};
    frames.push_back(BuildFrame(f));
  }
  return frames;
}

// An ip6tables dump is told from its addresses: the first rule gives one
// (no frame comes from it).
std::string Drops6(const std::string& match) {
  return FilterDump(absl::StrCat("-A FORWARD -s 2001:db8:ffff::1/128 -j ACCEPT\n-A FORWARD ",
                                 match, " -j DROP\n"));
}

std::vector<SequenceCase> Cases6() {
  return {
      {"ip6_src", Drops6("-m set --match-set ips6 src")},
      {"ip6_dst", Drops6("-m set --match-set ips6 dst")},
      {"net6_src", Drops6("-m set --match-set nets6 src")},
      {"net6_return_nomatch", Drops6("-m set --match-set nets6 src --return-nomatch")},
      {"ipport6_dst_dst", Drops6("-m set --match-set ipports6 dst,dst")},
      {"ipport6_not", Drops6("-m set ! --match-set ipports6 dst,src")},
      {"netport6_src_dst", Drops6("-m set --match-set netports6 src,dst")},
      {"ports6_src", Drops6("-m set --match-set ports src")},
      {"list6_src", Drops6("-m set --match-set lst6 src")},
  };
}

TEST(IpsetKernel, EveryTierAgreesWithTheKernel) {
  if (system("ipset --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ipset missing";
  ExpectSequencesAgree("ipset", OracleSyntax::kIptablesSave, ".ipt", Cases(), SetFrames(),
                       kIpsets);
}

TEST(IpsetKernel, Ip6tablesEveryTierAgreesWithTheKernel) {
  if (system("ipset --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ipset missing";
  ExpectSequencesAgree("ipset6", OracleSyntax::kIp6tablesSave, ".ipt", Cases6(), SetFrames6(),
                       kIpsets6);
}

// The SET target: each ruleset runs over one frame sequence in a fresh
// namespace (sets restored empty or as below), so what one frame adds or
// deletes decides the next frames' -m set match. InterleavedSources: UDP
// from 10.1.0.1-3 and 10.2.0.9, even frames to port 53, odd ones to 80.
constexpr char kDynIpsets[] =
    "create dyn hash:ip family inet\n"
    "create pre hash:ip family inet\n"
    "add pre 10.1.0.1\n"
    "add pre 10.1.0.2\n"
    "create m24 hash:ip family inet netmask 24\n"
    "create full hash:ip family inet maxelem 2\n"
    "add full 10.9.9.9\n"
    "create timed hash:ip family inet timeout 600\n";

std::vector<SequenceCase> SetTargetCases() {
  return {
      {"add_src", FilterDump("-A FORWARD -m set --match-set dyn src -j DROP\n"
                             "-A FORWARD -p udp --dport 80 -j SET --add-set dyn src\n")},
      {"add_dst", FilterDump("-A FORWARD -m set --match-set dyn dst -j DROP\n"
                             "-A FORWARD -p udp --dport 80 -j SET --add-set dyn dst,src\n")},
      {"add_in_user_chain",
       FilterDump(":mark - [0:0]\n-A FORWARD -m set ! --match-set dyn src -j mark\n"
                  "-A FORWARD -j DROP\n-A mark -p udp --dport 80 -j SET --add-set dyn src\n"
                  "-A mark -j ACCEPT\n")},
      {"del_src", FilterDump("-A FORWARD -p udp --dport 80 -j SET --del-set pre src\n"
                             "-A FORWARD -m set --match-set pre src -j DROP\n")},
      {"add_and_del", FilterDump("-A FORWARD -m set --match-set dyn src -j DROP\n"
                                 "-A FORWARD -m set --match-set pre src -j ACCEPT\n"
                                 "-A FORWARD -p udp --dport 80 -j SET --add-set dyn src "
                                 "--del-set pre src\n")},
      {"netmask", FilterDump("-A FORWARD -m set --match-set m24 src -j DROP\n"
                             "-A FORWARD -p udp --dport 80 -j SET --add-set m24 src\n")},
      {"maxelem", FilterDump("-A FORWARD -m set --match-set full src -j DROP\n"
                             "-A FORWARD -j SET --add-set full src\n")},
      {"timeout_exist",
       FilterDump("-A FORWARD -m set --match-set timed src -j DROP\n"
                  "-A FORWARD -p udp --dport 80 -j SET --add-set timed src --exist "
                  "--timeout 100\n")},
  };
}

TEST(IpsetKernel, SetTargetEveryTierAgreesWithTheKernel) {
  if (system("ipset --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ipset missing";
  ExpectSequencesAgree("ipset_target", OracleSyntax::kIptablesSave, ".ipt", SetTargetCases(),
                       InterleavedSources(53, 80, 8), kDynIpsets);
}

// SET on hash:ip,port, hash:ip,port,ip and hash:net over SetFrames (udp, tcp and icmp; sources and
// destination ports repeat; four non-first fragments, of udp and tcp, add
// nothing): -m set reads the set in other flag orders than the target
// writes, so swapped src/dst on either side disagrees. hash:net adds the
// address masked to its nets' length (n24: 10.1.0.0/24 and 10.1.2.0/24 from
// the destinations drop the sources in them; an empty set: /32).
constexpr char kDynPortIpsets[] =
    "create dynp hash:ip,port family inet\n"
    "create prep hash:ip,port family inet\n"
    "add prep 192.0.2.1,udp:53\n"
    "add prep 192.0.2.2,udp:53\n"
    "add prep 192.0.2.2,udp:8080\n"
    "add prep 192.0.2.20,udp:8080\n"
    "create fullp hash:ip,port family inet maxelem 3\n"
    "add fullp 10.9.9.9,tcp:1\n"
    "create timedp hash:ip,port family inet timeout 600\n"
    "create dynipi hash:ip,port,ip family inet\n"
    "create dynn hash:net family inet\n"
    "create n24 hash:net family inet\n"
    "add n24 10.2.0.0/24\n"
    "create pren hash:net family inet\n"
    "add pren 10.1.0.1\n"
    "add pren 10.1.2.5\n"
    "add pren 10.1.2.200\n";

std::vector<SequenceCase> SetTargetPortCases() {
  return {
      {"ipport_add_src_dst", FilterDump("-A FORWARD -m set --match-set dynp src,dst -j DROP\n"
                                        "-A FORWARD -p udp -j SET --add-set dynp src,dst\n")},
      {"ipport_add_dst_src",
       FilterDump("-A FORWARD -m set --match-set dynp dst,src -j DROP\n"
                  "-A FORWARD -m set --match-set dynp src,dst -j DROP\n"
                  "-A FORWARD -p udp -j SET --add-set dynp dst,src\n")},
      {"ipport_add_src_src", FilterDump("-A FORWARD -m set --match-set dynp src,src -j DROP\n"
                                        "-A FORWARD -p tcp -j SET --add-set dynp src,src\n"
                                        "-A FORWARD -p udp -j SET --add-set dynp dst,dst\n")},
      {"ipport_one_flag", FilterDump("-A FORWARD -m set --match-set dynp src,dst -j DROP\n"
                                     "-A FORWARD -p udp -j SET --add-set dynp src\n"
                                     "-A FORWARD -p icmp -j DROP\n")},
      // 10.1.2.5's udp frames delete their destination and port (frames
      // 2, 30, 44) before the match drops the others (0, 12, 14, 42).
      {"ipport_del", FilterDump("-A FORWARD -p udp -s 10.1.2.5 -j SET --del-set prep dst,dst\n"
                                "-A FORWARD -m set --match-set prep dst,dst -j DROP\n")},
      {"ipport_maxelem", FilterDump("-A FORWARD -m set --match-set fullp src,dst -j DROP\n"
                                    "-A FORWARD -p udp -j SET --add-set fullp src,dst\n")},
      {"ipport_timeout_exist",
       FilterDump("-A FORWARD -m set --match-set timedp src,dst -j DROP\n"
                  "-A FORWARD -p udp -j SET --add-set timedp src,dst --exist --timeout 100\n")},
      {"ipportip_add_sds", FilterDump("-A FORWARD -m set --match-set dynipi src,dst,src -j DROP\n"
                                      "-A FORWARD -m set --match-set dynipi dst,dst,dst -j DROP\n"
                                      "-A FORWARD -p udp -j SET --add-set dynipi src,dst,src\n")},
      {"ipportip_add_ddd", FilterDump("-A FORWARD -m set --match-set dynipi dst,src,dst -j DROP\n"
                                      "-A FORWARD -p udp -j SET --add-set dynipi dst,dst,dst\n"
                                      "-A FORWARD -p udp -j SET --add-set dynipi src,dst\n")},
      {"net_add_src", FilterDump("-A FORWARD -m set --match-set dynn src -j DROP\n"
                                 "-A FORWARD -p udp -j SET --add-set dynn src\n")},
      {"net_add_24_dst", FilterDump("-A FORWARD -m set --match-set n24 src -j DROP\n"
                                    "-A FORWARD -j SET --add-set n24 dst --exist\n")},
      {"net_del", FilterDump("-A FORWARD -p tcp -j SET --del-set pren src\n"
                             "-A FORWARD -m set --match-set pren src -j DROP\n")},
  };
}

TEST(IpsetKernel, SetTargetOnPortAndNetTypesEveryTierAgreesWithTheKernel) {
  if (system("ipset --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ipset missing";
  ExpectSequencesAgree("ipset_target_port", OracleSyntax::kIptablesSave, ".ipt",
                       SetTargetPortCases(), SetFrames(), kDynPortIpsets);
}

// SET --map-set NAME FLAGS --map-mark in the mangle table over SetFrames:
// the mark of a packet whose element is there becomes (mark & ~MASK) ^
// VALUE (after MARK sets 0x30); the filter table drops the marks a case
// names (icmp frames pass). 10.1.0.1 -> 0x5, 10.1.2.5 -> 0x130, 192.0.2.1 -> 0x37, 10.1.0.2
// (no skbmark) and non-members keep 0x30; mapport: 192.0.2.1 udp 53 ->
// 0x9, 10.1.0.1 udp 53 -> 0x32.
constexpr char kMapIpsets[] =
    "create mapip hash:ip family inet skbinfo\n"
    "add mapip 10.1.0.1 skbmark 0x5\n"
    "add mapip 10.1.2.5 skbmark 0x100/0xf00\n"
    "add mapip 192.0.2.1 skbmark 0x7/0xf\n"
    "add mapip 10.1.0.2\n"
    "create mapport hash:ip,port family inet skbinfo\n"
    "add mapport 192.0.2.1,udp:53 skbmark 0x9\n"
    "add mapport 10.1.0.1,udp:53 skbmark 0x2/0x3\n";

std::string MapDump(const std::string& map, const std::vector<const char*>& drop_marks) {
  std::string filter = "-A FORWARD -p icmp -j ACCEPT\n";
  for (const char* m : drop_marks) absl::StrAppend(&filter, "-A FORWARD -m mark --mark ", m, " -j DROP\n");
  return absl::StrCat(
      "*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
      ":OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n"
      "-A FORWARD -j MARK --set-xmark 0x30/0xffffffff\n-A FORWARD -j SET --map-set ", map,
      " --map-mark\nCOMMIT\n", FilterDump(filter));
}

TEST(IpsetKernel, SetTargetMapMarkEveryTierAgreesWithTheKernel) {
  if (system("ipset --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ipset missing";
  const std::vector<SequenceCase> cases = {
      {"map_src", MapDump("mapip src", {"0x5", "0x130"})},
      {"map_dst", MapDump("mapip dst", {"0x37", "0x5"})},
      {"map_unchanged", MapDump("mapip src", {"0x30"})},
      {"map_port_dst_dst", MapDump("mapport dst,dst", {"0x9"})},
      {"map_port_src_src", MapDump("mapport src,src", {"0x32"})},
      {"map_one_flag", MapDump("mapport src", {"0x30"})},
  };
  ExpectSequencesAgree("ipset_map", OracleSyntax::kIptablesSave, ".ipt", cases, SetFrames(),
                       kMapIpsets);
}

// The same on ip6tables: SetFrames6 (sources 2001:db8:1::1, ::2,
// 2001:db8:1:2::5, 2001:db8:9::9; tcp every fifth frame from the second),
// hash:ip,port and hash:net (/64: ::1 and ::2 share one) too.
TEST(IpsetKernel, Ip6tablesSetTargetEveryTierAgreesWithTheKernel) {
  if (system("ipset --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ipset missing";
  const std::vector<SequenceCase> cases = {
      {"add6_src", FilterDump("-A FORWARD -s 2001:db8:ffff::1/128 -j ACCEPT\n"
                              "-A FORWARD -m set --match-set dyn6 src -j DROP\n"
                              "-A FORWARD -p tcp -j SET --add-set dyn6 src\n")},
      {"add6_netmask", FilterDump("-A FORWARD -s 2001:db8:ffff::1/128 -j ACCEPT\n"
                                  "-A FORWARD -m set --match-set m64 src -j DROP\n"
                                  "-A FORWARD -p tcp -j SET --add-set m64 src --exist\n")},
      {"add6_ipport", FilterDump("-A FORWARD -s 2001:db8:ffff::1/128 -j ACCEPT\n"
                                 "-A FORWARD -m set --match-set p6 src,dst -j DROP\n"
                                 "-A FORWARD -p udp -j SET --add-set p6 src,dst\n")},
      {"add6_net64", FilterDump("-A FORWARD -s 2001:db8:ffff::1/128 -j ACCEPT\n"
                                "-A FORWARD -m set --match-set n64 src -j DROP\n"
                                "-A FORWARD -p tcp -j SET --add-set n64 src\n")},
  };
  ExpectSequencesAgree("ipset6_target", OracleSyntax::kIp6tablesSave, ".ipt", cases,
                       SetFrames6(),
                       "create dyn6 hash:ip family inet6\n"
                       "create m64 hash:ip family inet6 netmask 64\n"
                       "create p6 hash:ip,port family inet6\n"
                       "create n64 hash:net family inet6\n"
                       "add n64 2001:db8:77::/64\n");
}

}  // namespace
}  // namespace rulejit::testing
