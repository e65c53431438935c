// The receive path's address checks and routing decision (see
// rulejit/route_input.h), each check named after the kernel function that
// makes it (Linux 6.18, net/ipv4/route.c, net/ipv6/ip6_input.c,
// net/ipv6/route.c, net/ipv6/mcast.c).
#include "rulejit/route_input.h"

#include <algorithm>
#include <cstring>

namespace rulejit {
namespace {

using Addr = std::array<uint8_t, 16>;

// ---------------------------------------------------------------- IPv4

uint32_t V4(const uint8_t* a) {
  return uint32_t{a[0]} << 24 | uint32_t{a[1]} << 16 | uint32_t{a[2]} << 8 | a[3];
}
// ipv4_is_zeronet: 0.0.0.0 alone since Linux 5.3 (0.0.0.0/8 is unicast;
// measured in tests/kernel/fib_kernel_test.cc and path_kernel_test.cc).
bool Zeronet4(uint32_t a) { return a == 0; }
bool Loopback4(uint32_t a) { return a >> 24 == 127; }                 // ipv4_is_loopback
bool Multicast4(uint32_t a) { return a >> 28 == 0xe; }                // ipv4_is_multicast
bool Lbcast4(uint32_t a) { return a == 0xffffffff; }                  // ipv4_is_lbcast
constexpr uint32_t kAllHosts = 0xe0000001;                            // IGMP_ALL_HOSTS

bool HostHasAddress(const HostModel& host, uint8_t family, const uint8_t* a) {
  for (const HostInterface& i : host.interfaces) {
    for (const HostAddress& h : i.addresses) {
      if (h.family == family && std::memcmp(h.addr.data(), a, family == 4 ? 4 : 16) == 0) {
        return true;
      }
    }
  }
  return false;
}

bool ErrorRoute(RouteType t) {
  return t == RouteType::kBlackhole || t == RouteType::kUnreachable ||
         t == RouteType::kProhibit || t == RouteType::kThrow;
}

// fib_validate_source with rp_filter and accept_local off: a source that is
// one of the host's own addresses is martian (inet_lookup_ifaddr_rcu);
// for a packet leaving by the device it came in on (send_redirects on)
// __fib_validate_source's full check rejects any source whose own route is
// neither unicast nor an error (local, broadcast, ...).
bool ValidSource4(const HostModel& host, const uint8_t* src, uint32_t iif, uint32_t oif) {
  if (oif != iif) return !HostHasAddress(host, 4, src);
  const HostRoute* r = host.LookupRoute(4, src);
  return r == nullptr || r->type == RouteType::kUnicast || ErrorRoute(r->type);
}

InputRoute Drop(const char* why) { return {InputRouteKind::kDrop, 0, why}; }
InputRoute Local() { return {InputRouteKind::kLocal, 0, ""}; }

// ip_route_input_slow's brd_input: the source is checked unless zero.
InputRoute BroadcastInput(const HostModel& host, const uint8_t* src, uint32_t iif) {
  if (!Zeronet4(V4(src)) && !ValidSource4(host, src, iif, 0)) return Drop("martian source");
  return Local();
}

InputRoute RouteInput4(const HostModel& host, const uint8_t* src, const uint8_t* dst,
                       uint32_t iif) {
  const uint32_t s = V4(src), d = V4(dst);
  // ip_route_input_rcu: a multicast destination is for this host when it
  // joined the group (ip_check_mc_rcu; no multicast routing), then
  // ip_mc_validate_source checks the source (a zero source may send to
  // 224.0.0.0/24, where the all-hosts group is).
  if (Multicast4(d)) {
    if (d != kAllHosts) return Drop("multicast group not joined");
    if (Multicast4(s) || Lbcast4(s) || Loopback4(s)) return Drop("martian source");
    if (!Zeronet4(s) && !ValidSource4(host, src, iif, 0)) return Drop("martian source");
    return Local();
  }
  // ip_route_input_slow, in its order.
  if (Multicast4(s) || Lbcast4(s)) return Drop("martian source");
  if (Lbcast4(d) || (Zeronet4(s) && Zeronet4(d))) return BroadcastInput(host, src, iif);
  if (Zeronet4(s)) return Drop("martian source");
  if (Zeronet4(d)) return Drop("martian destination");
  if (Loopback4(d)) return Drop("martian destination");  // route_localnet off
  if (Loopback4(s)) return Drop("martian source");
  const HostRoute* r = host.LookupRoute(4, dst);
  if (r == nullptr) return Drop("no route to the destination");
  switch (r->type) {
    case RouteType::kBroadcast:  // bc_forwarding off
      return BroadcastInput(host, src, iif);
    case RouteType::kLocal:
      return ValidSource4(host, src, iif, 0) ? Local() : Drop("martian source");
    case RouteType::kUnicast: {  // ip_mkroute_input → __mkroute_input
      if (r->oifs.empty()) return Drop("route without a device");
      const uint32_t oif = r->oifs.front();
      if (!ValidSource4(host, src, iif, oif)) return Drop("martian source");
      return {InputRouteKind::kForward, oif, ""};
    }
    default:
      if (ErrorRoute(r->type)) return Drop("the route is blackhole, unreachable or prohibit");
      return Drop("martian destination");
  }
}

// ---------------------------------------------------------------- IPv6

bool Loopback6(const uint8_t* a) {  // ipv6_addr_loopback
  static constexpr uint8_t kLo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(a, kLo, 16) == 0;
}
bool Multicast6(const uint8_t* a) { return a[0] == 0xff; }  // ipv6_addr_is_multicast
bool LinkLocal6(const uint8_t* a) { return a[0] == 0xfe && (a[1] & 0xc0) == 0x80; }
int McScope6(const uint8_t* a) { return a[1] & 0x0f; }  // IPV6_ADDR_MC_SCOPE

Addr Group6(std::initializer_list<uint8_t> head, uint8_t last) {
  Addr g = {};
  std::copy(head.begin(), head.end(), g.begin());
  g[15] = last;
  return g;
}

// The groups the kernel joins on an IPv6 device of a router: all-nodes
// (ipv6_add_dev), all-routers (dev_forward_change), the solicited-node
// group of every address (addrconf_join_solict) and of the subnet-router
// anycast address of every prefix (addrconf_join_anycast).
std::vector<Addr> JoinedGroups6(const HostInterface& dev) {
  std::vector<Addr> groups = {Group6({0xff, 0x01}, 1), Group6({0xff, 0x02}, 1),
                              Group6({0xff, 0x01}, 2), Group6({0xff, 0x02}, 2),
                              Group6({0xff, 0x05}, 2)};
  auto solicited = [&](const Addr& a) {
    Addr g = Group6({0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff}, 0);
    std::copy(a.begin() + 13, a.end(), g.begin() + 13);
    groups.push_back(g);
  };
  for (const HostAddress& a : dev.addresses) {
    if (a.family != 6) continue;
    solicited(a.addr);
    if (a.prefix_len >= 127) continue;
    Addr anycast = {};
    for (int bit = 0; bit < a.prefix_len; ++bit) {
      anycast[bit / 8] |= a.addr[bit / 8] & (0x80 >> (bit % 8));
    }
    if (anycast != Addr{}) solicited(anycast);
  }
  return groups;
}

InputRoute RouteInput6(const HostModel& host, const uint8_t* dst, uint32_t iif) {
  // ip6_mc_input: delivered when the input device joined the group (no
  // multicast routing), else dropped.
  if (Multicast6(dst)) {
    const HostInterface* dev = host.FindInterface(iif);
    if (dev != nullptr) {
      for (const Addr& g : JoinedGroups6(*dev)) {
        if (std::memcmp(g.data(), dst, 16) == 0) return Local();
      }
    }
    return Drop("multicast group not joined");
  }
  // ip6_route_input_lookup: a link-local destination is looked up among
  // the input device's routes alone (rt6_need_strict, RT6_LOOKUP_F_IFACE).
  const HostRoute* r = host.LookupRoute(6, dst, LinkLocal6(dst) ? iif : 0);
  if (r == nullptr) return Drop("no route to the destination");
  switch (r->type) {
    case RouteType::kLocal:
    case RouteType::kAnycast:  // ip6_rt_init_dst: input = ip6_input
      return Local();
    case RouteType::kUnicast:
      if (r->oifs.empty()) return Drop("route without a device");
      return {InputRouteKind::kForward, r->oifs.front(), ""};
    default:
      return Drop("the route is blackhole, unreachable or prohibit");
  }
}

// ---------------------------------------------------------------- cuts

struct Cuts {
  uint8_t family;
  std::vector<Addr> starts = {Addr{}};

