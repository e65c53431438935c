// `diff --path` against the kernel: for hand-written pairs of rulesets that
// differ along the forward path (a prerouting mark tested at forward, a
// DNAT that makes a packet local or goes to another port, a raw notrack,
// masquerade against SNAT, in nft and iptables), the
// path diff is computed on fw's own host model, and every witness it
// reports is sent through fw (kernel_oracle.h, path mode) with each
// ruleset loaded: the kernel's fates must be the diff's (and, for a
// translation difference, the forwarded addresses and ports). The same
// witnesses then go through `rulejit eval --path --host` on every tier,
// which must agree with the kernel (ExpectKernelPath). A pair split
// differently across hooks must show no difference.
//
// Needs root, `ip netns`, nft, iptables-legacy-restore and the rulejit
// binary; skips with the reason otherwise.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/path_diff.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

namespace an = rulejit::analysis;

struct DiffCase {
  std::string name;
  OracleSyntax syntax;
  std::string old_text, new_text;
  bool equivalent = false;
};

std::string NftMark(int mark) {
  return absl::StrCat(R"(table inet t {
  chain pre { type filter hook prerouting priority -150; udp dport 1000 meta mark set )",
                      mark, R"(; }
  chain forwarding { type filter hook forward priority 0; policy accept; meta mark 7 drop; }
})");
}

std::string NftDnat(const char* to) {
  return absl::StrCat(R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; udp dport 2000 dnat to )",
                      to, R"(; }
})");
}

std::string NftNotrack(bool notrack) {
  return absl::StrCat(R"(table inet t {
  chain raw { type filter hook prerouting priority -300; )",
                      notrack ? "udp dport 3000 notrack;" : "", R"( }
  chain forwarding { type filter hook forward priority 0; policy drop; ct state untracked accept; udp dport != 3000 accept; }
})");
}

std::string NftPost(const char* nat) {
  return absl::StrCat(R"(table ip nat {
  chain post { type nat hook postrouting priority srcnat; oifname "fwout" udp dport 5000 )",
                      nat, R"(; }
})");
}

// An iptables dump: `mangle` rules, then `filter` rules.
std::string Ipt(const std::string& mangle, const std::string& filter) {
  return absl::StrCat(R"(*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
)", mangle, R"(COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
)", filter, "COMMIT\n");
}

std::string IptMark(int dport) {
  return Ipt(absl::StrCat("-A PREROUTING -p udp --dport ", dport, " -j MARK --set-mark 5\n"),
             "-A FORWARD -m mark --mark 5 -j DROP\n");
}

// CONNMARK: the ct mark set at prerouting, restored into the mark at forward.
std::string IptConnmark(int dport) {
  return Ipt(absl::StrCat("-A PREROUTING -p udp --dport ", dport,
                          " -j CONNMARK --set-mark 9\n-A FORWARD -j CONNMARK --restore-mark\n"),
             "-A FORWARD -m mark --mark 9 -j DROP\n");
}

std::vector<DiffCase> Cases() {
  return {
      {"mark_set_in_prerouting", OracleSyntax::kNft, NftMark(7), NftMark(8)},
      {"dnat_local_or_forwarded", OracleSyntax::kNft, NftDnat("198.18.0.5"),
       NftDnat("10.30.0.9")},
      {"dnat_other_port", OracleSyntax::kNft, NftDnat("10.30.0.9:5353"),
       NftDnat("10.30.0.9:5354")},
      {"notrack", OracleSyntax::kNft, NftNotrack(true), NftNotrack(false)},
      {"iptables_mark", OracleSyntax::kIptablesSave, IptMark(4000), IptMark(4001)},
      {"iptables_connmark_restore", OracleSyntax::kIptablesSave, IptConnmark(6000),
       IptConnmark(6001)},
      // fwout is 198.18.0.5/30: masquerade takes it.
      {"masquerade_or_snat", OracleSyntax::kNft, NftPost("masquerade"),
       NftPost("snat to 198.18.0.9")},
      {"masquerade_is_snat_to_fwout", OracleSyntax::kNft, NftPost("masquerade"),
       NftPost("snat to 198.18.0.5"), true},
      // The routing decision's special addresses (route_input.h): DNAT to
      // the all-hosts group (delivered), 0.0.0.0 (martian), 0.1.2.3
      // (unicast), the limited broadcast (delivered), a group not joined.
      {"dnat_to_all_hosts", OracleSyntax::kNft, NftDnat("224.0.0.1"), NftDnat("10.30.0.9")},
      {"dnat_to_zeronet", OracleSyntax::kNft, NftDnat("0.0.0.0"), NftDnat("0.1.2.3")},
      {"dnat_to_broadcast", OracleSyntax::kNft, NftDnat("255.255.255.255"),
       NftDnat("224.0.0.251")},
      // Every packet the stack passes differs: one witness per class of
      // sources and destinations the routing decision tells apart.
      {"stack_decides", OracleSyntax::kNft, R"(table inet t {
  chain in { type filter hook input priority 0; policy drop; }
  chain forwarding { type filter hook forward priority 0; policy drop; }
})",
       R"(table inet t {
  chain in { type filter hook input priority 0; policy accept; }
  chain forwarding { type filter hook forward priority 0; policy accept; }
})"},
      {"split_across_hooks", OracleSyntax::kNft, NftMark(7), R"(table inet t {
  chain forwarding { type filter hook forward priority 0; udp dport 1000 drop; }
})",
       true},
  };
}

