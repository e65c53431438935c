// Kernel differential test: seeded random FORWARD rulesets (ruleset_gen.h),
// each rendered as an iptables-save dump and as an nft ruleset, and packets
// aimed at their boundaries (packet_gen.h). For every ruleset:
//   - the kernel's verdicts with iptables-legacy (the dump) and with nft (the
//     nft text) must agree: this checks the generator's two renderings;
//   - `rulejit eval --backend B` must equal the kernel for every tier B the
//     tool accepts (probed: interp, jit, llvm), on both renderings.
// One accept-all control run over all frames first proves the kernel forwards
// every one of them, so the per-ruleset runs need no control run of their own.
//
// Sizes (defaults keep the test at about 2-3 minutes):
//   RULEJIT_KERNEL_RULESETS  number of rulesets (default 70)
//   RULEJIT_KERNEL_PACKETS   packets per ruleset (default 400)
//   RULEJIT_KERNEL_SEED      seed of ruleset 0; ruleset k uses seed + k, so
//                            one ruleset replays with RULESETS=1 SEED=seed+k
//   RULEJIT_KERNEL_KEEP=1    keep every ruleset's directory, not only failing ones
//   RULEJIT_KERNEL_REPLAY=DIR  rerun a kept directory (test KernelDiff.Replay)
//   RULEJIT_KERNEL_FRAGMENTS=0  no IPv4 fragments among the packets (on by
//                            default: a few random packets are first or
//                            non-first fragments; see NftTransportMatchOnFragment
//                            for what the kernels do with them).
// A long campaign (about 2 s per ruleset):
//   RULEJIT_KERNEL_RULESETS=1000 RULEJIT_KERNEL_SEED=7 \
//     build/tests/kernel_diff_test --gtest_filter='KernelDiff.Generated*'
//   RULEJIT_KERNEL_RULESETS=1000 ctest -L kernel --timeout 100000
// On a mismatch, the ruleset (both syntaxes), frames.pcap, packets.txt and
// every verdict list are kept in a printed /tmp directory, with the
// `rulejit eval ... --explain` command that replays rulejit's side.
//
// IPv6 is not in the random campaign yet: the generators (ruleset_gen,
// packet_gen) render IPv4 only, and ip6tables-legacy's tcp/udp/icmp6/
// multiport matches refuse non-first IPv6 fragments (par->fragoff from
// ipv6_find_hdr), a check rulejit's ip6tables lowering lacks and its IR
// cannot express yet (it needs "no fragment header, or offset 0": an exthdr
// expression). What nft does with IPv6 fragments is modelled and checked by
// NftTransportMatchOnIpv6Fragment; kernel_oracle_test.cc checks IPv6
// frames against hand reasoning (ip6tables-legacy, nft) and rulejit (nft).
//
// Needs root, `ip netns`, iptables-legacy-restore, nft and the rulejit
// binary; skips with the reason otherwise.
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/packet_gen.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/kernel/ruleset_gen.h"

namespace rulejit::testing {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* value = getenv(name);
  int parsed = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &parsed) || parsed <= 0) return fallback;
  return parsed;
}

// ---------------------------------------------------------------- one ruleset

struct Case {
  uint32_t seed = 0;
  std::string ipt, nft;
  std::vector<FrameSpec> packets;
  Frames frames;  // as the harness injects them (index in the payload)
};

Case MakeCase(uint32_t seed, int packets, bool fragments = true) {
  std::mt19937 rng(seed);
  GenRuleset rs = GenerateRuleset(rng);
  Case c;
  c.seed = seed;
  c.ipt = RenderIptablesSave(rs);
  c.nft = RenderNft(rs);
  c.packets = GeneratePackets(rs, rng, {.count = packets, .fragments = fragments});
  return c;
}

// One verdict list with its name ("kernel-ipt", "rulejit-nft-interp") and
// the syntax it evaluated ("ipt" or "nft").
struct Verdicts {
  std::string name;
  std::string syntax;
  std::vector<bool> accept;
};

// Everything the comparison of one ruleset produced.
struct Outcome {
  std::vector<Verdicts> lists;   // lists[0] kernel-ipt, lists[1] kernel-nft
  std::vector<std::string> errors;  // runs that failed outright
  size_t mismatched_packets = 0;
};

