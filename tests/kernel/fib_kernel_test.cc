// fib (nft) and addrtype (iptables) against the kernel, on the host model
// of the harness's firewall namespace: each ruleset below runs in the
// kernel (kernel_oracle.h, FORWARD of fw) and in `rulejit eval --host`
// with fw's own `ip -j addr` / `ip -j route` output, every tier, on
// forwarded packets whose addresses fall in the host's different route
// classes: the default route (via fwout), fwin's and fwout's connected
// subnets (198.18.0.0/30, 198.18.0.4/30, 2001:2:0:1::/64,
// 2001:2:0:2::/64, the reverse path of rpfilter), 0.0.0.0/8 sources
// (unicast since Linux 5.10; 0.0.0.0 itself is broadcast but the kernel
// does not forward it), the IPv6 subnet-router anycast addresses that
// forwarding creates, and unicast IPv6 of other prefixes.
//
// The harness forwards only: daddr is never local here (the input path is
// issue 21's). Needs root, `ip netns`, nft, iptables-legacy-restore and the
// rulejit binary; skips with the reason otherwise. About 30 seconds.
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rulejit/host.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

// Sources and destinations of every class above, UDP, one frame each.
Frames FibFrames() {
  const std::vector<std::pair<std::string, std::string>> v4 = {
      {"10.1.2.3", "10.9.9.9"},   {"0.1.2.3", "10.9.9.9"},   {"198.18.0.2", "10.9.9.9"},
      {"198.18.0.6", "10.9.9.9"}, {"192.0.2.7", "192.0.2.200"}, {"10.1.2.3", "198.51.100.1"},
  };
  const std::vector<std::pair<std::string, std::string>> v6 = {
      {"2001:db8::1", "2001:db8::2"},  {"2001:2:0:1::2", "2001:db8::2"},
      {"2001:2:0:2::9", "2001:db8::2"}, {"fc00::1", "2001:db8:1::1"},
      {"2001:2:0:1::", "2001:db8::2"},
  };
  Frames frames;
  uint16_t port = 1000;
  for (const auto& pairs : {v4, v6}) {
    for (const auto& [src, dst] : pairs) {
      frames.push_back(BuildFrame(FrameSpec{.src = src, .dst = dst, .proto = 17,
                                            .sport = port, .dport = 53,
                                            .payload = {0, 0, 0, 0}}));
      ++port;
    }
  }
  return frames;
}

struct Case {
  std::string name;
  OracleSyntax syntax;
  std::string text;
};

std::string NftCase(const std::string& rule) {
  return absl::StrCat("table inet t {\n  chain forward {\n    type filter hook forward priority 0; "
                      "policy accept;\n    ", rule, "\n  }\n}\n");
}
std::string IptCase(const std::string& rule) {
  return absl::StrCat("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
                      ":OUTPUT ACCEPT [0:0]\n-A FORWARD ", rule, "\nCOMMIT\n");
}

std::vector<Case> Cases() {
  return {
      {"saddr_type_unicast", OracleSyntax::kNft, NftCase("fib saddr type unicast drop")},
      {"saddr_type_unicast_or_anycast", OracleSyntax::kNft,
       NftCase("fib saddr type { broadcast, anycast } drop")},
      {"saddr_iif_type_anycast", OracleSyntax::kNft, NftCase("fib saddr . iif type anycast drop")},
      {"saddr_oif_type", OracleSyntax::kNft, NftCase("fib saddr . oif type != unicast drop")},
      {"saddr_type_anycast", OracleSyntax::kNft, NftCase("fib saddr type anycast drop")},
      {"rpfilter_missing", OracleSyntax::kNft, NftCase("fib saddr . iif oif missing drop")},
      {"rpfilter_exists", OracleSyntax::kNft, NftCase("fib saddr . iif oif exists drop")},
      {"saddr_oifname", OracleSyntax::kNft, NftCase("fib saddr oifname \"fwin\" drop")},
      {"daddr_oifname", OracleSyntax::kNft,
       NftCase("fib daddr oifname \"fwout\" fib saddr oifname \"fwin\" drop")},
      {"daddr_oif_nonzero", OracleSyntax::kNft, NftCase("fib saddr oif != 0 drop")},
      {"type_vmap", OracleSyntax::kNft,
       NftCase("fib saddr type vmap { unicast : drop, anycast : accept }")},
      {"type_set", OracleSyntax::kNft, NftCase("fib saddr type != { unicast, local } drop")},
      {"addrtype_src", OracleSyntax::kIptablesSave,
       IptCase("-m addrtype --src-type UNICAST -j DROP")},
      {"addrtype_not", OracleSyntax::kIptablesSave,
       IptCase("-m addrtype ! --src-type ANYCAST,LOCAL -j DROP")},
      {"addrtype_iface_in", OracleSyntax::kIptablesSave,
       IptCase("-m addrtype --limit-iface-in --src-type UNICAST -j DROP")},
      {"addrtype_iface_out", OracleSyntax::kIptablesSave,
       IptCase("-m addrtype --limit-iface-out --dst-type UNICAST -j DROP")},
  };
}

