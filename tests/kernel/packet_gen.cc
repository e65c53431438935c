// Packets aimed at a generated ruleset's boundaries (see packet_gen.h). A
// packet is first built to satisfy every match of one rule, then, often, one
// of those matches is pushed to an edge (inside or just outside), so both
// sides of every boundary get exercised.
#include "tests/kernel/packet_gen.h"

#include <algorithm>

#include "tests/kernel/kernel_oracle.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rulejit::testing {
namespace {

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kGre = 47, kIcmp6 = 58;
constexpr int kMaxLength = 1500;  // veth MTU: IP total length

// The fields the rules look at; converted to a FrameSpec at the end.
struct Pkt {
  GenFamily family = GenFamily::kIpv4;
  GenAddr src = 0, dst = 0;
  uint8_t proto = kTcp;
  uint16_t sport = 1024, dport = 80;
  uint8_t flags = 0x02;
  uint8_t icmp_type = 8, icmp_code = 0;
  int length = 64;  // IP total length (IPv6: 40 + payload length)
  // IPv6 extension headers before the transport header (hop-by-hop,
  // destination options, routing, AH, and last a fragment header for
  // fragments).
  std::vector<uint8_t> ext_headers;
  // Non-first fragment (offset in 8-byte units; no L4 header: iptables'
  // port, flag and icmp matches never match it, negated or not; nft's read
  // the fragment's data where the header would be), or a first fragment.
  uint16_t frag_offset = 0;
  bool more_fragments = false;
};

int Uniform(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(std::mt19937& rng, double p) { return std::bernoulli_distribution(p)(rng); }

template <typename T>
T Pick(std::mt19937& rng, std::initializer_list<T> pool) {
  return *(pool.begin() + Uniform(rng, 0, static_cast<int>(pool.size()) - 1));
}


int L4HeaderLength(uint8_t proto) {
  switch (proto) {
    case kTcp: return 20;
    case kUdp: case kIcmp: case kIcmp6: return 8;
    default: return 0;
  }
}
int L4HeaderLength(const Pkt& p) { return p.frag_offset != 0 ? 0 : L4HeaderLength(p.proto); }
// IP header with its extension headers (frames.h: 8 bytes each).
int NetworkHeaderLength(const Pkt& p) {
  if (p.family == GenFamily::kIpv4) return 20;
  int length = 40;
  for (uint8_t type : p.ext_headers) length += type == 51 ? 16 : 8;  // AH: 16
  return length;
}
int MinLength(const Pkt& p) { return NetworkHeaderLength(p) + L4HeaderLength(p) + 4; }

uint8_t ProtoNumber(GenProto p, GenFamily family) {
  switch (p) {
    case GenProto::kTcp: return kTcp;
    case GenProto::kUdp: return kUdp;
    case GenProto::kIcmp: return family == GenFamily::kIpv4 ? kIcmp : kIcmp6;
  }
  return kGre;
}

uint8_t IcmpNumber(GenFamily family) { return family == GenFamily::kIpv4 ? kIcmp : kIcmp6; }

// ---------------------------------------------------------------- random

uint32_t RandomAddress4(std::mt19937& rng) {
  static const uint32_t kBases[] = {0x0a000000, 0xac100000, 0xc0a80000,
                                    0xc0000200, 0xc6336400, 0xcb007100};
  uint32_t base = kBases[Uniform(rng, 0, 5)];
  uint32_t host = static_cast<uint32_t>(Uniform(rng, 0, 0xffff));
  // Sometimes anywhere in the base's /8, to reach wide prefixes' outsides.
  if (Chance(rng, 0.3)) host = static_cast<uint32_t>(Uniform(rng, 0, 0xffffff));
  return (Chance(rng, 0.3) ? base & 0xff000000 : base) | host;
}

// Like the rule generator's IPv6 addresses (ruleset_gen.cc): a base's top 32
// bits, some random 16-bit groups; sometimes anywhere in the base's /16.
GenAddr RandomAddress6(std::mt19937& rng) {
  static const uint32_t kBases[] = {0x20010db8, 0xfd12abcd, 0x2a001450, 0x26001f18};
  GenAddr addr = static_cast<GenAddr>(kBases[Uniform(rng, 0, 3)]) << 96;
  for (int group = 0; group < 6; ++group) {
    if (Chance(rng, 0.5)) addr |= static_cast<GenAddr>(Uniform(rng, 0, 0xffff)) << (16 * group);
  }
  if (Chance(rng, 0.3)) {
    addr = addr >> 112 << 112 | static_cast<GenAddr>(Uniform(rng, 0, 0xffff)) << 96 |
           (addr & ((GenAddr{1} << 96) - 1));
  }
  return addr;
}

GenAddr RandomAddress(std::mt19937& rng, GenFamily family) {
  return family == GenFamily::kIpv4 ? RandomAddress4(rng) : RandomAddress6(rng);
}

// Extension header chains the kernel forwards untouched (a hop-by-hop
// header only first, as RFC 8200 requires; PadN options only), some with an
// AH header (nft's l4proto stops at it, ip6tables' -p walks over it).
std::vector<uint8_t> RandomExtHeaders(std::mt19937& rng) {
  switch (Uniform(rng, 0, 7)) {
    case 0: return {0};
    case 1: return {60};
    case 2: return {0, 60};
    case 3: return {43};
    case 4: return {51};
    case 5: return {0, 51};
    case 6: return {43, 51, 60};
    default: return {0, 43, 60};
  }
}

uint8_t RandomFlags(std::mt19937& rng) {
  if (Chance(rng, 0.25)) return static_cast<uint8_t>(Uniform(rng, 0, 255));
  return Pick<uint8_t>(rng, {0x02, 0x12, 0x10, 0x04, 0x14, 0x11, 0x18, 0x01, 0x00, 0x3f,
                             0x29, 0x03, 0x06, 0xc2});
}

Pkt RandomPacket(std::mt19937& rng, bool fragments, GenFamily family) {
  Pkt p;
  p.family = family;
  p.src = RandomAddress(rng, family);
  p.dst = RandomAddress(rng, family);
  int roll = Uniform(rng, 0, 99);
  p.proto = roll < 40 ? kTcp : roll < 70 ? kUdp : roll < 90 ? IcmpNumber(family) : kGre;
  p.sport = static_cast<uint16_t>(Uniform(rng, 0, 65535));
  p.dport = static_cast<uint16_t>(Chance(rng, 0.5) ? Uniform(rng, 0, 1100) : Uniform(rng, 0, 65535));
  p.flags = RandomFlags(rng);
  p.icmp_type = family == GenFamily::kIpv4
                    ? Pick<uint8_t>(rng, {0, 3, 5, 8, 11, 12, 13, 14, 9, 4})
                    : Pick<uint8_t>(rng, {1, 2, 3, 4, 128, 129, 130, 135, 136, 143});
  if (Chance(rng, 0.2)) p.icmp_type = static_cast<uint8_t>(Uniform(rng, 0, 255));
  p.icmp_code = static_cast<uint8_t>(Uniform(rng, 0, 4));
  const int min = family == GenFamily::kIpv4 ? 24 : 44;
  p.length = Chance(rng, 0.85) ? Uniform(rng, min, min + 140) : Uniform(rng, min, kMaxLength);
  if (family == GenFamily::kIpv6 && Chance(rng, 0.15)) p.ext_headers = RandomExtHeaders(rng);
  if (!fragments) {
    // No fragments.
  } else if (Chance(rng, 0.06)) {
    // Not offset 1 (8 bytes): iptables-legacy's tcp match drops such a TCP
    // fragment outright (hotdrop), which rulejit does not model.
    p.frag_offset = static_cast<uint16_t>(Uniform(rng, 2, 180));
    p.more_fragments = Chance(rng, 0.5);
  } else if (Chance(rng, 0.04)) {
    p.more_fragments = true;
  }
  // IPv6: the fragment header comes last, right before the transport header.
  if (family == GenFamily::kIpv6 && (p.frag_offset != 0 || p.more_fragments)) {
    p.ext_headers.push_back(44);
  }
  return p;
}

// ---------------------------------------------------------------- satisfying

// An address inside (or, with `outside`, just outside) the prefix; edges
// preferred.
GenAddr AddressFor(std::mt19937& rng, const GenAddrMatch& m, bool outside, GenFamily family) {
  const GenAddr all = PrefixMask(AddrBits(family), family);  // all ones of the width
  const GenAddr host = ~PrefixMask(m.prefix, family) & all;
  const GenAddr first = m.network, last = m.network | host;
  if (outside) return (Chance(rng, 0.5) ? first - 1 : last + 1) & all;
  switch (Uniform(rng, 0, 2)) {
    case 0: return first;
    case 1: return last;
    default: {
      const GenAddr bits = static_cast<GenAddr>(rng()) << 96 | static_cast<GenAddr>(rng()) << 64 |
                           static_cast<GenAddr>(rng()) << 32 | static_cast<GenAddr>(rng());
      return first | (bits & host);
    }
  }
}

bool InPorts(const GenPortMatch& m, int port) {
  for (const GenPortRange& r : m.ranges) {
    if (port >= r.lo && port <= r.hi) return true;
  }
  return false;
}

// A port the match's ranges contain (inside) or not (outside): their ends,
// or the ports just past them.
uint16_t PortFor(std::mt19937& rng, const GenPortMatch& m, bool inside) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const GenPortRange& r = m.ranges[static_cast<size_t>(Uniform(rng, 0, static_cast<int>(m.ranges.size()) - 1))];
    int port = inside ? Pick<int>(rng, {r.lo, r.hi, Uniform(rng, r.lo, r.hi)})
                      : Pick<int>(rng, {r.lo - 1, r.hi + 1, Uniform(rng, 0, 65535)});
    if (port >= 0 && port <= 65535 && InPorts(m, port) == inside) return static_cast<uint16_t>(port);
  }
  return m.ranges[0].lo;  // inside; an all-ports match has no outside
}

