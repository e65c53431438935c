// Generated rulesets along the whole path, against the kernel: each seed
// makes an iptables-save dump (raw, mangle, nat, filter and security
// tables with marks, connmarks, notrack, DNAT, REDIRECT, SNAT and
// MASQUERADE) and an nft ruleset with chains at random hooks and priorities (netdev
// ingress on fwin and egress on fwout, prerouting from raw to after NAT,
// input, forward, postrouting, nat chains for DNAT, redirect, SNAT and
// masquerade) whose rules set marks and ct marks early and test them
// late, test ct state (before and after conntrack, untracked after a
// notrack), TTL, addresses before and after NAT, and decide. The frames
// are connections both ways (kernel_oracle.h path mode): client packets
// from src0 to forwarded and local destinations, and the servers' answers
// from dst0. Each frame's fate and each forwarded packet's bytes must be
// the kernel's, on every tier. A seed the kernel refuses is skipped (and
// counted); most load.
//
// Needs root, `ip netns`, nft and the rulejit binary; skips with the
// reason otherwise. About 30 seconds.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

constexpr int kSeeds = 30;  // RULEJIT_PATH_GEN_SEEDS=N runs N

FrameSpec Udp(const char* src, const char* dst, uint16_t sport, uint16_t dport) {
  return {.src = src, .dst = dst, .proto = 17, .sport = sport, .dport = dport,
          .payload = {0, 0, 0, 0}};
}

// Clients behind fwin (10.1.0.0/16), servers behind fwout, fw itself.
std::vector<PathPacket> Traffic() {
  return {
      {false, Udp("10.1.0.5", "10.20.0.1", 40000, 53)},
      {true, Udp("10.20.0.1", "10.1.0.5", 53, 40000)},
      {false, Udp("10.1.0.5", "10.20.0.1", 40000, 53)},
      {false, Udp("10.1.0.5", "10.20.0.2", 40001, 123)},
      {true, Udp("10.20.0.2", "10.1.0.5", 123, 40001)},
      {false, Udp("10.1.0.6", "198.18.0.1", 40002, 53)},
      {false, Udp("10.1.0.6", "198.18.0.5", 40003, 123)},
      {false, Udp("10.1.0.7", "10.20.0.3", 40004, 8080)},
      {true, Udp("10.20.0.3", "10.1.0.7", 8080, 40004)},
      {true, Udp("10.20.0.9", "10.1.0.7", 9999, 40005)},
      {false, {.src = "10.1.0.5", .dst = "10.20.0.1", .proto = 6, .sport = 40006, .dport = 80,
               .tcp_flags = 0x02, .payload = {0, 0, 0, 0}, .tcp_seq = 1000}},
      {true, {.src = "10.20.0.1", .dst = "10.1.0.5", .proto = 6, .sport = 80, .dport = 40006,
              .tcp_flags = 0x12, .payload = {0, 0, 0, 0}, .tcp_seq = 5000, .tcp_ack = 1005}},
      {false, {.src = "10.1.0.5", .dst = "198.18.0.1", .proto = 6, .sport = 40007, .dport = 22,
               .tcp_flags = 0x02, .payload = {0, 0, 0, 0}, .tcp_seq = 1000}},
      {false, Udp("10.1.0.8", "10.20.0.4", 40008, 53)},
      {false, {.src = "10.1.0.8", .dst = "10.20.0.4", .proto = 17, .sport = 40009, .dport = 53,
               .payload = {0, 0, 0, 0}, .ttl = 2}},
      {false, Udp("2001:db8:1::5", "2001:db8::1", 40010, 53)},
      {true, Udp("2001:db8::1", "2001:db8:1::5", 53, 40010)},
      {false, Udp("2001:db8:1::5", "2001:2:0:1::1", 40011, 123)},
  };
}

// The random choices both generators make.
class Dice {
 public:
  explicit Dice(uint32_t seed) : rng_(seed) {}

 protected:
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Pick(1, 100) <= percent; }
  template <typename T>
  const T& OneOf(const std::vector<T>& v) {
    return v[Pick(0, static_cast<int>(v.size()) - 1)];
  }

 private:
  std::mt19937 rng_;
};

// A random nft ruleset from a seed.
class Generator : public Dice {
 public:
  explicit Generator(uint32_t seed) : Dice(seed) {}

