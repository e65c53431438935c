// One case of the kernel differential test (kernel_diff_test.cc): a seeded
// ruleset in every rendering and its packets (MakeCase), the modes it runs
// in, writing its files, running the kernel and rulejit on it (RunCase) and
// finding the packets where their verdict lists disagree.
#ifndef RULEJIT_TESTS_KERNEL_KERNEL_DIFF_CASE_H_
#define RULEJIT_TESTS_KERNEL_KERNEL_DIFF_CASE_H_

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <random>
#include <string>
#include <vector>
#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
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
#include "tests/support/env.h"
#include "tests/support/files.h"

namespace rulejit::testing::kernel_diff {

// ---------------------------------------------------------------- one ruleset

struct Case {
  uint32_t seed = 0;
  GenFamily family = GenFamily::kIpv4;
  bool mixed = false;    // an inet ruleset of both families (then family is unused)
  std::string ipt, nft;  // ipt: an iptables-save or ip6tables-save dump ("": none)
  // The same rules in a netdev base chain (empty: no netdev run).
  std::string netdev;
  OracleHook netdev_hook = OracleHook::kNetdevIngress;
  std::vector<FrameSpec> packets;
  Frames frames;  // as the harness injects them (index in the payload)
  // Flags every `rulejit eval` of the case gets (--random N for a case
  // whose rules read the kernel's random draw, tools/draw_option.h).
  std::string eval_args;
};

// The seed picks the family and the netdev hook, so that one seed replays
// one case: odd seeds IPv4, even IPv6 (unless RULEJIT_KERNEL_FAMILY is 4 or
// 6); seeds 1, 2 mod 4 ingress, 3, 0 mod 4 egress.
inline GenFamily FamilyOf(uint32_t seed) {
  const char* forced = getenv("RULEJIT_KERNEL_FAMILY");
  if (forced != nullptr && std::string(forced) == "4") return GenFamily::kIpv4;
  if (forced != nullptr && std::string(forced) == "6") return GenFamily::kIpv6;
  return seed % 2 == 1 ? GenFamily::kIpv4 : GenFamily::kIpv6;
}

// Seeds divisible by 6 make a mixed inet ruleset (all of them with
// RULEJIT_KERNEL_FAMILY=inet, none with 4 or 6).
inline bool MixedOf(uint32_t seed) {
  const char* forced = getenv("RULEJIT_KERNEL_FAMILY");
  if (forced != nullptr) return std::string(forced) == "inet";
  return seed % 6 == 0;
}

inline Case MakeCase(uint32_t seed, int packets, bool fragments = true) {
  std::mt19937 rng(seed);
  Case c;
  c.seed = seed;
  c.family = FamilyOf(seed);
  c.mixed = MixedOf(seed);
  GenRuleset rs = GenerateRuleset(rng, {.family = c.family, .mixed = c.mixed});
  const bool ingress = (seed + 1) / 2 % 2 == 1;
  c.netdev_hook = ingress ? OracleHook::kNetdevIngress : OracleHook::kNetdevEgress;
  c.ipt = RenderIptablesSave(rs);
  c.nft = RenderNft(rs);
  c.netdev = RenderNft(rs, ingress ? NftPlacement::kNetdevIngress : NftPlacement::kNetdevEgress);
  c.packets = GeneratePackets(rs, rng, {.count = packets, .fragments = fragments});
  return c;
}

// One way of running a case: a ruleset text, how the kernel loads it, and
// where rulejit evaluates it.
struct Mode {
  std::string name;  // "ipt", "nft", "ingress", "egress"
  OracleSyntax syntax;
  OracleHook hook;
  const std::string* text;
  std::string file;       // the text's file name in a case directory
  std::string hook_args;  // rulejit eval's hook flags
};

inline std::vector<Mode> ModesOf(const Case& c) {
  std::vector<Mode> modes;
  if (!c.ipt.empty()) {
    modes.push_back({"ipt",
                     c.family == GenFamily::kIpv4 ? OracleSyntax::kIptablesSave
                                                  : OracleSyntax::kIp6tablesSave,
                     OracleHook::kForward, &c.ipt, "rules.ipt", kHookArgs});
  }
  modes.push_back({"nft", OracleSyntax::kNft, OracleHook::kForward, &c.nft, "rules.nft", kHookArgs});
  if (!c.netdev.empty()) {
    const bool ingress = c.netdev_hook == OracleHook::kNetdevIngress;
    modes.push_back({ingress ? "ingress" : "egress", OracleSyntax::kNft, c.netdev_hook, &c.netdev,
                     "rules.netdev.nft", ingress ? kIngressHookArgs : kEgressHookArgs});
  }
  return modes;
}

// One verdict list with its name ("kernel-ipt", "rulejit-nft-interp") and
// the mode it evaluated ("ipt", "nft", "ingress" or "egress").
struct Verdicts {
  std::string name;
  std::string syntax;
  std::vector<bool> accept;
};

// Everything the comparison of one ruleset produced.
struct Outcome {
  std::vector<Verdicts> lists;   // the kernel's first (one per mode, in ModesOf order)
  std::vector<std::string> errors;  // runs that failed outright
  size_t mismatched_packets = 0;
};

// Rulejit's verdicts for one mode with every tier; failures go to errors.
inline void EvalAllTiers(const std::string& dir, const Mode& mode, const std::vector<std::string>& tiers,
                  size_t count, const std::string& eval_args, Outcome& outcome) {
  const std::string file = absl::StrCat(dir, "/", mode.file), pcap = absl::StrCat(dir, "/frames.pcap");
  for (const std::string& tier : tiers) {
    absl::StatusOr<std::vector<bool>> accept =
        RulejitVerdicts(file, pcap, tier, count, eval_args, mode.hook_args);
    if (!accept.ok()) {
      outcome.errors.push_back(std::string(accept.status().message()));
      continue;
    }
    outcome.lists.push_back(
        {absl::StrCat("rulejit-", mode.name, "-", tier), mode.name, *std::move(accept)});
  }
}

inline const Verdicts* KernelList(const std::vector<Verdicts>& lists, const std::string& mode) {
  for (const Verdicts& v : lists) {
    if (v.name == "kernel-" + mode) return &v;
  }
  return nullptr;
}

// Indexes where rulejit disagrees with the kernel in the same mode, or
// where the two FORWARD kernels (iptables-legacy, nft) disagree. That last
// check is skipped for non-first fragments and IPv6 packets with AH: there
// the kernels really differ (the iptables tcp/udp/icmp/multiport matches
// refuse fragments; nft's fast-path payload loads (nf_tables_core.c, 1/2/4
// aligned bytes) read the fragment's data at the transport offset, not
// checking fragoff; ip6tables' -p walks over AH, nft's l4proto is AH), so
// the two renderings cannot agree. rulejit must still equal the kernel of
// the same mode on them. The netdev modes are not compared with FORWARD:
// there the other device is absent (ingress has no oif, egress no iif).
inline std::vector<size_t> Disagreements(const std::vector<Verdicts>& lists, const Frames& frames) {
  std::vector<size_t> out;
  const Verdicts* ipt = KernelList(lists, "ipt");
  const Verdicts* nft = KernelList(lists, "nft");
  for (size_t i = 0; i < frames.size(); ++i) {
    bool bad = ipt != nullptr && nft != nullptr && !NonFirstFragment(frames[i]) &&
               !HasIpv6Ah(frames[i]) && ipt->accept[i] != nft->accept[i];
    for (const Verdicts& v : lists) {
      const Verdicts* kernel = KernelList(lists, v.syntax);
      bad = bad || kernel == nullptr || v.accept[i] != kernel->accept[i];
    }
    if (bad) out.push_back(i);
  }
  return out;
}

// Writes the case's rulesets and frames into `dir` (the names ModesOf uses).
inline bool WriteCaseFiles(const Case& c, const std::string& dir) {
  for (const Mode& m : ModesOf(c)) std::ofstream(absl::StrCat(dir, "/", m.file)) << *m.text;
  if (!c.netdev.empty()) {
    std::ofstream(absl::StrCat(dir, "/netdev_hook")) << ModesOf(c).back().name << "\n";
  }
  return WritePcap(absl::StrCat(dir, "/frames.pcap"), c.frames);
}

// Writes the case, its verdicts and a readable list of the disagreeing
// packets to a directory; returns the message that points at it.
inline std::string KeepForReplay(const Case& c, const Outcome& outcome,
                          const std::vector<size_t>& bad) {
  std::string dir = MakeTempDir("rulejit-kdiff");
  WriteCaseFiles(c, dir);
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
  for (const Mode& m : ModesOf(c)) {
    absl::StrAppend(&msg, "replay ", m.name, ": ", RULEJIT_TOOL, " eval ", dir, "/", m.file, " ",
                    dir, "/frames.pcap ", m.hook_args, " ", c.eval_args, " --backend B --explain\n");
  }
  for (const std::string& e : outcome.errors) absl::StrAppend(&msg, "error: ", e, "\n");
  return msg;
}

// Kernel (every mode) and rulejit (every mode, every tier) on one case.
// rulejit runs in a second thread while the kernel runs, which mostly wait
// (pacing, settling, namespace setup): that halves a case's wall time.
inline Outcome RunCase(const Case& c, const std::string& dir, const std::vector<std::string>& tiers) {
  Outcome outcome;
  if (!WriteCaseFiles(c, dir)) {
    outcome.errors.push_back("cannot write " + dir + "/frames.pcap");
    return outcome;
  }
  const std::vector<Mode> modes = ModesOf(c);
  std::future<Outcome> ours = std::async(std::launch::async, [&] {
    Outcome o;
    for (const Mode& m : modes) EvalAllTiers(dir, m, tiers, c.frames.size(), c.eval_args, o);
    return o;
  });
  const OracleOptions no_control{.control_run = false};
  for (const Mode& m : modes) {
    absl::StatusOr<std::vector<bool>> kernel =
        KernelVerdicts({.syntax = m.syntax, .text = *m.text, .hook = m.hook}, c.frames, no_control);
    if (!kernel.ok()) {
      outcome.errors.push_back(absl::StrCat("kernel-", m.name, ": ", kernel.status().message()));
      break;
    }
    outcome.lists.push_back({absl::StrCat("kernel-", m.name), m.name, *std::move(kernel)});
  }
  Outcome rulejit = ours.get();
  if (!outcome.errors.empty()) return outcome;
  for (Verdicts& v : rulejit.lists) outcome.lists.push_back(std::move(v));
  outcome.errors = std::move(rulejit.errors);
  outcome.mismatched_packets = Disagreements(outcome.lists, c.frames).size();
  return outcome;
}

}  // namespace rulejit::testing::kernel_diff

#endif  // RULEJIT_TESTS_KERNEL_KERNEL_DIFF_CASE_H_