  // [a, a + 2^(bits-len)) for the first `len` bits of `a`.
  void Prefix(const uint8_t* a, int len) {
    const int width = family == 4 ? 4 : 16;
    const int skip = 16 - width;
    Addr lo = {};
    for (int bit = 0; bit < len; ++bit) {
      lo[skip + bit / 8] |= a[bit / 8] & (0x80 >> (bit % 8));
    }
    starts.push_back(lo);
    // lo + 2^(width*8 - len): the last prefix bit incremented with carry.
    if (len == 0) return;
    Addr hi = lo;
    int byte = skip + (len - 1) / 8;
    uint16_t add = static_cast<uint16_t>(0x80 >> ((len - 1) % 8));
    for (; byte >= skip && add != 0; --byte) {
      const uint16_t sum = static_cast<uint16_t>(hi[byte] + add);
      hi[byte] = static_cast<uint8_t>(sum);
      add = sum >> 8;
    }
    if (add == 0) starts.push_back(hi);  // else it ran past the last address
  }
  std::vector<Addr> Sorted() {
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    return starts;
  }
  void Prefix(std::initializer_list<uint8_t> a, int len) {
    uint8_t full[16] = {};
    std::copy(a.begin(), a.end(), full);
    Prefix(full, len);
  }
};

}  // namespace

const char* Ipv6ReceiveDrop(const uint8_t* saddr, const uint8_t* daddr) {
  // ip6_rcv_core, on a device other than lo, in its order. (A v4-mapped
  // source passes on 6.18: tests/kernel/path_addresses_kernel_test.cc.)
  if (Loopback6(saddr) || Loopback6(daddr)) return "loopback address on the wire";
  if (Multicast6(daddr) && McScope6(daddr) == 1) return "interface-local multicast destination";
  if (Multicast6(daddr) && McScope6(daddr) == 0) return "multicast destination of scope 0";
  if (Multicast6(saddr)) return "multicast source";
  return nullptr;
}

InputRoute RouteInput(const HostModel& host, uint8_t family, const uint8_t* saddr,
                      const uint8_t* daddr, uint32_t iif) {
  return family == 4 ? RouteInput4(host, saddr, daddr, iif) : RouteInput6(host, daddr, iif);
}

std::vector<Addr> RouteInputCuts(const HostModel& host, uint8_t family, bool source) {
  Cuts c{family};
  if (family == 6 && source) return c.starts;  // IPv6 sources do not change it
  if (family == 4) {
    c.Prefix({0, 0, 0, 0}, 32);
    c.Prefix({127}, 8);
    c.Prefix({224}, 4);
    c.Prefix({224, 0, 0, 1}, 32);
    c.Prefix({255, 255, 255, 255}, 32);
  } else {
    c.Prefix({0xff}, 8);
    c.Prefix({0xfe, 0x80}, 10);
    for (const HostInterface& i : host.interfaces) {
      for (const Addr& g : JoinedGroups6(i)) c.Prefix(g.data(), 128);
    }
  }
  for (const HostRoute& r : host.routes) {
    if (r.family == family) c.Prefix(r.dst.data(), r.prefix_len);
  }
  if (source) {  // the local-source check (IPv4 only)
    for (const HostInterface& i : host.interfaces) {
      for (const HostAddress& a : i.addresses) {
        if (a.family == 4) c.Prefix(a.addr.data(), 32);
      }
    }
  }
  return c.Sorted();
}

std::vector<Addr> Ipv6ReceiveCuts(bool source) {
  Cuts c{6};
  c.Prefix({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128);
  if (source) {
    c.Prefix({0xff}, 8);
  } else {
    for (int flags = 0; flags < 16; ++flags) {  // scopes 0 and 1 of each flag value
      c.Prefix({0xff, static_cast<uint8_t>(flags << 4)}, 15);
    }
  }
  return c.Sorted();
}

}  // namespace rulejit