// Rulejit's verdicts for `file` with every tier; failures go to errors.
void EvalAllTiers(const std::string& file, const std::string& syntax,
                  const std::string& pcap, const std::vector<std::string>& tiers,
                  size_t count, Outcome& outcome) {
  for (const std::string& tier : tiers) {
    absl::StatusOr<std::vector<bool>> accept = RulejitVerdicts(file, pcap, tier, count);
    if (!accept.ok()) {
      outcome.errors.push_back(std::string(accept.status().message()));
      continue;
    }
    outcome.lists.push_back(
        {absl::StrCat("rulejit-", syntax, "-", tier), syntax, *std::move(accept)});
  }
}

// Indexes where rulejit disagrees with the kernel in the same syntax, or
// where the two kernels disagree. That last check is skipped for non-first
// IPv4 fragments: there the kernels really differ (the iptables tcp/udp/icmp/
// multiport matches refuse fragments; nft's fast-path payload loads
// (nf_tables_core.c, 1/2/4 aligned bytes) read the fragment's data at the
// transport offset, not checking fragoff), so the two renderings cannot
// agree. rulejit must still equal the kernel of the same syntax on them.
std::vector<size_t> Disagreements(const std::vector<Verdicts>& lists, const Frames& frames) {
  std::vector<size_t> out;
  for (size_t i = 0; i < frames.size(); ++i) {
    bool bad = lists.size() >= 2 && !NonFirstFragment(frames[i]) &&
               lists[0].accept[i] != lists[1].accept[i];
    for (const Verdicts& v : lists) {
      const Verdicts& kernel = v.syntax == lists[0].syntax ? lists[0] : lists[1];
      bad = bad || v.accept[i] != kernel.accept[i];
    }
    if (bad) out.push_back(i);
  }
  return out;
}

// Writes the case, its verdicts and a readable list of the disagreeing
// packets to a directory; returns the message that points at it.
std::string KeepForReplay(const Case& c, const Outcome& outcome,
                          const std::vector<size_t>& bad) {
  std::string dir = MakeTempDir("rulejit-kdiff");
  std::ofstream(absl::StrCat(dir, "/rules.ipt")) << c.ipt;
  std::ofstream(absl::StrCat(dir, "/rules.nft")) << c.nft;
  WritePcap(absl::StrCat(dir, "/frames.pcap"), c.frames);
  std::string packets;
  for (size_t i = 0; i < c.packets.size(); ++i) {
    absl::StrAppend(&packets, i, " ", DescribePacket(c.packets[i]), "\n");
  }
  std::ofstream(absl::StrCat(dir, "/packets.txt")) << packets;
  for (const Verdicts& v : outcome.lists) {
    std::ofstream(absl::StrCat(dir, "/", v.name, ".txt")) << VerdictLines(v.accept);
  }
  std::string msg = absl::StrCat("ruleset seed ", c.seed, ": ", bad.size(),
                                 " packets disagree; files in ", dir, "\n");
  for (size_t i : bad) {
    absl::StrAppend(&msg, "  ", i, " ",
                    i < c.packets.size() ? DescribePacket(c.packets[i]) : "(from a pcap)", ":");
    for (const Verdicts& v : outcome.lists) {
      absl::StrAppend(&msg, " ", v.name, "=", v.accept[i] ? "accept" : "drop");
    }
    absl::StrAppend(&msg, "\n");
  }
  absl::StrAppend(&msg, "replay: ", RULEJIT_TOOL, " eval ", dir, "/rules.{ipt,nft} ", dir,
                  "/frames.pcap ", kHookArgs, " --backend B --explain\n");
  for (const std::string& e : outcome.errors) absl::StrAppend(&msg, "error: ", e, "\n");
  return msg;
}

