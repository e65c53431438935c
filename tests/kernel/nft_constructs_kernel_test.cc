// The last constructs of real nft rulesets that rulejit used to refuse,
// against the kernel on the forward path (kernel_oracle.h, path mode) and
// in `rulejit eval --path forward --host` on fw's own host model, on every
// tier: the same fate for every frame, and for forwarded frames the same
// IP packet as dst0 captured (so a wrong MSS, port or checksum fails).
//  - MSS clamping: `tcp option maxseg size set N` and `... set rt mtu`
//    (fwout's MTU 1500: 1460 for IPv4, 1440 for IPv6), a 4-byte option
//    write, an MSS never raised, no option and the rule goes on.
//  - synproxy, statement and object: SYNs consumed (answered by the
//    kernel, not forwarded), ACKs without a cookie dropped, RST and FIN go
//    on with the rule, UDP ends it, a bad checksum drops.
//  - NAT maps whose data is an address and a port (named, anonymous,
//    IPv4 and IPv6), or ranges of both: the packet leaves with both.
//  - anonymous chain bindings (`jump { ... }`, `goto { ... }`, empty ones,
//    `return` in one): a jump's packet comes back and goes on, a goto's
//    ends at the base chain's policy.
//  - a dormant table (`flags dormant`): its chains (policy drop) see no
//    packet, an active table's do.
// And the names nft's grammar refuses: for a list of words, `nft -c`
// and rulejit agree on `table inet W`, `chain W` and `set W`; and on
// quoted names (nft 1.0.6 takes declared names and jump targets bare).
//
// Needs root, `ip netns`, nft and the rulejit binary; skips with the
// reason otherwise. About 15 seconds.
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"
#include "tests/support/shell.h"