ir::Ruleset Parse(const DiffCase& c, const std::string& text, const std::string& name) {
  ir::Diagnostics diags;
  const int file = diags.AddFile(name, text);
  absl::StatusOr<ir::Ruleset> rs = c.syntax == OracleSyntax::kNft
                                       ? frontends::ParseNft(text, file, diags)
                                       : frontends::ParseIptablesSave(text, file, diags);
  EXPECT_TRUE(rs.ok()) << diags.Format();
  return rs.ok() ? *std::move(rs) : ir::Ruleset{};
}

std::string FateWord(an::PathFate fate) {
  switch (fate) {
    case an::PathFate::kForwarded: return "forwarded";
    case an::PathFate::kDelivered: return "delivered";
    default: return "drop";
  }
}

// The witness as a frame the harness can carry (a 4-byte payload for its
// index; everything the rules read as the witness has it).
std::optional<std::vector<uint8_t>> WitnessFrame(const an::Point& w) {
  auto at = [&w](an::Dim d) { return w[static_cast<int>(d)]; };
  const bool v6 = at(an::Dim::kFamily) == an::kFamilyIpv6;
  const auto proto = static_cast<uint8_t>(at(an::Dim::kProto));
  FrameSpec spec{.src = an::AddressText(at(an::Dim::kSaddr), v6),
                 .dst = an::AddressText(at(an::Dim::kDaddr), v6),
                 .proto = proto,
                 .sport = static_cast<uint16_t>(at(an::Dim::kSport)),
                 .dport = static_cast<uint16_t>(at(an::Dim::kDport)),
                 .tcp_flags = static_cast<uint8_t>(at(an::Dim::kTcpFlags)),
                 .payload = {0, 0, 0, 0},
                 .ttl = static_cast<uint8_t>(at(an::Dim::kTtl))};
  // The harness sends TCP and UDP frames to fw's MAC (pkttype host).
  if ((proto != 6 && proto != 17) || at(an::Dim::kPktType) != 0) return std::nullopt;
  return BuildFrame(spec);
}

// The harness sees forwarded frames at dst0 alone: a witness whose
// destination fw routes back out fwin (onto fwin's own link) can't be
// checked there.
bool RoutedBackOutFwin(const HostModel& host, const an::Point& w) {
  const bool v6 = w[static_cast<int>(an::Dim::kFamily)] == an::kFamilyIpv6;
  uint8_t daddr[16] = {};
  const int len = v6 ? 16 : 4;
  an::Value v = w[static_cast<int>(an::Dim::kDaddr)];
  for (int i = len - 1; i >= 0; --i, v >>= 8) daddr[i] = static_cast<uint8_t>(v);
  const HostRoute* route = host.LookupRoute(v6 ? 6 : 4, daddr);
  const HostInterface* fwin = host.FindInterface(std::string_view("fwin"));
  return route != nullptr && fwin != nullptr && route->type == RouteType::kUnicast &&
         !route->oifs.empty() && route->oifs.front() == fwin->index;
}

uint32_t Word(const std::vector<uint8_t>& ip, size_t at) {
  return uint32_t{ip[at]} << 24 | uint32_t{ip[at + 1]} << 16 | uint32_t{ip[at + 2]} << 8 | ip[at + 3];
}