// Kernel (both syntaxes) and rulejit (both syntaxes, every tier) on one case.
Outcome RunCase(const Case& c, const std::string& dir, const std::vector<std::string>& tiers) {
  Outcome outcome;
  const OracleOptions no_control{.control_run = false};
  for (auto [syntax, text, name] :
       {std::tuple{OracleSyntax::kIptablesSave, &c.ipt, "ipt"},
        std::tuple{OracleSyntax::kNft, &c.nft, "nft"}}) {
    absl::StatusOr<std::vector<bool>> kernel =
        KernelVerdicts({.syntax = syntax, .text = *text}, c.frames, no_control);
    if (!kernel.ok()) {
      outcome.errors.push_back(absl::StrCat("kernel-", name, ": ", kernel.status().message()));
      return outcome;
    }
    outcome.lists.push_back({absl::StrCat("kernel-", name), name, *std::move(kernel)});
  }
  const std::string pcap = absl::StrCat(dir, "/frames.pcap");
  const std::string ipt = absl::StrCat(dir, "/rules.ipt"), nft = absl::StrCat(dir, "/rules.nft");
  std::ofstream(ipt) << c.ipt;
  std::ofstream(nft) << c.nft;
  if (!WritePcap(pcap, c.frames)) outcome.errors.push_back("cannot write " + pcap);
  EvalAllTiers(ipt, "ipt", pcap, tiers, c.frames.size(), outcome);
  EvalAllTiers(nft, "nft", pcap, tiers, c.frames.size(), outcome);
  outcome.mismatched_packets = Disagreements(outcome.lists, c.frames).size();
  return outcome;
}

// ---------------------------------------------------------------- tests

// Without root: the generators are deterministic and their output keeps the
// frame contract.
TEST(KernelDiffGenerators, SameSeedSameOutput) {
  Case a = MakeCase(42, 50), b = MakeCase(42, 50), other = MakeCase(43, 50);
  EXPECT_EQ(a.ipt, b.ipt);
  EXPECT_EQ(a.nft, b.nft);
  EXPECT_EQ(BuildFrames(a.packets), BuildFrames(b.packets));
  EXPECT_NE(a.ipt, other.ipt);
}

TEST(KernelDiffGenerators, PacketsKeepTheFrameContract) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    Case c = MakeCase(seed, 100);
    ASSERT_EQ(c.packets.size(), 100u);
    for (const FrameSpec& s : c.packets) {
      uint32_t src = 0, dst = 0;
      ASSERT_EQ(inet_pton(AF_INET, s.src.c_str(), &src), 1);
      ASSERT_EQ(inet_pton(AF_INET, s.dst.c_str(), &dst), 1);
      EXPECT_TRUE(ForwardableIpv4(ntohl(src))) << s.src;
      EXPECT_TRUE(ForwardableIpv4(ntohl(dst))) << s.dst;
      EXPECT_GE(s.payload.size(), 4u);
      EXPECT_LE(BuildFrame(s).size(), 1514u);
    }
    absl::StatusOr<Frames> prepared = PrepareOracleFrames(BuildFrames(c.packets));
    EXPECT_TRUE(prepared.ok()) << prepared.status();
  }
}

// Both renderings of many rulesets load into rulejit (no kernel needed).
TEST(KernelDiffGenerators, RulejitAcceptsBothRenderings) {
  if (access(RULEJIT_TOOL, X_OK) != 0) GTEST_SKIP() << "no rulejit binary at " << RULEJIT_TOOL;
  const ScratchDir scratch("rulejit-kdiff-check");
  const std::string& dir = scratch.path;
  ASSERT_FALSE(dir.empty());
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    Case c = MakeCase(seed, 1);
    for (auto [ext, text] : {std::pair{"ipt", &c.ipt}, std::pair{"nft", &c.nft}}) {
      const std::string file = absl::StrCat(dir, "/rules.", ext);
      std::ofstream(file) << *text;
      ToolOutput check = RunTool(absl::StrCat("check ", file));
      EXPECT_EQ(check.exit_code, 0) << "seed " << seed << ":\n" << *text << check.out;
    }
  }
}

