// nft_fib on the host model (rulejit/host.h, host/route_lookup.h).
//
//   type     IPv4: inet_dev_addr_type on the local table (AddrType4).
//            IPv6: __nft_fib6_eval_type: local when the address sits on
//            the asked device, then the output route's kind (anycast,
//            local, reject errors), then the address's own class.
//   oif(name) the device of the route towards the address (saddr: the
//            reverse path, as rpfilter), 0 / "" when there is none, when
//            the route is local, or when it does not use the asked device.
//
//   addrclass6 ip6tables' addrtype (xt_addrtype's match_type6): the
//            classes of the address as a mask (see ir::FibResult).
//
// Not modelled: `ip rule` policy routing (so `mark` changes nothing), TOS
// and flow-label routes, l3mdev (VRF) devices, early-demuxed sockets at
// input (nft_fib_can_skip's socket case: packets here have no socket at
// input).
#include "ir/fib_eval.h"

#include <algorithm>
#include <cstring>

#include "host/route_lookup.h"
#include "ir/expr_eval.h"

namespace rulejit::ir {
namespace {

constexpr uint8_t kPacketLoopback = 5;  // PACKET_LOOPBACK
constexpr uint8_t kIpprotoIcmpv6 = 58;

const HostModel& Loopback() {
  static const HostModel* host = new HostModel(LoopbackHost());
  return *host;
}

uint32_t InDev(const PacketMeta& meta) { return meta.has_iif ? meta.iif : 0; }
uint32_t OutDev(const PacketMeta& meta) { return meta.has_oif ? meta.oif : 0; }
// skb->dev: the input device on the way in, the output device on the way out.
uint32_t SkbDev(const PacketMeta& meta) { return meta.has_iif ? meta.iif : OutDev(meta); }

// The device the flags name: iif, oif, or none.
uint32_t FlagDev(const Fib& e, const PacketMeta& meta) {
  if (e.flags & kFibIif) return InDev(meta);
  if (e.flags & kFibOif) return OutDev(meta);
  return 0;
}

// nft_fib_store_result: the device's index or name, or with `present`
// whether there is one (a byte in a zeroed word).
void StoreDevice(const Fib& e, const HostModel& host, uint32_t dev, uint8_t* reg) {
  std::memset(reg, 0, FibResultLen(e));
  if (e.flags & kFibPresent) {
    reg[0] = dev != 0;
    return;
  }
  if (e.result == FibResult::kOif) {
    std::memcpy(reg, &dev, 4);
    return;
  }
  const HostInterface* i = host.FindInterface(dev);
  if (i != nullptr) std::memcpy(reg, i->name.data(), std::min<size_t>(i->name.size(), 15));
}

void StoreType(RouteType type, uint8_t* reg) {
  const uint32_t value = static_cast<uint32_t>(type);
  std::memcpy(reg, &value, 4);
}

// KERNEL: nft_fib_can_skip (Linux 6.15 on): at prerouting, ingress and
// input, a packet that came in on a loopback device (or as PACKET_LOOPBACK)
// takes its input device as the answer, without a lookup.
bool CanSkip(Hook hook, const PacketMeta& meta, const HostModel& host) {
  if (hook != Hook::kPrerouting && hook != Hook::kIngress && hook != Hook::kInput) return false;
  if (meta.pkttype == kPacketLoopback) return true;
  const HostInterface* in = host.FindInterface(InDev(meta));
  return in != nullptr && in->loopback;
}

bool IsErrorRoute(RouteType type) {
  return type == RouteType::kBlackhole || type == RouteType::kUnreachable ||
         type == RouteType::kProhibit || type == RouteType::kThrow;
}

uint32_t FirstDevice(const HostRoute& r) { return r.oifs.empty() ? 0 : r.oifs.front(); }

// The answer device of a route: its own, or `oif` when the route uses it.
uint32_t AnswerDevice(const HostRoute& r, uint32_t oif) {
  if (oif == 0) return FirstDevice(r);
  for (uint32_t dev : r.oifs) {
    if (dev == oif) return oif;
  }
  return 0;
}

// --- IPv4 ---------------------------------------------------------------

void Fib4Oif(const Fib& e, Hook hook, const uint8_t* iph, const PacketMeta& meta,
             const HostModel& host, uint8_t* reg) {
  const uint32_t oif = (e.flags & kFibOif) ? OutDev(meta) : (e.flags & kFibIif) ? InDev(meta) : 0;
  if (CanSkip(hook, meta, host)) return StoreDevice(e, host, InDev(meta), reg);
  const uint8_t* saddr = iph + 12;
  const uint8_t* daddr = iph + 16;
  const bool lbcast = daddr[0] == 255 && daddr[1] == 255 && daddr[2] == 255 && daddr[3] == 255;
  const bool local_mcast = daddr[0] == 224 && daddr[1] == 0 && daddr[2] == 0;
  // KERNEL: ipv4_is_zeronet is 0.0.0.0 alone (see host::AddrType4).
  const bool zero_saddr = saddr[0] == 0 && saddr[1] == 0 && saddr[2] == 0 && saddr[3] == 0;
  if (zero_saddr && (lbcast || local_mcast)) return StoreDevice(e, host, SkbDev(meta), reg);
  const HostRoute* r = host::LookupRoute(host, 4, (e.flags & kFibDaddr) ? daddr : saddr);
  if (r == nullptr || IsErrorRoute(r->type) || r->type == RouteType::kLocal) {
    return StoreDevice(e, host, 0, reg);
  }
  StoreDevice(e, host, AnswerDevice(*r, oif), reg);
}

// --- IPv6 ---------------------------------------------------------------

bool IsMulticast6(const uint8_t* a) { return a[0] == 0xff; }
bool IsLinkLocal6(const uint8_t* a) { return a[0] == 0xfe && (a[1] & 0xc0) == 0x80; }
bool IsAny6(const uint8_t* a) {
  static constexpr uint8_t kZero[16] = {};
  return std::memcmp(a, kZero, 16) == 0;
}
// ipv6_addr_type's IPV6_ADDR_UNICAST: all but multicast, :: and
// IPv4-mapped ::ffff:0:0/96.
bool IsUnicast6(const uint8_t* a) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return !IsMulticast6(a) && !IsAny6(a) && std::memcmp(a, kMapped, 12) != 0;
}

// ipv6_anycast_destination: an anycast route, or the subnet-router address
// (the prefix itself) of a direct route shorter than /127.
bool AnycastDestination(const HostRoute& r, const uint8_t* daddr) {
  if (r.type == RouteType::kAnycast) return true;
  return r.prefix_len < 127 && !r.gateway && std::memcmp(r.dst.data(), daddr, 16) == 0;
}

// The flow's destination and the device a link-local destination binds
// the lookup to (RT6_LOOKUP_F_IFACE), as nft_fib6_flowi_init.
struct Flow6 {
  const uint8_t* daddr;
  uint32_t only_dev;
};
Flow6 FlowOf(const Fib& e, const uint8_t* iph, uint32_t dev, const PacketMeta& meta) {
  Flow6 f{(e.flags & kFibDaddr) ? iph + 24 : iph + 8, 0};
  if (IsLinkLocal6(f.daddr)) f.only_dev = dev != 0 ? dev : SkbDev(meta);
  return f;
}

RouteType Fib6Type(const Fib& e, const uint8_t* iph, const PacketMeta& meta,
                   const HostModel& host) {
  const uint32_t dev = FlagDev(e, meta);
  const Flow6 flow = FlowOf(e, iph, dev, meta);
  RouteType ret = RouteType::kUnspec;
  if (dev != 0 && host::AddressOnDevice(host, 6, flow.daddr, dev)) ret = RouteType::kLocal;
  const HostRoute* r = host::LookupRoute(host, 6, flow.daddr, flow.only_dev);
  // KERNEL: no route is ip6_null_entry (-ENETUNREACH): unreachable; the
  // reject routes give their own type (-EINVAL blackhole, -EACCES prohibit).
  if (r == nullptr) return RouteType::kUnreachable;
  if (IsErrorRoute(r->type)) return r->type;
  if (AnycastDestination(*r, flow.daddr)) {
    ret = RouteType::kAnycast;
  } else if (dev == 0 && r->type == RouteType::kLocal) {
    ret = RouteType::kLocal;
  }
  if (ret != RouteType::kUnspec) return ret;
  if (IsMulticast6(flow.daddr)) return RouteType::kMulticast;
  return IsUnicast6(flow.daddr) ? RouteType::kUnicast : RouteType::kUnspec;
}

// 1 << RTN_*: the XT_ADDRTYPE_* bit of a route type.
uint32_t ClassBit(RouteType type) { return uint32_t{1} << static_cast<uint32_t>(type); }

// KERNEL: xt_addrtype's match_lookup_rt6: LOCAL when the address sits on
// the asked device; the output route towards it (bound to that device),
// UNREACHABLE when there is none or it is a reject route (its dst error;
// the LOCAL found before is lost then); LOCAL for a local route when no
// device was asked; ANYCAST as ipv6_anycast_destination says.
uint32_t LookupClasses6(const uint8_t* addr, uint32_t dev, const HostModel& host) {
  uint32_t ret = 0;
  if (dev != 0 && host::AddressOnDevice(host, 6, addr, dev)) ret = ClassBit(RouteType::kLocal);
  const HostRoute* r = host::LookupRoute(host, 6, addr, dev);
  if (r == nullptr || IsErrorRoute(r->type)) return ClassBit(RouteType::kUnreachable);
  if (dev == 0 && r->type == RouteType::kLocal) ret |= ClassBit(RouteType::kLocal);
  if (AnycastDestination(*r, addr)) ret |= ClassBit(RouteType::kAnycast);
  return ret;
}

// The classes match_type6 tests: ipv6_addr_type's MULTICAST, UNICAST and
// ANY (UNSPEC), and the route's. The kernel looks the route up only when
// the mask asks LOCAL, ANYCAST or UNREACHABLE; the bits it would find
// otherwise are masked away by the match, so computing them always is the
// same answer.
uint32_t XtAddrClasses6(const uint8_t* addr, uint32_t dev, const HostModel& host) {
  uint32_t classes = LookupClasses6(addr, dev, host);
  if (IsMulticast6(addr)) classes |= ClassBit(RouteType::kMulticast);
  if (IsUnicast6(addr)) classes |= ClassBit(RouteType::kUnicast);
  if (IsAny6(addr)) classes |= ClassBit(RouteType::kUnspec);
  return classes;
}

// KERNEL: nft_fib_v6_skip_icmpv6: ICMPv6 from :: to a link-local address
// (duplicate address detection) answers with the input device.
bool SkipIcmpv6(const PacketView& pkt, const uint8_t* iph) {
  return pkt.l4proto_valid && pkt.l4proto == kIpprotoIcmpv6 && IsAny6(iph + 8) &&
         IsLinkLocal6(iph + 24);
}

void Fib6Oif(const Fib& e, Hook hook, const PacketView& pkt, const uint8_t* iph,
             const PacketMeta& meta, const HostModel& host, uint8_t* reg) {
  if (CanSkip(hook, meta, host)) return StoreDevice(e, host, InDev(meta), reg);
  const uint32_t oif = FlagDev(e, meta);
  if (SkipIcmpv6(pkt, iph)) return StoreDevice(e, host, InDev(meta), reg);
  const Flow6 flow = FlowOf(e, iph, oif, meta);
  const HostRoute* r = host::LookupRoute(host, 6, flow.daddr, flow.only_dev);
  if (r == nullptr || IsErrorRoute(r->type) || r->type == RouteType::kLocal ||
      r->type == RouteType::kAnycast) {
    return StoreDevice(e, host, 0, reg);
  }
  StoreDevice(e, host, AnswerDevice(*r, oif), reg);
}

}  // namespace

