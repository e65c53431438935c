// Socket lookups on the host model (HostModel::sockets), as the kernel's
// socket tables answer them for netfilter: nf_sk_lookup_slow_v4/v6 (the
// `socket` expression, iptables' socket match) and nf_tproxy_get_sock_v4/v6
// (`tproxy`, TPROXY). The model answers only for the sockets the host
// description lists: a socket the kernel has but the list leaves out
// (a TIME_WAIT or SYN_RECV one, one of another program started later) is
// "no socket" here.
#ifndef RULEJIT_HOST_SOCKET_LOOKUP_H_
#define RULEJIT_HOST_SOCKET_LOOKUP_H_

#include <array>
#include <cstdint>

#include "rulejit/host.h"

namespace rulejit::host {

// The packet's side of a lookup: the addresses as the packet carries them
// (saddr/sport the remote end, daddr/dport the local one), network order.
struct SocketTuple {
  uint8_t family = 4;  // of the packet: 4 or 6
  uint8_t protocol = 6;
  std::array<uint8_t, 16> saddr = {}, daddr = {};
  uint16_t sport = 0, dport = 0;  // host order
  uint32_t in_dev = 0;            // the input device's ifindex
};

// Which of the kernel's lookups (nf_tproxy_lookup_t and the socket match's
// plain one).
enum class SocketLookup : uint8_t {
  kAny,          // __inet_lookup / udp4_lib_lookup: established, then listener
  kEstablished,  // tproxy: TCP established; UDP connected to a bound address
  kListener,     // tproxy: TCP listener; UDP unconnected
};

// The index in host.sockets of the socket the kernel finds, or -1.
int FindSocket(const HostModel& host, const SocketTuple& key, SocketLookup kind);

// Whether socket `s` is bound to the any address as a lookup of packet
// family `family` sees it (inet_rcv_saddr == 0 / ipv6_addr_any).
bool SocketWildcard(const HostSocket& s, uint8_t family);

}  // namespace rulejit::host

#endif  // RULEJIT_HOST_SOCKET_LOOKUP_H_
