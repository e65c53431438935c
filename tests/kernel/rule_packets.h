// Packets aimed at one lifted rule (compiler/headerspace/lift_cube.h): the rule's
// header-space cube gives, per dimension (addresses, protocol, ports or icmp
// type/code, tcp flags), each interval's ends and the values just outside
// them, each moved onto a point inside the cube; a fixed sweep of ordinary
// TCP, UDP and ICMP (ICMPv6) packets and fragments is added for the parts of
// a rule the lifter cannot describe (lengths, TTL, marks of other headers).
// IPv6 sweeps also carry packets with extension headers (hop-by-hop,
// destination options, routing, AH) before the transport header, and a
// packet with no next header (59): ip6tables' -p walks over them, nft's
// l4proto stops at AH.
// All packets keep the kernel oracle's frame contract (kernel_oracle.h):
// forwardable unicast addresses, TTL / hop limit 64, 8 payload bytes. `tos`
// goes into every packet (IPv4 TOS, IPv6 traffic class; callers use the
// DSCP bits to steer packets to one rule).
#ifndef RULEJIT_TESTS_KERNEL_RULE_PACKETS_H_
#define RULEJIT_TESTS_KERNEL_RULE_PACKETS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/analysis/space.h"
#include "tests/support/frames.h"

namespace rulejit::testing {

// `cube`: the rule's match when the lifter is exact (nullopt otherwise or
// when the rule never matches: then only the sweep). `ipv6`: the family of
// the rule (and of every packet).
std::vector<FrameSpec> PacketsForRule(const std::optional<analysis::Cube>& cube,
                                      const analysis::Space& space, uint8_t tos, bool ipv6);

// Packets from (`source`) or to the rule's own address `addr` and `addr`
// with the mask's lowest set bit flipped: one inside and one outside a
// masked address match the lifter cannot describe (a mask that is not a
// prefix, like ffff:0:ffff:: or 255.0.255.0). Unforwardable ones are left
// out.
std::vector<FrameSpec> PacketsForAddress(bool source, analysis::Value addr, analysis::Value mask,
                                         uint8_t tos, bool ipv6);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_RULE_PACKETS_H_