// The routes rulejit derives from fw's addresses alone (DeriveKernelRoutes,
// used when a host file has no routes) are the kernel's own, but for the
// ones fw's setup added (gateway routes) and the anycast routes that
// forwarding makes.
void ExpectDerivedRoutesAreTheKernels(const std::string& host_json) {
  absl::StatusOr<HostModel> real = ParseHostJson(host_json);
  ASSERT_TRUE(real.ok()) << real.status();
  auto key = [](const HostRoute& r) {
    return absl::StrCat(r.family, " ", std::string(r.dst.begin(), r.dst.end()), "/",
                        r.prefix_len, " type ", static_cast<int>(r.type), " table ", r.table,
                        " dev ", r.oifs.empty() ? 0 : r.oifs[0], " metric ", r.metric);
  };
  std::multiset<std::string> kernel, derived;
  for (const HostRoute& r : real->routes) {
    if (!r.gateway && r.type != RouteType::kAnycast) kernel.insert(key(r));
  }
  for (const HostRoute& r : DeriveKernelRoutes(real->interfaces)) derived.insert(key(r));
  EXPECT_EQ(derived, kernel);
  EXPECT_GT(kernel.size(), 8u);
}

TEST(FibKernel, EveryTierAgreesWithTheKernelOnTheFirewallsHost) {
  for (OracleSyntax syntax : {OracleSyntax::kNft, OracleSyntax::kIptablesSave}) {
    if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  }
  ScratchDir dir("rulejit-fib");
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  absl::StatusOr<Frames> frames = PrepareOracleFrames(FibFrames());
  ASSERT_TRUE(frames.ok()) << frames.status();
  const std::string pcap = dir.path + "/frames.pcap";
  ASSERT_TRUE(WritePcap(pcap, *frames));
  bool first = true;
  int disagreements = 0;
  const std::vector<Case> cases = Cases();
  for (const Case& c : cases) {
    std::string host_json;
    OracleOptions options{.control_run = first, .fw_host_json = &host_json};
    first = false;
    absl::StatusOr<std::vector<bool>> kernel =
        KernelVerdicts({.syntax = c.syntax, .text = c.text}, *frames, options);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    if (&c == &cases.front()) ExpectDerivedRoutesAreTheKernels(host_json);
    const std::string host = absl::StrCat(dir.path, "/", c.name, ".host.json");
    const std::string file = absl::StrCat(dir.path, "/", c.name,
                                          c.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
    std::ofstream(host) << host_json;
    std::ofstream(file) << c.text;
    ExpectSeparates(c.name, *kernel);
    for (const std::string& tier : tiers) {
      absl::StatusOr<std::vector<bool>> ours = RulejitVerdicts(
          file, pcap, tier, frames->size(), absl::StrCat("--host ", host));
      ASSERT_TRUE(ours.ok()) << c.name << " " << tier << ": " << ours.status();
      disagreements += ReportDisagreements(absl::StrCat(c.name, " tier ", tier), *kernel, *ours);
    }
  }
  std::cout << "fib/addrtype: " << Cases().size() << " rulesets x " << frames->size()
            << " frames x " << tiers.size() << " tiers, " << disagreements
            << " disagreements with the kernel\n";
}

}  // namespace
}  // namespace rulejit::testing
