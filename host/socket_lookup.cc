// See socket_lookup.h. The kernel's lookups, as Linux 6.18 does them:
//
//   TCP  established: the exact 4-tuple (__inet_lookup_established,
//        __inet6_lookup_established);
//        listener: the listeners on the destination port bound to the
//        destination address, and only when there is none those bound to
//        the any address (inet_lhash2_lookup twice), the best of each by
//        compute_score: bound to a device 2 else 1, +1 for an AF_INET
//        socket on an IPv4 lookup.
//   UDP  one scored lookup (__udp4_lib_lookup, __udp6_lib_lookup): sockets
//        bound to the destination address, and only when there is none
//        those bound to the any address; IPv4 scores AF_INET 2 else 1, +4
//        each for a matching connected address, connected port and bound
//        device; IPv6 scores +1 for each of those.
//
// Every candidate must accept the input device (unbound, or bound to it:
// inet_bound_dev_eq without VRF). An IPv6 socket answers IPv4 packets when
// it is not v6only and is bound to :: or a v4-mapped address (the kernel
// hashes it in the IPv4 slots). Among equal scores the first listed wins
// (the kernel's order there is its hash chain's: only SO_REUSEPORT groups
// tie, and their pick is a hash of the packet: not modelled).
#include "host/socket_lookup.h"

#include <cstring>
#include <optional>

namespace rulejit::host {
namespace {

constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;
constexpr std::array<uint8_t, 16> kAny = {};

// The socket's address as a lookup of packet family `family` compares it:
// IPv4 in the first 4 bytes (rest zero). nullopt when the socket is not in
// that family's tables at all.
std::optional<std::array<uint8_t, 16>> AddressAs(const HostSocket& s,
                                                 const std::array<uint8_t, 16>& a,
                                                 uint8_t family) {
  if (family == 6) {
    if (s.family != 6) return std::nullopt;
    return a;
  }
  if (s.family == 4) return a;
  if (s.v6only) return std::nullopt;
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  std::array<uint8_t, 16> v4 = {};
  if (a == kAny) return v4;
  if (std::memcmp(a.data(), kMapped, 12) != 0) return std::nullopt;
  std::memcpy(v4.data(), a.data() + 12, 4);
  return v4;
}

bool DeviceAccepts(const HostSocket& s, uint32_t in_dev) {
  return s.bound_dev == 0 || s.bound_dev == in_dev;
}

// The packet's address as the socket's is kept (IPv4 in 4 bytes).
std::array<uint8_t, 16> Key(const std::array<uint8_t, 16>& a, uint8_t family) {
  std::array<uint8_t, 16> out = a;
  if (family == 4) std::memset(out.data() + 4, 0, 12);
  return out;
}

bool Connected(const HostSocket& s) { return s.state == SocketState::kEstablished; }

int FindEstablishedTcp(const HostModel& host, const SocketTuple& k) {
  for (size_t i = 0; i < host.sockets.size(); ++i) {
    const HostSocket& s = host.sockets[i];
    if (s.protocol != kTcp || !Connected(s) || s.local_port != k.dport ||
        s.remote_port != k.sport || !DeviceAccepts(s, k.in_dev)) {
      continue;
    }
    auto local = AddressAs(s, s.local_addr, k.family);
    auto remote = AddressAs(s, s.remote_addr, k.family);
    if (local && remote && *local == Key(k.daddr, k.family) && *remote == Key(k.saddr, k.family)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// compute_score of inet_hashtables.c / inet6_hashtables.c; -1: no match.
int ListenerScore(const HostSocket& s, const SocketTuple& k, const std::array<uint8_t, 16>& bound) {
  if (s.protocol != kTcp || Connected(s) || s.local_port != k.dport ||
      !DeviceAccepts(s, k.in_dev)) {
    return -1;
  }
  auto local = AddressAs(s, s.local_addr, k.family);
  if (!local || *local != bound) return -1;
  int score = s.bound_dev != 0 ? 2 : 1;
  if (k.family == 4 && s.family == 4) ++score;
  return score;
}

// compute_score of udp.c / udp6 (see the file comment); -1: no match.
int UdpScore(const HostSocket& s, const SocketTuple& k, const std::array<uint8_t, 16>& bound) {
  if (s.protocol != kUdp || s.local_port != k.dport || !DeviceAccepts(s, k.in_dev)) return -1;
  auto local = AddressAs(s, s.local_addr, k.family);
  if (!local || *local != bound) return -1;
  const int step = k.family == 4 ? 4 : 1;
  int score = k.family == 4 ? (s.family == 4 ? 2 : 1) : 0;
  if (Connected(s)) {
    auto remote = AddressAs(s, s.remote_addr, k.family);
    if (remote && *remote != kAny) {
      if (*remote != Key(k.saddr, k.family)) return -1;
      score += step;
    }
    if (s.remote_port != 0) {
      if (s.remote_port != k.sport) return -1;
      score += step;
    }
  }
  if (s.bound_dev != 0) score += step;
  return score;
}

template <typename Score>
int Best(const HostModel& host, const SocketTuple& k, Score score) {
  for (const std::array<uint8_t, 16>& bound : {Key(k.daddr, k.family), kAny}) {
    int best = -1, best_score = -1;
    for (size_t i = 0; i < host.sockets.size(); ++i) {
      const int s = score(host.sockets[i], k, bound);
      if (s > best_score) best = static_cast<int>(i), best_score = s;
    }
    if (best >= 0) return best;
  }
  return -1;
}

// nf_tproxy_get_sock_v4/v6's filter of a UDP answer.
int TproxyUdpFilter(const HostModel& host, int found, uint8_t family, SocketLookup kind) {
  if (found < 0 || kind == SocketLookup::kAny) return found;
  const HostSocket& s = host.sockets[found];
  const bool connected = Connected(s);
  if (kind == SocketLookup::kEstablished && (!connected || SocketWildcard(s, family))) return -1;
  if (kind == SocketLookup::kListener && connected) return -1;
  return found;
}

}  // namespace

bool SocketWildcard(const HostSocket& s, uint8_t family) {
  auto local = AddressAs(s, s.local_addr, family);
  if (local) return *local == kAny;
  return s.local_addr == kAny;
}

int FindSocket(const HostModel& host, const SocketTuple& k, SocketLookup kind) {
  if (k.protocol == kTcp) {
    if (kind != SocketLookup::kListener) {
      const int found = FindEstablishedTcp(host, k);
      if (found >= 0 || kind == SocketLookup::kEstablished) return found;
    }
    return Best(host, k, ListenerScore);
  }
  if (k.protocol == kUdp) return TproxyUdpFilter(host, Best(host, k, UdpScore), k.family, kind);
  return -1;
}

}  // namespace rulejit::host
