// The whole path against the kernel: rulesets with chains at several hooks
// and priorities (marks set in prerouting and tested in forward, DNAT that
// turns a forwarded packet into a local one and the reverse, nat chains at
// a priority other than dstnat, raw notrack and `ct state` before
// conntrack, TTL at forward, input filters, masquerade), in iptables and
// nft, run in fw (kernel_oracle.h, path mode: forwarded to dst0, delivered
// to fw itself, or dropped) and in `rulejit eval --path forward --host` on
// fw's own host model, on every tier: the same fate for every frame, and
// for forwarded frames the same IP packet (addresses and ports after NAT,
// TTL, checksums) as dst0 captured. Frames go to forwarded destinations
// and to fw's own addresses.
//
// Needs root, `ip netns`, nft, iptables-legacy-restore and the rulejit
// binary; skips with the reason otherwise. About 20 seconds.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/path_case.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

// UDP and TCP SYNs to forwarded destinations (10.20.0.0/16, 2001:db8::/32:
// fw's default routes) and to fw's own addresses, one flow each.
Frames PathFrames() {
  struct F {
    const char* dst;
    uint8_t proto;
    uint16_t dport;
    uint8_t ttl = 64;
  };
  const std::vector<F> specs = {
      {"10.20.0.1", 17, 1000}, {"10.20.0.1", 17, 2000},  {"10.20.0.1", 17, 2001},
      {"10.20.0.1", 17, 3000}, {"10.20.0.1", 17, 3001},  {"10.20.0.1", 17, 4000},
      {"10.20.0.1", 17, 4001}, {"198.18.0.5", 17, 2000}, {"198.18.0.1", 17, 5000},
      {"198.18.0.1", 6, 80},   {"198.18.0.1", 6, 81},    {"198.18.0.1", 6, 22},
      {"10.20.0.1", 6, 22},    {"10.20.0.1", 6, 8080},   {"10.20.0.3", 17, 6000, 64},
      {"10.20.0.3", 17, 6000, 65}, {"10.20.0.2", 17, 7000},
      {"2001:db8::1", 17, 1000}, {"2001:db8::1", 17, 3000}, {"2001:2:0:1::1", 6, 22},
      {"2001:db8::3", 17, 6000, 64}, {"2001:db8::3", 17, 6000, 65},
  };
  Frames frames;
  uint16_t sport = 30000;
  for (const F& f : specs) {
    const bool v6 = std::string(f.dst).find(':') != std::string::npos;
    frames.push_back(BuildFrame(FrameSpec{.src = v6 ? "2001:db8:1::5" : "10.1.0.5",
                                          .dst = f.dst,
                                          .proto = f.proto,
                                          .sport = sport++,
                                          .dport = f.dport,
                                          .payload = {0, 0, 0, 0},
                                          .ttl = f.ttl}));
  }
  return frames;
}

