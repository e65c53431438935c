// The routing decision's special addresses against the kernel: frames whose
// source or destination is of a class ip_route_input_slow, ip_mc_validate_
// source, ip6_rcv_core, ip6_mc_input or ip6_forward tests (zero, loopback,
// multicast, limited and subnet broadcast, fw's own addresses, IPv6
// unspecified, loopback, multicast scopes, solicited-node groups,
// v4-mapped, link-local, subnet-router anycast), sent to fw (kernel_
// oracle.h, path mode) and to `rulejit eval --path forward --host` with
// fw's host model, on every tier: the same fate (forwarded to dst0,
// delivered to fw, dropped) for every frame, the same bytes when forwarded.
//
// Needs root, `ip netns`, nft, iptables-legacy-restore and the rulejit
// binary; skips with the reason otherwise. About 10 seconds.
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/path_case.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

struct Pair {
  const char* src;
  const char* dst;
};

// fw: fwin 198.18.0.1/30 and 2001:2:0:1::1/64, fwout 198.18.0.5/30 and
// 2001:2:0:2::1/64, default routes out fwout (kernel_oracle_setup.cc).
const std::vector<Pair>& Pairs() {
  static const std::vector<Pair> pairs = {
      // IPv4 zeronet (0.0.0.0 alone since Linux 5.3; 0.0.0.0/8 is unicast).
      {"10.1.0.5", "0.0.0.0"}, {"10.1.0.5", "0.1.2.3"}, {"0.0.0.0", "10.20.0.1"},
      {"0.1.2.3", "10.20.0.1"}, {"0.0.0.0", "0.0.0.0"},
      // Limited and subnet broadcast.
      {"10.1.0.5", "255.255.255.255"}, {"0.0.0.0", "255.255.255.255"},
      {"255.255.255.255", "10.20.0.1"}, {"10.1.0.5", "198.18.0.3"},
      {"10.1.0.5", "198.18.0.7"}, {"198.18.0.3", "10.20.0.1"}, {"198.18.0.3", "198.18.0.1"},
      // Multicast: the all-hosts group fw joined, groups it did not.
      {"10.1.0.5", "224.0.0.1"}, {"0.0.0.0", "224.0.0.1"}, {"127.0.0.1", "224.0.0.1"},
      {"198.18.0.5", "224.0.0.1"}, {"10.1.0.5", "224.0.0.251"}, {"10.1.0.5", "239.1.2.3"},
      {"224.0.0.5", "10.20.0.1"}, {"224.0.0.5", "224.0.0.1"},
      // Loopback and fw's own addresses as sources.
      {"127.0.0.1", "10.20.0.1"}, {"10.1.0.5", "127.0.0.1"}, {"127.0.0.1", "198.18.0.1"},
      {"198.18.0.5", "10.20.0.1"}, {"198.18.0.1", "198.18.0.1"}, {"198.18.0.5", "198.18.0.1"},
      // Link-local IPv4 (no check of its own).
      {"169.254.1.1", "10.20.0.1"}, {"10.1.0.5", "169.254.1.1"},
      // IPv6 unspecified and loopback.
      {"::", "::"}, {"::", "2001:db8::1"}, {"2001:db8:1::5", "::"}, {"::", "2001:2:0:1::1"},
      {"::1", "2001:db8::1"}, {"2001:db8:1::5", "::1"}, {"::1", "2001:2:0:1::1"},
      // IPv6 multicast: scopes 0 and 1, groups fw joined (all nodes, all
      // routers, fwin's solicited-node groups), groups it did not.
      {"2001:db8:1::5", "ff02::1"}, {"2001:db8:1::5", "ff02::2"}, {"2001:db8:1::5", "ff05::2"},
      {"2001:db8:1::5", "ff01::1"}, {"2001:db8:1::5", "ff00::1"}, {"2001:db8:1::5", "ff0e::1"},
      {"2001:db8:1::5", "ff02::1:ff00:1"}, {"2001:db8:1::5", "ff02::1:ff00:99"},
      {"ff02::1", "2001:db8::1"}, {"ff02::1", "2001:2:0:1::1"},
      // v4-mapped, link-local, subnet-router anycast, fw's own source.
      {"::ffff:10.1.0.5", "2001:db8::1"}, {"::ffff:10.1.0.5", "2001:2:0:1::1"},
      {"2001:db8:1::5", "::ffff:10.20.0.1"}, {"fe80::5", "2001:db8::1"},
      {"fe80::5", "2001:2:0:1::1"}, {"2001:db8:1::5", "2001:2:0:1::"},
      {"2001:2:0:2::1", "2001:db8::1"},
  };
  return pairs;
}

Frames AddressFrames() {
  Frames frames;
  uint16_t sport = 31000;
  for (const Pair& p : Pairs()) {
    frames.push_back(BuildFrame(FrameSpec{.src = p.src, .dst = p.dst, .proto = 17,
                                          .sport = sport++, .dport = 5000,
                                          .payload = {0, 0, 0, 0}}));
  }
  return frames;
}

// Rulesets that accept (and count) everything, so the stack decides; one
// drops at input too, so a wrongly delivered frame shows either way.
std::vector<PathCase> Cases() {
  return {
      {"accept_all_nft", OracleSyntax::kNft, R"(table inet t {
  chain pre { type filter hook prerouting priority 0; counter; }
  chain in { type filter hook input priority 0; counter; }
  chain forwarding { type filter hook forward priority 0; counter; }
})"},
      {"input_drops_udp_5000_iptables", OracleSyntax::kIptablesSave, R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -s 10.1.0.5 -p udp --dport 5000 -j DROP
COMMIT
)"},
  };
}

TEST(PathAddressesKernel, EveryTierRoutesSpecialAddressesAsTheKernel) {
  if (absl::Status s = PathOracleAvailable(); !s.ok()) GTEST_SKIP() << s.message();
  const PathBench bench("rulejit-path-addr", AddressFrames());
  ASSERT_TRUE(bench.status.ok()) << bench.status;
  for (const PathCase& c : Cases()) {
    absl::StatusOr<std::vector<PathOutcome>> kernel = bench.Check(c);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    std::set<std::string> fates;
    for (const PathOutcome& o : *kernel) fates.insert(KernelFate(o));
    EXPECT_EQ(fates.size(), 3u) << c.name << ": forwarded, delivered and dropped frames";
  }
}

}  // namespace
}  // namespace rulejit::testing
