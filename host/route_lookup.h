// Route lookups on the host model, as the kernel's FIB answers them with
// the default policy rules (local table, then main, then default; `ip
// rule` entries of other tables are not modelled). The nft `fib`
// expression (ir/fib_eval.cc) and iptables' addrtype read the host
// through these.
#ifndef RULEJIT_HOST_ROUTE_LOOKUP_H_
#define RULEJIT_HOST_ROUTE_LOOKUP_H_

#include <cstdint>

#include "rulejit/host.h"

namespace rulejit::host {

// The route fib_lookup / ip6_route_output picks for `daddr` (family 4 or 6,
// network order): the longest prefix of the first table (in rule order)
// that has one, the lowest metric among equals; a `throw` route goes on to
// the next table. `only_dev` (not 0) keeps routes through that device only
// (RT6_LOOKUP_F_IFACE). Null when no route matches.
const HostRoute* LookupRoute(const HostModel& host, uint8_t family, const uint8_t* daddr,
                             uint32_t only_dev = 0);

// The longest-prefix route of one table, or null.
const HostRoute* LookupInTable(const HostModel& host, uint8_t family, const uint8_t* daddr,
                               uint32_t table, uint32_t only_dev = 0);

// inet_dev_addr_type: the type of IPv4 `addr` on this host, as seen from
// device `dev` (0: any device).
RouteType AddrType4(const HostModel& host, const uint8_t* addr, uint32_t dev);

// dst_mtu of a route: its mtu metric, else its device's; a local route's
// packets go through lo (its mtu). 0 when the device is unknown.
uint32_t RouteMtu(const HostModel& host, const HostRoute& route);

// Whether `addr` is configured on device `dev` (nf_ipv6_chk_addr, strict).
bool AddressOnDevice(const HostModel& host, uint8_t family, const uint8_t* addr, uint32_t dev);

}  // namespace rulejit::host

#endif  // RULEJIT_HOST_ROUTE_LOOKUP_H_
