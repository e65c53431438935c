// Packets aimed at a generated ruleset's boundaries (see packet_gen.h). A
// packet is first built to satisfy every match of one rule, then, often, one
// of those matches is pushed to an edge (inside or just outside), so both
// sides of every boundary get exercised.
#include "tests/kernel/packet_gen.h"

#include <algorithm>

#include "tests/kernel/kernel_oracle.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rulejit::testing {
namespace {

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kGre = 47;
constexpr int kMaxLength = 1500;  // veth MTU: IPv4 total length

// The fields the rules look at; converted to a FrameSpec at the end.
struct Pkt {
  uint32_t src = 0, dst = 0;
  uint8_t proto = kTcp;
  uint16_t sport = 1024, dport = 80;
  uint8_t flags = 0x02;
  uint8_t icmp_type = 8, icmp_code = 0;
  int length = 64;  // IPv4 total length
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

uint32_t Mask(int prefix) { return prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix); }

int L4HeaderLength(uint8_t proto) {
  switch (proto) {
    case kTcp: return 20;
    case kUdp: case kIcmp: return 8;
    default: return 0;
  }
}
int L4HeaderLength(const Pkt& p) { return p.frag_offset != 0 ? 0 : L4HeaderLength(p.proto); }
int MinLength(const Pkt& p) { return 20 + L4HeaderLength(p) + 4; }

uint8_t ProtoNumber(GenProto p) {
  switch (p) {
    case GenProto::kTcp: return kTcp;
    case GenProto::kUdp: return kUdp;
    case GenProto::kIcmp: return kIcmp;
  }
  return kGre;
}

// ---------------------------------------------------------------- random

uint32_t RandomAddress(std::mt19937& rng) {
  static const uint32_t kBases[] = {0x0a000000, 0xac100000, 0xc0a80000,
                                    0xc0000200, 0xc6336400, 0xcb007100};
  uint32_t base = kBases[Uniform(rng, 0, 5)];
  uint32_t host = static_cast<uint32_t>(Uniform(rng, 0, 0xffff));
  // Sometimes anywhere in the base's /8, to reach wide prefixes' outsides.
  if (Chance(rng, 0.3)) host = static_cast<uint32_t>(Uniform(rng, 0, 0xffffff));
  return (Chance(rng, 0.3) ? base & 0xff000000 : base) | host;
}

uint8_t RandomFlags(std::mt19937& rng) {
  if (Chance(rng, 0.25)) return static_cast<uint8_t>(Uniform(rng, 0, 255));
  return Pick<uint8_t>(rng, {0x02, 0x12, 0x10, 0x04, 0x14, 0x11, 0x18, 0x01, 0x00, 0x3f,
                             0x29, 0x03, 0x06, 0xc2});
}

Pkt RandomPacket(std::mt19937& rng, bool fragments) {
  Pkt p;
  p.src = RandomAddress(rng);
  p.dst = RandomAddress(rng);
  int roll = Uniform(rng, 0, 99);
  p.proto = roll < 40 ? kTcp : roll < 70 ? kUdp : roll < 90 ? kIcmp : kGre;
  p.sport = static_cast<uint16_t>(Uniform(rng, 0, 65535));
  p.dport = static_cast<uint16_t>(Chance(rng, 0.5) ? Uniform(rng, 0, 1100) : Uniform(rng, 0, 65535));
  p.flags = RandomFlags(rng);
  p.icmp_type = Pick<uint8_t>(rng, {0, 3, 5, 8, 11, 12, 13, 14, 9, 4});
  if (Chance(rng, 0.2)) p.icmp_type = static_cast<uint8_t>(Uniform(rng, 0, 255));
  p.icmp_code = static_cast<uint8_t>(Uniform(rng, 0, 4));
  p.length = Chance(rng, 0.85) ? Uniform(rng, 24, 160) : Uniform(rng, 24, kMaxLength);
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
  return p;
}

// ---------------------------------------------------------------- satisfying

// An address inside (or, with `outside`, just outside) the prefix; edges
// preferred.
uint32_t AddressFor(std::mt19937& rng, const GenAddrMatch& m, bool outside) {
  const uint32_t first = m.network, last = m.network | ~Mask(m.prefix);
  if (outside) return Chance(rng, 0.5) ? first - 1 : last + 1;
  switch (Uniform(rng, 0, 2)) {
    case 0: return first;
    case 1: return last;
    default: return first + static_cast<uint32_t>(Uniform(rng, 0, static_cast<int>(~Mask(m.prefix) & 0x7fffffff)));
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
  if (r.src) p.src = AddressFor(rng, *r.src, r.src->negate);
  if (r.dst) p.dst = AddressFor(rng, *r.dst, r.dst->negate);
  if (r.proto) {
    const uint8_t proto = ProtoNumber(*r.proto);
    if (!r.proto_negate) {
      p.proto = proto;
    } else {
      do p.proto = Pick<uint8_t>(rng, {kTcp, kUdp, kIcmp, kGre}); while (p.proto == proto);
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
      if (r.src) p.src = AddressFor(rng, *r.src, Chance(rng, 0.5));
      break;
    case 1:
      if (r.dst) p.dst = AddressFor(rng, *r.dst, Chance(rng, 0.5));
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
      if (r.proto) p.proto = Pick<uint8_t>(rng, {kTcp, kUdp, kIcmp, kGre});
      break;
  }
}

// Keeps the packet forwardable: safe addresses, length the frame can carry.
void MakeForwardable(std::mt19937& rng, Pkt& p) {
  while (!ForwardableIpv4(p.src)) p.src = RandomAddress(rng);
  while (!ForwardableIpv4(p.dst)) p.dst = RandomAddress(rng);
  p.length = std::clamp(p.length, MinLength(p), kMaxLength);
}

FrameSpec ToSpec(const Pkt& p, size_t index) {
  FrameSpec s;
  s.src = Ipv4Text(p.src);
  s.dst = Ipv4Text(p.dst);
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
  s.payload.assign(static_cast<size_t>(p.length - 20 - L4HeaderLength(p)), 0);
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
  auto in = [](const GenAddrMatch& m, uint32_t a) {
    return ((a & Mask(m.prefix)) == m.network) != m.negate;
  };
  if (r.src && !in(*r.src, p.src)) return false;
  if (r.dst && !in(*r.dst, p.dst)) return false;
  if (r.iif && !IfaceMatches(*r.iif, kFwInputIf)) return false;
  if (r.oif && !IfaceMatches(*r.oif, kFwOutputIf)) return false;
  if (r.proto && (p.proto == ProtoNumber(*r.proto)) == r.proto_negate) return false;
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

std::vector<const GenRule*> AllRules(const GenRuleset& rs) {
  std::vector<const GenRule*> out;
  for (const GenChain& c : rs.chains) {
    for (const GenRule& r : c.rules) out.push_back(&r);
  }
  return out;
}

}  // namespace

bool ForwardableIpv4(uint32_t a) {
  const uint32_t top = a >> 24;
  if (top == 0 || top == 127 || top >= 224) return false;
  return (a & 0xffffff00) != 0xc6120000;  // 198.18.0.0/24: the harness's own
}

std::vector<FrameSpec> GeneratePackets(const GenRuleset& rs, std::mt19937& rng,
                                       const PacketGenOptions& options) {
  std::vector<const GenRule*> rules = AllRules(rs);
  std::vector<FrameSpec> out;
  for (int i = 0; i < options.count; ++i) {
    Pkt p = RandomPacket(rng, options.fragments);
    if (!rules.empty() && Chance(rng, options.aimed)) {
      const GenRule& r = *rules[static_cast<size_t>(Uniform(rng, 0, static_cast<int>(rules.size()) - 1))];
      const bool perturb = Chance(rng, 0.6);
      // A few tries for a packet that gets past the earlier rules to r.
      for (int attempt = 0; attempt < 12; ++attempt) {
        p = RandomPacket(rng, options.fragments);
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
  const size_t length = 20 + static_cast<size_t>(s.frag_offset ? 0 : L4HeaderLength(s.proto)) + s.payload.size();
  if (s.frag_offset != 0) {
    return absl::StrFormat("proto %d %s > %s fragment offset %d%s len %d", s.proto, s.src, s.dst,
                           s.frag_offset * 8, s.more_fragments ? " MF" : "", length);
  }
  const std::string mf = s.more_fragments ? " MF" : "";
  switch (s.proto) {
    case kTcp:
      return absl::StrFormat("tcp %s:%d > %s:%d flags 0x%02x len %d%s", s.src, s.sport, s.dst,
                             s.dport, s.tcp_flags, length, mf);
    case kUdp:
      return absl::StrFormat("udp %s:%d > %s:%d len %d%s", s.src, s.sport, s.dst, s.dport, length, mf);
    case kIcmp:
      return absl::StrFormat("icmp %s > %s type %d code %d len %d%s", s.src, s.dst, s.icmp_type,
                             s.icmp_code, length, mf);
    default:
      return absl::StrFormat("proto %d %s > %s len %d%s", s.proto, s.src, s.dst, length, mf);
  }
}

}  // namespace rulejit::testing