  std::string Ruleset() {
    std::string filter, nat, netdev;
    const int chains = Pick(2, 5);
    for (int i = 0; i < chains; ++i) filter += FilterChain(i);
    if (Chance(70)) nat += DnatChain();
    if (Chance(60)) nat += SnatChain();
    if (Chance(30)) netdev += NetdevChain("ingress", "fwin");
    if (Chance(30)) netdev += NetdevChain("egress", "fwout");
    std::string out = absl::StrCat("table inet g {\n", filter, "}\n");
    if (!nat.empty()) absl::StrAppend(&out, "table ip n {\n", nat, "}\n");
    if (!netdev.empty()) absl::StrAppend(&out, "table netdev d {\n", netdev, "}\n");
    return out;
  }

 private:
  std::string Match() {
    static const std::vector<std::string> kMatches = {
        "meta mark 0x1", "meta mark 0x2", "meta mark != 0x1", "ct mark 0x3",
        "ct state new", "ct state established", "ct state invalid", "ct state untracked",
        "ct state { established, related }", "udp dport 53", "udp dport 123", "udp dport 8080",
        "tcp dport 80", "tcp dport 22", "udp sport 53", "ip daddr 10.20.0.1",
        "ip daddr 10.20.0.9", "ip daddr 198.18.0.1", "ip saddr 10.1.0.5", "ip saddr 10.20.0.1",
        "ip ttl 63", "ip ttl 64", "ip ttl 1", "meta l4proto udp", "meta nfproto ipv6",
        "iifname \"fwin\"", "iifname \"fwout\"", "oifname \"fwout\"", "oifname \"fwin\"",
        "ct direction reply", "ct status dnat", "ct status snat",
    };
    return OneOf(kMatches);
  }

  std::string Action(bool may_notrack) {
    static const std::vector<std::string> kActions = {
        "meta mark set 0x1", "meta mark set 0x2", "ct mark set 0x3", "accept", "drop",
        "counter", "meta mark set meta mark | 0x4",
    };
    if (may_notrack && Chance(20)) return "notrack";
    return OneOf(kActions);
  }

  std::string Rules(int count, bool may_notrack) {
    std::string out;
    for (int r = 0; r < count; ++r) {
      std::vector<std::string> parts;
      const int matches = Pick(0, 2);
      for (int m = 0; m < matches; ++m) parts.push_back(Match());
      parts.push_back(Action(may_notrack));
      absl::StrAppend(&out, "    ", absl::StrJoin(parts, " "), "\n");
    }
    return out;
  }

  std::string FilterChain(int index) {
    static const std::vector<std::string> kHooks = {"prerouting", "prerouting", "input",
                                                    "forward", "forward", "postrouting"};
    static const std::vector<int> kPriorities = {-300, -250, -200, -150, -100, -90, 0, 50, 100, 110};
    const std::string hook = OneOf(kHooks);
    const int priority = OneOf(kPriorities);
    const bool drop_policy = Chance(30);
    return absl::StrCat("  chain c", index, " {\n    type filter hook ", hook, " priority ",
                        priority, "; policy ", drop_policy ? "drop" : "accept", ";\n",
                        drop_policy ? "    ct state established accept\n" : "",
                        Rules(Pick(1, 4), hook == "prerouting"), "  }\n");
  }

  std::string DnatChain() {
    static const std::vector<std::string> kNat = {
        "ip daddr 198.18.0.1 udp dport 53 dnat to 10.20.0.9",
        "ip daddr 10.20.0.1 udp dport 53 dnat to 198.18.0.5",
        "ip daddr 10.20.0.2 dnat to 10.20.0.3",
        "tcp dport 80 dnat to 10.20.0.9:8080",
        "udp dport 8080 redirect to :53",
        "meta mark 0x1 dnat to 10.20.0.4",
    };
    static const std::vector<int> kOffsets = {-10, 0, 0, 10, 50};
    std::string rules;
    for (int i = Pick(1, 2); i > 0; --i) absl::StrAppend(&rules, "    ", OneOf(kNat), "\n");
    if (Chance(30)) absl::StrAppend(&rules, "    meta mark set 0x2\n");
    return absl::StrCat("  chain dn {\n    type nat hook prerouting priority dstnat + ",
                        OneOf(kOffsets), ";\n", rules, "  }\n");
  }

