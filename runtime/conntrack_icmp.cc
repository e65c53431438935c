// ICMP and ICMPv6 classification; see conntrack_icmp.h. Rules from
// net/netfilter/nf_conntrack_proto_icmp.c and nf_conntrack_proto_icmpv6.c
// of Linux 6.18 (function names cited).
#include "runtime/conntrack_icmp.h"

namespace rulejit::runtime {
namespace {

constexpr uint8_t kNrIcmpTypes = 18;  // NR_ICMP_TYPES: the highest known type
constexpr uint8_t kNdRedirect = 137;

// icmp_is_err: destination unreachable, source quench, redirect, time
// exceeded, parameter problem.
bool Icmpv4IsError(uint8_t type) {
  return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

// noct_valid_new: MLD (130-132, 143), router and neighbour discovery
// (133-136), multicast router discovery (151, 152) are never tracked.
bool Icmpv6Untracked(uint8_t type) {
  return (type >= 130 && type <= 136) || type == 143 || type == 151 || type == 152;
}

// nf_conntrack_icmpv6_redirect: a redirect's quoted packet sits in its
// "redirected header" option, checked as the kernel checks it.
IcmpClass Redirect(const PacketView& pkt) {
  const uint64_t l4 = pkt.transport_off;
  const uint8_t* ip = pkt.data + pkt.network_off;
  if (l4 + 40 > pkt.len) return {};  // short redirect
  if (pkt.data[l4 + 1] != 0) return {.kind = IcmpClass::kQuery};
  const bool link_local = ip[8] == 0xfe && (ip[9] & 0xc0) == 0x80;
  if (ip[7] != 255 || !link_local) return {};
  const uint64_t opt = l4 + 40;
  if (opt + 2 > pkt.len || pkt.data[opt + 1] == 0) return {};  // no options
  if (pkt.data[opt] != 4) return {.kind = IcmpClass::kQuery};  // not ND_OPT_REDIRECT_HDR
  return {.kind = IcmpClass::kError, .quoted_off = static_cast<uint32_t>(opt + 8)};
}

}  // namespace

bool InvertIcmpType(bool v6, uint8_t type, uint8_t* inverted) {
  if (v6) {
    switch (type) {
      case 128: *inverted = 129; return true;
      case 129: *inverted = 128; return true;
      case 139: *inverted = 140; return true;
      case 140: *inverted = 139; return true;
      default: return false;
    }
  }
  switch (type) {
    case 8: *inverted = 0; return true;
    case 0: *inverted = 8; return true;
    case 13: case 15: case 17: *inverted = type + 1; return true;
    case 14: case 16: case 18: *inverted = type - 1; return true;
    default: return false;
  }
}

bool IcmpMayStart(bool v6, uint8_t type) {
  if (v6) return type == 128 || type == 139;
  return type == 8 || type == 13 || type == 15 || type == 17;
}

IcmpClass ClassifyIcmp(const PacketView& pkt, bool verify_checksum) {
  const bool v6 = pkt.nfproto == kNfProtoIpv6;
  const uint64_t l4 = pkt.transport_off;
  if (l4 == kAbsent || l4 + 8 > pkt.len) return {};  // short packet
  if (verify_checksum && !TransportChecksumValid(pkt)) return {};
  const uint8_t type = pkt.data[l4];
  const uint32_t quoted = static_cast<uint32_t>(l4 + 8);
  if (!v6) {
    if (type > kNrIcmpTypes) return {};
    if (!Icmpv4IsError(type)) return {.kind = IcmpClass::kQuery};
    return {.kind = IcmpClass::kError, .quoted_off = quoted};
  }
  if (Icmpv6Untracked(type)) return {.kind = IcmpClass::kUntracked};
  if (type == kNdRedirect) return Redirect(pkt);
  if (type >= 128) return {.kind = IcmpClass::kQuery};
  return {.kind = IcmpClass::kError, .quoted_off = quoted};
}

}  // namespace rulejit::runtime