// Found by the random test (seed 1, Linux 6.18): on a non-first IPv4
// fragment, `tcp dport 0 drop` drops in the kernel, because nft's fast-path
// payload load (2 aligned bytes) reads the fragment's data at the transport
// offset without checking fragoff: here bytes 2-3 of the fragment's data, 0
// (the harness writes index 0 there). iptables' `--dport 0` never matches a
// non-first fragment. rulejit models both (ir::PayloadSlot for nft, the
// legacy flavour's fragment check for iptables: frontends::IptablesFlavor).
//   frame 0: tcp fragment, offset 800, no L4 header    kernel nft: drop
//   frame 1: tcp 80 -> 0 with a real header (control)   kernel nft: drop
//   frame 2: tcp 80 -> 80 with a real header            kernel nft: accept
// Fails the test if this process left a namespace behind.
class KernelDiff : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_THAT(OwnOracleNamespaces(), ::testing::IsEmpty()); }
};

// nft's 1/2/4-byte aligned transport loads take the kernel's fast path
// (nft_payload_fast_eval), which does not check the fragment offset, so they
// read a non-first fragment's data; iptables-legacy's tcp match refuses it.
TEST_F(KernelDiff, NftTransportMatchOnFragment) {
  for (OracleSyntax syntax : {OracleSyntax::kIptablesSave, OracleSyntax::kNft}) {
    absl::Status available = OracleAvailable(syntax);
    if (!available.ok()) GTEST_SKIP() << available.message();
  }
  if (access(RULEJIT_TOOL, X_OK) != 0) GTEST_SKIP() << "no rulejit binary at " << RULEJIT_TOOL;
  Case c;
  c.ipt = "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -p tcp -m tcp --dport 0 -j DROP\nCOMMIT\n";
  c.nft = "table ip filter {\n  chain forward {\n"
          "    type filter hook forward priority 0; policy accept;\n"
          "    tcp dport 0 drop\n  }\n}\n";
  for (uint16_t dport : {0, 0, 80}) {
    FrameSpec f;
    f.src = "192.0.2.1";
    f.dst = "198.51.100.1";
    f.sport = 80;
    f.dport = dport;
    f.ip_id = static_cast<uint16_t>(c.packets.size() + 1);
    f.payload.assign(8, 0);
    if (c.packets.empty()) f.frag_offset = 100;
    c.packets.push_back(f);
  }
  absl::StatusOr<Frames> prepared = PrepareOracleFrames(BuildFrames(c.packets));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  c.frames = *std::move(prepared);
  const ScratchDir scratch("rulejit-kdiff-frag");
  const std::string& work = scratch.path;
  ASSERT_FALSE(work.empty());
  Outcome outcome = RunCase(c, work, SupportedTiers(work));
  ASSERT_TRUE(outcome.errors.empty()) << absl::StrJoin(outcome.errors, "\n");
  // The kernel facts this test is about.
  EXPECT_THAT(outcome.lists[0].accept, ::testing::ElementsAre(true, false, true)) << "kernel-ipt";
  EXPECT_THAT(outcome.lists[1].accept, ::testing::ElementsAre(false, false, true)) << "kernel-nft";
  std::vector<size_t> bad = Disagreements(outcome.lists, c.frames);
  EXPECT_TRUE(bad.empty()) << KeepForReplay(c, outcome, bad);
}