  std::string SnatChain() {
    static const std::vector<std::string> kNat = {
        "oifname \"fwout\" masquerade",
        "ip daddr 10.20.0.1 snat to 198.18.0.5",
        "udp dport 123 snat to 10.99.0.1",
        "ip saddr 10.1.0.8 masquerade",
    };
    std::string rules;
    for (int i = Pick(1, 2); i > 0; --i) absl::StrAppend(&rules, "    ", OneOf(kNat), "\n");
    return absl::StrCat("  chain sn {\n    type nat hook postrouting priority srcnat;\n", rules,
                        "  }\n");
  }

  std::string NetdevChain(const std::string& hook, const std::string& device) {
    static const std::vector<std::string> kRules = {
        "udp dport 123 drop", "ip saddr 10.1.0.6 drop", "udp sport 53 counter",
        "ip daddr 10.20.0.9 drop", "meta mark set 0x1", "ip ttl 63 counter",
    };
    return absl::StrCat("  chain ", hook, " {\n    type filter hook ", hook, " device \"",
                        device, "\" priority 0;\n    ", OneOf(kRules), "\n  }\n");
  }
};

// Random iptables-save dumps (IPv4): raw, mangle, nat, filter and
// security tables interleaved at their priorities along the path.
class IptablesGenerator : public Dice {
 public:
  explicit IptablesGenerator(uint32_t seed) : Dice(seed) {}

