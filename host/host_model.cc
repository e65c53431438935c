// The host model's own data: interface lookup, the loopback-only default,
// and the routes the kernel adds by itself for configured addresses.
//
// The derived routes are what Linux 6.18 shows in `ip route show table all`
// of a namespace after `ip addr add` (checked by tests/kernel/fib_test.cc):
//   IPv4 a.b.c.d/N on dev:  local a.b.c.d (local table); a broadcast route
//     for the subnet's last address when N < 31 (no route for the network
//     address on current kernels); a prefix route in main when N < 32. On a
//     loopback device the prefix route is a local route in the local table
//     (127.0.0.0/8 dev lo).
//   IPv6 x/N on dev: local x (local table); a prefix route in main (metric
//     256) when N < 128; ff00::/8 multicast in the local table for every
//     device with an IPv6 address but lo. Anycast routes (made only when
//     forwarding is on) are not derived: give them as routes.
#include <algorithm>

#include "rulejit/host.h"

#include "host/route_lookup.h"

namespace rulejit {

const HostInterface* HostModel::FindInterface(uint32_t index) const {
  for (const HostInterface& i : interfaces) {
    if (i.index == index) return &i;
  }
  return nullptr;
}

const HostInterface* HostModel::FindInterface(std::string_view name) const {
  for (const HostInterface& i : interfaces) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

const HostInterface* HostModel::FindInterfaceByMac(const uint8_t* mac) const {
  for (const HostInterface& i : interfaces) {
    if (i.has_mac && std::equal(i.mac.begin(), i.mac.end(), mac)) return &i;
  }
  return nullptr;
}

const HostRoute* HostModel::LookupRoute(uint8_t family, const uint8_t* daddr,
                                        uint32_t only_dev) const {
  return host::LookupRoute(*this, family, daddr, only_dev);
}

uint32_t HostModel::RouteMtu(const HostRoute& route) const {
  return host::RouteMtu(*this, route);
}

namespace {

HostAddress Address(uint8_t family, std::initializer_list<uint8_t> bytes, uint8_t prefix_len) {
  HostAddress a;
  a.family = family;
  std::copy(bytes.begin(), bytes.end(), a.addr.begin());
  a.prefix_len = prefix_len;
  return a;
}

// The address with the bits past `prefix_len` cleared (or set, `ones`).
std::array<uint8_t, 16> Masked(const HostAddress& a, bool ones) {
  std::array<uint8_t, 16> out = a.addr;
  const int bytes = a.family == 4 ? 4 : 16;
  for (int bit = a.prefix_len; bit < bytes * 8; ++bit) {
    const uint8_t m = static_cast<uint8_t>(0x80u >> (bit % 8));
    if (ones) {
      out[bit / 8] |= m;
    } else {
      out[bit / 8] &= static_cast<uint8_t>(~m);
    }
  }
  return out;
}

HostRoute Route(const HostAddress& a, const std::array<uint8_t, 16>& dst, uint8_t prefix_len,
                RouteType type, uint32_t table, uint32_t dev, uint32_t metric) {
  HostRoute r;
  r.family = a.family;
  r.dst = dst;
  r.prefix_len = prefix_len;
  r.type = type;
  r.table = table;
  r.oifs = {dev};
  r.metric = metric;
  return r;
}

}  // namespace

std::vector<HostRoute> DeriveKernelRoutes(const std::vector<HostInterface>& interfaces) {
  std::vector<HostRoute> routes;
  for (const HostInterface& dev : interfaces) {
    bool has_ipv6 = false;
    for (const HostAddress& a : dev.addresses) {
      const uint8_t full = a.family == 4 ? 32 : 128;
      routes.push_back(Route(a, a.addr, full, RouteType::kLocal, kRouteTableLocal, dev.index, 0));
      if (a.family == 6) {
        has_ipv6 = true;
        if (a.prefix_len < full && !dev.loopback) {
          routes.push_back(Route(a, Masked(a, false), a.prefix_len, RouteType::kUnicast,
                                 kRouteTableMain, dev.index, 256));
        }
        continue;
      }
      if (a.prefix_len < 31) {
        routes.push_back(Route(a, Masked(a, true), 32, RouteType::kBroadcast, kRouteTableLocal,
                               dev.index, 0));
      }
      if (a.prefix_len < 32) {
        routes.push_back(dev.loopback ? Route(a, Masked(a, false), a.prefix_len, RouteType::kLocal,
                                              kRouteTableLocal, dev.index, 0)
                                      : Route(a, Masked(a, false), a.prefix_len,
                                              RouteType::kUnicast, kRouteTableMain, dev.index, 0));
      }
    }
    if (has_ipv6 && !dev.loopback) {
      const HostAddress ff00 = Address(6, {0xff}, 8);
      routes.push_back(Route(ff00, ff00.addr, 8, RouteType::kMulticast, kRouteTableLocal,
                             dev.index, 256));
    }
  }
  return routes;
}

HostModel LoopbackHost() {
  HostInterface lo;
  lo.name = "lo";
  lo.index = 1;
  lo.loopback = true;
  lo.mtu = 65536;
  lo.addresses.push_back(Address(4, {127, 0, 0, 1}, 8));
  lo.addresses.push_back(Address(6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128));
  HostModel host;
  host.interfaces.push_back(lo);
  host.routes = DeriveKernelRoutes(host.interfaces);
  return host;
}

}  // namespace rulejit