std::vector<PathCase> Cases() {
  return {
      {"mark_in_prerouting_tested_in_forward", OracleSyntax::kNft, R"(table inet t {
  chain pre { type filter hook prerouting priority -150; udp dport 1000 meta mark set 7; }
  chain forwarding { type filter hook forward priority 0; policy drop; meta mark 7 accept; }
})"},
      {"dnat_to_a_local_address", OracleSyntax::kNft, R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; ip daddr 10.20.0.1 udp dport 2000 dnat to 198.18.0.5; }
}
table inet f {
  chain in { type filter hook input priority 0; policy drop; ip daddr 198.18.0.5 udp dport 2000 accept; }
})"},
      {"dnat_of_a_local_address_forwards", OracleSyntax::kNft, R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; ip daddr 198.18.0.1 tcp dport 80 dnat to 10.30.0.9:8080; }
}
table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop; tcp dport 8080 accept; }
})"},
      {"nat_chains_run_at_the_nat_step", OracleSyntax::kNft, R"(table ip t {
  chain pre { type nat hook prerouting priority dstnat + 50; ip daddr 10.20.0.2 dnat to 10.20.0.9; }
  chain check { type filter hook prerouting priority -80; ip daddr 10.20.0.9 drop; }
})"},
      {"notrack_and_ct_state_before_conntrack", OracleSyntax::kNft, R"(table inet t {
  chain raw { type filter hook prerouting priority -300;
    ct state invalid meta mark set 1
    udp dport 3000 notrack
  }
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state untracked accept
    meta mark 1 udp dport 3001 ct state new accept
  }
})"},
      {"ttl_after_decrement_at_forward", OracleSyntax::kNft, R"(table inet t {
  chain forwarding { type filter hook forward priority 0; policy drop; ip ttl 63 accept; ip6 hoplimit 63 accept; }
})"},
      {"input_filter", OracleSyntax::kNft, R"(table inet t {
  chain in { type filter hook input priority 0; policy drop; tcp dport 22 accept; }
  chain forwarding { type filter hook forward priority 0; policy accept; tcp dport 22 drop; }
})"},
      {"masquerade", OracleSyntax::kNft, R"(table ip nat {
  chain post { type nat hook postrouting priority srcnat; oifname "fwout" masquerade; }
}
table ip f {
  chain forwarding { type filter hook forward priority 0; policy drop; ip saddr 10.1.0.5 udp dport < 3000 accept; }
})"},
      {"iptables_tables_along_the_path", OracleSyntax::kIptablesSave, R"(*raw
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A PREROUTING -p udp --dport 4001 -j CT --notrack
COMMIT
*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p udp --dport 4000 -j MARK --set-mark 5
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -d 198.18.0.1/32 -p tcp --dport 80 -j DNAT --to-destination 10.30.0.9:8080
-A POSTROUTING -o fwout -j MASQUERADE
COMMIT
*filter
:INPUT DROP [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -p tcp --dport 22 -j ACCEPT
-A FORWARD -m mark --mark 5 -j ACCEPT
-A FORWARD -m conntrack --ctstate UNTRACKED -j ACCEPT
-A FORWARD -p tcp --dport 8080 -j ACCEPT
COMMIT
)"},
      // The header-rewriting targets: the forwarded bytes are compared.
      {"iptables_header_targets", OracleSyntax::kIptablesSave, R"(*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p udp --dport 1000 -j TOS --set-tos Minimize-Delay
-A PREROUTING -p udp --dport 1000 -j TTL --ttl-inc 200
-A FORWARD -p udp --dport 1000 -j DSCP --set-dscp-class AF21
-A FORWARD -p udp --dport 2000 -j TOS --xor-tos 0x05
-A FORWARD -p udp --dport 2001 -j TTL --ttl-dec 100
-A POSTROUTING -p udp --dport 2001 -j TOS --or-tos 0x08
-A FORWARD -p udp --dport 3000 -j TTL --ttl-set 7
-A FORWARD -p udp --dport 3001 -j CLASSIFY --set-class 1:2
-A FORWARD -p udp --dport 4001 -j NFQUEUE --queue-num 3
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -p udp --dport 2000 -m tos --tos 0x05 -j DROP
-A FORWARD -p udp --dport 1000 -m ttl --ttl-eq 254 -j ACCEPT
-A FORWARD -p udp --dport 1000 -j DROP
COMMIT
)"},
      {"ip6tables_header_targets", OracleSyntax::kIp6tablesSave,
       R"(# Generated by ip6tables-save v1.8.9
*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A FORWARD -p udp --dport 1000 -j DSCP --set-dscp 0x2e
-A FORWARD -p udp --dport 1000 -j HL --hl-dec 3
-A FORWARD -p udp --dport 3000 -j TOS --set-tos 0x14/0xfc
-A FORWARD -p udp --dport 3000 -j HL --hl-set 9
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -p udp --dport 6000 -j DROP
COMMIT
)"},
  };
}