  std::string Ruleset() {
    std::string out;
    Table(out, "raw", {"PREROUTING", "OUTPUT"});
    Table(out, "mangle", {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"});
    Table(out, "nat", {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"});
    Table(out, "filter", {"INPUT", "FORWARD", "OUTPUT"});
    Table(out, "security", {"INPUT", "FORWARD", "OUTPUT"});
    return out;
  }

 private:
  std::string Match(const std::string& chain) {
    std::vector<std::string> matches = {
        "-m mark --mark 0x1", "-m mark --mark 0x2", "-m connmark --mark 0x3",
        "-m conntrack --ctstate NEW", "-m conntrack --ctstate ESTABLISHED",
        "-m conntrack --ctstate INVALID", "-m conntrack --ctstate UNTRACKED",
        "-m conntrack --ctstate DNAT", "-m conntrack --ctstate SNAT", "-m state --state RELATED,ESTABLISHED",
        "-p udp --dport 53", "-p udp --dport 123", "-p udp --sport 53", "-p tcp --dport 80",
        "-p tcp --dport 22", "-d 10.20.0.1/32", "-d 10.20.0.9/32", "-d 198.18.0.1/32",
        "-s 10.1.0.5/32", "-s 10.20.0.1/32", "-m ttl --ttl-eq 63", "-m ttl --ttl-eq 64",
    };
    if (chain == "PREROUTING" || chain == "INPUT" || chain == "FORWARD") {
      matches.insert(matches.end(), {"-i fwin", "-i fwout"});
    }
    if (chain == "FORWARD" || chain == "OUTPUT" || chain == "POSTROUTING") {
      matches.insert(matches.end(), {"-o fwout", "-o fwin"});
    }
    return OneOf(matches);
  }

  std::string Target(const std::string& table, const std::string& chain) {
    if (table == "nat") {
      if (chain == "PREROUTING") {
        return OneOf(std::vector<std::string>{
            "-p udp --dport 53 -d 198.18.0.1 -j DNAT --to-destination 10.20.0.9",
            "-d 10.20.0.1 -p udp --dport 53 -j DNAT --to-destination 198.18.0.5",
            "-d 10.20.0.2 -j DNAT --to-destination 10.20.0.3",
            "-p tcp --dport 80 -j DNAT --to-destination 10.20.0.9:8080",
            "-p udp --dport 8080 -j REDIRECT --to-ports 53", "-j ACCEPT", "-j RETURN"});
      }
      if (chain == "POSTROUTING") {
        return OneOf(std::vector<std::string>{
            "-o fwout -j MASQUERADE", "-d 10.20.0.1 -j SNAT --to-source 198.18.0.5",
            "-p udp --dport 123 -j SNAT --to-source 10.99.0.1", "-j ACCEPT"});
      }
      return "-j ACCEPT";
    }
    std::vector<std::string> targets = {"-j ACCEPT", "-j DROP", "-j RETURN"};
    if (table == "mangle") {
      targets.insert(targets.end(), {"-j MARK --set-mark 0x1", "-j MARK --set-xmark 0x2/0x2",
                                     "-j CONNMARK --set-mark 0x3", "-j CONNMARK --save-mark",
                                     "-j CONNMARK --restore-mark"});
    }
    if (table == "raw") targets.insert(targets.end(), {"-j CT --notrack", "-j NOTRACK"});
    return OneOf(targets);
  }

  void Table(std::string& out, const std::string& table, const std::vector<std::string>& chains) {
    if (!Chance(table == "filter" ? 90 : 50)) return;
    absl::StrAppend(&out, "*", table, "\n");
    for (const std::string& chain : chains) {
      const bool drop = table == "filter" && chain != "OUTPUT" && Chance(40);
      absl::StrAppend(&out, ":", chain, " ", drop ? "DROP" : "ACCEPT", " [0:0]\n");
    }
    for (const std::string& chain : chains) {
      if (chain == "OUTPUT" || !Chance(60)) continue;
      for (int r = Pick(1, 3); r > 0; --r) {
        std::string rule = absl::StrCat("-A ", chain);
        for (int m = Pick(0, 1); m > 0; --m) absl::StrAppend(&rule, " ", Match(chain));
        absl::StrAppend(&out, rule, " ", Target(table, chain), "\n");
      }
    }
    absl::StrAppend(&out, "COMMIT\n");
  }
};

// Runs every seed's ruleset in the kernel and in rulejit along the path
// (RULEJIT_PATH_GEN_SEED=N replays one seed, RULEJIT_PATH_GEN_SEEDS=N runs
// N seeds).
void RunSeeds(OracleSyntax syntax, const char* extension,
              const std::function<std::string(uint32_t)>& generate) {
  if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  ScratchDir dir("rulejit-path-gen");
  ASSERT_FALSE(dir.path.empty());
  const std::string pcap = dir.path + "/frames.pcap";
  absl::StatusOr<PathTraffic> traffic = WritePathTraffic(Traffic(), pcap);
  ASSERT_TRUE(traffic.ok()) << traffic.status();
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  const char* only = std::getenv("RULEJIT_PATH_GEN_SEED");
  const char* many = std::getenv("RULEJIT_PATH_GEN_SEEDS");
  const int seeds = many != nullptr ? std::atoi(many) : kSeeds;
  int loaded = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    if (only != nullptr && std::atoi(only) != seed) continue;
    const std::string text = generate(seed);
    std::string host;
    absl::StatusOr<std::vector<PathOutcome>> kernel =
        KernelPathOutcomes({.syntax = syntax, .text = text}, traffic->frames,
                           {.fw_host_json = &host}, traffic->from_server);
    if (!kernel.ok()) {
      if (only != nullptr) std::printf("the kernel refuses it: %s\n", kernel.status().ToString().c_str());
      continue;  // a combination the kernel refuses
    }
    ++loaded;
    const std::string file = absl::StrCat(dir.path, "/seed", seed, extension);
    std::ofstream(file) << text;
    std::ofstream(dir.path + "/host.json") << host;
    ExpectKernelPath(absl::StrCat("seed ", seed, "\n", text, "\n"), file, pcap,
                     absl::StrCat("--host ", dir.path, "/host.json"), *kernel, tiers, dir.path);
  }
  std::printf("%d seeds: the kernel loads %d\n", seeds, loaded);
  if (only == nullptr) EXPECT_GE(loaded, seeds / 2);
}

TEST(PathGenKernel, GeneratedNftRulesetsFollowTheKernelAlongThePath) {
  RunSeeds(OracleSyntax::kNft, ".nft", [](uint32_t seed) { return Generator(seed).Ruleset(); });
}

TEST(PathGenKernel, GeneratedIptablesDumpsFollowTheKernelAlongThePath) {
  RunSeeds(OracleSyntax::kIptablesSave, ".ipt",
           [](uint32_t seed) { return IptablesGenerator(seed).Ruleset(); });
}

}  // namespace
}  // namespace rulejit::testing
