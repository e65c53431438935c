// ipv6header_mt6 (see ipv6header_eval.h): the walk over the extension
// headers from the fixed header, within skb->len (the IPv6 packet as its
// payload length declares it).
#include "ir/ipv6header_eval.h"

#include <algorithm>

namespace rulejit::ir {
namespace {

constexpr uint8_t kHop = 0, kRouting = 43, kFragment = 44, kEsp = 50, kAh = 51, kNone = 59,
                  kDst = 60;

// nf_ip6_ext_hdr: the kinds the walk steps into (ESP and none end it).
bool IsExtension(uint8_t next) {
  return next == kHop || next == kRouting || next == kFragment || next == kEsp || next == kAh ||
         next == kNone || next == kDst;
}

uint8_t BitOf(uint8_t next) {
  switch (next) {
    case kHop: return kIpv6HdrHopOpts;
    case kRouting: return kIpv6HdrRouting;
    case kFragment: return kIpv6HdrFragment;
    case kAh: return kIpv6HdrAh;
    case kDst: return kIpv6HdrDstOpts;
    default: return 0;
  }
}

}  // namespace

std::optional<uint8_t> Ipv6HeaderBits(const PacketView& pkt) {
  if (pkt.nfproto != kNfProtoIpv6 || pkt.network_off == kAbsent ||
      uint64_t{pkt.network_off} + 40 > pkt.len) {
    return std::nullopt;
  }
  const uint8_t* ip = pkt.data + pkt.network_off;
  // skb->len: the packet as its header declares it, within the frame.
  const uint64_t skb_len =
      std::min<uint64_t>(IpDeclaredEnd(pkt.data, pkt.len, pkt.network_off, pkt.nfproto),
                         pkt.len) -
      pkt.network_off;
  uint8_t next = ip[6];
  uint64_t ptr = 40;
  int64_t len = static_cast<int64_t>(skb_len) - 40;
  uint8_t bits = 0;
  while (IsExtension(next)) {
    if (next == kNone) {
      bits |= kIpv6HdrNone;
      break;
    }
    if (len < 2) return std::nullopt;
    if (next == kEsp) {
      bits |= kIpv6HdrEsp;
      break;
    }
    // len >= 2 keeps the two bytes inside skb->len (the kernel's hotdrop
    // when they are not cannot happen here).
    const uint8_t* hp = ip + ptr;
    const uint32_t hdrlen = next == kFragment ? 8u
                            : next == kAh     ? (hp[1] + 2u) << 2  // ipv6_authlen
                                              : (hp[1] + 1u) << 3;  // ipv6_optlen
    bits |= BitOf(next);
    next = hp[0];
    len -= hdrlen;
    ptr += hdrlen;
    if (ptr > skb_len) break;
  }
  if (next != kNone && next != kEsp) bits |= kIpv6HdrProto;
  return bits;
}

bool EvalIpv6Header(const Ipv6HeaderMatch& e, const PacketView& pkt) {
  const std::optional<uint8_t> bits = Ipv6HeaderBits(pkt);
  if (!bits) return false;
  const uint8_t inv = e.invert ? 0xff : 0;
  if (e.soft) return ((*bits ^ e.flags ^ inv) & e.flags) == 0;
  return e.invert ? *bits != e.flags : *bits == e.flags;
}

}  // namespace rulejit::ir
