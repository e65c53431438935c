// What the kernel's receive path makes of an arriving IP packet's addresses
// on a modelled host: the checks ip6_rcv_core makes before prerouting, and
// the routing decision ip_route_input_noref / ip6_route_input makes after
// it, with every special address class they test (zeronet, loopback,
// multicast, limited broadcast, local sources, IPv6 unspecified, loopback
// and multicast addresses; v4-mapped addresses are not special there).
// runtime/path.cc runs it on a packet, compiler/analysis/path_flow.cc on
// ranges of addresses (RouteInputCuts).
//
// The host's sysctls are the kernel's defaults for a router: forwarding
// on, rp_filter, route_localnet, accept_local and bc_forwarding off, no
// multicast routing; the multicast groups joined are the kernel's own
// (224.0.0.1 on every device; ff01::1, ff02::1, the all-routers groups and
// the solicited-node groups of the device's addresses), not a socket's.
#ifndef RULEJIT_ROUTE_INPUT_H_
#define RULEJIT_ROUTE_INPUT_H_

#include <array>
#include <cstdint>
#include <vector>

#include "rulejit/host.h"

namespace rulejit {

enum class InputRouteKind : uint8_t { kLocal, kForward, kDrop };

struct InputRoute {
  InputRouteKind kind = InputRouteKind::kDrop;
  uint32_t oif = 0;         // kForward: the output device
  const char* why = "";     // kDrop: the kernel's reason
};

// ip6_rcv_core's address checks on a packet arriving on a device other
// than lo, before prerouting: null when it passes, else why it drops.
const char* Ipv6ReceiveDrop(const uint8_t* saddr, const uint8_t* daddr);

// The routing decision for a packet of `family` (4 or 6; addresses in
// network order) arriving on device `iif`, as prerouting left it.
InputRoute RouteInput(const HostModel& host, uint8_t family, const uint8_t* saddr,
                      const uint8_t* daddr, uint32_t iif);

// The addresses of `family` cut into ranges on which RouteInput answers
// alike (for sources when `source`, else destinations), given the other
// address and the device: each range's first address (16 bytes, an IPv4
// address in the last 4), ascending, the first all zero.
std::vector<std::array<uint8_t, 16>> RouteInputCuts(const HostModel& host, uint8_t family,
                                                    bool source);

// The same for Ipv6ReceiveDrop, whose answer for a source does not depend
// on the destination or the reverse.
std::vector<std::array<uint8_t, 16>> Ipv6ReceiveCuts(bool source);

}  // namespace rulejit

#endif  // RULEJIT_ROUTE_INPUT_H_