// The IPv6 side of the same kernel behaviour: for a non-first IPv6
// fragment ipv6_find_hdr returns the protocol without setting the offset,
// so pkt->thoff stays 0 and a fast-path transport load reads the IPv6
// header itself (bytes 2-3: the low flow label bits, 0 here), not the
// fragment's data (which starts with the frame index, 1 here).
//   frame 0: tcp 80 -> 80, whole (control)             kernel: accept
//   frame 1: tcp fragment, offset 800, data 00 00 00 01  kernel: drop
// rulejit (PacketView::l4_off) must agree on every tier.
TEST_F(KernelDiff, NftTransportMatchOnIpv6Fragment) {
  absl::Status available = OracleAvailable(OracleSyntax::kNft);
  if (!available.ok()) GTEST_SKIP() << available.message();
  if (access(RULEJIT_TOOL, X_OK) != 0) GTEST_SKIP() << "no rulejit binary at " << RULEJIT_TOOL;
  const std::string nft = "table ip6 filter {\n  chain forward {\n"
                          "    type filter hook forward priority 0; policy accept;\n"
                          "    tcp dport 0 drop\n  }\n}\n";
  std::vector<FrameSpec> packets;
  for (int i = 0; i < 2; ++i) {
    FrameSpec f;
    f.src = "2001:db8::1";
    f.dst = "2001:db8:1::1";
    f.sport = 80;
    f.dport = 80;
    f.payload.assign(8, 0);
    f.ip_id = static_cast<uint16_t>(i + 1);
    if (i == 1) {
      f.ext_headers = {44};
      f.frag_offset = 100;
    }
    packets.push_back(f);
  }
  absl::StatusOr<Frames> frames = PrepareOracleFrames(BuildFrames(packets));
  ASSERT_TRUE(frames.ok()) << frames.status();
  absl::StatusOr<std::vector<bool>> kernel = KernelVerdicts({.syntax = OracleSyntax::kNft, .text = nft}, *frames);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_THAT(*kernel, ::testing::ElementsAre(true, false)) << "kernel-nft";
  const ScratchDir scratch("rulejit-kdiff-frag6");
  ASSERT_FALSE(scratch.path.empty());
  const std::string file = scratch.path + "/rules.nft", pcap = scratch.path + "/frames.pcap";
  std::ofstream(file) << nft;
  ASSERT_TRUE(WritePcap(pcap, *frames));
  for (const std::string& tier : SupportedTiers(scratch.path)) {
    absl::StatusOr<std::vector<bool>> ours = RulejitVerdicts(file, pcap, tier, frames->size());
    ASSERT_TRUE(ours.ok()) << ours.status();
    EXPECT_EQ(*ours, *kernel) << tier;
  }
}

// RULEJIT_KERNEL_REPLAY=DIR reruns a kept directory (rules.ipt, rules.nft,
// frames.pcap; edit the rules to minimize) through both kernels and rulejit.
TEST_F(KernelDiff, Replay) {
  const char* dir = getenv("RULEJIT_KERNEL_REPLAY");
  if (dir == nullptr) GTEST_SKIP() << "set RULEJIT_KERNEL_REPLAY=DIR to replay a kept directory";
  Case c;
  c.ipt = ReadFile(absl::StrCat(dir, "/rules.ipt"));
  c.nft = ReadFile(absl::StrCat(dir, "/rules.nft"));
  absl::StatusOr<Frames> frames = ReadPcap(absl::StrCat(dir, "/frames.pcap"));
  ASSERT_TRUE(frames.ok()) << frames.status();
  c.frames = *std::move(frames);
  const ScratchDir scratch("rulejit-kdiff-replay");
  Outcome outcome = RunCase(c, scratch.path, SupportedTiers(scratch.path));
  std::vector<size_t> bad = Disagreements(outcome.lists, c.frames);
  EXPECT_TRUE(bad.empty() && outcome.errors.empty()) << KeepForReplay(c, outcome, bad);
}

