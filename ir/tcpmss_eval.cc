// xt_TCPMSS (tcpmss_tg4 / tcpmss_tg6 and tcpmss_mangle_packet):
//
//   non-first fragment              nothing
//   TCP header < 20 bytes, or
//   shorter than its data offset    drop
//   clamp: path MTU <= IP+TCP       drop
//   an MSS option (kind 2, len 4)   lowered to the new MSS if that is
//                                   smaller, never raised
//   no option, no data, doff < 15   a 4-byte option added (MSS at most 536
//                                   for IPv4, 1220 for IPv6), the TCP
//                                   header, IP total / payload length grow
//   otherwise                       nothing
//
// The path MTU of --clamp-mss-to-pmtu is the smaller of the packet's own
// route (to its destination) and the reverse route (to its source), as
// dst_mtu gives them: the route's mtu metric, else its device's MTU, on
// the host model (learned PMTU exceptions are not modelled). Checksums are
// updated incrementally, as inet_proto_csum_replace2/4 do on a packet
// whose checksum is complete.
#include "ir/tcpmss_eval.h"

#include <algorithm>
#include <cstring>

#include "host/route_lookup.h"

namespace rulejit::ir {
namespace {

constexpr uint8_t kOptMss = 2;
constexpr uint8_t kOptMssLen = 4;

uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// csum_replace2 on the 16-bit checksum at `sum`: ~(~sum - from + to).
void Replace16(uint8_t* sum, uint16_t from, uint16_t to) {
  uint32_t s = static_cast<uint16_t>(~Get16(sum));
  s += static_cast<uint16_t>(~from);
  s += to;
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  Put16(sum, static_cast<uint16_t>(~s));
}

// The path MTU: min(route to daddr, route to saddr), 0 without a route to
// the destination (the packet has none: the kernel never gets here).
uint32_t PathMtu(const HostModel& host, uint8_t family, const uint8_t* saddr,
                 const uint8_t* daddr) {
  const HostRoute* out = host::LookupRoute(host, family, daddr);
  if (out == nullptr) return 0;
  uint32_t mtu = host::RouteMtu(host, *out);
  if (const HostRoute* back = host::LookupRoute(host, family, saddr)) {
    mtu = std::min(mtu, host::RouteMtu(host, *back));
  }
  return mtu;
}

// optlen(): 1 for END and NOP and for a length byte under 2 or missing.
uint32_t OptionLength(const uint8_t* opt, uint32_t i, uint32_t end) {
  if (opt[i] <= 1 || i + 1 >= end || opt[i + 1] < 2) return 1;
  return opt[i + 1];
}

// tcpmss_mangle_packet: -1 drop, 0 nothing more, 4 an option was added.
int Mangle(const TcpMss& e, const HostModel& host, bool ipv4, uint8_t* ip, uint32_t ip_len,
           uint32_t tcphoff, std::vector<uint8_t>& bytes, uint32_t ip_at) {
  const uint32_t minlen = ipv4 ? 40 : 60;
  if (ip_len < tcphoff || ip_len - tcphoff < 20) return -1;
  const uint32_t len = ip_len - tcphoff;
  uint8_t* tcph = ip + tcphoff;
  const uint32_t hdrlen = (tcph[12] >> 4) * 4u;
  if (len < hdrlen || hdrlen < 20) return -1;
  uint16_t newmss = e.mss;
  if (e.clamp) {
    const uint32_t mtu = ipv4 ? PathMtu(host, 4, ip + 12, ip + 16) : PathMtu(host, 6, ip + 8, ip + 24);
    if (mtu <= minlen) return -1;
    newmss = static_cast<uint16_t>(std::min<uint32_t>(mtu - minlen, 0xffff));
  }
  for (uint32_t i = 20; i + kOptMssLen <= hdrlen; i += OptionLength(tcph, i, hdrlen)) {
    if (tcph[i] == kOptMss && tcph[i + 1] == kOptMssLen) {
      const uint16_t oldmss = Get16(tcph + i + 2);
      if (oldmss <= newmss) return 0;
      Put16(tcph + i + 2, newmss);
      Replace16(tcph + 16, oldmss, newmss);
      return 0;
    }
  }
  if (len > hdrlen || hdrlen >= 60) return 0;
  newmss = std::min<uint16_t>(newmss, ipv4 ? 536 : 1220);
  // The option goes right after the fixed header; the packet grows by 4.
  const size_t at = ip_at + tcphoff + 20;
  bytes.insert(bytes.begin() + at, {kOptMss, kOptMssLen, static_cast<uint8_t>(newmss >> 8),
                                    static_cast<uint8_t>(newmss)});
  tcph = bytes.data() + ip_at + tcphoff;
  Replace16(tcph + 16, static_cast<uint16_t>(len), static_cast<uint16_t>(len + kOptMssLen));
  Replace16(tcph + 16, 0, Get16(tcph + 20));
  Replace16(tcph + 16, 0, Get16(tcph + 22));
  const uint16_t old_word = Get16(tcph + 12);
  tcph[12] = static_cast<uint8_t>(tcph[12] + (kOptMssLen / 4 << 4));
  Replace16(tcph + 16, old_word, Get16(tcph + 12));
  return kOptMssLen;
}

}  // namespace

bool EvalTcpMss(const TcpMss& e, const HostModel& host, PacketView& pkt,
                std::vector<uint8_t>& bytes) {
  const bool ipv4 = pkt.nfproto == kNfProtoIpv4;
  if ((!ipv4 && pkt.nfproto != kNfProtoIpv6) || pkt.network_off == kAbsent) return true;
  if (pkt.fragoff != 0) return true;
  // IPv4: iptables' thoff; IPv6: ip6_tables' protoff (absent: no header).
  const uint32_t th = ipv4 ? pkt.transport_off : pkt.ip6t_off;
  if (th == kAbsent) return ipv4;
  const uint32_t ip_at = pkt.network_off;
  // skb->len: the IP datagram as its header declares it (ip_rcv trims the
  // link layer's padding), never more than the frame holds.
  const uint8_t* hdr = bytes.data() + ip_at;
  const uint32_t declared = ipv4 ? Get16(hdr + 2) : 40u + Get16(hdr + 4);
  const uint32_t ip_len = std::min(pkt.len - ip_at, declared);
  const int grown = Mangle(e, host, ipv4, bytes.data() + ip_at, ip_len, th - ip_at, bytes, ip_at);
  if (grown < 0) return false;
  if (grown == 0) return true;
  uint8_t* ip = bytes.data() + ip_at;
  if (ipv4) {
    const uint16_t old_len = Get16(ip + 2);
    Put16(ip + 2, static_cast<uint16_t>(old_len + grown));
    Replace16(ip + 10, old_len, Get16(ip + 2));
  } else {
    Put16(ip + 4, static_cast<uint16_t>(Get16(ip + 4) + grown));
  }
  // The view follows the bytes: same header offsets, 4 more bytes of
  // options before the payload.
  pkt.data = bytes.data();
  pkt.len += static_cast<uint32_t>(grown);
  if (pkt.inner_off != kAbsent) pkt.inner_off += static_cast<uint32_t>(grown);
  return true;
}

}  // namespace rulejit::ir