namespace rulejit::testing {
namespace {

constexpr uint8_t kSyn = 0x02, kRst = 0x04, kAck = 0x10, kFin = 0x01;

FrameSpec Tcp(const char* dst, uint16_t sport, uint16_t dport, uint8_t flags,
              std::vector<uint8_t> options = {}) {
  const bool v6 = std::string(dst).find(':') != std::string::npos;
  return FrameSpec{.src = v6 ? "2001:db8:1::5" : "10.1.0.5", .dst = dst, .proto = 6,
                   .sport = sport, .dport = dport, .tcp_flags = flags, .payload = {0, 0, 0, 0},
                   .tcp_ack = (flags & kAck) ? 77u : 0u, .tcp_options = std::move(options)};
}

FrameSpec BadChecksum(FrameSpec f) {
  f.bad_l4_checksum = true;
  return f;
}

struct Case {
  std::string name;
  std::string text;
  std::vector<FrameSpec> frames;
  std::vector<std::string> want;  // the kernel's fate per frame, as KernelFate
};

std::vector<uint8_t> Mss(uint16_t v) {
  return {2, 4, static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
}

std::vector<Case> Cases() {
  // NOP NOP timestamp (tsval 5, tsecr 0).
  const std::vector<uint8_t> ts = {1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 0};
  return {
      {"mss_clamping", R"(table inet t {
  chain forwarding { type filter hook forward priority 0; policy accept;
    tcp dport 1000 tcp flags syn tcp option maxseg size set 1360
    tcp dport 1001 tcp flags syn tcp option maxseg size set rt mtu
    tcp dport 1002 tcp option timestamp tsval set 2
    tcp dport 1003 tcp option maxseg size set 1000 drop
  }
})",
       {Tcp("10.20.0.1", 40000, 1000, kSyn, Mss(1460)),
        Tcp("10.20.0.1", 40001, 1000, kSyn, Mss(1200)),
        Tcp("10.20.0.1", 40002, 1001, kSyn, Mss(8960)),
        Tcp("2001:db8::1", 40003, 1001, kSyn, Mss(8960)),
        Tcp("10.20.0.1", 40004, 1002, kSyn, ts),
        Tcp("10.20.0.1", 40005, 1003, kSyn),
        Tcp("10.20.0.1", 40006, 1004, kSyn, Mss(1460))},
       {"forwarded", "forwarded", "forwarded", "forwarded", "forwarded", "drop", "forwarded"}},
      {"synproxy", R"(table inet t {
  synproxy sp { mss 1460 wscale 7 }
  chain forwarding { type filter hook forward priority 0; policy accept;
    tcp dport 2000 synproxy mss 1460 wscale 7 timestamp sack-perm
    tcp dport 2001 synproxy name sp
    meta l4proto udp synproxy
    tcp dport { 2000, 2001 } tcp flags rst drop
  }
})",
       {Tcp("10.20.0.1", 41000, 2000, kSyn, Mss(1460)),
        Tcp("10.20.0.1", 41001, 2000, kAck),
        Tcp("10.20.0.1", 41002, 2000, kRst),
        Tcp("10.20.0.1", 41003, 2000, kFin),
        Tcp("2001:db8::1", 41004, 2001, kSyn),
        Tcp("2001:db8::1", 41005, 2001, kFin | kAck),
        Tcp("10.20.0.1", 41006, 2002, kSyn),
        FrameSpec{.src = "10.1.0.5", .dst = "10.20.0.1", .proto = 17, .sport = 41007,
                  .dport = 2000, .payload = {0, 0, 0, 0}},
        BadChecksum(Tcp("10.20.0.1", 41008, 2000, kFin))},
       {"drop", "drop", "drop", "forwarded", "drop", "drop", "forwarded", "forwarded", "drop"}},
      {"nat_map_address_and_port", R"(table ip nat {
  map m {
    type ipv4_addr : ipv4_addr . inet_service
    elements = { 10.20.0.1 : 10.30.0.9 . 8080 }
  }
  map r {
    type ipv4_addr : interval ipv4_addr . inet_service
    flags interval
    elements = { 10.20.0.3 : 10.30.0.20-10.30.0.29 . 8081-8089 }
  }
  chain pre { type nat hook prerouting priority dstnat;
    ip daddr 10.20.0.3 meta l4proto tcp dnat ip to ip daddr map @r
    meta l4proto tcp dnat ip to ip daddr map @m
    meta l4proto udp dnat ip to udp dport map { 53 : 10.30.0.8 . 5353 }
  }
  chain post { type nat hook postrouting priority srcnat;
    ip daddr 10.30.0.8 meta l4proto udp snat ip to ip saddr map { 10.1.0.5 : 10.99.0.1 . 7777 }
    ip daddr 10.30.0.9 meta l4proto tcp snat ip to ip saddr map { 10.1.0.0/24 : 10.98.0.1-10.98.0.9 . 6000-6010 }
  }
}
table ip6 nat6 {
  map m6 {
    typeof ip6 daddr . tcp dport : ip6 daddr . tcp dport
    elements = { 2001:db8::1 . 80 : 2001:db8:30::9 . 8443 }
  }
  chain pre { type nat hook prerouting priority dstnat;
    dnat ip6 to ip6 daddr . tcp dport map @m6
  }
}
table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    tcp dport { 8080-8089, 8443 } accept
    udp dport 5353 accept
  }
})",
       {Tcp("10.20.0.1", 42000, 80, kSyn), Tcp("10.20.0.2", 42001, 80, kSyn),
        FrameSpec{.src = "10.1.0.5", .dst = "10.20.0.7", .proto = 17, .sport = 42002,
                  .dport = 53, .payload = {0, 0, 0, 0}},
        Tcp("2001:db8::1", 42003, 80, kSyn), Tcp("2001:db8::1", 42004, 81, kSyn),
        Tcp("10.20.0.3", 42005, 80, kSyn)},
       {"forwarded", "drop", "forwarded", "forwarded", "drop", "forwarded"}},
      {"chain_bindings", R"(table inet t {
  chain forwarding { type filter hook forward priority 0; policy accept;
    meta l4proto { tcp, udp } th dport 3000 jump {
      ip saddr 10.1.0.0/24 tcp dport 3000 drop
      ip6 saddr ::1 accept
      udp dport 3000 jump c
    }
    tcp dport 3001 goto {
      tcp flags syn accept
    }
    tcp dport 3001 drop
    tcp dport 3002 jump { tcp flags syn drop; }
    tcp dport 3003 goto { return; }
    tcp dport { 3002, 3003 } tcp flags fin drop
    tcp dport 3004 jump {
    }
    tcp dport 3004 drop
  }
  chain c {
    drop
  }
})",
       {Tcp("10.20.0.1", 43000, 3000, kSyn),
        FrameSpec{.src = "10.1.0.5", .dst = "10.20.0.1", .proto = 17, .sport = 43001,
                  .dport = 3000, .payload = {0, 0, 0, 0}},
        Tcp("2001:db8::1", 43002, 3000, kSyn),
        Tcp("10.20.0.1", 43003, 3001, kSyn),
        Tcp("10.20.0.1", 43004, 3001, kAck),
        Tcp("10.20.0.1", 43005, 3002, kSyn),
        Tcp("10.20.0.1", 43006, 3002, kFin | kAck),
        Tcp("10.20.0.1", 43007, 3003, kFin | kAck),
        Tcp("10.20.0.1", 43008, 3004, kSyn)},
       {"drop", "drop", "forwarded", "forwarded", "forwarded", "drop", "drop", "forwarded",
        "drop"}},
      {"dormant_table", R"(table inet off {
  flags dormant
  chain forwarding { type filter hook forward priority -10; policy drop;
    tcp dport 4000 accept
  }
}
table inet on {
  chain forwarding { type filter hook forward priority 0; policy accept;
    tcp dport 4001 drop
  }
}
table bridge idle {
  chain forwarding { type filter hook forward priority filter; policy accept;
  }
}
table arp idle {
  chain input { type filter hook input priority filter; policy accept;
  }
})",
       {Tcp("10.20.0.1", 44000, 4000, kSyn), Tcp("10.20.0.1", 44001, 4001, kSyn),
        Tcp("2001:db8::1", 44002, 4002, kSyn)},
       {"forwarded", "drop", "forwarded"}},
  };
}

