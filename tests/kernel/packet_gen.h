// Seeded packets of the ruleset's family for a generated ruleset
// (ruleset_gen.h): most are aimed
// at one rule (they satisfy all its matches, then often have one field moved
// to a boundary: a prefix's first/last address or one outside it, a port
// range's ends ±1, a length bound ±1, a tcp flag flipped, another icmp type or
// protocol), the rest are random (a few of them IPv4 fragments: non-first
// ones carry no L4 header, so iptables' port/flag/icmp matches never match
// them, while nft's read the fragment's data, which starts with the frame
// index; offsets from 16 bytes on, see packet_gen.cc). An aimed packet is
// redrawn a few times
// until a rough model of the ruleset says it gets past the earlier rules to
// its target (the model only steers; the kernel is the oracle). All are of the kinds the kernel forwards
// (see kernel_oracle.h): unicast addresses outside the harness's 198.18.0.0/24
// / 2001:2::/48 and the martian ranges, TTL / hop limit 64, at most 1500 bytes
// of IP, at least 4 payload bytes (the harness writes the frame index there).
// IPv6 packets: icmpv6 types, and a few carry extension headers (hop-by-hop,
// destination options, routing, AH) before the transport header; fragments
// carry a fragment header last (after it, another extension header in a
// non-first fragment makes ipv6_find_hdr fail, and ip6tables hotdrop the
// packet at any rule with -p, which rulejit does not model). ip6tables-
// legacy's tcp/udp/icmp6/multiport matches refuse non-first IPv6 fragments
// (par->fragoff) and its -p walks over AH; nft's transport matches read the
// IPv6 header on non-first fragments and stop at AH.
// A mixed ruleset (ruleset_gen.h) gets packets of both families, each aimed
// at a rule of its own family.
//
//   std::mt19937 rng(seed);
//   std::vector<FrameSpec> specs = GeneratePackets(ruleset, rng, {.count = 200});
//   std::vector<std::vector<uint8_t>> frames = BuildFrames(specs);
#ifndef RULEJIT_TESTS_KERNEL_PACKET_GEN_H_
#define RULEJIT_TESTS_KERNEL_PACKET_GEN_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/kernel/ruleset_gen.h"
#include "tests/support/frames.h"

namespace rulejit::testing {

struct PacketGenOptions {
  int count = 200;
  double aimed = 0.85;  // share of packets aimed at a rule
  bool fragments = true;  // a few random packets are fragments
};

std::vector<FrameSpec> GeneratePackets(const GenRuleset& rs, std::mt19937& rng,
                                       const PacketGenOptions& options = {});

std::vector<std::vector<uint8_t>> BuildFrames(const std::vector<FrameSpec>& specs);

// True for addresses (host order) the harness's fw forwards: not in 0/8,
// 127/8, 224/4 (multicast and class E), 198.18.0.0/24, nor 255.255.255.255.
bool ForwardableIpv4(uint32_t addr);
// The same for IPv6: not ::, ::1, nor in ::ffff:0:0/96, fe80::/10,
// ff00::/8, 2001:2::/48.
bool ForwardableIpv6(GenAddr addr);

// One line for messages: "tcp 10.0.0.1:1234 > 10.0.0.2:80 flags 0x02 len 64".
std::string DescribePacket(const FrameSpec& spec);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_PACKET_GEN_H_