uint8_t FlagsFor(std::mt19937& rng, const GenTcpFlagsMatch& m, bool match) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    uint8_t flags = static_cast<uint8_t>(Uniform(rng, 0, 255));
    if (match) flags = static_cast<uint8_t>((flags & ~m.mask) | m.compare);
    if (((flags & m.mask) == m.compare) == match) return flags;
  }
  return static_cast<uint8_t>(m.compare ^ (match ? 0 : m.mask));
}

int LengthFor(std::mt19937& rng, const GenLengthMatch& m, bool inside) {
  if (inside) return Pick<int>(rng, {m.lo, m.hi, Uniform(rng, m.lo, m.hi)});
  return Chance(rng, 0.5) ? m.lo - 1 : m.hi + 1;
}

// Sets every field the rule looks at so the rule matches.
void Satisfy(std::mt19937& rng, const GenRule& r, Pkt& p) {
  if (r.src) p.src = AddressFor(rng, *r.src, r.src->negate, p.family);
  if (r.dst) p.dst = AddressFor(rng, *r.dst, r.dst->negate, p.family);
  if (r.proto) {
    const uint8_t proto = ProtoNumber(*r.proto, p.family);
    if (!r.proto_negate) {
      p.proto = proto;
    } else {
      do p.proto = Pick<uint8_t>(rng, {kTcp, kUdp, IcmpNumber(p.family), kGre}); while (p.proto == proto);
    }
  }
  for (const GenPortMatch& m : r.ports) {
    (m.destination ? p.dport : p.sport) = PortFor(rng, m, !m.negate);
  }
  if (r.tcp_flags) p.flags = FlagsFor(rng, *r.tcp_flags, !r.tcp_flags->negate);
  if (r.icmp) {
    if (!r.icmp->negate) {
      p.icmp_type = r.icmp->type;
      if (r.icmp->code) p.icmp_code = *r.icmp->code;
    } else {
      p.icmp_type = static_cast<uint8_t>(r.icmp->type + Pick<int>(rng, {1, 255, 5, 3}));
    }
  }
  if (r.length) p.length = LengthFor(rng, *r.length, !r.length->negate);
}

