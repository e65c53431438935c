// NAT bindings and packet rewriting (see nat.h for what is modelled).
#include "runtime/nat.h"

#include <algorithm>
#include <cstring>

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

uint32_t Rol(uint32_t v, int s) { return v << s | v >> (32 - s); }

// Bob Jenkins' lookup3 hashword, the kernel's jhash2.
uint32_t Jhash2(const uint32_t* k, uint32_t length, uint32_t initval) {
  uint32_t a, b, c;
  a = b = c = 0xdeadbeef + (length << 2) + initval;
  auto mix = [&] {
    a -= c; a ^= Rol(c, 4);  c += b;
    b -= a; b ^= Rol(a, 6);  a += c;
    c -= b; c ^= Rol(b, 8);  b += a;
    a -= c; a ^= Rol(c, 16); c += b;
    b -= a; b ^= Rol(a, 19); a += c;
    c -= b; c ^= Rol(b, 4);  b += a;
  };
  auto final = [&] {
    c ^= b; c -= Rol(b, 14);
    a ^= c; a -= Rol(c, 11);
    b ^= a; b -= Rol(a, 25);
    c ^= b; c -= Rol(b, 16);
    a ^= c; a -= Rol(c, 4);
    b ^= a; b -= Rol(a, 14);
    c ^= b; c -= Rol(b, 24);
  };
  while (length > 3) {
    a += k[0]; b += k[1]; c += k[2];
    mix();
    length -= 3;
    k += 3;
  }
  switch (length) {
    case 3: c += k[2]; [[fallthrough]];
    case 2: b += k[1]; [[fallthrough]];
    case 1: a += k[0]; final(); break;
    default: break;
  }
  return c;
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
bool Used(const Conntrack& ct, const Key& t) { return ct.ReplyTupleTaken(t.Reversed()); }

// nf_nat_l4proto_unique_tuple. True when the port came from the random
// draw (the kernel's choice is then another).
bool UniquePort(const Conntrack& ct, Key& t, Manip manip, const NatRange& range,
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
bool ReuseSourceMapping(const Conntrack& ct, const Key& orig, const NatRange& range,
                        Key& out) {
  for (size_t i = 0; i < ct.flows(); ++i) {
    if (!ct.Live(i)) continue;
    const Conntrack::Flow& f = ct.flow(i);
    const Key& t = f.tuple[0];
    if (t.family != orig.family || t.proto != orig.proto || t.src != orig.src ||
        t.sport != orig.sport) {
      continue;
    }
    Key candidate = f.tuple[1].Reversed();
    candidate.dst = orig.dst;
    candidate.dport = orig.dport;
    if (IsIcmp(orig.proto)) candidate.dport = candidate.sport;
    if (InRange(candidate, Manip::kSrc, range)) {
      out = candidate;
      return true;
    }
  }
  return false;
}

// get_unique_tuple. `drew`: the port came from the random draw.
Key UniqueTuple(const Conntrack& ct, const Key& orig, Manip manip, const NatRange& range,
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

}  // namespace

NatOutcome BindNat(const Conntrack& ct, Conntrack::Flow& flow, Manip manip,
                   const NatChange* change, const NatSite& site) {
  // What we've got looks like the inverse of the reply tuple.
  const Key current = flow.tuple[1].Reversed();
  NatRange range;
  if (change == nullptr) {
    // The null binding: this address, ports as the protocol decides.
    range.flags = kNatMapIps;
    range.min_addr = range.max_addr = manip == Manip::kSrc ? current.src : current.dst;
  } else {
    if (change->flags & kNatNetmap) return NatOutcome::kUnsupported;
    range = RangeOf(*change);
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
  const uint8_t* ip = frame.data() + view.network_off;
  const size_t declared = view.nfproto == kNfProtoIpv4 ? (ip[2] << 8 | ip[3])
                                                       : 40u + (ip[4] << 8 | ip[5]);
  const size_t end = std::min(frame.size(), view.network_off + declared);
  const size_t l4 = view.transport_off;
  if (end < l4 + 12) return;
  const uint32_t crc = SctpChecksum(frame.data() + l4, static_cast<uint32_t>(end - l4));
  for (int i = 0; i < 4; ++i) frame[l4 + 8 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

}  // namespace

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