TEST(NftConstructsKernel, EveryTierFollowsTheKernelOnTheForwardPath) {
  if (absl::Status s = OracleAvailable(OracleSyntax::kNft); !s.ok()) GTEST_SKIP() << s.message();
  ScratchDir dir("rulejit-nft-constructs");
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  for (const Case& c : Cases()) {
    Frames frames;
    for (const FrameSpec& f : c.frames) frames.push_back(BuildFrame(f));
    absl::StatusOr<Frames> injected = PrepareOracleFrames(frames);
    ASSERT_TRUE(injected.ok()) << c.name << ": " << injected.status();
    const std::string pcap = absl::StrCat(dir.path, "/", c.name, ".pcap");
    ASSERT_TRUE(WritePcap(pcap, *injected));
    std::string host;
    absl::StatusOr<std::vector<PathOutcome>> kernel = KernelPathOutcomes(
        {.syntax = OracleSyntax::kNft, .text = c.text}, frames, {.fw_host_json = &host});
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    std::vector<std::string> fates;
    for (const PathOutcome& o : *kernel) fates.push_back(KernelFate(o));
    // What the kernel did is pinned too: a case must separate its frames
    // the way its comment says.
    EXPECT_EQ(fates, c.want) << c.name;
    const std::string file = absl::StrCat(dir.path, "/", c.name, ".nft");
    std::ofstream(file) << c.text;
    std::ofstream(dir.path + "/host.json") << host;
    const size_t compared = ExpectKernelPath(c.name, file, pcap,
                                             absl::StrCat("--iif fwin --host ", dir.path,
                                                          "/host.json"),
                                             *kernel, tiers, dir.path);
    EXPECT_GT(compared, 0u) << c.name << ": no forwarded frame to compare";
  }
}

// Whether rulejit's frontend loads `text` exactly when `nft -c` does.
void ExpectLoadsAsNft(const std::string& dir, const std::string& text) {
  const std::string file = absl::StrCat(dir, "/q.nft");
  std::ofstream(file) << text;
  const bool nft_loads = RunShell("nft -c -f " + file).exit_code == 0;
  ir::Diagnostics diags;
  const bool ours = frontends::ParseNft(text, diags.AddFile("q.nft", text), diags, "").ok();
  EXPECT_EQ(ours, nft_loads) << text << diags.Format();
}