const HostModel& DefaultHost() { return Loopback(); }

bool EvalFib(const Fib& e, Hook hook, const PacketView& pkt, const PacketMeta& meta,
             const HostModel& host, uint8_t* regs) {
  uint8_t* reg = RegBytes(regs, e.dreg, FibResultLen(e));
  const bool ipv4 = pkt.nfproto == kNfProtoIpv4;
  const uint32_t header = ipv4 ? 20 : 40;
  if (reg == nullptr || (!ipv4 && pkt.nfproto != kNfProtoIpv6) || pkt.network_off == kAbsent ||
      pkt.network_off > pkt.len || pkt.len - pkt.network_off < header) {
    return false;
  }
  const uint8_t* iph = pkt.data + pkt.network_off;
  if (e.result == FibResult::kXtAddrClass6) {
    if (ipv4) return false;
    const uint32_t classes =
        XtAddrClasses6((e.flags & kFibDaddr) ? iph + 24 : iph + 8, FlagDev(e, meta), host);
    std::memcpy(reg, &classes, 4);
    return true;
  }
  if (e.result == FibResult::kAddrType) {
    const uint32_t dev = FlagDev(e, meta);
    StoreType(ipv4 ? host::AddrType4(host, (e.flags & kFibDaddr) ? iph + 16 : iph + 12, dev)
                   : Fib6Type(e, iph, meta, host),
              reg);
    return true;
  }
  if (ipv4) {
    Fib4Oif(e, hook, iph, meta, host, reg);
  } else {
    Fib6Oif(e, hook, pkt, iph, meta, host, reg);
  }
  return true;
}

}  // namespace rulejit::ir