// Moves one of the rule's matches to an edge, on either side.
void Perturb(std::mt19937& rng, const GenRule& r, Pkt& p) {
  switch (Uniform(rng, 0, 6)) {
    case 0:
      if (r.src) p.src = AddressFor(rng, *r.src, Chance(rng, 0.5), p.family);
      break;
    case 1:
      if (r.dst) p.dst = AddressFor(rng, *r.dst, Chance(rng, 0.5), p.family);
      break;
    case 2:
      if (!r.ports.empty()) {
        const GenPortMatch& m = r.ports[static_cast<size_t>(Uniform(rng, 0, static_cast<int>(r.ports.size()) - 1))];
        (m.destination ? p.dport : p.sport) = PortFor(rng, m, Chance(rng, 0.5));
      }
      break;
    case 3:
      if (r.tcp_flags) p.flags ^= static_cast<uint8_t>(1 << Uniform(rng, 0, 7));
      break;
    case 4:
      if (r.icmp) {
        if (Chance(rng, 0.5)) p.icmp_type = static_cast<uint8_t>(p.icmp_type + Pick<int>(rng, {1, 255}));
        else p.icmp_code = static_cast<uint8_t>(p.icmp_code + Pick<int>(rng, {1, 255}));
      }
      break;
    case 5:
      if (r.length) p.length = LengthFor(rng, *r.length, Chance(rng, 0.5));
      break;
    default:
      if (r.proto) p.proto = Pick<uint8_t>(rng, {kTcp, kUdp, IcmpNumber(p.family), kGre});
      break;
  }
}

