// NAT bindings and packet rewriting (see nat.h for what is modelled).
#include "runtime/nat.h"

#include <algorithm>
#include <cstring>

#include "rulejit/jhash.h"

namespace rulejit::runtime {
namespace {

using Key = Conntrack::Key;

constexpr uint8_t kIcmp = 1, kTcp = 6, kUdp = 17, kIcmpv6 = 58, kSctp = 132, kUdpLite = 136;

// The protocols whose ports NAT maps. Not DCCP: Linux 6.16 removed its
// tracker, and 6.18 rewrites a DCCP packet's addresses only (measured:
// ports and checksum kept).
bool HasPorts(uint8_t proto) {
  return proto == kTcp || proto == kUdp || proto == kUdpLite || proto == kSctp;
}
bool IsIcmp(uint8_t proto) { return proto == kIcmp || proto == kIcmpv6; }

// The range a NAT statement asked for, in host order where it is compared.
struct NatRange {
  uint32_t flags = 0;
  std::array<uint8_t, 16> min_addr{}, max_addr{};
  uint16_t min_port = 0, max_port = 0;
};

uint16_t Port(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 2 ? static_cast<uint16_t>(bytes[0] << 8 | bytes[1]) : 0;
}

NatRange RangeOf(const NatChange& change) {
  NatRange r;
  r.flags = change.flags;
  // nft_nat_init: the registers given are what the range maps.
  if (!change.addr_min.empty()) r.flags |= kNatMapIps;
  if (!change.proto_min.empty()) r.flags |= kNatProtoSpecified;
  std::copy_n(change.addr_min.begin(), std::min<size_t>(16, change.addr_min.size()),
              r.min_addr.begin());
  const std::vector<uint8_t>& max = change.addr_max.empty() ? change.addr_min : change.addr_max;
  std::copy_n(max.begin(), std::min<size_t>(16, max.size()), r.max_addr.begin());
  r.min_port = Port(change.proto_min);
  r.max_port = change.proto_max.empty() ? r.min_port : Port(change.proto_max);
  return r;
}

size_t AddrLen(const Key& k) { return k.family == kNfProtoIpv6 ? 16 : 4; }

// ---------------------------------------------------------------- address

// The first address of `family` on device `dev` (prefer one whose subnet
// holds `near`): inet_select_addr's choice for one device.
const HostAddress* DeviceAddress(const HostModel& host, uint32_t dev, uint8_t family,
                                 const uint8_t* near) {
  const HostInterface* iface = host.FindInterface(dev);
  if (iface == nullptr) return nullptr;
  const HostAddress* first = nullptr;
  for (const HostAddress& a : iface->addresses) {
    if (a.family != family) continue;
    // IPv6 link-local addresses are not a source for the world.
    if (family == 6 && a.addr[0] == 0xfe && (a.addr[1] & 0xc0) == 0x80) continue;
    if (first == nullptr) first = &a;
    bool in_subnet = true;
    for (int bit = 0; bit < a.prefix_len && in_subnet; ++bit) {
      const uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
      in_subnet = (a.addr[bit / 8] & mask) == (near[bit / 8] & mask);
    }
    if (in_subnet) return &a;
  }
  return first;
}

// The address's 32-bit words as the kernel's union nf_inet_addr holds them
// (network-order bytes read as host words).
void Words(const std::array<uint8_t, 16>& a, uint32_t w[4]) { std::memcpy(w, a.data(), 16); }
uint32_t HostOrder(uint32_t word) { return __builtin_bswap32(word); }

// find_best_ips_proto: the address of the range for this tuple.
void ChooseAddress(Key& tuple, Manip manip, const NatRange& range) {
  if (!(range.flags & kNatMapIps)) return;
  std::array<uint8_t, 16>& var = manip == Manip::kSrc ? tuple.src : tuple.dst;
  if (range.min_addr == range.max_addr) {
    var = range.min_addr;
    return;
  }
  const int max = tuple.family == kNfProtoIpv4 ? 0 : 3;
  uint32_t src[4], dst[4], mins[4], maxs[4], out[4];
  Words(tuple.src, src);
  Words(tuple.dst, dst);
  Words(range.min_addr, mins);
  Words(range.max_addr, maxs);
  const bool persistent = range.flags & kNatPersistent;
  uint32_t j = Jhash2(src, 4, persistent ? 0 : dst[max]);
  bool full_range = false;
  Words(var, out);
  for (int i = 0; i <= max; ++i) {
    uint32_t minip = 0, dist = ~0u;
    if (!full_range) {
      minip = HostOrder(mins[i]);
      dist = HostOrder(maxs[i]) - minip + 1;
    }
    out[i] = HostOrder(minip + static_cast<uint32_t>((uint64_t{j} * dist) >> 32));
    if (out[i] != maxs[i]) full_range = true;
    // The kernel reads tuple->dst after writing: for a destination manip
    // that is the word just chosen.
    const uint32_t dst_word = manip == Manip::kDst ? out[i] : dst[i];
    if (!persistent) j ^= dst_word;
  }
  std::memcpy(var.data(), out, 16);
}

// ---------------------------------------------------------------- ports

uint16_t& PortOf(Key& t, Manip manip) {
  // ICMP: the identifier is the same in both directions (src.u.icmp.id).
  if (IsIcmp(t.proto)) return t.sport;
  return manip == Manip::kSrc ? t.sport : t.dport;
}

bool AddressInRange(const Key& t, Manip manip, const NatRange& range) {
  if (!(range.flags & kNatMapIps)) return true;
  const std::array<uint8_t, 16>& a = manip == Manip::kSrc ? t.src : t.dst;
  const size_t n = AddrLen(t);
  return std::memcmp(a.data(), range.min_addr.data(), n) >= 0 &&
         std::memcmp(a.data(), range.max_addr.data(), n) <= 0;
}

bool PortInRange(const Key& t, Manip manip, const NatRange& range) {
  if (!HasPorts(t.proto) && !IsIcmp(t.proto)) return true;
  const uint16_t port = IsIcmp(t.proto) ? t.sport : manip == Manip::kSrc ? t.sport : t.dport;
  return port >= range.min_port && port <= range.max_port;
}

bool InRange(const Key& t, Manip manip, const NatRange& range) {
  return AddressInRange(t, manip, range) &&
         (!(range.flags & kNatProtoSpecified) || PortInRange(t, manip, range));
}

// nf_nat_used_tuple: another flow's tuple is this one's reply.
bool Used(const FlowTable& ct, const Key& t) { return ct.ReplyTupleTaken(t.Reversed()); }

// nf_nat_l4proto_unique_tuple. True when the port came from the random
// draw (the kernel's choice is then another).
bool UniquePort(const FlowTable& ct, Key& t, Manip manip, const NatRange& range,
                uint32_t random) {
  uint32_t min = 0, size = 0;
  const bool specified = range.flags & kNatProtoSpecified;
  if (IsIcmp(t.proto)) {
    min = specified ? range.min_port : 0;
    size = specified ? uint32_t{range.max_port} - range.min_port + 1 : 65536;
  } else if (HasPorts(t.proto)) {
    if (!specified) {
      if (manip == Manip::kDst) return false;  // a destination port is kept
      const uint16_t port = PortOf(t, manip);
      min = port < 512 ? 1 : port < 1024 ? 600 : 1024;
      size = (port < 512 ? 511 : port < 1024 ? 1023 : 65535) - min + 1;
    } else {
      const uint32_t lo = std::min(range.min_port, range.max_port);
      const uint32_t hi = std::max(range.min_port, range.max_port);
      min = lo;
      size = hi - lo + 1;
    }
  } else {
    return false;
  }
  uint16_t& port = PortOf(t, manip);
  uint16_t off = (range.flags & kNatProtoOffset) ? static_cast<uint16_t>(port - min)
                                                 : static_cast<uint16_t>(random);
  const bool drew = !(range.flags & kNatProtoOffset) && size > 1;
  uint32_t attempts = std::min<uint32_t>(size, 128);
  for (;;) {
    for (uint32_t i = 0; i < attempts; ++i, ++off) {
      port = static_cast<uint16_t>(min + off % size);
      if (!Used(ct, t)) return drew;
    }
    if (attempts >= size || attempts < 16) return drew;
    attempts /= 2;
    off = static_cast<uint16_t>(random >> 16);  // the next draw
  }
}

// find_appropriate_src: another flow from the same source, mapped into the
// range, lends its mapping.
bool ReuseSourceMapping(const FlowTable& ct, const Key& orig, const NatRange& range,
                        Key& out) {
  bool found = false;
  ct.ForEachLiveFlow([&](const Conntrack::Flow& f) {
    const Key& t = f.tuple[0];
    if (t.family != orig.family || t.proto != orig.proto || t.src != orig.src ||
        t.sport != orig.sport) {
      return false;
    }
    Key candidate = f.tuple[1].Reversed();
    candidate.dst = orig.dst;
    candidate.dport = orig.dport;
    if (IsIcmp(orig.proto)) candidate.dport = candidate.sport;
    if (!InRange(candidate, Manip::kSrc, range)) return false;
    out = candidate;
    found = true;
    return true;
  });
  return found;
}

// get_unique_tuple. `drew`: the port came from the random draw.
Key UniqueTuple(const FlowTable& ct, const Key& orig, Manip manip, const NatRange& range,
                uint32_t random, bool* drew) {
  *drew = false;
  const bool random_all = range.flags & (kNatProtoRandom | kNatProtoRandomFully);
  if (manip == Manip::kSrc && !random_all) {
    if (InRange(orig, manip, range)) {
      if (!Used(ct, orig)) return orig;
    } else if (Key reused; ReuseSourceMapping(ct, orig, range, reused)) {
      if (!Used(ct, reused)) return reused;
    }
  }
  Key t = orig;
  ChooseAddress(t, manip, range);
  if (!random_all) {
    if (range.flags & kNatProtoSpecified) {
      if (!(range.flags & kNatProtoOffset) && PortInRange(t, manip, range) &&
          (range.min_port == range.max_port || !Used(ct, t))) {
        return t;
      }
    } else if (!Used(ct, t)) {
      return t;
    }
  }
  *drew = UniquePort(ct, t, manip, range, random);
  if (IsIcmp(t.proto)) t.dport = t.sport;
  return t;
}

// Masquerade and redirect: the statement's range with the address the
// device gives. False when the device has none (the kernel drops).
bool DeviceRange(const Conntrack::Flow& flow, const NatChange& change, const NatSite& site,
                 NatRange& range) {
  const Key& orig = flow.tuple[0];
  const uint8_t family = orig.family == kNfProtoIpv6 ? 6 : 4;
  std::array<uint8_t, 16> addr{};
  if (change.kind == NatKind::kRedir && site.local_out) {
    if (family == 4) addr = {127, 0, 0, 1};
    else addr[15] = 1;
  } else {
    const bool masq = change.kind == NatKind::kMasq;
    const HostAddress* a = DeviceAddress(*site.host, masq ? site.oif : site.iif, family,
                                         masq ? flow.tuple[1].src.data() : orig.dst.data());
    if (a == nullptr) return false;
    addr = a->addr;
  }
  range.flags |= kNatMapIps;
  range.min_addr = range.max_addr = addr;
  return true;
}

// A prefix mapping (xt_NETMAP's netmap_tg4/6, nft_nat_setup_netmap): the
// address keeps its host part and takes the range's network part, where
// the network bits are those min and max share; the range becomes that one
// address.
void NetmapRange(const Key& current, Manip manip, NatRange& range) {
  std::array<uint8_t, 16> addr = manip == Manip::kSrc ? current.src : current.dst;
  for (size_t i = 0; i < AddrLen(current); ++i) {
    const uint8_t net = static_cast<uint8_t>(~(range.min_addr[i] ^ range.max_addr[i]));
    addr[i] = static_cast<uint8_t>((addr[i] & ~net) | (range.min_addr[i] & net));
  }
  range.flags |= kNatMapIps;
  range.min_addr = range.max_addr = addr;
}

}  // namespace

NatOutcome BindNat(const FlowTable& ct, Conntrack::Flow& flow, Manip manip,
                   const NatChange* change, const NatSite& site) {
  // What we've got looks like the inverse of the reply tuple.
  const Key current = flow.tuple[1].Reversed();
  NatRange range;
  if (change == nullptr) {
    // The null binding: this address, ports as the protocol decides.
    range.flags = kNatMapIps;
    range.min_addr = range.max_addr = manip == Manip::kSrc ? current.src : current.dst;
  } else {
    range = RangeOf(*change);
    if (change->flags & kNatNetmap) NetmapRange(current, manip, range);
    if ((change->kind == NatKind::kMasq || change->kind == NatKind::kRedir) &&
        !DeviceRange(flow, *change, site, range)) {
      return NatOutcome::kDrop;
    }
  }
  bool drew = false;
  const Key chosen = UniqueTuple(ct, current, manip, range, site.random, &drew);
  if (!(chosen == current)) {
    flow.tuple[1] = chosen.Reversed();
    flow.nat_status |= manip == Manip::kSrc ? kIpsSrcNat : kIpsDstNat;
  }
  flow.nat_done[static_cast<int>(manip)] = true;
  return drew ? NatOutcome::kBoundRandomPort : NatOutcome::kBound;
}

// ---------------------------------------------------------------- rewrite

namespace {

uint16_t Load16(const std::vector<uint8_t>& f, size_t off) {
  return static_cast<uint16_t>(f[off] << 8 | f[off + 1]);
}
void Store16(std::vector<uint8_t>& f, size_t off, uint16_t v) {
  f[off] = static_cast<uint8_t>(v >> 8);
  f[off + 1] = static_cast<uint8_t>(v);
}

// RFC 1624: HC' = ~(~HC + ~m + m'), over 16-bit words.
uint16_t CsumReplace(uint16_t check, const uint8_t* from, const uint8_t* to, size_t len) {
  uint32_t sum = static_cast<uint16_t>(~check);
  for (size_t i = 0; i < len; i += 2) {
    sum += static_cast<uint16_t>(~(from[i] << 8 | from[i + 1]));
    sum += static_cast<uint16_t>(to[i] << 8 | to[i + 1]);
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Where the L4 checksum of `view`'s packet is, if it has one whose
// pseudo-header (addresses) or header (ports) a rewrite must follow.
struct L4Csum {
  size_t off = 0;
  bool present = false;
  bool pseudo = false;  // covers the addresses
  bool udp = false;     // 0 means "none" (IPv4 UDP), and 0 is written 0xffff
};

L4Csum CsumOf(const PacketView& v, const std::vector<uint8_t>& f) {
  L4Csum c;
  if (v.transport_off == kAbsent) return c;
  const size_t l4 = v.transport_off;
  switch (v.l4proto) {
    case kTcp: c.off = l4 + 16; c.pseudo = true; break;
    case kUdp: case kUdpLite: c.off = l4 + 6; c.pseudo = true; c.udp = v.l4proto == kUdp; break;
    case kIcmp: c.off = l4 + 2; break;
    case kIcmpv6: c.off = l4 + 2; c.pseudo = true; break;
    default: return c;  // SCTP: its CRC32c is computed anew (RewriteSctpChecksum)
  }
  // A header cut short (a first fragment of 8 bytes): ports only.
  c.present = c.off + 2 <= f.size();
  if (c.present && c.udp && v.nfproto == kNfProtoIpv4 && Load16(f, c.off) == 0) c.present = false;
  return c;
}

void UpdateL4(std::vector<uint8_t>& f, const L4Csum& c, const uint8_t* from, const uint8_t* to,
              size_t len) {
  if (!c.present) return;
  uint16_t v = CsumReplace(Load16(f, c.off), from, to, len);
  if (c.udp && v == 0) v = 0xffff;  // CSUM_MANGLED_0
  Store16(f, c.off, v);
}

bool WriteAddress(std::vector<uint8_t>& f, const PacketView& v, bool source,
                  const std::array<uint8_t, 16>& addr, const L4Csum& c) {
  const bool v6 = v.nfproto == kNfProtoIpv6;
  const size_t len = v6 ? 16 : 4;
  const size_t off = v.network_off + (v6 ? 8 : 12) + (source ? 0 : len);
  if (off + len > f.size() || std::memcmp(&f[off], addr.data(), len) == 0) return false;
  uint8_t before[16];
  std::memcpy(before, &f[off], len);
  std::memcpy(&f[off], addr.data(), len);
  if (!v6) Store16(f, v.network_off + 10, CsumReplace(Load16(f, v.network_off + 10), before, addr.data(), 4));
  if (c.pseudo) UpdateL4(f, c, before, addr.data(), len);
  return true;
}

bool WritePort(std::vector<uint8_t>& f, const PacketView& v, size_t off, uint16_t port,
               const L4Csum& c) {
  if (off + 2 > f.size() || Load16(f, off) == port) return false;
  const uint8_t before[2] = {f[off], f[off + 1]};
  Store16(f, off, port);
  UpdateL4(f, c, before, &f[off], 2);
  return true;
}

// sctp_manip_pkt: a new port means a new CRC32c over the whole packet
// (the checksum does not cover the addresses).
void RewriteSctpChecksum(std::vector<uint8_t>& frame, const PacketView& view) {
  const size_t end = std::min<uint64_t>(
      frame.size(), IpDeclaredEnd(frame.data(), frame.size(), view.network_off, view.nfproto));
  const size_t l4 = view.transport_off;
  if (end < l4 + 12) return;
  const uint32_t crc = SctpChecksum(frame.data() + l4, static_cast<uint32_t>(end - l4));
  for (int i = 0; i < 4; ++i) frame[l4 + 8 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

// ---------------------------------------------------------------- ICMP errors

// The Internet checksum of the ICMP message at `icmp` (`len` bytes) as it
// stands, its checksum field included; ICMPv6's covers the pseudo-header
// of the IPv6 header at `ip`. A correct message's is 0.
uint16_t IcmpChecksum(const std::vector<uint8_t>& f, size_t ip, size_t icmp, size_t len,
                      bool v6) {
  uint64_t sum = 0;
  auto add = [&](size_t from, size_t n) {
    for (size_t i = 0; i < n; i += 2) {
      sum += static_cast<uint32_t>(f[from + i] << 8) + (i + 1 < n ? f[from + i + 1] : 0u);
    }
  };
  add(icmp, len);
  if (v6) {
    add(ip + 8, 32);  // source and destination
    sum += len + kIcmpv6;
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// An IP packet inside a frame: headers found from `ip` to `end`.
struct Inner {
  size_t ip = 0, l4 = 0, end = 0;
  bool v6 = false;
  bool l4_present = false;  // the first fragment (ipv6_skip_exthdr found it)
  uint8_t proto = 0;
};

// ipv6_skip_exthdr: hop-by-hop, routing, destination options and fragment
// headers skipped; false when they run past `end` (the address alone is
// then rewritten).
bool SkipExtensions(const std::vector<uint8_t>& f, Inner& in) {
  for (;;) {
    const uint8_t next = in.proto;
    if (next != 0 && next != 43 && next != 60 && next != 44) return true;
    if (in.l4 + 8 > in.end) return false;
    if (next == 44) {
      if ((Load16(f, in.l4 + 2) & 0xfff8) != 0) in.l4_present = false;  // not the first
      in.proto = f[in.l4];
      in.l4 += 8;
    } else {
      in.proto = f[in.l4];
      in.l4 += (f[in.l4 + 1] + 1u) * 8;
    }
  }
}

// The IP header at `ip` of `family`, the packet ending at `end`.
bool ParseInner(const std::vector<uint8_t>& f, size_t ip, size_t end, bool v6, Inner& in) {
  in = Inner{.ip = ip, .end = end, .v6 = v6, .l4_present = true};
  if (ip + (v6 ? 40 : 20) > end) return false;
  if (v6) {
    in.proto = f[ip + 6];
    in.l4 = ip + 40;
    if (!SkipExtensions(f, in)) in.l4_present = false;
    return true;
  }
  in.proto = f[ip + 9];
  in.l4 = ip + (f[ip] & 0x0f) * 4u;
  return in.l4 <= end;
}

// A UDP checksum of 0 means none: a result of 0 is sent as 0xffff.
void MangleZero(std::vector<uint8_t>& f, size_t off) {
  if (Load16(f, off) == 0) Store16(f, off, 0xffff);
}

// nf_nat_ipv4_manip_pkt / nf_nat_ipv6_manip_pkt on the quoted packet:
// makes its `manip` side look like `target`'s (l4proto_manip_pkt, then
// the address). The L4 checksum is followed where the quote holds it.
bool ManipQuoted(std::vector<uint8_t>& f, const Inner& in, const Key& target, Manip manip) {
  const bool src = manip == Manip::kSrc;
  const size_t alen = in.v6 ? 16 : 4;
  const size_t addr_off = in.ip + (in.v6 ? 8 : 12) + (src ? 0 : alen);
  const uint8_t* new_addr = (src ? target.src : target.dst).data();
  if (in.l4_present) {
    const size_t l4 = in.l4;
    L4Csum c;
    size_t port_off = 0;
    bool port = false;
    switch (target.proto) {
      case kTcp:
        if (l4 + 8 > in.end) return false;
        // The checksum only when the quote holds the whole header.
        c = {.off = l4 + 16, .present = in.end >= l4 + 20, .pseudo = true};
        port_off = src ? l4 : l4 + 2;
        port = true;
        break;
      case kUdp:
      case kUdpLite:
        if (l4 + 8 > in.end) return false;
        c = {.off = l4 + 6, .present = target.proto == kUdpLite || Load16(f, l4 + 6) != 0,
             .pseudo = true};
        port_off = src ? l4 : l4 + 2;
        port = true;
        break;
      case kSctp:
        if (l4 + 8 > in.end) return false;
        port_off = src ? l4 : l4 + 2;
        port = true;
        break;
      case kIcmp:
      case kIcmpv6: {
        if (l4 + 8 > in.end) return false;
        c = {.off = l4 + 2, .present = true, .pseudo = target.proto == kIcmpv6};
        const uint8_t type = f[l4];
        // Echo, timestamp, information and address-mask messages carry an id.
        const bool echo = target.proto == kIcmp
                              ? type == 0 || type == 8 || (type >= 13 && type <= 18)
                              : type == 128 || type == 129;
        if (echo) {
          port_off = l4 + 4;
          port = true;
        }
        break;
      }
      default: break;  // other protocols: the address only
    }
    if (c.present && c.pseudo) UpdateL4(f, c, &f[addr_off], new_addr, alen);
    const uint16_t new_port = IsIcmp(target.proto) || src ? target.sport : target.dport;
    if (port && Load16(f, port_off) != new_port) {
      const uint8_t before[2] = {f[port_off], f[port_off + 1]};
      Store16(f, port_off, new_port);
      if (c.present) UpdateL4(f, c, before, &f[port_off], 2);
    }
    if (c.present && (target.proto == kUdp || target.proto == kUdpLite)) MangleZero(f, c.off);
    if (port && target.proto == kSctp && in.end >= l4 + 12) {
      // sctp_manip_pkt: the CRC32c anew over what the quote holds.
      const uint32_t crc = SctpChecksum(f.data() + l4, static_cast<uint32_t>(in.end - l4));
      for (int i = 0; i < 4; ++i) f[l4 + 8 + i] = static_cast<uint8_t>(crc >> (8 * i));
    }
  }
  if (!in.v6) Store16(f, in.ip + 10, CsumReplace(Load16(f, in.ip + 10), &f[addr_off], new_addr, 4));
  std::memcpy(&f[addr_off], new_addr, alen);
  return true;
}

}  // namespace

bool TranslateIcmpError(const Conntrack::Flow& flow, bool reply, Manip manip,
                        std::vector<uint8_t>& frame, const PacketView& view, bool verify_checksum) {
  if (view.network_off == kAbsent || view.transport_off == kAbsent) return true;
  const bool v6 = view.nfproto == kNfProtoIpv6;
  const size_t end = std::min<uint64_t>(
      frame.size(), IpDeclaredEnd(frame.data(), frame.size(), view.network_off, view.nfproto));
  const size_t icmp = view.transport_off;
  // skb_ensure_writable(hdrlen + sizeof(icmp header + quoted IP header)).
  if (icmp + 8 + (v6 ? 40 : 20) > end) return false;
  const size_t icmp_len = end - icmp;
  // nf_ip_checksum / nf_ip6_checksum
  if (verify_checksum && IcmpChecksum(frame, view.network_off, icmp, icmp_len, v6) != 0) {
    return false;
  }
  const bool nat_both = flow.nat_done[0] && flow.nat_done[1];
  if (frame[icmp] == (v6 ? 137 : 5) &&  // a redirect
      (!nat_both || (flow.nat_status & (kIpsSrcNat | kIpsDstNat)) != 0)) {
    return false;
  }
  uint32_t status_bit = manip == Manip::kSrc ? kIpsSrcNat : kIpsDstNat;
  if (reply) status_bit ^= kIpsSrcNat | kIpsDstNat;
  if (!(flow.nat_status & status_bit)) return true;

  // The quoted packet travelled the other way: it gets the other manip,
  // aimed at the other direction's tuple itself.
  const Key& other = flow.tuple[reply ? 0 : 1];
  Inner quoted;
  if (!ParseInner(frame, icmp + 8, end, v6, quoted)) return false;
  if (!ManipQuoted(frame, quoted, other, manip == Manip::kSrc ? Manip::kDst : Manip::kSrc)) {
    return false;
  }
  // The ICMP checksum anew (with the outer addresses as they still are).
  Store16(frame, icmp + 2, 0);
  Store16(frame, icmp + 2, IcmpChecksum(frame, view.network_off, icmp, icmp_len, v6));
  // The outer header as the flow's packets of this direction are rewritten:
  // like the inverse of the other direction's tuple (ICMPv6's checksum
  // covers the addresses).
  const L4Csum outer_csum{.off = icmp + 2, .present = v6, .pseudo = true};
  WriteAddress(frame, view, manip == Manip::kSrc, manip == Manip::kSrc ? other.dst : other.src,
               outer_csum);
  return true;
}

bool TranslatePacket(const Conntrack::Flow& flow, bool reply, Manip manip,
                     std::vector<uint8_t>& frame, const PacketView& view) {
  uint32_t status_bit = manip == Manip::kSrc ? kIpsSrcNat : kIpsDstNat;
  if (reply) status_bit ^= kIpsSrcNat | kIpsDstNat;
  if (!(flow.nat_status & status_bit) || view.network_off == kAbsent) return false;
  // The packet must look like the inverse of the other direction's tuple.
  const Key target = flow.tuple[reply ? 0 : 1].Reversed();
  const L4Csum csum = CsumOf(view, frame);
  bool changed = false;
  if (view.transport_off != kAbsent) {
    const size_t l4 = view.transport_off;
    if (HasPorts(view.l4proto)) {
      const bool port = manip == Manip::kSrc ? WritePort(frame, view, l4, target.sport, csum)
                                             : WritePort(frame, view, l4 + 2, target.dport, csum);
      if (port && view.l4proto == kSctp) RewriteSctpChecksum(frame, view);
      changed |= port;
    } else if (IsIcmp(view.l4proto)) {
      changed |= WritePort(frame, view, l4 + 4, target.sport, csum);
    }
  }
  changed |= manip == Manip::kSrc ? WriteAddress(frame, view, true, target.src, csum)
                                  : WriteAddress(frame, view, false, target.dst, csum);
  return changed;
}

}  // namespace rulejit::runtime
