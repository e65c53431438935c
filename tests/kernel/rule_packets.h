// Packets aimed at one lifted rule (compiler/analysis/lift.h): the rule's
// header-space cube gives, per dimension (addresses, protocol, ports or icmp
// type/code, tcp flags), each interval's ends and the values just outside
// them, each moved onto a point inside the cube; a fixed sweep of ordinary
// TCP, UDP and ICMP packets and two fragments is added for the parts of a
// rule the lifter cannot describe (lengths, TTL, marks of other headers).
// All packets keep the kernel oracle's frame contract (kernel_oracle.h):
// forwardable unicast addresses, TTL 64, 8 payload bytes. `tos` goes into
// every packet (callers use the DSCP bits to steer packets to one rule).
#ifndef RULEJIT_TESTS_KERNEL_RULE_PACKETS_H_
#define RULEJIT_TESTS_KERNEL_RULE_PACKETS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/analysis/header_space.h"
#include "tests/support/frames.h"

namespace rulejit::testing {

// `cube`: the rule's match when the lifter is exact (nullopt otherwise or
// when the rule never matches: then only the sweep).
std::vector<FrameSpec> PacketsForRule(const std::optional<analysis::Cube>& cube,
                                      const analysis::Space& space, uint8_t tos);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_RULE_PACKETS_H_