// Keeps the packet forwardable: safe addresses, length the frame can carry.
bool Forwardable(GenAddr a, GenFamily family) {
  return family == GenFamily::kIpv4 ? ForwardableIpv4(static_cast<uint32_t>(a))
                                    : ForwardableIpv6(a);
}

void MakeForwardable(std::mt19937& rng, Pkt& p) {
  while (!Forwardable(p.src, p.family)) p.src = RandomAddress(rng, p.family);
  while (!Forwardable(p.dst, p.family)) p.dst = RandomAddress(rng, p.family);
  p.length = std::clamp(p.length, MinLength(p), kMaxLength);
}

FrameSpec ToSpec(const Pkt& p, size_t index) {
  FrameSpec s;
  s.src = AddrText(p.src, p.family);
  s.dst = AddrText(p.dst, p.family);
  s.ext_headers = p.ext_headers;
  s.proto = p.proto;
  s.sport = p.sport;
  s.dport = p.dport;
  s.tcp_flags = p.flags;
  s.icmp_type = p.icmp_type;
  s.icmp_code = p.icmp_code;
  s.icmp_id = static_cast<uint16_t>(index);
  s.ip_id = static_cast<uint16_t>(index + 1);  // each frame its own datagram
  s.frag_offset = p.frag_offset;
  s.more_fragments = p.more_fragments;
  s.payload.assign(static_cast<size_t>(p.length - NetworkHeaderLength(p) - L4HeaderLength(p)), 0);
  for (size_t i = 4; i < s.payload.size(); ++i) s.payload[i] = static_cast<uint8_t>(i);
  return s;
}

// ---------------------------------------------------------------- steering

// A rough model of the ruleset, only to steer aimed packets past earlier
// rules (the kernel is the oracle, not this): which rules a packet reaches.
bool IfaceMatches(const GenIfaceMatch& m, const std::string& name) {
  const bool eq = m.wildcard ? name.compare(0, m.name.size(), m.name) == 0 : name == m.name;
  return eq != m.negate;
}

