// Reject replies as Linux 6.18 builds them (runtime/reject.h): the checks
// that decide whether the kernel answers at all, then the RST or ICMP(v6)
// frame, field by field. References are to net/ipv4/netfilter/
// nf_reject_ipv4.c, net/ipv6/netfilter/nf_reject_ipv6.c, net/ipv4/icmp.c
// and net/ipv6/icmp.c.
#include "runtime/reject.h"

#include <algorithm>
#include <cstring>

#include "rulejit/packet.h"

namespace rulejit::runtime {
namespace {

constexpr uint32_t kEthLen = 14;
constexpr uint32_t kIpv4Len = 20;
constexpr uint32_t kIpv6Len = 40;
constexpr uint32_t kTcpLen = 20;
constexpr uint32_t kIcmpLen = 8;
constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint16_t kEtherIpv6 = 0x86dd;
constexpr uint8_t kProtoIcmp = 1, kProtoTcp = 6, kProtoUdp = 17, kProtoIcmpv6 = 58;

uint16_t Load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t Load32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
void Store16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void Store32(uint8_t* p, uint32_t v) {
  Store16(p, static_cast<uint16_t>(v >> 16));
  Store16(p + 2, static_cast<uint16_t>(v));
}

// One's complement sum of `n` bytes (big-endian words), not folded.
uint64_t Sum(const uint8_t* p, size_t n, uint64_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += Load16(p + i);
  if (n % 2) sum += uint32_t{p[n - 1]} << 8;
  return sum;
}
uint16_t Fold(uint64_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}
// The pseudo-header sum of IPv4 (4-byte addresses) or IPv6 (16-byte).
uint64_t PseudoSum(const uint8_t* src, const uint8_t* dst, uint32_t addr_len, uint8_t proto,
                   uint32_t len) {
  return Sum(src, addr_len, Sum(dst, addr_len)) + proto + (len >> 16) + (len & 0xffff);
}

// The offending packet: its IP header and the bytes the kernel's skb
// holds from there (`len`: trimmed to the IP length by the IP stack, the
// frame's end at a netdev hook).
struct Offending {
  const uint8_t* frame;
  const uint8_t* ip;
  uint32_t len;        // bytes of the skb from the IP header
  uint32_t declared;   // bytes the IP header declares
  uint32_t l4_off;     // from ip; kAbsent on non-first fragments / unknown
  uint8_t l4proto;
  bool ipv6;
  bool mac_multicast;  // pkt_type broadcast or multicast
};

// nf_ip_checksum / nf_ip6_checksum over the segment at l4_off: TCP and UDP
// (and, IPv6, every protocol) with their pseudo-header; other IPv4
// protocols the plain sum from the IP header on (skb->csum 0), which the
// header's own checksum leaves at the payload's.
bool ChecksumOk(const Offending& p) {
  const uint8_t* l4 = p.ip + p.l4_off;
  const uint32_t l4_len = p.len - p.l4_off;
  uint64_t sum;
  if (p.ipv6) {
    sum = PseudoSum(p.ip + 8, p.ip + 24, 16, p.l4proto, l4_len);
  } else if (p.l4proto == kProtoTcp || p.l4proto == kProtoUdp) {
    sum = PseudoSum(p.ip + 12, p.ip + 16, 4, p.l4proto, l4_len);
  } else {
    sum = 0;
  }
  return Fold(Sum(l4, l4_len, sum)) == 0xffff;
}

// nf_reject_verify_csum: protocols whose checksum is not a one's
// complement sum of the whole payload are not checked (UDP only when it
// has one).
bool ChecksumChecked(const Offending& p) {
  switch (p.l4proto) {
    case kProtoUdp:
      return p.len - p.l4_off >= 8 && Load16(p.ip + p.l4_off + 6) != 0;
    case 47: case 51: case 50: case 132: case 136: case 33:  // GRE AH ESP SCTP UDP-Lite DCCP
      return false;
    default:
      return true;
  }
}

// The reply's Ethernet header: the offending frame's MACs swapped.
void PutEthernet(const Offending& p, uint16_t ethertype, std::vector<uint8_t>* out) {
  out->resize(kEthLen);
  std::memcpy(out->data(), p.frame + 6, 6);
  std::memcpy(out->data() + 6, p.frame, 6);
  Store16(out->data() + 12, ethertype);
}

// nf_reject_iphdr_put, with the length and header checksum filled.
void PutIpv4(const Offending& p, uint8_t tos, bool df, uint8_t ttl, uint8_t proto,
             uint32_t payload, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + kIpv4Len);
  uint8_t* h = out->data() + at;
  h[0] = 0x45;
  h[1] = tos;
  Store16(h + 2, static_cast<uint16_t>(kIpv4Len + payload));
  Store16(h + 6, df ? 0x4000 : 0);
  h[8] = ttl;
  h[9] = proto;
  std::memcpy(h + 12, p.ip + 16, 4);  // from the offending destination
  std::memcpy(h + 16, p.ip + 12, 4);  // to its source
  Store16(h + 10, static_cast<uint16_t>(~Fold(Sum(h, kIpv4Len))));
}

// nf_reject_ip6hdr_put: version 6, traffic class and flow label 0.
void PutIpv6(const Offending& p, uint8_t hop_limit, uint8_t proto, uint32_t payload,
             std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + kIpv6Len);
  uint8_t* h = out->data() + at;
  h[0] = 0x60;
  Store16(h + 4, static_cast<uint16_t>(payload));
  h[6] = proto;
  h[7] = hop_limit;
  std::memcpy(h + 8, p.ip + 24, 16);
  std::memcpy(h + 24, p.ip + 8, 16);
}

