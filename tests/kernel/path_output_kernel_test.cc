// The output path against the kernel: fw itself sends each packet from a
// raw socket (kernel_oracle.h, `send_from_fw`), through raw, mangle, nat
// and filter OUTPUT (and nft output chains, a `type route` chain among
// them), the routing decision again after a mark or a DNAT changed the
// packet, then POSTROUTING; `rulejit eval --path output --host` on fw's
// host model, on every tier, must give every packet the kernel's fate
// (sent out of a device, delivered back through lo, dropped) and, for
// those sent, the bytes dst0 or src0 captured. The device types (`meta
// iiftype loopback` on what comes back through lo) are the host model's.
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

// Packets fw sends: from its own addresses (and one spoofed source) to
// hosts behind fwout (the default route), to a client behind fwin
// (10.1.0.0/16), and to itself.
Frames OutputFrames() {
  struct F {
    const char* src;
    const char* dst;
    uint8_t proto;
    uint16_t dport;
  };
  const std::vector<F> specs = {
      {"198.18.0.5", "192.0.2.10", 17, 53},   {"198.18.0.5", "192.0.2.10", 6, 22},
      {"198.18.0.5", "192.0.2.10", 6, 80},    {"198.18.0.1", "10.1.0.9", 17, 53},
      {"198.18.0.1", "10.1.0.9", 17, 54},     {"198.18.0.5", "198.18.0.1", 17, 7},
      {"198.18.0.5", "192.0.2.10", 6, 8000},  {"192.0.2.77", "192.0.2.10", 17, 123},
      {"198.18.0.5", "192.0.2.11", 1, 0},     {"198.18.0.5", "192.0.2.12", 17, 4000},
      {"2001:2:0:2::1", "2001:db8:5::1", 17, 53}, {"2001:2:0:2::1", "2001:db8:5::1", 6, 22},
      {"2001:2:0:2::1", "2001:db8:5::1", 6, 443},
  };
  Frames frames;
  uint16_t sport = 41000;
  uint16_t id = 0x100;
  for (const F& f : specs) {
    frames.push_back(BuildFrame(FrameSpec{.src = f.src, .dst = f.dst, .proto = f.proto,
                                          .sport = sport++, .dport = f.dport,
                                          .payload = {0, 0, 0, 0}, .icmp_id = 9,
                                          .ip_id = id++}));
  }
  return frames;
}

std::vector<PathCase> Cases() {
  return {
      {"iptables_output", OracleSyntax::kIptablesSave, R"(*raw
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A OUTPUT -p icmp -j NOTRACK
COMMIT
*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A OUTPUT -p udp --dport 53 -j MARK --set-mark 5
-A POSTROUTING -m mark --mark 5 -o fwin -j DROP
-A POSTROUTING -m conntrack --ctstate UNTRACKED -d 192.0.2.11 -j ACCEPT
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A OUTPUT -p tcp --dport 80 -j DNAT --to-destination 192.0.2.99:8080
-A OUTPUT -p tcp --dport 8000 -j DNAT --to-destination 198.18.0.1
-A POSTROUTING -o fwout -p udp --dport 123 -j SNAT --to-source 198.18.0.5
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A OUTPUT -p tcp --dport 22 -j DROP
-A OUTPUT -p udp --dport 4000 -j REJECT
-A OUTPUT -m conntrack --ctstate UNTRACKED -d 192.0.2.12 -j DROP
COMMIT
)"},
      {"nft_output", OracleSyntax::kNft, R"(table inet out {
  chain route { type route hook output priority mangle; udp dport 53 meta mark set 7; }
  chain filter { type filter hook output priority filter;
    tcp dport 22 drop
    ip6 daddr 2001:db8:5::1 tcp dport 443 drop
    oifname "fwin" udp dport 54 drop
    udp dport 4000 reject
  }
  chain in { type filter hook input priority filter; meta iiftype loopback udp dport 7 drop; }
  chain post { type filter hook postrouting priority filter;
    meta oiftype != ether udp dport 53 drop
    meta mark 7 oifname "fwin" drop
    ct state new ip daddr 192.0.2.11 drop
  }
}
table ip nat {
  chain out { type nat hook output priority -100;
    tcp dport 80 dnat to 192.0.2.99:8080
    tcp dport 8000 dnat to 198.18.0.1
  }
  chain post { type nat hook postrouting priority srcnat; ip saddr 192.0.2.77 masquerade; }
})"},
  };
}

TEST(PathOutputKernel, EveryTierSendsAsTheKernel) {
  if (absl::Status s = PathOracleAvailable(); !s.ok()) GTEST_SKIP() << s.message();
  const PathBench bench("rulejit-output", OutputFrames(), /*output=*/true);
  ASSERT_TRUE(bench.status.ok()) << bench.status;
  for (const PathCase& c : Cases()) {
    size_t compared = 0;
    absl::StatusOr<std::vector<PathOutcome>> kernel = bench.Check(c, &compared);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    EXPECT_GT(compared, 0u) << c.name << ": no sent frame to compare";
    std::set<std::string> fates;
    for (const PathOutcome& o : *kernel) fates.insert(KernelFate(o));
    EXPECT_EQ(fates.size(), 3u) << c.name << ": sent, delivered and dropped frames expected";
    // The DNAT to 198.18.0.1 routed the packet again: delivered, not sent.
    EXPECT_TRUE((*kernel)[6].delivered) << c.name;
  }
}

}  // namespace
}  // namespace rulejit::testing
