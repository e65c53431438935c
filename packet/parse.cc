// Frame parsing: raw bytes -> PacketView, the way the kernel fills
// nft_pktinfo (nft_set_pktinfo_ipv4 / nft_set_pktinfo_ipv6).
//
//   Ethernet ─ 802.1Q/802.1ad tags* ─ IPv4 ─────────────────┐
//                                   └ IPv6 ─ ext headers* ──┴─ L4 header ─ inner
//
// Kernel facts this follows:
// - IPv4: the transport header exists only for the first fragment
//   (fragoff == 0); meta l4proto is always valid; pkt->thoff (l4_off) is
//   set for every fragment, as the fast-path payload loads use it.
// - IPv6 (ipv6_find_hdr with IP6_FH_F_AUTH, as nf_tables calls it): walk
//   hop-by-hop (0), routing (43), destination options (60) and fragment (44)
//   headers; stop at AH (51), so AH is the "transport" header as nft's `ah`
//   matches expect, and at no-next-header (59) or any other protocol. A
//   non-first fragment reports the protocol after the fragment header with
//   no transport header; a non-first fragment followed by another extension
//   header, or a truncated extension header, leaves l4proto undefined.
// - ip6tables-legacy walks the same headers but over AH (no IP6_FH_F_AUTH),
//   and its port/icmp6 matches refuse non-first fragments: the ip6t_*
//   fields (ir::PayloadBase::kIp6tTransport, ir::MetaKey::kIp6tL4Proto).
// - The IP layer trims the frame to the IP total/payload length before the
//   hooks, so Ethernet padding is not part of the packet.
// Inner (L4 payload) offsets are computed for TCP (data offset), UDP and
// UDP-Lite (8), ICMP/ICMPv6 (8) and SCTP (12). The kernel's @ih base only
// knows TCP and UDP (and GRE); callers comparing against it should keep to
// those.
// Not modelled: VLAN tag offload (skb->protocol stays the inner ethertype
// here), IPv4 option validation, GRE.
#include "packet/parse.h"