bool PortsMatch(const GenPortMatch& m, const Pkt& p) {
  return InPorts(m, m.destination ? p.dport : p.sport) != m.negate;
}

bool RuleMatches(const GenRule& r, const Pkt& p) {
  // A mixed ruleset's rule of the other family (roughly: its icmp matches
  // are ignored).
  if (r.family && *r.family != p.family && (r.src || r.dst || r.family_guard)) return false;
  auto in = [&p](const GenAddrMatch& m, GenAddr a) {
    return ((a & PrefixMask(m.prefix, p.family)) == m.network) != m.negate;
  };
  if (r.src && !in(*r.src, p.src)) return false;
  if (r.dst && !in(*r.dst, p.dst)) return false;
  if (r.iif && !IfaceMatches(*r.iif, kFwInputIf)) return false;
  if (r.oif && !IfaceMatches(*r.oif, kFwOutputIf)) return false;
  if (r.proto && (p.proto == ProtoNumber(*r.proto, p.family)) == r.proto_negate) return false;
  const bool l4 = !r.ports.empty() || r.tcp_flags || r.icmp;
  if (l4 && p.frag_offset != 0) return false;
  for (const GenPortMatch& m : r.ports) {
    if (!PortsMatch(m, p)) return false;
  }
  if (r.tcp_flags && ((p.flags & r.tcp_flags->mask) == r.tcp_flags->compare) == r.tcp_flags->negate) {
    return false;
  }
  if (r.icmp) {
    const bool eq = p.icmp_type == r.icmp->type && (!r.icmp->code || p.icmp_code == *r.icmp->code);
    if (eq == r.icmp->negate) return false;
  }
  if (r.length && (p.length >= r.length->lo && p.length <= r.length->hi) == r.length->negate) {
    return false;
  }
  return true;
}

enum class Flow { kContinue, kReturn, kFinal };

// Walks chain `c`, adding every rule the packet reaches to `reached`.
Flow Walk(const GenRuleset& rs, size_t c, const Pkt& p, std::vector<const GenRule*>& reached) {
  for (const GenRule& r : rs.chains[c].rules) {
    reached.push_back(&r);
    if (!RuleMatches(r, p)) continue;
    switch (r.verdict) {
      case GenVerdict::kAccept:
      case GenVerdict::kDrop: return Flow::kFinal;
      case GenVerdict::kReturn: return Flow::kReturn;
      case GenVerdict::kNone: break;
      case GenVerdict::kJump:
        if (Walk(rs, static_cast<size_t>(r.target), p, reached) == Flow::kFinal) return Flow::kFinal;
        break;
      case GenVerdict::kGoto:
        return Walk(rs, static_cast<size_t>(r.target), p, reached) == Flow::kFinal ? Flow::kFinal
                                                                                  : Flow::kReturn;
    }
  }
  return Flow::kContinue;
}

bool Reaches(const GenRuleset& rs, const GenRule& target, const Pkt& p) {
  std::vector<const GenRule*> reached;
  Walk(rs, 0, p, reached);
  return std::find(reached.begin(), reached.end(), &target) != reached.end();
}

// The rules a packet of `family` can be aimed at (a mixed ruleset's rules
// of that family).
std::vector<const GenRule*> RulesOf(const GenRuleset& rs, GenFamily family) {
  std::vector<const GenRule*> out;
  for (const GenChain& c : rs.chains) {
    for (const GenRule& r : c.rules) {
      if (r.family.value_or(rs.family) == family) out.push_back(&r);
    }
  }
  return out;
}

}  // namespace

bool ForwardableIpv4(uint32_t a) {
  const uint32_t top = a >> 24;
  if (top == 0 || top == 127 || top >= 224) return false;
  return (a & 0xffffff00) != 0xc6120000;  // 198.18.0.0/24: the harness's own
}