// The L4 checksum of the reply's segment (from `l4` on) at `field`.
void FillL4Checksum(std::vector<uint8_t>* out, size_t ip, size_t l4, size_t field, bool ipv6,
                    uint8_t proto) {
  uint8_t* h = out->data() + ip;
  const uint32_t len = static_cast<uint32_t>(out->size() - l4);
  uint64_t sum = proto == kProtoIcmp ? 0
                 : ipv6              ? PseudoSum(h + 8, h + 24, 16, proto, len)
                                     : PseudoSum(h + 12, h + 16, 4, proto, len);
  Store16(out->data() + field, static_cast<uint16_t>(~Fold(Sum(out->data() + l4, len, sum))));
}

// nf_reject_ip_tcphdr_put / nf_reject_ip6_tcphdr_put: RST|ACK acking the
// segment when it had no ACK, else RST at its ack number; no options.
void PutRst(const Offending& p, std::vector<uint8_t>* out) {
  const uint8_t* oth = p.ip + p.l4_off;
  const size_t at = out->size();
  out->resize(at + kTcpLen);
  uint8_t* t = out->data() + at;
  std::memcpy(t, oth + 2, 2);
  std::memcpy(t + 2, oth, 2);
  const uint8_t flags = oth[13];
  const bool ack = flags & 0x10;
  if (ack) {
    std::memcpy(t + 4, oth + 8, 4);
  } else {
    const uint32_t data = p.len - p.l4_off - (oth[12] >> 4) * 4u;
    Store32(t + 8, Load32(oth + 4) + (flags & 0x02 ? 1 : 0) + (flags & 0x01 ? 1 : 0) + data);
  }
  t[12] = kTcpLen / 4 << 4;
  t[13] = static_cast<uint8_t>(0x04 | (ack ? 0 : 0x10));
}

bool Ipv4Multicast(const uint8_t* a) { return (a[0] & 0xf0) == 0xe0; }
bool Ipv4Broadcast(const uint8_t* a) { return Load32(a) == 0xffffffffu; }
bool Ipv6Multicast(const uint8_t* a) { return a[0] == 0xff; }
bool Ipv6Unspecified(const uint8_t* a) {
  return std::all_of(a, a + 16, [](uint8_t b) { return b == 0; });
}

// The tcp reset's own checks (nf_reject_ip[6]_tcphdr_get): TCP, first
// fragment, whole header, not an RST, checksum good.
bool ResetAllowed(const Offending& p, const RejectOptions& options) {
  if (p.l4_off == kAbsent || p.l4proto != kProtoTcp || p.len < p.l4_off + kTcpLen) return false;
  if (p.ip[p.l4_off + 13] & 0x04) return false;  // no RST for an RST
  return options.csum_partial || ChecksumOk(p);
}