TEST_F(KernelDiff, GeneratedRulesetsAgreeWithTheKernel) {
  for (OracleSyntax syntax : {OracleSyntax::kIptablesSave, OracleSyntax::kNft}) {
    absl::Status available = OracleAvailable(syntax);
    if (!available.ok()) GTEST_SKIP() << available.message();
  }
  if (access(RULEJIT_TOOL, X_OK) != 0) GTEST_SKIP() << "no rulejit binary at " << RULEJIT_TOOL;
  const int rulesets = EnvInt("RULEJIT_KERNEL_RULESETS", 70);
  const int packets = EnvInt("RULEJIT_KERNEL_PACKETS", 400);
  const uint32_t seed = static_cast<uint32_t>(EnvInt("RULEJIT_KERNEL_SEED", 1));
  const bool fragments = getenv("RULEJIT_KERNEL_FRAGMENTS") == nullptr ||
                         std::string(getenv("RULEJIT_KERNEL_FRAGMENTS")) != "0";
  const bool keep_all = EnvInt("RULEJIT_KERNEL_KEEP", 0) != 0;
  const auto start = std::chrono::steady_clock::now();

  const ScratchDir scratch("rulejit-kdiff-work");
  const std::string& work = scratch.path;
  ASSERT_FALSE(work.empty());
  const std::vector<std::string> tiers = SupportedTiers(work);
  ASSERT_FALSE(tiers.empty()) << "rulejit eval accepts no --backend";

  std::vector<Case> cases;
  Frames all_frames;
  for (int k = 0; k < rulesets; ++k) {
    cases.push_back(MakeCase(seed + static_cast<uint32_t>(k), packets, fragments));
    absl::StatusOr<Frames> prepared = PrepareOracleFrames(BuildFrames(cases.back().packets));
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    cases.back().frames = *std::move(prepared);
    all_frames.insert(all_frames.end(), cases.back().frames.begin(), cases.back().frames.end());
  }

  // The control: accept-all must deliver every frame of every case.
  absl::StatusOr<std::vector<bool>> control = KernelVerdicts(
      {.syntax = OracleSyntax::kNft,
       .text = "table ip rjk_control {\n  chain forward {\n"
               "    type filter hook forward priority 0; policy accept;\n  }\n}\n"},
      all_frames, {.control_run = false});
  ASSERT_TRUE(control.ok()) << control.status();
  for (size_t i = 0; i < all_frames.size(); ++i) {
    ASSERT_TRUE((*control)[i]) << "control run lost frame " << i << ": ruleset seed "
                               << cases[i / static_cast<size_t>(packets)].seed << ", "
                               << DescribePacket(cases[i / static_cast<size_t>(packets)].packets[i % static_cast<size_t>(packets)]);
  }

  size_t compared = 0, bad_packets = 0, bad_rulesets = 0, accepted = 0, later_fragments = 0;
  std::vector<bool> first_kernel;  // kernel-ipt verdicts of cases[0]
  for (const Case& c : cases) {
    Outcome outcome = RunCase(c, work, tiers);
    if (&c == &cases[0] && !outcome.lists.empty()) first_kernel = outcome.lists[0].accept;
    const bool complete = outcome.errors.empty() && outcome.lists.size() == 2 + 2 * tiers.size();
    if (complete) {
      compared += c.frames.size();
      for (bool a : outcome.lists[0].accept) accepted += a;
      for (const FrameSpec& p : c.packets) later_fragments += p.frag_offset != 0;
    }
    if (!complete || outcome.mismatched_packets > 0) {
      ++bad_rulesets;
      bad_packets += outcome.mismatched_packets;
      ADD_FAILURE() << KeepForReplay(c, outcome, Disagreements(outcome.lists, c.frames));
    } else if (keep_all) {
      std::cout << KeepForReplay(c, outcome, {});
    }
  }

  // The comparison can fail: rulejit with an accept-all rule planted in
  // front must disagree with the kernel on exactly the kernel's drops.
  if (!cases.empty()) {
    const Case& c = cases[0];
    std::string planted = c.ipt;
    planted.insert(planted.find("-A "), "-A FORWARD -j ACCEPT\n");
    ASSERT_EQ(first_kernel.size(), c.frames.size());
    ASSERT_TRUE(WritePcap(absl::StrCat(work, "/frames.pcap"), c.frames));
    const std::string file = absl::StrCat(work, "/planted.ipt");
    std::ofstream(file) << planted;
    ToolOutput out = RunTool(absl::StrCat("eval ", file, " ", work, "/frames.pcap ", kHookArgs));
    absl::StatusOr<std::vector<bool>> ours = ParseEval(out.out, c.frames.size());
    ASSERT_TRUE(ours.ok()) << ours.status() << "\n" << planted;
    std::vector<size_t> expected, got;
    for (size_t i = 0; i < c.frames.size(); ++i) {
      if (!first_kernel[i]) expected.push_back(i);
      if ((*ours)[i] != first_kernel[i]) got.push_back(i);
    }
    EXPECT_EQ(got, expected);
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "kernel diff: " << rulesets << " rulesets x " << packets << " packets (seed "
            << seed << "), " << compared << " packets compared in 2 syntaxes x (kernel + "
            << tiers.size() << " tiers: " << absl::StrJoin(tiers, ",") << "); "
            << accepted << " kernel accepts, " << later_fragments
            << " non-first fragments; " << bad_packets << " packets disagree in "
            << bad_rulesets << " rulesets; " << seconds << " s\n";
  EXPECT_EQ(bad_rulesets, 0u);
}

}  // namespace
}  // namespace rulejit::testing