bool ForwardableIpv6(GenAddr a) {
  // ::, ::1, fe80::/10 (link-local), ff00::/8 (multicast): the kernel does
  // not forward them. ::ffff:0:0/96 (IPv4-mapped): left out to be safe.
  // The rest of ::/8 (IPv4-compatible ::a.b.c.d, reserved) and fec0::/10
  // (site-local) are forwarded (measured on Linux 6.18, kernel_txlate_test).
  if (a <= 1 || (a >> 120) == 0xff || (a >> 118) == (0xfe80 >> 6) || (a >> 32) == 0xffff) return false;
  return static_cast<uint64_t>(a >> 80) != 0x200100020000;  // 2001:2::/48: the harness's own
}

std::vector<FrameSpec> GeneratePackets(const GenRuleset& rs, std::mt19937& rng,
                                       const PacketGenOptions& options) {
  const std::vector<const GenRule*> rules_of[2] = {RulesOf(rs, GenFamily::kIpv4),
                                                   RulesOf(rs, GenFamily::kIpv6)};
  std::vector<FrameSpec> out;
  for (int i = 0; i < options.count; ++i) {
    // A mixed ruleset gets packets of both families, in random order.
    const GenFamily family = !rs.mixed ? rs.family
                             : Chance(rng, 0.5) ? GenFamily::kIpv4
                                                : GenFamily::kIpv6;
    const std::vector<const GenRule*>& rules = rules_of[family == GenFamily::kIpv6];
    Pkt p = RandomPacket(rng, options.fragments, family);
    if (!rules.empty() && Chance(rng, options.aimed)) {
      const GenRule& r = *rules[static_cast<size_t>(Uniform(rng, 0, static_cast<int>(rules.size()) - 1))];
      const bool perturb = Chance(rng, 0.6);
      // A few tries for a packet that gets past the earlier rules to r.
      for (int attempt = 0; attempt < 12; ++attempt) {
        p = RandomPacket(rng, options.fragments, family);
        Satisfy(rng, r, p);
        if (perturb) Perturb(rng, r, p);
        MakeForwardable(rng, p);
        if (Reaches(rs, r, p)) break;
      }
    }
    MakeForwardable(rng, p);
    out.push_back(ToSpec(p, out.size()));
  }
  return out;
}

std::vector<std::vector<uint8_t>> BuildFrames(const std::vector<FrameSpec>& specs) {
  std::vector<std::vector<uint8_t>> out;
  out.reserve(specs.size());
  for (const FrameSpec& s : specs) out.push_back(BuildFrame(s));
  return out;
}

std::string DescribePacket(const FrameSpec& s) {
  const size_t length = BuildFrame(s).size() - 14;  // IP total length
  if (s.frag_offset != 0) {
    return absl::StrFormat("proto %d %s > %s fragment offset %d%s len %d", s.proto, s.src, s.dst,
                           s.frag_offset * 8, s.more_fragments ? " MF" : "", length);
  }
  std::string mf = s.more_fragments ? " MF" : "";
  if (!s.ext_headers.empty()) {
    absl::StrAppend(&mf, " ext ", absl::StrJoin(s.ext_headers, ","));
  }
  switch (s.proto) {
    case kTcp:
      return absl::StrFormat("tcp %s:%d > %s:%d flags 0x%02x len %d%s", s.src, s.sport, s.dst,
                             s.dport, s.tcp_flags, length, mf);
    case kUdp:
      return absl::StrFormat("udp %s:%d > %s:%d len %d%s", s.src, s.sport, s.dst, s.dport, length, mf);
    case kIcmp:
    case kIcmp6:
      return absl::StrFormat("%s %s > %s type %d code %d len %d%s",
                             s.proto == kIcmp ? "icmp" : "icmpv6", s.src, s.dst, s.icmp_type,
                             s.icmp_code, length, mf);
    default:
      return absl::StrFormat("proto %d %s > %s len %d%s", s.proto, s.src, s.dst, length, mf);
  }
}

}  // namespace rulejit::testing