// icmp_send's: no reply to an ICMP error (or a type it does not know).
bool IcmpErrorQuoted(const Offending& p) {
  if (p.l4proto != kProtoIcmp) return false;
  if (p.len <= p.l4_off) return true;
  const uint8_t type = p.ip[p.l4_off];
  return type > 18 || type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

// icmp6_send's is_ineligible: an ICMPv6 error (or one cut before its type).
bool Icmpv6ErrorQuoted(const Offending& p) {
  if (p.l4proto != kProtoIcmpv6) return false;
  return p.len <= p.l4_off || !(p.ip[p.l4_off] & 0x80);
}

bool UnreachAllowed(const Offending& p, const RejectOptions& options) {
  if (p.l4_off == kAbsent || p.mac_multicast) return false;
  if (p.ipv6 ? Icmpv6ErrorQuoted(p) : IcmpErrorQuoted(p)) return false;
  return options.csum_partial || !ChecksumChecked(p) || ChecksumOk(p);
}

bool ReplyV4(const Offending& p, RejectType type, uint8_t code, RejectFlavor flavor,
             const RejectOptions& options, std::vector<uint8_t>* out) {
  const uint8_t* src = p.ip + 12;
  const uint8_t* dst = p.ip + 16;
  if (Ipv4Multicast(dst) || Ipv4Broadcast(dst)) return false;  // RTCF_BROADCAST|MULTICAST
  if (Load32(src) == 0 || Ipv4Multicast(src) || Ipv4Broadcast(src)) return false;
  if (type == RejectType::kTcpReset) {
    if (!ResetAllowed(p, options)) return false;
    PutEthernet(p, kEtherIpv4, out);
    PutIpv4(p, 0, true, options.ttl, kProtoTcp, kTcpLen, out);
    PutRst(p, out);
    FillL4Checksum(out, kEthLen, kEthLen + kIpv4Len, kEthLen + kIpv4Len + 16, false, kProtoTcp);
    return true;
  }
  // nf_reject_skb_v4_unreach verifies the packet trimmed to its IP length
  // but quotes from the untrimmed one (padding included).
  Offending trimmed = p;
  trimmed.len = p.declared;
  if (!UnreachAllowed(trimmed, options)) return false;
  // icmp_send: 576 bytes in all; nf_reject_skb_v4_unreach: 536 quoted.
  const bool netdev = flavor == RejectFlavor::kNetdev;
  const uint32_t quoted = std::min<uint32_t>(p.len, netdev ? 536 : 576 - kIpv4Len - kIcmpLen);
  const uint8_t tos = netdev ? 0 : static_cast<uint8_t>((p.ip[1] & 0x1e) | 0xc0);
  PutEthernet(p, kEtherIpv4, out);
  PutIpv4(p, tos, netdev, options.ttl, kProtoIcmp, kIcmpLen + quoted, out);
  const size_t icmp = out->size();
  out->resize(icmp + kIcmpLen);
  (*out)[icmp] = 3;  // destination unreachable
  (*out)[icmp + 1] = RejectIcmpCode(type, code, false);
  out->insert(out->end(), p.ip, p.ip + quoted);
  FillL4Checksum(out, kEthLen, icmp, icmp + 2, false, kProtoIcmp);
  return true;
}

bool ReplyV6(const Offending& p, RejectType type, uint8_t code, RejectFlavor flavor,
             const RejectOptions& options, std::vector<uint8_t>* out) {
  const uint8_t* src = p.ip + 8;
  const uint8_t* dst = p.ip + 24;
  if (Ipv6Multicast(dst) || Ipv6Unspecified(dst)) return false;
  if (Ipv6Multicast(src) || Ipv6Unspecified(src)) return false;
  if (type == RejectType::kTcpReset) {
    if (!ResetAllowed(p, options)) return false;
    PutEthernet(p, kEtherIpv6, out);
    PutIpv6(p, options.hop_limit, kProtoTcp, kTcpLen, out);
    PutRst(p, out);
    FillL4Checksum(out, kEthLen, kEthLen + kIpv6Len, kEthLen + kIpv6Len + 16, true, kProtoTcp);
    return true;
  }
  if (!UnreachAllowed(p, options)) return false;
  // icmp6_send: up to the minimum MTU; nf_reject_skb_v6_unreach: 1220.
  const uint32_t quoted = std::min<uint32_t>(
      p.len, flavor == RejectFlavor::kNetdev ? 1220 : 1280 - kIpv6Len - kIcmpLen);
  PutEthernet(p, kEtherIpv6, out);
  PutIpv6(p, options.hop_limit, kProtoIcmpv6, kIcmpLen + quoted, out);
  const size_t icmp = out->size();
  out->resize(icmp + kIcmpLen);
  (*out)[icmp] = 1;  // destination unreachable
  (*out)[icmp + 1] = RejectIcmpCode(type, code, true);
  out->insert(out->end(), p.ip, p.ip + quoted);
  FillL4Checksum(out, kEthLen, icmp, icmp + 2, true, kProtoIcmpv6);
  return true;
}

// The offending packet as the kernel's skb holds it; false when its IP
// header is not one the stack would have let through.
bool ReadOffending(const uint8_t* frame, uint32_t len, RejectFlavor flavor, Offending* p) {
  const PacketView v = ParseFrame(frame, len);
  if (v.link_off != 0 || v.network_off == kAbsent || len < kEthLen) return false;
  p->frame = frame;
  p->ip = frame + v.network_off;
  const uint32_t avail = len - v.network_off;
  p->mac_multicast = frame[0] & 1;
  p->ipv6 = v.nfproto == kNfProtoIpv6;
  uint32_t declared;
  if (p->ipv6) {
    if (avail < kIpv6Len) return false;
    declared = kIpv6Len + Load16(p->ip + 4);
    p->l4_off = v.ip6t_off == kAbsent ? kAbsent : v.ip6t_off - v.network_off;
    p->l4proto = v.ip6t_proto;
  } else {
    if (avail < kIpv4Len || p->ip[0] >> 4 != 4 || (p->ip[0] & 0xf) < 5) return false;
    declared = Load16(p->ip + 2);
    if (declared < (p->ip[0] & 0xfu) * 4) return false;
    p->l4_off = v.is_fragment && v.fragoff != 0 ? kAbsent : (p->ip[0] & 0xfu) * 4;
    p->l4proto = p->ip[9];
  }
  if (declared > avail) return false;
  p->declared = declared;
  p->len = flavor == RejectFlavor::kNetdev ? avail : declared;
  if (p->l4_off != kAbsent && p->l4_off > p->len) p->l4_off = kAbsent;
  return true;
}

}  // namespace