TEST(PathDiffKernel, WitnessesDifferInTheKernelAsTheDiffSays) {
  for (OracleSyntax syntax : {OracleSyntax::kNft, OracleSyntax::kIptablesSave}) {
    if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  }
  ScratchDir dir("rulejit-pathdiff");
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  for (const DiffCase& c : Cases()) {
    // fw's host model, from a first run (the namespaces are the same each time).
    std::string host_json;
    const Frames probe = {BuildFrame(FrameSpec{.src = "10.1.0.5", .dst = "10.20.0.1", .proto = 17,
                                               .sport = 1, .dport = 9, .payload = {0, 0, 0, 0}})};
    ASSERT_TRUE(KernelPathOutcomes({.syntax = c.syntax, .text = c.old_text}, probe,
                                   {.fw_host_json = &host_json})
                    .ok());
    absl::StatusOr<HostModel> host = ParseHostJson(host_json);
    ASSERT_TRUE(host.ok()) << host.status();
    const ir::Ruleset old_rs = Parse(c, c.old_text, "old"), new_rs = Parse(c, c.new_text, "new");
    const an::PathDiffResult d = an::DiffPaths(
        old_rs, new_rs, {.path = an::PathKind::kForward, .iif = "fwin", .host = &*host});
    EXPECT_TRUE(d.not_modelled.empty()) << c.name << ": " << d.not_modelled[0].why;
    if (c.equivalent) {
      EXPECT_TRUE(d.regions.empty()) << c.name;
      continue;
    }
    ASSERT_FALSE(d.regions.empty()) << c.name;
    Frames frames;
    std::vector<const an::PathDiffRegion*> regions;
    for (const an::PathDiffRegion& r : d.regions) {
      if (RoutedBackOutFwin(*host, r.witness)) continue;
      std::optional<std::vector<uint8_t>> f = WitnessFrame(r.witness);
      if (!f) continue;
      frames.push_back(*std::move(f));
      regions.push_back(&r);
    }
    ASSERT_FALSE(frames.empty()) << c.name;
    absl::StatusOr<Frames> injected = PrepareOracleFrames(frames);
    ASSERT_TRUE(injected.ok()) << injected.status();
    const std::string pcap = absl::StrCat(dir.path, "/", c.name, ".pcap");
    ASSERT_TRUE(WritePcap(pcap, *injected));
    std::ofstream(dir.path + "/host.json") << host_json;
    std::vector<std::string> fates[2];  // the kernel's, per side
    for (bool old_side : {true, false}) {
      const std::string& text = old_side ? c.old_text : c.new_text;
      absl::StatusOr<std::vector<PathOutcome>> kernel =
          KernelPathOutcomes({.syntax = c.syntax, .text = text}, frames);
      ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
      for (size_t i = 0; i < regions.size(); ++i) {
        const an::PathSide& side = old_side ? regions[i]->old_side : regions[i]->new_side;
        const std::string what = absl::StrCat(c.name, old_side ? " OLD " : " NEW ",
                                              an::DescribePoint(regions[i]->witness,
                                                                d.spaces->witness()));
        EXPECT_EQ(KernelFate((*kernel)[i]), FateWord(side.fate)) << what;
        fates[old_side ? 0 : 1].push_back(KernelFate((*kernel)[i]));
        const std::vector<uint8_t>& got = (*kernel)[i].arrived;
        if ((*kernel)[i].forwarded && regions[i]->translation && got.size() >= 14 + 24) {
          EXPECT_EQ(Word(got, 14 + 12), static_cast<uint32_t>(side.saddr)) << what;
          EXPECT_EQ(Word(got, 14 + 16), static_cast<uint32_t>(side.daddr)) << what;
          EXPECT_EQ(got[14 + 22] << 8 | got[14 + 23], static_cast<int>(side.dport)) << what;
        }
      }
      // `rulejit eval --path` on the same witnesses agrees with the kernel.
      const std::string file = absl::StrCat(dir.path, "/", c.name, old_side ? ".old" : ".new",
                                            c.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
      std::ofstream(file) << text;
      ExpectKernelPath(absl::StrCat(c.name, old_side ? " old" : " new"), file, pcap,
                       absl::StrCat("--iif fwin --host ", dir.path, "/host.json"), *kernel, tiers,
                       dir.path);
    }
    // The kernel itself tells the rulesets apart on the witnesses: by fate,
    // or (a translation difference) by the forwarded packet, checked above.
    size_t differing = 0;
    for (size_t i = 0; i < regions.size(); ++i) {
      differing += fates[0][i] != fates[1][i] || regions[i]->translation;
    }
    EXPECT_EQ(differing, regions.size()) << c.name;
    std::cerr << c.name << ": " << regions.size() << " witnesses sent through the kernel\n";
  }
}

}  // namespace
}  // namespace rulejit::testing
