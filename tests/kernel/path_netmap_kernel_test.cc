// Prefix NAT against the kernel: iptables' NETMAP (PREROUTING maps the
// destination, POSTROUTING the source) and nft's `dnat ip prefix to` /
// `snat ip prefix to` (IPv4 and IPv6), run in fw (kernel_oracle.h, path
// mode) and in `rulejit eval --path forward --host` on fw's host model, on
// every tier: the same fate for every frame (a mapped destination may be
// one of fw's own addresses: delivered) and, for forwarded frames, the same
// translated addresses and checksums as dst0 captured.
//
// Needs root, `ip netns`, nft, iptables-legacy-restore and the rulejit
// binary; skips with the reason otherwise. About 5 seconds.
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

// Clients in 10.1.0.0/16 to 10.20.0.0/16, which the rules map onto
// 198.18.0.0/16 (fw's own 198.18.0.1 and .5 among it); IPv6 to
// 2001:db8:20::/48, mapped onto 2001:db8:30::/48.
Frames NetmapFrames() {
  struct F {
    const char* src;
    const char* dst;
    uint8_t proto;
  };
  const std::vector<F> specs = {
      {"10.1.0.5", "10.20.0.9", 17},    {"10.1.3.7", "10.20.77.200", 17},
      {"10.1.255.1", "10.20.1.2", 6},   {"10.1.0.5", "10.20.0.1", 17},
      {"10.1.0.6", "10.20.0.5", 6},     {"10.1.0.5", "10.21.0.9", 17},
      {"10.2.0.5", "10.20.0.9", 17},    {"2001:db8:1::5", "2001:db8:20::9", 17},
      {"2001:db8:1:ff::7", "2001:db8:20:abcd::1", 6},
  };
  Frames frames;
  uint16_t sport = 32000;
  for (const F& f : specs) {
    frames.push_back(BuildFrame(FrameSpec{.src = f.src, .dst = f.dst, .proto = f.proto,
                                          .sport = sport++, .dport = 5000,
                                          .payload = {0, 0, 0, 0}}));
  }
  return frames;
}

std::vector<PathCase> Cases() {
  return {
      {"nft_prefix", OracleSyntax::kNft, R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; ip daddr 10.20.0.0/16 dnat ip prefix to 198.18.0.0/16; }
  chain post { type nat hook postrouting priority srcnat; ip saddr 10.1.0.0/16 snat ip prefix to 192.0.2.0/24; }
}
table ip6 nat6 {
  chain pre { type nat hook prerouting priority dstnat; ip6 daddr 2001:db8:20::/48 dnat ip6 prefix to 2001:db8:30::/48; }
  chain post { type nat hook postrouting priority srcnat; ip6 saddr 2001:db8:1::/48 snat ip6 prefix to 2001:db8:77::/64; }
})"},
      {"iptables_netmap", OracleSyntax::kIptablesSave, R"(*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -d 10.20.0.0/16 -j NETMAP --to 198.18.0.0/16
-A POSTROUTING -s 10.1.0.0/16 -j NETMAP --to 192.0.2.0/24
COMMIT
)"},
  };
}

TEST(PathNetmapKernel, EveryTierMapsPrefixesAsTheKernel) {
  if (absl::Status s = PathOracleAvailable(); !s.ok()) GTEST_SKIP() << s.message();
  const PathBench bench("rulejit-netmap", NetmapFrames());
  ASSERT_TRUE(bench.status.ok()) << bench.status;
  for (const PathCase& c : Cases()) {
    size_t compared = 0;
    absl::StatusOr<std::vector<PathOutcome>> kernel = bench.Check(c, &compared);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    EXPECT_GT(compared, 0u) << c.name << ": no forwarded frame to compare";
    std::set<std::string> fates;
    for (const PathOutcome& o : *kernel) fates.insert(KernelFate(o));
    EXPECT_GE(fates.size(), 2u) << c.name;
    // 10.20.0.9 became 198.18.0.9, 10.1.0.5 became 192.0.2.5.
    const std::vector<uint8_t>& first = (*kernel)[0].arrived;
    ASSERT_TRUE((*kernel)[0].forwarded) << c.name;
    ASSERT_GE(first.size(), 14u + 20u);
    EXPECT_EQ(std::vector<uint8_t>(first.begin() + 26, first.begin() + 34),
              (std::vector<uint8_t>{192, 0, 2, 5, 198, 18, 0, 9}))
        << c.name;
  }
}

}  // namespace
}  // namespace rulejit::testing