uint8_t RejectIcmpCode(RejectType type, uint8_t code, bool ipv6) {
  if (type != RejectType::kIcmpxUnreach) return code;
  // NFT_REJECT_ICMPX_{NO_ROUTE, PORT_UNREACH, HOST_UNREACH, ADMIN_PROHIBITED}
  static constexpr uint8_t kV4[] = {0, 3, 1, 13};  // net, port, host unreachable, filtered
  static constexpr uint8_t kV6[] = {0, 4, 3, 1};   // no route, port, address, admin
  return code < 4 ? (ipv6 ? kV6 : kV4)[code] : code;
}

bool BuildRejectReply(const uint8_t* frame, uint32_t len, RejectType type, uint8_t code,
                      RejectFlavor flavor, const RejectOptions& options,
                      std::vector<uint8_t>* reply) {
  reply->clear();
  Offending p;
  if (!ReadOffending(frame, len, flavor, &p)) return false;
  const bool ok = p.ipv6 ? ReplyV6(p, type, code, flavor, options, reply)
                         : ReplyV4(p, type, code, flavor, options, reply);
  if (!ok) reply->clear();
  return ok;
}

bool IcmpRateLimit::Allow(const std::vector<uint8_t>& reply, uint64_t now_ns) {
  if (reply.size() < kEthLen + kIpv4Len) return false;
  const bool ipv6 = Load16(reply.data() + 12) == kEtherIpv6;
  if (ipv6 && reply.size() < kEthLen + kIpv6Len) return false;
  // icmp_global_allow: credit refilled by elapsed time (at least 20 ms of
  // it, at most a second's), capped at the burst.
  if (credit_ < 0) {
    credit_ = options_.burst;
    stamp_ns_ = now_ns;
  }
  if (credit_ <= 0) {
    const uint64_t delta = std::min<uint64_t>(now_ns - stamp_ns_, 1'000'000'000);
    if (delta < 20'000'000) return false;
    const uint64_t incr = options_.per_sec * delta / 1'000'000'000;
    if (incr == 0) return false;
    stamp_ns_ = now_ns;
    credit_ = std::min<int64_t>(credit_ + static_cast<int64_t>(incr), options_.burst);
  }
  // inet_peer_xrlim_allow on the reply's destination.
  std::array<uint8_t, 16> key{};
  const uint8_t* dst = reply.data() + kEthLen + (ipv6 ? 24 : 16);
  std::memcpy(key.data(), dst, ipv6 ? 16 : 4);
  const uint64_t interval = ipv6 ? options_.v6_interval_ns : options_.v4_interval_ns;
  if (peers_.size() >= kMaxPeers && !peers_.contains(key)) peers_.clear();
  auto [it, fresh] = peers_.try_emplace(key, Peer{6 * interval, now_ns});
  Peer& peer = it->second;
  if (!fresh && now_ns > peer.last_ns) {
    peer.tokens_ns = std::min(peer.tokens_ns + (now_ns - peer.last_ns), 6 * interval);
    peer.last_ns = now_ns;
  }
  if (peer.tokens_ns < interval) return false;
  peer.tokens_ns -= interval;
  --credit_;  // icmp_global_consume
  return true;
}

}  // namespace rulejit::runtime