namespace rulejit::packet {
namespace {

constexpr uint16_t kEthIpv4 = 0x0800;
constexpr uint16_t kEthIpv6 = 0x86dd;
constexpr uint16_t kEthVlan = 0x8100;
constexpr uint16_t kEthQinQ = 0x88a8;
constexpr uint32_t kEthHeaderLen = 14;
constexpr uint32_t kVlanTagLen = 4;

constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;
constexpr uint8_t kProtoHopOpts = 0;
constexpr uint8_t kProtoRouting = 43;
constexpr uint8_t kProtoFragment = 44;
constexpr uint8_t kProtoAh = 51;
constexpr uint8_t kProtoIcmpv6 = 58;
constexpr uint8_t kProtoNone = 59;
constexpr uint8_t kProtoDstOpts = 60;
constexpr uint8_t kProtoSctp = 132;
constexpr uint8_t kProtoUdpLite = 136;

// Bytes [off, off+n) are inside the view.
bool Has(const PacketView& v, uint64_t off, uint64_t n) {
  return off + n <= v.len;
}
uint16_t Read16(const PacketView& v, uint32_t off) {
  return static_cast<uint16_t>(v.data[off] << 8 | v.data[off + 1]);
}

// Length of the L4 header at `off`, or 0 when unknown or malformed.
uint32_t L4HeaderLen(const PacketView& v, uint32_t off) {
  switch (v.l4proto) {
    case kProtoTcp: {
      if (!Has(v, off, 13)) return 0;
      uint32_t doff = v.data[off + 12] >> 4;
      return doff >= 5 ? doff * 4 : 0;
    }
    case kProtoUdp:
    case kProtoUdpLite:
    case kProtoIcmp:
    case kProtoIcmpv6:
      return 8;
    case kProtoSctp:
      return 12;
    default:
      return 0;
  }
}

void SetTransport(PacketView& v, uint64_t off) {
  if (!Has(v, off, 0)) return;
  v.transport_off = static_cast<uint32_t>(off);
  uint32_t hlen = L4HeaderLen(v, v.transport_off);
  if (hlen != 0 && Has(v, off, hlen)) {
    v.inner_off = static_cast<uint32_t>(off + hlen);
  }
}

// Drops bytes past the end of the IP packet (link padding).
void TrimTo(PacketView& v, uint64_t end) {
  if (end < v.len) v.len = static_cast<uint32_t>(end);
}

void ParseIpv4(PacketView& v, uint32_t off) {
  if (!Has(v, off, 20)) return;
  uint8_t version = v.data[off] >> 4;
  uint32_t hlen = (v.data[off] & 0x0f) * 4u;
  uint32_t total = Read16(v, off + 2);
  if (version != 4 || hlen < 20 || !Has(v, off, hlen) || total < hlen) return;
  TrimTo(v, static_cast<uint64_t>(off) + total);
  v.nfproto = kNfProtoIpv4;
  v.l4proto = v.data[off + 9];
  v.l4proto_valid = true;
  uint16_t frag = Read16(v, off + 6);
  v.fragoff = frag & 0x1fff;
  v.is_fragment = (frag & 0x2000) != 0 || v.fragoff != 0;
  v.l4_off = off + hlen;  // pkt->thoff, also for non-first fragments
  if (v.fragoff == 0) SetTransport(v, static_cast<uint64_t>(off) + hlen);
}

// ipv6_ext_hdr(): the headers ipv6_find_hdr walks (or stops at, for AH and
// no-next-header).
bool IsIpv6ExtHeader(uint8_t nh) {
  return nh == kProtoHopOpts || nh == kProtoRouting || nh == kProtoFragment ||
         nh == kProtoAh || nh == kProtoNone || nh == kProtoDstOpts;
}

// ipv6_find_hdr(skb, &thoff, -1, &fragoff, &flags) over the IPv6 header
// at `off`. `stop_at_ah` is flags = IP6_FH_F_AUTH, as nf_tables passes
// (AH is then the transport header); ip6tables passes no flags and walks
// over AH, whose length counts 4-byte units (plus 2). `ok` false is
// -EBADMSG (truncated) or -ENOENT (a non-first fragment followed by another
// extension header). A non-first fragment (frag_bytes != 0) reports the
// protocol after the fragment header and leaves thoff untouched.
struct Ipv6Walk {
  bool ok = false;
  bool fragment = false;    // a fragment header was seen
  uint8_t proto = 0;
  uint64_t thoff = 0;       // the transport header (unless frag_bytes != 0)
  uint16_t frag_bytes = 0;  // fragment offset in bytes
};

Ipv6Walk WalkIpv6(const PacketView& v, uint32_t off, bool stop_at_ah) {
  Ipv6Walk w{.proto = v.data[off + 6], .thoff = static_cast<uint64_t>(off) + 40};
  // Each step advances at least 8 bytes and reads only checked bytes.
  while (IsIpv6ExtHeader(w.proto) && w.proto != kProtoNone &&
         !(stop_at_ah && w.proto == kProtoAh)) {
    // The routing header is read as struct ipv6_rt_hdr (4 bytes) first.
    const uint64_t need = w.proto == kProtoRouting || w.proto == kProtoFragment ? 4 : 2;
    if (!Has(v, w.thoff, need)) return w;  // -EBADMSG
    const uint8_t next = v.data[w.thoff];
    uint64_t hdrlen = (static_cast<uint64_t>(v.data[w.thoff + 1]) + 1) * 8;
    if (w.proto == kProtoFragment) {
      w.fragment = true;
      const uint16_t frag = Read16(v, static_cast<uint32_t>(w.thoff) + 2) & ~7u;
      if (frag != 0) {
        if (IsIpv6ExtHeader(next) && next != kProtoNone) return w;  // -ENOENT
        w.frag_bytes = frag;
        w.proto = next;
        w.ok = true;
        return w;
      }
      hdrlen = 8;
    } else if (w.proto == kProtoAh) {
      hdrlen = (static_cast<uint64_t>(v.data[w.thoff + 1]) + 2) * 4;  // ipv6_authlen
    }
    w.proto = next;
    w.thoff += hdrlen;
  }
  w.ok = true;
  return w;
}

// ip6tables-legacy's walk (PacketView::ip6t_*): protoff only when the
// packet is not a non-first fragment.
void SetIp6tables(PacketView& v, uint32_t off) {
  const Ipv6Walk w = WalkIpv6(v, off, /*stop_at_ah=*/false);
  if (!w.ok) return;
  v.ip6t_proto = w.proto;
  v.ip6t_proto_valid = true;
  if (w.frag_bytes == 0 && w.thoff <= v.len) v.ip6t_off = static_cast<uint32_t>(w.thoff);
}

void ParseIpv6(PacketView& v, uint32_t off) {
  if (!Has(v, off, 40) || (v.data[off] >> 4) != 6) return;
  uint32_t payload = Read16(v, off + 4);
  if (payload != 0) TrimTo(v, static_cast<uint64_t>(off) + 40 + payload);
  v.nfproto = kNfProtoIpv6;
  SetIp6tables(v, off);
  const Ipv6Walk w = WalkIpv6(v, off, /*stop_at_ah=*/true);
  v.is_fragment = w.fragment;
  if (!w.ok) return;  // l4proto undefined
  v.l4proto = w.proto;
  v.l4proto_valid = true;
  if (w.frag_bytes != 0) {
    // Non-first fragment: protocol known, no transport header.
    v.fragoff = w.frag_bytes >> 3;
    // KERNEL: thoff stays 0, i.e. skb->data (see packet.h; verified on
    // Linux 6.18 by KernelDiff.NftTransportMatchOnIpv6Fragment).
    v.l4_off = off;
    return;
  }
  if (w.thoff <= UINT32_MAX) v.l4_off = static_cast<uint32_t>(w.thoff);
  SetTransport(v, w.thoff);
}

void ParseNetwork(PacketView& v, uint32_t off) {
  v.network_off = off;
  if (v.protocol == kEthIpv4) ParseIpv4(v, off);
  if (v.protocol == kEthIpv6) ParseIpv6(v, off);
}

}  // namespace

PacketView ParseEthernet(const uint8_t* data, uint32_t len) {
  PacketView v;
  v.data = data;
  v.len = data == nullptr ? 0 : len;
  if (!Has(v, 0, kEthHeaderLen)) return v;
  v.link_off = 0;
  uint16_t ethertype = Read16(v, 12);
  uint32_t pos = kEthHeaderLen;
  while (ethertype == kEthVlan || ethertype == kEthQinQ) {
    if (!Has(v, pos, kVlanTagLen)) return v;
    ethertype = Read16(v, pos + 2);
    pos += kVlanTagLen;
  }
  v.protocol = ethertype;
  ParseNetwork(v, pos);
  return v;
}

PacketView ParseIp(const uint8_t* data, uint32_t len) {
  PacketView v;
  v.data = data;
  v.len = data == nullptr ? 0 : len;
  if (!Has(v, 0, 1)) return v;
  uint8_t version = data[0] >> 4;
  if (version != 4 && version != 6) return v;
  v.protocol = version == 4 ? kEthIpv4 : kEthIpv6;
  ParseNetwork(v, 0);
  return v;
}

}  // namespace rulejit::packet

// The public entry (rulejit/packet.h).
namespace rulejit {

PacketView ParseFrame(const uint8_t* data, uint32_t len) {
  return packet::ParseEthernet(data, len);
}

}  // namespace rulejit
