// nft's dynamic sets against the kernel over packet sequences: each ruleset
// below runs in the kernel (kernel_oracle.h: a fresh forwarding namespace,
// so the sets start as declared, frames in order, paced 200 us) and in
// `rulejit eval` on every tier, with one run state over the pcap. What one
// frame adds, updates or deletes decides later frames: a port knock opens a
// port per source, a set of size 2 refuses the third source, a meter's limit
// and an element's quota count per source, map data goes with the element.
// Timeouts are a minute long: the sequence ends long before any expires
// (timeouts over time are unit-tested, nft_dynset_test).
//
// Needs root, `ip netns`, nft and the rulejit binary; skips with the reason
// otherwise.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/kernel/sequence_cases.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

// Four sources, in a fixed interleaving, to ports 1000 (the knock or the
// adding rule), 2000 (the door) and 3000 (the delete).
Frames DynsetFrames() {
  const char* kSources[] = {"10.1.0.1", "10.1.0.2", "10.1.0.3", "10.2.0.9"};
  struct Step { int src; uint16_t dport; };
  const Step kSteps[] = {{0, 2000}, {0, 1000}, {0, 2000}, {1, 2000}, {1, 1000}, {2, 1000},
                         {2, 2000}, {3, 1000}, {3, 2000}, {0, 3000}, {0, 2000}, {3, 1000},
                         {0, 1000}, {0, 2000}, {1, 2000}, {2, 3000}, {3, 1000}, {3, 2000},
                         {1, 1000}, {1, 1000}, {1, 2000}, {2, 2000}};
  Frames frames;
  uint16_t sport = 4000;
  for (const Step& s : kSteps) {
    frames.push_back(BuildFrame(FrameSpec{.src = kSources[s.src], .dst = "192.0.2.1",
                                          .proto = 17, .sport = sport++, .dport = s.dport,
                                          .payload = std::vector<uint8_t>(60, 0)}));
  }
  return frames;
}

std::string Table(const std::string& decls, const std::string& policy, const std::string& rules) {
  return absl::StrCat("table ip t {\n", decls, " chain f {\n  type filter hook forward priority 0; "
                      "policy ", policy, ";\n", rules, " }\n}\n");
}

std::vector<SequenceCase> Cases() {
  return {
      {"port_knock",
       Table(" set door { type ipv4_addr . inet_service; flags timeout; }\n", "drop",
             "  udp dport 1000 add @door { ip saddr . 2000 timeout 1m }\n"
             "  ip saddr . udp dport @door accept\n")},
      {"update_and_delete",
       Table(" set s { type ipv4_addr; flags timeout; timeout 1m; }\n", "drop",
             "  udp dport 1000 update @s { ip saddr }\n"
             "  udp dport 3000 delete @s { ip saddr }\n"
             "  udp dport 2000 ip saddr @s accept\n")},
      {"full_set",
       Table(" set s { type ipv4_addr; size 2; }\n", "drop",
             "  udp dport 1000 add @s { ip saddr } accept\n"
             "  ip saddr @s accept\n")},
      {"meter_limit",
       Table("", "accept", "  meter m { ip saddr limit rate over 1/minute burst 2 packets } drop\n")},
      {"element_quota",
       Table(" set q { type ipv4_addr; flags dynamic; }\n", "accept",
             "  add @q { ip saddr quota over 250 bytes } drop\n")},
      {"map_data",
       Table(" map m { type ipv4_addr : mark; }\n", "drop",
             "  udp dport 1000 update @m { ip saddr : 0x7 }\n"
             "  udp dport 1000 update @m { ip saddr : 0x9 }\n"
             "  meta mark set ip saddr map @m\n"
             "  meta mark 7 accept\n")},
      {"inverted_lookup",
       Table(" set seen { type ipv4_addr; flags dynamic; }\n", "accept",
             "  ip saddr != @seen add @seen { ip saddr } drop\n")},
  };
}

TEST(DynsetKernel, EveryTierAgreesWithTheKernelOverSequences) {
  ExpectSequencesAgree("dynset", OracleSyntax::kNft, ".nft", Cases(), DynsetFrames());
}

}  // namespace
}  // namespace rulejit::testing
