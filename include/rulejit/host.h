// The host a ruleset runs on, as the matches that ask about it see it:
// its interfaces with their addresses, and its routes. `fib` (nft),
// `addrtype` (iptables) and, later, rpfilter and the forward/local decision
// of a packet's path read it; nothing reads the machine rulejit runs on
// unless it is asked to (ReadLocalHost).
//
//   // ip -j addr show > addr.json; ip -j route show table all > route.json
//   // and {"addr": <addr.json>, "route": <route.json>} in host.json:
//   absl::StatusOr<rulejit::HostModel> host = rulejit::ParseHostJson(text);
//   options.host = std::make_shared<const rulejit::HostModel>(*host);
//
// Without a host (CompileOptions::host null) rulejit uses LoopbackHost():
// a host with only `lo` (127.0.0.1/8, ::1/128) and the routes the kernel
// makes for it, which is what a fresh network namespace has once lo is up.
#ifndef RULEJIT_HOST_H_
#define RULEJIT_HOST_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rulejit {

// An address of an interface: `family` 4 or 6, the address in network order
// in the first 4 or 16 bytes.
struct HostAddress {
  uint8_t family = 4;
  std::array<uint8_t, 16> addr = {};
  uint8_t prefix_len = 32;
};

struct HostInterface {
  std::string name;
  uint32_t index = 0;  // ifindex, from 1
  uint32_t group = 0;
  bool loopback = false;  // IFF_LOOPBACK
  uint32_t mtu = 1500;
  // An Ethernet device's own address (link_type ether), which frames for
  // this host are sent to.
  bool has_mac = false;
  std::array<uint8_t, 6> mac = {};
  // ARPHRD_* as `meta iiftype`/`oiftype` read it (1 ether, 772 loopback,
  // 65534 none: tun, wireguard), from the `link_type` of `ip -j addr`;
  // unset when the description has none, and then a ruleset that reads
  // iiftype or oiftype is refused rather than given a guess.
  std::optional<uint16_t> link_type;
  std::vector<HostAddress> addresses;
};

// RTN_* route types, numerically as the kernel's (and as `fib ... type`
// loads them).
enum class RouteType : uint8_t {
  kUnspec = 0, kUnicast = 1, kLocal = 2, kBroadcast = 3, kAnycast = 4,
  kMulticast = 5, kBlackhole = 6, kUnreachable = 7, kProhibit = 8, kThrow = 9,
  kNat = 10, kXresolve = 11,
};

inline constexpr uint32_t kRouteTableMain = 254;
inline constexpr uint32_t kRouteTableLocal = 255;
inline constexpr uint32_t kRouteTableDefault = 253;

struct HostRoute {
  uint8_t family = 4;
  std::array<uint8_t, 16> dst = {};  // network order; the prefix's bits only
  uint8_t prefix_len = 0;
  RouteType type = RouteType::kUnicast;
  uint32_t table = kRouteTableMain;
  std::vector<uint32_t> oifs;  // nexthop devices (several: multipath)
  uint32_t metric = 0;         // IPv6 priority; IPv4 routes of one prefix too
  bool gateway = false;        // reached through a gateway (`via`)
  uint32_t mtu = 0;            // the route's own mtu metric; 0: its device's
};

// A local socket, as the kernel's socket lookups (the `socket` and
// `tproxy` expressions, iptables' socket match and TPROXY target) find it.
// Addresses in network order (family 4: the first 4 bytes); an IPv6 socket
// that is not v6only and is bound to :: or to ::ffff:a.b.c.d also answers
// IPv4 packets, as the kernel's dual-stack sockets do.
enum class SocketState : uint8_t {
  kListen,       // TCP: listening; UDP: bound, not connected
  kEstablished,  // TCP: an established connection; UDP: connected
};
struct HostSocket {
  uint8_t protocol = 6;  // IPPROTO_TCP (6) or IPPROTO_UDP (17)
  uint8_t family = 4;    // the socket's own: 4 (AF_INET) or 6 (AF_INET6)
  SocketState state = SocketState::kListen;
  std::array<uint8_t, 16> local_addr = {};  // all zero: bound to the any address
  uint16_t local_port = 0;
  std::array<uint8_t, 16> remote_addr = {};  // established/connected only
  uint16_t remote_port = 0;
  uint32_t bound_dev = 0;  // SO_BINDTODEVICE ifindex, 0 none
  bool v6only = false;     // IPV6_V6ONLY (family 6)
  bool transparent = false;  // IP_TRANSPARENT / IPV6_TRANSPARENT
  uint32_t mark = 0;         // SO_MARK
  uint32_t uid = 0, gid = 0;  // the owner's credentials
};

struct HostModel {
  std::vector<HostInterface> interfaces;
  std::vector<HostRoute> routes;
  // Every local socket, when the description lists them (a "sockets"
  // array, even empty: then a lookup that finds none answers "no socket"
  // because none exists); without a list, rulesets that look sockets up
  // are refused rather than given a guess.
  bool sockets_listed = false;
  std::vector<HostSocket> sockets;

  const HostInterface* FindInterface(uint32_t index) const;
  const HostInterface* FindInterface(std::string_view name) const;
  // The Ethernet device whose own address is `mac`, or null.
  const HostInterface* FindInterfaceByMac(const uint8_t* mac) const;

  // The route the kernel's FIB picks for `daddr` (family 4 or 6, network
  // order) with the default policy rules (local, main, default tables;
  // other `ip rule`s are not modelled): the longest prefix of the first
  // table that has one, the lowest metric among equals. `only_dev` (not
  // 0) keeps routes through that device only. Null when none matches.
  const HostRoute* LookupRoute(uint8_t family, const uint8_t* daddr,
                               uint32_t only_dev = 0) const;
  // A route's MTU: its mtu metric, else its device's (lo's for local
  // routes); 0 when the device is unknown.
  uint32_t RouteMtu(const HostRoute& route) const;
};

// lo with 127.0.0.1/8 and ::1/128 and the kernel's routes for them.
HostModel LoopbackHost();

// {"addr": [...], "route": [...]}: the JSON arrays `ip -j addr show` and
// `ip -j route show table all` (both families; `ip -j -6 route show table
// all` may be given as "route6") print. Without "route", the routes are
// the ones the kernel adds for the addresses (HostModel::routes of
// DeriveKernelRoutes). Errors name the entry that is wrong.
absl::StatusOr<HostModel> ParseHostJson(std::string_view text);

// The routes the kernel adds by itself for the interfaces' addresses: the
// local and broadcast routes of the local table, the prefix routes of the
// main table, lo's 127.0.0.0/8, IPv6 multicast and anycast routes.
std::vector<HostRoute> DeriveKernelRoutes(const std::vector<HostInterface>& interfaces);

// The running machine (its current network namespace), read with `ip -j`.
absl::StatusOr<HostModel> ReadLocalHost();

}  // namespace rulejit

#endif  // RULEJIT_HOST_H_
