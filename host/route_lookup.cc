// Longest-prefix route lookups over the host model's route list. A linear
// scan: host models hold tens of routes, and the compiled tiers call this
// only for rules that use `fib` or addrtype.
#include "host/route_lookup.h"

#include <cstring>

namespace rulejit::host {
namespace {

bool PrefixMatches(const HostRoute& r, const uint8_t* addr) {
  const int full = r.prefix_len / 8;
  if (std::memcmp(r.dst.data(), addr, full) != 0) return false;
  const int rest = r.prefix_len % 8;
  if (rest == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff00u >> rest);
  return (r.dst[full] & mask) == (addr[full] & mask);
}

bool UsesDevice(const HostRoute& r, uint32_t dev) {
  for (uint32_t oif : r.oifs) {
    if (oif == dev) return true;
  }
  return false;
}

// The default policy rules: priority 0 local, 32766 main, 32767 default.
constexpr uint32_t kRuleTables[] = {kRouteTableLocal, kRouteTableMain, kRouteTableDefault};

}  // namespace

const HostRoute* LookupInTable(const HostModel& host, uint8_t family, const uint8_t* daddr,
                               uint32_t table, uint32_t only_dev) {
  const HostRoute* best = nullptr;
  for (const HostRoute& r : host.routes) {
    if (r.family != family || r.table != table || !PrefixMatches(r, daddr)) continue;
    if (only_dev != 0 && !UsesDevice(r, only_dev)) continue;
    if (best == nullptr || r.prefix_len > best->prefix_len ||
        (r.prefix_len == best->prefix_len && r.metric < best->metric)) {
      best = &r;
    }
  }
  return best;
}

const HostRoute* LookupRoute(const HostModel& host, uint8_t family, const uint8_t* daddr,
                             uint32_t only_dev) {
  for (uint32_t table : kRuleTables) {
    const HostRoute* r = LookupInTable(host, family, daddr, table, only_dev);
    if (r != nullptr && r->type != RouteType::kThrow) return r;
  }
  return nullptr;
}

// KERNEL: __inet_dev_addr_type. 0.0.0.0 and 255.255.255.255 are
// broadcast, 224.0.0.0/4 multicast, before any table is read (since Linux
// 5.10 ipv4_is_zeronet is 0.0.0.0 alone, not 0.0.0.0/8: measured on 6.18,
// tests/kernel/fib_kernel_test.cc); otherwise
// the local table's route type when the route's device is `dev` (or no
// device is asked), else unicast. Error types (blackhole, unreachable,
// prohibit, throw) fail the table lookup: unicast.
RouteType AddrType4(const HostModel& host, const uint8_t* addr, uint32_t dev) {
  const bool lbcast = addr[0] == 255 && addr[1] == 255 && addr[2] == 255 && addr[3] == 255;
  const bool zero = addr[0] == 0 && addr[1] == 0 && addr[2] == 0 && addr[3] == 0;
  if (zero || lbcast) return RouteType::kBroadcast;
  if ((addr[0] & 0xf0) == 0xe0) return RouteType::kMulticast;
  const HostRoute* r = LookupInTable(host, 4, addr, kRouteTableLocal);
  if (r == nullptr) return RouteType::kUnicast;
  switch (r->type) {
    case RouteType::kBlackhole:
    case RouteType::kUnreachable:
    case RouteType::kProhibit:
    case RouteType::kThrow:
      return RouteType::kUnicast;
    default:
      break;
  }
  const uint32_t route_dev = r->oifs.empty() ? 0 : r->oifs.front();
  return dev == 0 || dev == route_dev ? r->type : RouteType::kUnicast;
}

uint32_t RouteMtu(const HostModel& host, const HostRoute& route) {
  if (route.mtu != 0) return route.mtu;
  if (route.type == RouteType::kLocal) {
    for (const HostInterface& i : host.interfaces) {
      if (i.loopback) return i.mtu;
    }
  }
  const HostInterface* dev = route.oifs.empty() ? nullptr : host.FindInterface(route.oifs.front());
  return dev != nullptr ? dev->mtu : 0;
}

bool AddressOnDevice(const HostModel& host, uint8_t family, const uint8_t* addr, uint32_t dev) {
  const HostInterface* i = host.FindInterface(dev);
  if (i == nullptr) return false;
  for (const HostAddress& a : i->addresses) {
    if (a.family == family && std::memcmp(a.addr.data(), addr, family == 4 ? 4 : 16) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace rulejit::host
