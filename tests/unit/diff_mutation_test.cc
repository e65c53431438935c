// The seeded mutation test of compiler/analysis's diff: generated rulesets
// and mutations of them; "diff is empty" must agree with a brute-force
// search over packets built from the rulesets' boundary values, and every
// diff's witnesses are checked against both rulesets (diff_test_util.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/internal.h"
#include "compiler/analysis/diff.h"
#include "compiler/analysis/space.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "rulejit/rulejit.h"
#include "tests/unit/diff_test_util.h"

namespace rulejit::analysis::diff_test {
namespace {

// ---------------------------------------------------------------------------
// Seeded mutation test

struct GenRule {
  uint32_t prefix_addr = 0;
  int prefix_len = 0;   // 0: no address match
  bool not_addr = false;  // ip saddr != PREFIX
  int proto = 0;        // 0 any, 6, 17
  int port_lo = -1;     // -1: no port match (needs proto)
  int port_hi = -1;
  std::string iif;      // "" none, else a name or a wildcard
  int ct = 0;           // 0 none, 1 new, 2 established,related
  bool syn_only = false;  // tcp flags & (syn|ack) == syn (tcp rules)
  // The address is IPv6: 2001:db8:(prefix_addr)::/(32 + prefix_len), in an
  // inet table.
  bool v6 = false;
  bool drop = false;
};

std::string RuleText(const GenRule& r) {
  std::string t = "    ";
  if (!r.iif.empty()) absl::StrAppend(&t, "iifname \"", r.iif, "\" ");
  if (r.prefix_len > 0 && r.v6) {
    absl::StrAppend(&t, "ip6 saddr ", r.not_addr ? "!= " : "",
                    absl::StrFormat("2001:db8:%x:%x::/%d", r.prefix_addr >> 16,
                                    r.prefix_addr & 0xffff, 32 + r.prefix_len),
                    " ");
  } else if (r.prefix_len > 0) {
    absl::StrAppend(&t, "ip saddr ", r.not_addr ? "!= " : "", r.prefix_addr >> 24, ".",
                    (r.prefix_addr >> 16) & 0xff, ".", (r.prefix_addr >> 8) & 0xff,
                    ".", r.prefix_addr & 0xff, "/", r.prefix_len, " ");
  }
  const char* proto = r.proto == 6 ? "tcp" : r.proto == 17 ? "udp" : "";
  if (r.proto != 0 && r.port_lo >= 0) {
    absl::StrAppend(&t, proto, " dport ", r.port_lo);
    if (r.port_hi != r.port_lo) absl::StrAppend(&t, "-", r.port_hi);
    absl::StrAppend(&t, " ");
  } else if (r.proto != 0) {
    absl::StrAppend(&t, "meta l4proto ", proto, " ");
  }
  if (r.proto == 6 && r.syn_only) absl::StrAppend(&t, "tcp flags & (syn|ack) == syn ");
  if (r.ct == 1) absl::StrAppend(&t, "ct state new ");
  if (r.ct == 2) absl::StrAppend(&t, "ct state established,related ");
  return t + (r.drop ? "drop\n" : "accept\n");
}

uint32_t MaskOf(int len) { return len == 0 ? 0 : ~0u << (32 - len); }

// `inet`: half the rules match IPv6 addresses instead.
GenRule RandomRule(std::mt19937& rng, bool inet) {
  static constexpr uint32_t kAddrs[] = {0x0a000000, 0x0a010000, 0x0a010100,
                                        0xc0a80000};
  static constexpr int kLens[] = {0, 8, 16, 24};
  static constexpr int kPorts[] = {22, 53, 80, 443, 1000};
  static const char* kIifs[] = {"", "", "eth0", "eth*"};
  GenRule r;
  r.v6 = inet && rng() % 2;
  int len = kLens[rng() % 4];
  r.prefix_len = len;
  r.prefix_addr = kAddrs[rng() % 4] & MaskOf(len);
  r.not_addr = rng() % 5 == 0;
  r.proto = (int[]){0, 6, 17}[rng() % 3];
  if (r.proto != 0 && rng() % 3 != 0) {
    r.port_lo = kPorts[rng() % 5];
    r.port_hi = rng() % 2 ? r.port_lo : r.port_lo + static_cast<int>(rng() % 50);
  }
  r.iif = kIifs[rng() % 4];
  r.ct = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 2) : 0;
  r.syn_only = rng() % 4 == 0;
  r.drop = rng() % 2;
  return r;
}

void Mutate(std::vector<GenRule>& rules, std::mt19937& rng) {
  GenRule& r = rules[rng() % rules.size()];
  switch (rng() % 5) {
    case 4:  // change the ct state match
      r.ct = (r.ct + 1 + static_cast<int>(rng() % 2)) % 3;
      break;
    case 0:  // change a port (or add one)
      r.proto = r.proto == 0 ? 6 : r.proto;
      r.port_lo = (int[]){22, 23, 53, 80, 444}[rng() % 5];
      r.port_hi = r.port_lo + static_cast<int>(rng() % 3);
      break;
    case 1:  // widen a prefix
      if (r.prefix_len > 0) {
        r.prefix_len -= 8;
        r.prefix_addr &= MaskOf(r.prefix_len);
      }
      break;
    case 2: {  // swap two rules (overlapping or not)
      size_t i = rng() % rules.size(), j = rng() % rules.size();
      std::swap(rules[i], rules[j]);
      break;
    }
    default:
      r.drop = !r.drop;
  }
}

std::string Render(const std::vector<GenRule>& rules, bool policy_drop, bool inet) {
  std::string body;
  for (const GenRule& r : rules) body += RuleText(r);
  return inet ? FamilyChain("inet", body, policy_drop ? "drop" : "accept")
              : InputChain(body, policy_drop ? "drop" : "accept");
}

// The IPv6 address of a generated prefix: 2001:db8:(32 bits)::.
Value V6(uint32_t bits) { return (Value{0x20010db8} << 96) | (Value{bits} << 64); }

// Candidate values per dimension from the rules' boundaries (addresses of
// the rules of one family).
std::vector<Value> Boundaries(const std::vector<GenRule>& a, const std::vector<GenRule>& b,
                              bool ports, bool v6 = false) {
  std::vector<Value> v = {0};
  for (const auto* rules : {&a, &b}) {
    for (const GenRule& r : *rules) {
      if (ports && r.port_lo >= 0) {
        for (int p : {r.port_lo - 1, r.port_lo, r.port_hi, r.port_hi + 1}) {
          if (p >= 0 && p <= 0xffff) v.push_back(p);
        }
      }
      if (!ports && r.prefix_len > 0 && r.v6 == v6) {
        uint32_t lo32 = r.prefix_addr, hi32 = r.prefix_addr | ~MaskOf(r.prefix_len);
        Value lo = v6 ? V6(lo32) : lo32;
        Value hi = v6 ? V6(hi32) | ~(~Value{0} << 64) : hi32;
        v.push_back(lo);
        v.push_back(hi);
        if (lo > 0) v.push_back(lo - 1);
        if (hi < (v6 ? kValueMax : 0xffffffffu)) v.push_back(hi + 1);
      }
    }
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Every combination of the boundary values: addresses and ports from the
// rules, protocols icmp/tcp/udp, names eth0 / eth1 (the "eth*" class) / lo /
// none, ct states new / established (same class as related) / invalid (same
// class as untracked), tcp flags syn alone or with ack.
std::vector<Point> BoundaryPoints(const std::vector<GenRule>& a,
                                  const std::vector<GenRule>& b, bool inet) {
  std::vector<Point> out;
  for (uint32_t family : {kFamilyIpv4, kFamilyIpv6}) {
   if (family == kFamilyIpv6 && !inet) break;
   for (Value saddr : Boundaries(a, b, false, family == kFamilyIpv6)) {
    for (Value dport : Boundaries(a, b, true)) {
      for (uint32_t proto : {1u, 6u, 17u}) {
        for (uint32_t iif : {0u, 1u, 2u, 3u}) {
          for (uint32_t ct : {0u, 1u, 3u}) {
            for (uint32_t flags : {0x02u, 0x12u}) {
              Point p{};
              p[static_cast<int>(Dim::kSaddr)] = saddr;
              p[static_cast<int>(Dim::kDport)] = dport;
              p[static_cast<int>(Dim::kProto)] = proto;
              p[static_cast<int>(Dim::kIifName)] = iif;
              p[static_cast<int>(Dim::kCtState)] = ct;
              p[static_cast<int>(Dim::kTcpFlags)] = flags;
              p[static_cast<int>(Dim::kFamily)] = family;
              out.push_back(p);
            }
          }
        }
      }
    }
   }
  }
  return out;
}

// Whether some boundary packet gets different verdicts.
bool BruteForceDiffers(const ir::Ruleset& ra, const ir::Ruleset& rb,
                       const std::vector<GenRule>& a,
                       const std::vector<GenRule>& b, bool inet) {
  auto pa = Compile(ra);
  auto pb = Compile(rb);
  Space space;
  space.has_iif = true;
  space.iif = {{"eth0", ""}, {"eth1", ""}, {"lo", ""}, {"", ""}};
  space.oif = {{"", ""}};
  space.ipv6 = inet;
  for (const Point& p : BoundaryPoints(a, b, inet)) {
    ModelPacket pkt = BuildModelPacket(p, space, ir::Hook::kInput);
    if (pa->Run(ir::Hook::kInput, pkt.View(), pkt.meta).verdict !=
        pb->Run(ir::Hook::kInput, pkt.View(), pkt.meta).verdict) {
      return true;
    }
  }
  return false;
}

// Seeded rounds of generate, mutate, diff, brute force; `inet`: an inet
// table with IPv4 and IPv6 rules.
void MutationRounds(uint32_t seed, bool inet) {
  std::mt19937 rng(seed);
  int differing = 0, equivalent = 0;
  for (int round = 0; round < 150; ++round) {
    std::vector<GenRule> a;
    int n = 2 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) a.push_back(RandomRule(rng, inet));
    bool policy_drop = rng() % 2;
    std::vector<GenRule> b = a;
    Mutate(b, rng);
    std::string ta = Render(a, policy_drop, inet), tb = Render(b, policy_drop, inet);
    ir::Ruleset ra = Nft(ta), rb = Nft(tb);
    DiffResult d = Diff(ra, rb);
    bool brute = BruteForceDiffers(ra, rb, a, b, inet);
    EXPECT_EQ(!d.regions.empty(), brute) << "round " << round << "\nOLD\n"
                                         << ta << "NEW\n" << tb;
    (brute ? differing : equivalent)++;
    if (::testing::Test::HasFailure()) break;
  }
  std::cout << "mutation rounds: " << differing << " different, "
            << equivalent << " equivalent\n";
  // The generator must exercise both outcomes.
  EXPECT_GT(differing, 20);
  EXPECT_GT(equivalent, 20);
}

TEST(DiffMutationTest, DiffIsNonEmptyExactlyWhenBruteForceFindsADifference) {
  MutationRounds(20261202, false);
}

TEST(DiffMutationTest, InetTablesWithIpv6Rules) { MutationRounds(20261203, true); }

}  // namespace
}  // namespace rulejit::analysis::diff_test