TEST(PathKernel, EveryTierFollowsTheKernelAlongThePath) {
  if (absl::Status s = PathOracleAvailable(); !s.ok()) GTEST_SKIP() << s.message();
  const PathBench bench("rulejit-path", PathFrames());
  ASSERT_TRUE(bench.status.ok()) << bench.status;
  for (const PathCase& c : Cases()) {
    size_t compared = 0;
    absl::StatusOr<std::vector<PathOutcome>> kernel = bench.Check(c, &compared);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    std::vector<std::string> want;
    for (const PathOutcome& o : *kernel) want.push_back(KernelFate(o));
    // A case whose frames all end alike tests nothing.
    EXPECT_GE(std::set<std::string>(want.begin(), want.end()).size(), 2u) << c.name;
    EXPECT_GT(compared, 0u) << c.name << ": no forwarded frame to compare";
  }
}

// The devices' groups (meta iifgroup / oifgroup, iptables' devgroup) are
// fw's as `ip link set DEV group N` made them, read back into the host
// model: fwin in group 5, fwout in group 0x107.
absl::Status PutDevicesInGroups(const std::string& fw) {
  for (auto [dev, group] : {std::pair{"fwin", "5"}, std::pair{"fwout", "263"}}) {
    if (system(absl::StrCat("ip -n ", fw, " link set dev ", dev, " group ", group).c_str()) != 0) {
      return absl::InternalError(absl::StrCat("cannot put ", dev, " in group ", group));
    }
  }
  return absl::OkStatus();
}

TEST(PathKernel, DeviceGroupsComeFromTheHostModel) {
  if (absl::Status s = PathOracleAvailable(); !s.ok()) GTEST_SKIP() << s.message();
  const PathBench bench("rulejit-path-groups", PathFrames());
  ASSERT_TRUE(bench.status.ok()) << bench.status;
  const std::vector<PathCase> cases = {
      {"nft_device_groups", OracleSyntax::kNft, R"(table inet t {
  chain pre { type filter hook prerouting priority 0; meta iifgroup 5 udp dport 1000 drop; meta iifgroup != 5 udp dport 2000 drop; }
  chain forwarding { type filter hook forward priority 0;
    meta oifgroup 263 udp dport 3000 drop
    meta oifgroup and 0xff == 7 udp dport 4000 drop
    meta iifgroup 0 tcp dport 22 drop
    meta oifgroup and 0xff == 8 udp dport 1000 drop
  }
  chain in { type filter hook input priority 0; meta iifgroup 5 tcp dport 80 drop; meta iifgroup 0 tcp dport 81 drop; }
})", PutDevicesInGroups},
      {"iptables_devgroup", OracleSyntax::kIptablesSave, R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:fwd - [0:0]
-A INPUT -p tcp --dport 80 -m devgroup --src-group 0x5 -j DROP
-A INPUT -p tcp --dport 81 -m devgroup ! --src-group 5 -j DROP
-A FORWARD -j fwd
-A fwd -p udp --dport 1000 -m devgroup --src-group 5 -j DROP
-A fwd -p udp --dport 2000 -m devgroup ! --src-group 0x5 -j DROP
-A fwd -p udp --dport 3000 -m devgroup --dst-group 0x107 -j DROP
-A fwd -p udp --dport 4000 -m devgroup --dst-group 0x7/0xff -j DROP
-A fwd -p tcp --dport 22 -m devgroup --src-group 0 -j DROP
COMMIT
)", PutDevicesInGroups},
  };
  for (const PathCase& c : cases) {
    absl::StatusOr<std::vector<PathOutcome>> kernel = bench.Check(c);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    std::vector<std::string> want;
    for (const PathOutcome& o : *kernel) want.push_back(KernelFate(o));
    EXPECT_GE(std::count(want.begin(), want.end(), "drop"), 4) << c.name;
  }
}

