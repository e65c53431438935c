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
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
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

struct Case {
  std::string name;
  OracleSyntax syntax;
  std::string text;
};

std::vector<Case> Cases() {
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
  };
}

// "<index> accept delivered|forwarded" / "<index> drop" per frame.
std::vector<std::string> ParseFates(const std::string& out, size_t count) {
  std::vector<std::string> fates(count, "missing");
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    size_t index = 0;
    if (words.size() < 2 || !absl::SimpleAtoi(words[0], &index) || index >= count) continue;
    fates[index] = words[1] == "accept" && words.size() > 2 ? words[2] : words[1];
  }
  return fates;
}

// The IP packet of an Ethernet frame, as its header's length says (a
// capture may pad short frames).
std::vector<uint8_t> IpPacket(const std::vector<uint8_t>& frame) {
  const bool v6 = frame.size() > 13 && frame[12] == 0x86 && frame[13] == 0xdd;
  if (frame.size() < 14u + (v6 ? 40 : 20)) return frame;
  const size_t len = v6 ? 40 + (frame[18] << 8 | frame[19]) : (frame[16] << 8 | frame[17]);
  return std::vector<uint8_t>(frame.begin() + 14,
                              frame.begin() + 14 + std::min(len, frame.size() - 14));
}

std::string KernelFate(const PathOutcome& o) {
  return o.forwarded ? "forwarded" : o.delivered ? "delivered" : "drop";
}

TEST(PathKernel, EveryTierFollowsTheKernelAlongThePath) {
  for (OracleSyntax syntax : {OracleSyntax::kNft, OracleSyntax::kIptablesSave}) {
    if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  }
  ScratchDir dir("rulejit-path");
  ASSERT_FALSE(dir.path.empty());
  const Frames frames = PathFrames();
  absl::StatusOr<Frames> injected = PrepareOracleFrames(frames);
  ASSERT_TRUE(injected.ok()) << injected.status();
  const std::string pcap = dir.path + "/frames.pcap";
  ASSERT_TRUE(WritePcap(pcap, *injected));
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  for (const Case& c : Cases()) {
    std::string host;
    absl::StatusOr<std::vector<PathOutcome>> kernel =
        KernelPathOutcomes({.syntax = c.syntax, .text = c.text}, frames, {.fw_host_json = &host});
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    std::vector<std::string> want;
    for (const PathOutcome& o : *kernel) want.push_back(KernelFate(o));
    // A case whose frames all end alike tests nothing.
    EXPECT_GE(std::set<std::string>(want.begin(), want.end()).size(), 2u) << c.name;
    const std::string file =
        absl::StrCat(dir.path, "/", c.name, c.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
    std::ofstream(file) << c.text;
    std::ofstream(dir.path + "/host.json") << host;
    for (const std::string& tier : tiers) {
      const std::string left = absl::StrCat(dir.path, "/left-", tier, ".pcap");
      ToolOutput run = RunTool(absl::StrCat("eval ", file, " ", pcap, " --path forward --iif fwin",
                                            " --host ", dir.path, "/host.json --backend ", tier,
                                            " --write-pcap ", left));
      ASSERT_EQ(run.exit_code, 0) << c.name << ": " << run.out;
      std::vector<std::string> ours = ParseFates(run.out, frames.size());
      absl::StatusOr<Frames> written = ReadPcap(left);
      ASSERT_TRUE(written.ok()) << written.status();
      size_t next = 0;  // the written frames are the accepted ones, in order
      size_t compared = 0;
      for (size_t i = 0; i < frames.size(); ++i) {
        EXPECT_EQ(ours[i], want[i]) << c.name << " tier " << tier << " frame " << i;
        if (ours[i] == "drop" || ours[i] == "missing") continue;
        ASSERT_LT(next, written->size()) << c.name;
        const std::vector<uint8_t>& mine = (*written)[next++];
        if (ours[i] == "forwarded" && want[i] == "forwarded") {
          EXPECT_EQ(IpPacket(mine), IpPacket((*kernel)[i].arrived))
              << c.name << " tier " << tier << " frame " << i << ": the forwarded bytes differ";
          ++compared;
        }
      }
      EXPECT_EQ(next, written->size()) << c.name << ": more frames written than accepted";
      EXPECT_GT(compared, 0u) << c.name << ": no forwarded frame to compare";
    }
  }
}

}  // namespace
}  // namespace rulejit::testing