// nft -c on `table inet W {}`, `chain W {}` and `set W {}` against
// rulejit's frontend: both load or both refuse, for keywords nft's
// scanner always makes (refused) and words that are keywords only in a
// scope or not at all (names).
TEST(NftConstructsKernel, KeywordNamesAsNftRefusesThem) {
  if (RunShell("nft --version").exit_code != 0) GTEST_SKIP() << "nft is not installed";
  const std::vector<std::string> words = {
      "fwd", "dup", "ip", "inet", "flow", "meter", "counter", "synproxy", "rt", "exthdr", "all",
      "random", "time", "day", "cgroup", "th", "secmark", "table", "policy", "size",
      "filter", "input", "forward", "nat", "name", "state", "to", "last", "mtu", "tunnel",
      "vxlan", "gre", "destroy", "packets", "saddr", "level", "mss", "route", "wan"};
  ScratchDir dir("rulejit-nft-keywords");
  ASSERT_FALSE(dir.path.empty());
  int refused = 0;
  for (const std::string& w : words) {
    const std::string text = absl::StrCat("table inet ", w, " {\n chain ", w, " {\n }\n set ", w,
                                          " {\n  type ipv4_addr\n }\n}\n");
    const std::string file = absl::StrCat(dir.path, "/k.nft");
    std::ofstream(file) << text;
    const bool nft_loads = RunShell("nft -c -f " + file).exit_code == 0;
    ir::Diagnostics diags;
    const bool ours = frontends::ParseNft(text, diags.AddFile("k.nft", text), diags, "").ok();
    EXPECT_EQ(ours, nft_loads) << w << ": " << diags.Format();
    refused += nft_loads ? 0 : 1;
  }
  EXPECT_GT(refused, 10);
  EXPECT_LT(refused, static_cast<int>(words.size()) - 10);
  // Quoted names where nft 1.0.6 takes bare words, and where it takes both.
  const std::vector<std::string> quoted = {
      "table inet \"t\" {\n}\n",
      "table inet t {\n chain \"c\" {\n }\n}\n",
      "table inet t {\n chain c {\n }\n chain d {\n  jump \"c\"\n }\n}\n",
      "table inet t {\n set \"s\" {\n  type ipv4_addr\n }\n}\n",
      "table inet t {\n counter \"k\" {\n }\n}\n",
      "table inet t {\n counter k {\n }\n chain c {\n  counter name \"k\"\n }\n}\n",
      "table inet t {\n chain c {\n  iifname \"lo\" accept\n }\n}\n"};
  for (const std::string& text : quoted) ExpectLoadsAsNft(dir.path, text);
}

// Chain bindings where nft 1.0.6 takes and refuses them (not nested, not
// as map values, rules and the binding itself ended by a newline or ';'),
// dormant tables, and the hooks and standard priorities of the arp and
// bridge families (rules in those refused by rulejit are not compared).
TEST(NftConstructsKernel, BindingsAndLinkLayerChainsLoadAsNftLoadsThem) {
  if (RunShell("nft --version").exit_code != 0) GTEST_SKIP() << "nft is not installed";
  ScratchDir dir("rulejit-nft-bindings");
  ASSERT_FALSE(dir.path.empty());
  const std::string chain = "table inet t {\n chain c {\n";
  for (const char* rule :
       {"tcp dport 1 jump { accept; }", "tcp dport 1 goto {\n accept\n drop\n }",
        "tcp dport 1 jump { }", "tcp dport 1 jump { accept } counter",
        "tcp dport 1 jump { accept; } counter", "jump { jump { accept; }; }",
        "tcp dport vmap { 1 : jump { accept; } }", "jump { tcp dport 1 jump c; }"}) {
    ExpectLoadsAsNft(dir.path, absl::StrCat(chain, "  ", rule, "\n }\n}\n"));
  }
  ExpectLoadsAsNft(dir.path, "table ip t {\n flags dormant\n chain c {\n  type filter hook "
                             "input priority 0; policy drop;\n }\n}\n");
  for (const char* family : {"arp", "bridge"}) {
    for (const char* hook : {"prerouting", "input", "forward", "output", "postrouting", "ingress"}) {
      for (const char* prio : {"filter", "dstnat", "srcnat", "out", "raw", "filter + 5", "-7"}) {
        ExpectLoadsAsNft(dir.path, absl::StrCat("table ", family, " t {\n chain c {\n  type filter hook ",
                                                hook, " priority ", prio, ";\n }\n}\n"));
      }
    }
  }
}

}  // namespace
}  // namespace rulejit::testing