// A connection's packets both ways: clients (10.1.0.0/16, behind fwin)
// and servers (behind fwout, frames sent from dst0), and ICMP errors the
// servers send about them (nf_nat_icmp_reply_translation's rewrite of a
// NATed flow's error compared byte for byte).
std::vector<PathPacket> ConnectionPackets() {
  auto udp = [](const char* src, const char* dst, uint16_t sport, uint16_t dport) {
    return FrameSpec{.src = src, .dst = dst, .proto = 17, .sport = sport, .dport = dport,
                     .payload = {0, 0, 0, 0}};
  };
  auto tcp = [](const char* src, const char* dst, uint16_t sport, uint16_t dport, uint8_t flags,
                uint32_t seq, uint32_t ack) {
    return FrameSpec{.src = src, .dst = dst, .proto = 6, .sport = sport, .dport = dport,
                     .tcp_flags = flags, .payload = {0, 0, 0, 0}, .tcp_seq = seq, .tcp_ack = ack};
  };
  // A server's port-unreachable quoting `quoted` as it reached the server.
  auto unreachable = [](const char* src, const char* dst, FrameSpec quoted) {
    quoted.ethernet = false;
    const bool v6 = std::string(src).find(':') != std::string::npos;
    return FrameSpec{.src = src, .dst = dst, .proto = static_cast<uint8_t>(v6 ? 58 : 1),
                     .payload = BuildFrame(quoted), .icmp_type = static_cast<uint8_t>(v6 ? 1 : 3),
                     .icmp_code = static_cast<uint8_t>(v6 ? 4 : 3)};
  };
  return {
      // DNAT: a query to fw's address goes to the server, the answer comes back from fw's.
      {false, udp("10.1.0.5", "198.18.0.1", 40000, 53)},
      {true, udp("10.30.0.9", "10.1.0.5", 5353, 40000)},
      {false, udp("10.1.0.5", "198.18.0.1", 40000, 53)},
      // A TCP handshake to an allowed port, with data.
      {false, tcp("10.1.0.5", "10.30.0.7", 40001, 8080, 0x02, 1000, 0)},
      {true, tcp("10.30.0.7", "10.1.0.5", 8080, 40001, 0x12, 5000, 1005)},
      {false, tcp("10.1.0.5", "10.30.0.7", 40001, 8080, 0x10, 1005, 5005)},
      // An unsolicited packet from a server, and a new one to a closed port.
      {true, udp("10.30.0.9", "10.1.0.5", 9999, 40002)},
      {false, tcp("10.1.0.5", "10.30.0.7", 40004, 8081, 0x02, 1000, 0)},
      // Masquerade: out with fwout's address, the answer to it back to the client.
      {false, udp("10.1.0.5", "10.40.0.1", 40003, 7000)},
      {true, udp("10.40.0.1", "198.18.0.5", 7000, 40003)},
      // IPv6: an answer to an allowed query, and one nobody asked for.
      {false, udp("2001:db8:1::5", "2001:db8:30::9", 40005, 5353)},
      {true, udp("2001:db8:30::9", "2001:db8:1::5", 5353, 40005)},
      {true, udp("2001:db8:30::9", "2001:db8:1::5", 5353, 40006)},
      // ICMP errors RELATED to a flow: of the DNATed query (the quote's
      // destination and the outer source go back to fw's address), of the
      // masqueraded datagram (the quote's source and the outer destination
      // go back to the client), of the TCP flow (untranslated); and one
      // about no flow at all.
      {true, unreachable("10.30.0.9", "10.1.0.5", udp("10.1.0.5", "10.30.0.9", 40000, 5353))},
      {true, unreachable("10.40.0.1", "198.18.0.5", udp("198.18.0.5", "10.40.0.1", 40003, 7000))},
      {true, unreachable("10.30.0.7", "10.1.0.5",
                         tcp("10.1.0.5", "10.30.0.7", 40001, 8080, 0x10, 1005, 5005))},
      {true, unreachable("10.30.0.9", "10.1.0.5", udp("10.1.0.5", "10.30.0.9", 40077, 5353))},
      // IPv6 masquerade (nft only) and the ICMPv6 error of its datagram.
      {false, udp("2001:db8:1::5", "2001:db8:40::1", 40010, 7000)},
      {true, unreachable("2001:db8:40::1", "2001:2:0:2::1",
                         udp("2001:2:0:2::1", "2001:db8:40::1", 40010, 7000))},
  };
}

