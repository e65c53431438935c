// nft_socket_eval, socket_match (xt_socket, as the iptables frontend
// lowers it to socket loads), nft_tproxy_eval and tproxy_tg4/6 (xt_TPROXY)
// on the host model (host/socket_lookup.h).
//
//   socket   the packet's own socket when a tproxy assigned one, else the
//            lookup of nf_sk_lookup_slow_v4/v6: a TCP or UDP packet's
//            addresses and ports (remote = its source), or for an ICMP
//            error the quoted packet's, turned round (it was sent from
//            here); nothing for a non-first fragment.
//   tproxy   the established socket of the packet's addresses, else the
//            listener on the target (address: the register's, else the
//            input device's first address, else the packet's destination;
//            port: the register's, else the destination port); assigned
//            when transparent.
//
// Not modelled: a reply of a source-NATed connection (the kernel looks
// up the original source there), TIME_WAIT and SYN_RECV sockets, socket
// cgroups, IPv6 extension headers inside an ICMPv6 error's quote, IPv6
// addresses' tentative and deprecated flags (tproxy's address choice).
#include "ir/socket_eval.h"

#include <cstring>

#include "host/socket_lookup.h"
#include "ir/expr_eval.h"

namespace rulejit::ir {
namespace {

constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;
constexpr uint8_t kIcmp = 1;
constexpr uint8_t kIcmp6 = 58;

uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

bool Readable(const PacketView& pkt, uint32_t off, uint32_t len) {
  return off != kAbsent && uint64_t{off} + len <= pkt.len;
}

uint8_t FamilyOf(const PacketView& pkt) { return pkt.nfproto == kNfProtoIpv4 ? 4 : 6; }
uint32_t AddrLen(uint8_t family) { return family == 4 ? 4 : 16; }

// The outer header's addresses and the transport's ports at `l4`.
bool DirectTuple(const PacketView& pkt, uint8_t proto, uint32_t l4, host::SocketTuple& k) {
  if (!Readable(pkt, l4, 4)) return false;
  const uint8_t family = FamilyOf(pkt);
  const uint8_t* ip = pkt.data + pkt.network_off;
  const uint32_t at = family == 4 ? 12 : 8;
  std::memcpy(k.saddr.data(), ip + at, AddrLen(family));
  std::memcpy(k.daddr.data(), ip + at + AddrLen(family), AddrLen(family));
  k.protocol = proto;
  k.sport = Be16(pkt.data + l4);
  k.dport = Be16(pkt.data + l4 + 2);
  return true;
}

// extract_icmp4_fields / extract_icmp6_fields: an error quoting a TCP or
// UDP packet this host sent; its source is the local end.
bool IcmpTuple(const PacketView& pkt, uint32_t icmp, host::SocketTuple& k) {
  const uint8_t family = FamilyOf(pkt);
  if (!Readable(pkt, icmp, 8)) return false;
  const uint8_t type = pkt.data[icmp];
  if (family == 4 && type != 3 && type != 4 && type != 5 && type != 11 && type != 12) return false;
  if (family == 6 && type >= 128) return false;
  const uint32_t inner = icmp + 8;
  const uint32_t inner_len = family == 4 ? 20 : 40;
  if (!Readable(pkt, inner, inner_len)) return false;
  const uint8_t* ip = pkt.data + inner;
  const uint32_t hlen = family == 4 ? (ip[0] & 0x0f) * 4u : 40u;
  const uint8_t proto = family == 4 ? ip[9] : ip[6];
  if (proto != kTcp && proto != kUdp) return false;
  if (!Readable(pkt, inner + hlen, 4)) return false;
  const uint32_t at = family == 4 ? 12 : 8;
  std::memcpy(k.daddr.data(), ip + at, AddrLen(family));
  std::memcpy(k.saddr.data(), ip + at + AddrLen(family), AddrLen(family));
  k.protocol = proto;
  k.dport = Be16(pkt.data + inner + hlen);
  k.sport = Be16(pkt.data + inner + hlen + 2);
  return true;
}

// The lookup's key for the packet: IPv4 reads iph->protocol after the IP
// header, IPv6 ipv6_find_hdr's transport (ip6tables' walk); false when
// there is nothing to look up.
bool LookupTuple(const PacketView& pkt, host::SocketTuple& k) {
  if (pkt.network_off == kAbsent || (pkt.nfproto != kNfProtoIpv4 && pkt.nfproto != kNfProtoIpv6)) {
    return false;
  }
  k.family = FamilyOf(pkt);
  const bool v4 = k.family == 4;
  if (v4 ? pkt.fragoff != 0 : pkt.ip6t_off == kAbsent) return false;
  const uint8_t proto = v4 ? pkt.data[pkt.network_off + 9] : pkt.ip6t_proto;
  const uint32_t l4 = v4 ? pkt.network_off + (pkt.data[pkt.network_off] & 0x0f) * 4u : pkt.ip6t_off;
  if (proto == kTcp || proto == kUdp) return DirectTuple(pkt, proto, l4, k);
  if (proto == (v4 ? kIcmp : kIcmp6)) return IcmpTuple(pkt, l4, k);
  return false;
}

// nf_tproxy_laddr4/6: the user's address when not zero, else the input
// device's first address of the family, else the packet's destination.
std::array<uint8_t, 16> TargetAddress(const std::array<uint8_t, 16>& user, uint8_t family,
                                      const PacketMeta& meta, const HostModel& host,
                                      const std::array<uint8_t, 16>& daddr) {
  if (user != std::array<uint8_t, 16>{}) return user;
  const HostInterface* dev = meta.has_iif ? host.FindInterface(meta.iif) : nullptr;
  if (dev != nullptr) {
    for (const HostAddress& a : dev->addresses) {
      if (a.family == family) return a.addr;
    }
  }
  return daddr;
}

}  // namespace

int32_t PacketSocket(const PacketView& pkt, const PacketMeta& meta, const HostModel& host,
                     int32_t assigned) {
  if (assigned >= 0) return assigned;
  host::SocketTuple k;
  if (!LookupTuple(pkt, k)) return -1;
  k.in_dev = meta.has_iif ? meta.iif : 0;
  return host::FindSocket(host, k, host::SocketLookup::kAny);
}

bool EvalSocket(const Socket& e, const PacketView& pkt, const PacketMeta& meta,
                const HostModel& host, int32_t assigned, uint8_t* regs) {
  const int32_t found = PacketSocket(pkt, meta, host, assigned);
  if (found < 0 || e.key == SocketKey::kCgroupv2) return false;
  const HostSocket& s = host.sockets[found];
  uint32_t value = 0;
  switch (e.key) {
    case SocketKey::kTransparent: value = s.transparent; break;
    case SocketKey::kMark: value = s.mark; break;
    case SocketKey::kWildcard: value = host::SocketWildcard(s, FamilyOf(pkt)); break;
    case SocketKey::kCgroupv2: return false;
  }
  uint8_t* dst = RegBytes(regs, e.dreg, 4);
  if (dst == nullptr) return false;
  std::memcpy(dst, &value, 4);
  return true;
}

TproxyOutcome EvalTproxy(const Tproxy& e, const PacketView& pkt, const PacketMeta& meta,
                         const HostModel& host, const uint8_t* regs, int32_t& assigned) {
  const TproxyOutcome miss = e.else_drop ? TproxyOutcome::kDrop : TproxyOutcome::kBreak;
  if (pkt.network_off == kAbsent || (pkt.nfproto != kNfProtoIpv4 && pkt.nfproto != kNfProtoIpv6)) {
    return TproxyOutcome::kBreak;
  }
  host::SocketTuple k;
  k.family = FamilyOf(pkt);
  if ((e.family == Family::kIp && k.family != 4) || (e.family == Family::kIp6 && k.family != 6)) {
    return TproxyOutcome::kBreak;
  }
  const bool xt6 = e.else_drop && k.family == 6;
  const uint8_t proto = xt6 ? pkt.ip6t_proto : pkt.l4proto;
  const uint32_t l4 = xt6 ? pkt.ip6t_off
                          : (pkt.transport_off != kAbsent ? pkt.transport_off : pkt.l4_off);
  if ((!xt6 && !pkt.l4proto_valid) || (proto != kTcp && proto != kUdp) ||
      !Readable(pkt, l4, 8) || !DirectTuple(pkt, proto, l4, k)) {
    return miss;
  }
  k.in_dev = meta.has_iif ? meta.iif : 0;
  int found = host::FindSocket(host, k, host::SocketLookup::kEstablished);
  if (found < 0) {
    std::array<uint8_t, 16> user = {};
    if (e.addr) std::memcpy(user.data(), regs + RegWord(*e.addr) * 4, AddrLen(k.family));
    uint16_t port = e.port ? Be16(regs + RegWord(*e.port) * 4) : 0;
    k.daddr = TargetAddress(user, k.family, meta, host, k.daddr);
    if (port != 0) k.dport = port;
    found = host::FindSocket(host, k, host::SocketLookup::kListener);
  }
  if (found < 0 || !host.sockets[found].transparent) return miss;
  assigned = found;
  return TproxyOutcome::kGoOn;
}

}  // namespace rulejit::ir