std::vector<PathCase> ConnectionCases() {
  return {
      {"stateful_nat_nft", OracleSyntax::kNft, R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; ip daddr 198.18.0.1 udp dport 53 dnat to 10.30.0.9:5353; }
  chain post { type nat hook postrouting priority srcnat; ip daddr 10.40.0.0/16 oifname "fwout" masquerade; }
}
table ip6 nat6 {
  chain post { type nat hook postrouting priority srcnat; ip6 daddr 2001:db8:40::/48 oifname "fwout" masquerade; }
}
table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established,related accept
    ct state new iifname "fwin" tcp dport 8080 accept
    ct state new iifname "fwin" udp dport { 5353, 7000 } accept
  }
})"},
      {"stateful_nat_iptables", OracleSyntax::kIptablesSave, R"(*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -d 198.18.0.1/32 -p udp --dport 53 -j DNAT --to-destination 10.30.0.9:5353
-A POSTROUTING -d 10.40.0.0/16 -o fwout -j MASQUERADE
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -i fwin -p tcp --dport 8080 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -i fwin -p udp -m multiport --dports 5353,7000 -m conntrack --ctstate NEW -j ACCEPT
COMMIT
)"},
  };
}

TEST(PathKernel, ConnectionsBothWaysWithNat) {
  for (OracleSyntax syntax : {OracleSyntax::kNft, OracleSyntax::kIptablesSave}) {
    if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  }
  ScratchDir dir("rulejit-conn");
  ASSERT_FALSE(dir.path.empty());
  const std::string pcap = dir.path + "/frames.pcap";
  absl::StatusOr<PathTraffic> traffic = WritePathTraffic(ConnectionPackets(), pcap);
  ASSERT_TRUE(traffic.ok()) << traffic.status();
  const Frames& frames = traffic->frames;
  const std::vector<bool>& from_server = traffic->from_server;
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  for (const PathCase& c : ConnectionCases()) {
    std::string host;
    absl::StatusOr<std::vector<PathOutcome>> kernel = KernelPathOutcomes(
        {.syntax = c.syntax, .text = c.text}, frames, {.fw_host_json = &host}, from_server);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    // The answers (de-NATed) come back through fw; the unsolicited ones do not.
    for (size_t i : {1, 4, 9, 11, 13, 14, 15}) {
      EXPECT_TRUE((*kernel)[i].forwarded) << c.name << " " << i;
    }
    for (size_t i : {6, 7, 16}) EXPECT_EQ(KernelFate((*kernel)[i]), "drop") << c.name << " " << i;
    // (An iptables dump loads no ip6tables rules: IPv6 passes there.)
    if (c.syntax == OracleSyntax::kNft) {
      EXPECT_EQ(KernelFate((*kernel)[12]), "drop");
      EXPECT_TRUE((*kernel)[18].forwarded) << c.name << " 18";
    }
    const std::string file =
        absl::StrCat(dir.path, "/", c.name, c.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
    std::ofstream(file) << c.text;
    std::ofstream(dir.path + "/host.json") << host;
    // No --iif: each frame arrives on the device whose MAC it is sent to.
    ExpectKernelPath(c.name, file, pcap, absl::StrCat("--host ", dir.path, "/host.json"), *kernel,
                     tiers, dir.path);
  }
}

}  // namespace
}  // namespace rulejit::testing
