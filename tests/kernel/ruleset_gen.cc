// Random FORWARD rulesets (see ruleset_gen.h): values come from small pools
// (a few unicast ranges, low and high ports, common icmp types) so that the
// packet generator can aim at rule boundaries, and the two renderers spell
// each abstract match the way iptables-save and nft print it.
#include "tests/kernel/ruleset_gen.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/kernel/kernel_oracle.h"

namespace rulejit::testing {
namespace {

// ---------------------------------------------------------------- drawing

int Uniform(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(std::mt19937& rng, double p) { return std::bernoulli_distribution(p)(rng); }

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& pool) {
  return pool[static_cast<size_t>(Uniform(rng, 0, static_cast<int>(pool.size()) - 1))];
}

// Ordinary unicast ranges; with prefixes of 8 or more, their edges ±1 stay
// out of the martian ranges (0/8, 127/8, 224/4) too.
GenAddrMatch RandomAddr4(std::mt19937& rng) {
  static const std::vector<uint32_t> kBases = {
      0x0a000000,  // 10.0.0.0
      0xac100000,  // 172.16.0.0
      0xc0a80000,  // 192.168.0.0
      0xc0000200,  // 192.0.2.0
      0xc6336400,  // 198.51.100.0
      0xcb007100,  // 203.0.113.0
  };
  static const std::vector<int> kPrefixes = {8, 12, 16, 20, 24, 25, 28, 30, 31, 32};
  GenAddrMatch m;
  m.prefix = Pick(rng, kPrefixes);
  // Random host bits below the base's own /16 keep the prefixes varied.
  uint32_t addr = Pick(rng, kBases) | static_cast<uint32_t>(Uniform(rng, 0, 0xffff));
  m.network = addr & PrefixMask(m.prefix, GenFamily::kIpv4);
  m.negate = Chance(rng, 0.15);
  return m;
}

// 64 random bits.
uint64_t Random64(std::mt19937& rng) {
  return static_cast<uint64_t>(rng()) << 32 | static_cast<uint64_t>(rng());
}

// Global unicast and ULA bases (their top 32 bits); with prefixes of 16 or
// more, their edges ±1 stay in ordinary unicast space too (never ::/8,
// fe80::/10, ff00::/8).
GenAddrMatch RandomAddr6(std::mt19937& rng) {
  static const std::vector<uint32_t> kBases = {
      0x20010db8,  // 2001:db8::   documentation
      0xfd12abcd,  // fd12:abcd::  unique local
      0x2a001450,  // 2a00:1450::
      0x26001f18,  // 2600:1f18::
  };
  static const std::vector<int> kPrefixes = {16, 24, 32, 33, 48, 56, 63, 64,
                                             65, 96, 112, 120, 127, 128};
  GenAddrMatch m;
  m.prefix = Pick(rng, kPrefixes);
  // Host bits: some random 16-bit groups, so prefixes cut through set bits.
  GenAddr addr = static_cast<GenAddr>(Pick(rng, kBases)) << 96;
  for (int group = 0; group < 6; ++group) {
    if (Chance(rng, 0.5)) addr |= static_cast<GenAddr>(Uniform(rng, 0, 0xffff)) << (16 * group);
  }
  if (Chance(rng, 0.2)) addr |= static_cast<GenAddr>(Random64(rng));
  m.network = addr & PrefixMask(m.prefix, GenFamily::kIpv6);
  m.negate = Chance(rng, 0.15);
  return m;
}

GenAddrMatch RandomAddr(std::mt19937& rng, GenFamily family) {
  return family == GenFamily::kIpv4 ? RandomAddr4(rng) : RandomAddr6(rng);
}

uint16_t RandomPort(std::mt19937& rng) {
  switch (Uniform(rng, 0, 5)) {
    case 0: return static_cast<uint16_t>(Uniform(rng, 0, 2));
    case 1: return static_cast<uint16_t>(Uniform(rng, 65533, 65535));
    case 2:
    case 3: return static_cast<uint16_t>(Uniform(rng, 1, 1024));
    default: return static_cast<uint16_t>(Uniform(rng, 1025, 65535));
  }
}

GenPortRange RandomRange(std::mt19937& rng) {
  uint16_t lo = RandomPort(rng);
  if (Chance(rng, 0.5)) return {lo, lo};
  int span = Chance(rng, 0.7) ? Uniform(rng, 1, 100) : Uniform(rng, 1, 30000);
  return {lo, static_cast<uint16_t>(std::min(65535, lo + span))};
}

// A multiport list: sorted, disjoint and non-adjacent (nft rejects
// overlapping intervals in a set), at most 15 ports counting a range as 2.
std::vector<GenPortRange> RandomPortSet(std::mt19937& rng) {
  std::set<int> points;
  int wanted = Uniform(rng, 1, 8);
  while (static_cast<int>(points.size()) < wanted) points.insert(RandomPort(rng));
  std::vector<GenPortRange> out;
  int budget = 15;
  for (int p : points) {
    if (!out.empty() && p <= out.back().hi + 1) continue;
    bool range = budget >= 2 && Chance(rng, 0.35);
    int hi = range ? std::min(65535, p + Uniform(rng, 1, 40)) : p;
    out.push_back({static_cast<uint16_t>(p), static_cast<uint16_t>(hi)});
    budget -= range ? 2 : 1;
    if (budget <= 0) break;
  }
  // Ranges may have grown into the next point: merge, keeping a gap.
  std::vector<GenPortRange> merged;
  for (const GenPortRange& r : out) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

GenPortMatch RandomPortMatch(std::mt19937& rng, bool destination) {
  GenPortMatch m;
  m.destination = destination;
  m.negate = Chance(rng, 0.25);
  m.multiport = Chance(rng, 0.35);
  if (m.multiport) {
    m.ranges = RandomPortSet(rng);
  } else {
    m.ranges = {RandomRange(rng)};
  }
  return m;
}

GenIfaceMatch RandomIface(std::mt19937& rng, bool input) {
  static const std::vector<std::string> kOthers = {"eth9", "veth0", "fwin0", "fwou", "lo"};
  GenIfaceMatch m;
  std::string name = Chance(rng, 0.6) ? (input ? "fwin" : "fwout")
                     : Chance(rng, 0.3) ? (input ? "fwout" : "fwin")
                                        : Pick(rng, kOthers);
  if (Chance(rng, 0.4)) {
    m.wildcard = true;
    name = name.substr(0, static_cast<size_t>(Uniform(rng, 1, static_cast<int>(name.size()))));
  }
  m.name = name;
  m.negate = Chance(rng, 0.3);
  return m;
}

GenTcpFlagsMatch RandomTcpFlags(std::mt19937& rng) {
  GenTcpFlagsMatch m;
  m.negate = Chance(rng, 0.25);
  if (Chance(rng, 0.3)) {
    m.syn_shorthand = true;
    m.mask = 0x17;  // FIN SYN RST ACK
    m.compare = 0x02;
    return m;
  }
  while (m.mask == 0) m.mask = static_cast<uint8_t>(Uniform(rng, 0, 0x3f));
  m.compare = static_cast<uint8_t>(Uniform(rng, 0, 0x3f) & m.mask);
  return m;
}

GenIcmpMatch RandomIcmp(std::mt19937& rng, GenFamily family) {
  static const std::vector<int> kTypes = {0, 3, 5, 8, 11, 12, 13, 14};
  static const std::vector<int> kTypes6 = {1, 2, 3, 4, 128, 129, 130, 135, 136, 143};
  GenIcmpMatch m;
  // 255 would mean "any" to iptables (and ip6tables).
  m.type = static_cast<uint8_t>(Chance(rng, 0.8)
                                    ? Pick(rng, family == GenFamily::kIpv4 ? kTypes : kTypes6)
                                    : Uniform(rng, 0, 254));
  m.negate = Chance(rng, 0.25);
  if (!m.negate && Chance(rng, 0.3)) m.code = static_cast<uint8_t>(Uniform(rng, 0, 3));
  return m;
}

GenLengthMatch RandomLength(std::mt19937& rng, GenFamily family) {
  const int min = family == GenFamily::kIpv4 ? 28 : 48;
  GenLengthMatch m;
  m.lo = static_cast<uint16_t>(Chance(rng, 0.8) ? Uniform(rng, min, min + 100)
                                                : Uniform(rng, min, 1500));
  m.hi = Chance(rng, 0.3) ? m.lo
                          : static_cast<uint16_t>(std::min(1500, m.lo + Uniform(rng, 1, 200)));
  m.negate = Chance(rng, 0.25);
  return m;
}

// nft 1.0.6 merges `tcp dport != 22 tcp sport != 80` into one 4-byte
// `cmp neq` of both ports, i.e. "not both equal" instead of "neither equal"
// (a userspace bug: `nft --debug=netlink` shows it). The kernel then runs the
// merged form, so such a rule cannot have the same meaning in both
// renderings: widen one of the two single ports into a range.
void AvoidNftPortMerge(std::vector<GenPortMatch>& ports) {
  if (ports.size() != 2) return;
  for (const GenPortMatch& m : ports) {
    if (m.multiport || !m.negate || m.ranges[0].lo != m.ranges[0].hi) return;
  }
  GenPortRange& r = ports[1].ranges[0];
  if (r.hi < 65535) ++r.hi; else --r.lo;
}

void AddL4Matches(std::mt19937& rng, GenRule& r, GenFamily family) {
  if (*r.proto == GenProto::kIcmp) {
    if (Chance(rng, 0.7)) r.icmp = RandomIcmp(rng, family);
    return;
  }
  if (Chance(rng, 0.45)) r.ports.push_back(RandomPortMatch(rng, true));
  if (Chance(rng, 0.25)) r.ports.push_back(RandomPortMatch(rng, false));
  AvoidNftPortMerge(r.ports);
  if (*r.proto == GenProto::kTcp && Chance(rng, 0.3)) r.tcp_flags = RandomTcpFlags(rng);
}

void AddVerdict(std::mt19937& rng, GenRule& r, int chain, int chain_count) {
  const bool can_jump = chain + 1 < chain_count;
  int roll = Uniform(rng, 0, 99);
  if (roll < 35) {
    r.verdict = GenVerdict::kAccept;
  } else if (roll < 65) {
    r.verdict = GenVerdict::kDrop;
  } else if (roll < 73) {
    r.verdict = GenVerdict::kReturn;
  } else if (roll < 80) {
    r.verdict = GenVerdict::kNone;
  } else if (can_jump) {
    r.verdict = roll < 92 ? GenVerdict::kJump : GenVerdict::kGoto;
    r.target = Uniform(rng, chain + 1, chain_count - 1);
  } else {
    r.verdict = Chance(rng, 0.5) ? GenVerdict::kAccept : GenVerdict::kDrop;
  }
}

GenRule RandomRule(std::mt19937& rng, int chain, int chain_count, GenFamily family) {
  GenRule r;
  if (Chance(rng, 0.4)) r.src = RandomAddr(rng, family);
  if (Chance(rng, 0.3)) r.dst = RandomAddr(rng, family);
  if (Chance(rng, 0.75)) {
    r.proto = static_cast<GenProto>(Uniform(rng, 0, 2));
    AddL4Matches(rng, r, family);
    const bool has_l4 = !r.ports.empty() || r.tcp_flags || r.icmp;
    r.proto_negate = !has_l4 && Chance(rng, 0.3);
  }
  if (Chance(rng, 0.15)) r.iif = RandomIface(rng, true);
  if (Chance(rng, 0.15)) r.oif = RandomIface(rng, false);
  if (Chance(rng, 0.15)) r.length = RandomLength(rng, family);
  // A rule without matches shadows the rest of its chain: keep them rare.
  const bool bare = !r.src && !r.dst && !r.proto && !r.iif && !r.oif && !r.length;
  if (bare && Chance(rng, 0.7)) r.src = RandomAddr(rng, family);
  AddVerdict(rng, r, chain, chain_count);
  return r;
}

// ---------------------------------------------------------------- iptables

// The protocol's name as iptables-save and nft print it.
const char* ProtoName(GenProto p, GenFamily family) {
  switch (p) {
    case GenProto::kTcp: return "tcp";
    case GenProto::kUdp: return "udp";
    case GenProto::kIcmp: return family == GenFamily::kIpv4 ? "icmp" : "ipv6-icmp";
  }
  return "?";
}

std::string Prefix(const GenAddrMatch& m, GenFamily family) {
  const std::string addr = AddrText(m.network, family);
  return m.prefix == AddrBits(family) ? addr : absl::StrCat(addr, "/", m.prefix);
}

std::string RangeText(const GenPortRange& r, const char* sep) {
  return r.lo == r.hi ? absl::StrCat(r.lo) : absl::StrCat(r.lo, sep, r.hi);
}

std::string FlagNames(uint8_t bits, const char* sep, bool upper) {
  static const char* kLower[] = {"fin", "syn", "rst", "psh", "ack", "urg"};
  static const char* kUpper[] = {"FIN", "SYN", "RST", "PSH", "ACK", "URG"};
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    if (bits & (1 << i)) names.push_back(upper ? kUpper[i] : kLower[i]);
  }
  return absl::StrJoin(names, sep);
}

const char* Bang(bool negate) { return negate ? "! " : ""; }

std::string IptablesPorts(const GenRule& r) {
  std::string out;
  std::string plain;  // matches of the protocol's own module (-m tcp/-m udp)
  for (const GenPortMatch& m : r.ports) {
    if (m.multiport) {
      std::vector<std::string> items;
      for (const GenPortRange& pr : m.ranges) items.push_back(RangeText(pr, ":"));
      absl::StrAppend(&out, " -m multiport ", Bang(m.negate),
                      m.destination ? "--dports " : "--sports ", absl::StrJoin(items, ","));
    } else {
      absl::StrAppend(&plain, " ", Bang(m.negate), m.destination ? "--dport " : "--sport ",
                      RangeText(m.ranges[0], ":"));
    }
  }
  if (r.tcp_flags) {
    const GenTcpFlagsMatch& f = *r.tcp_flags;
    if (f.syn_shorthand) {
      absl::StrAppend(&plain, " ", Bang(f.negate), "--syn");
    } else {
      std::string compare = f.compare == 0 ? "NONE" : FlagNames(f.compare, ",", true);
      absl::StrAppend(&plain, " ", Bang(f.negate), "--tcp-flags ",
                      FlagNames(f.mask, ",", true), " ", compare);
    }
  }
  if (!plain.empty()) return absl::StrCat(" -m ", ProtoName(*r.proto, GenFamily::kIpv4), plain, out);
  return out;
}

std::string IptablesIface(const char* flag, const GenIfaceMatch& m) {
  return absl::StrCat(" ", Bang(m.negate), flag, " ", m.name, m.wildcard ? "+" : "");
}

std::string IptablesRule(const GenRuleset& rs, const GenChain& chain, const GenRule& r) {
  std::string line = absl::StrCat("-A ", chain.name);
  if (r.src) absl::StrAppend(&line, " ", Bang(r.src->negate), "-s ", Prefix(*r.src, rs.family));
  if (r.dst) absl::StrAppend(&line, " ", Bang(r.dst->negate), "-d ", Prefix(*r.dst, rs.family));
  if (r.iif) absl::StrAppend(&line, IptablesIface("-i", *r.iif));
  if (r.oif) absl::StrAppend(&line, IptablesIface("-o", *r.oif));
  if (r.proto) {
    absl::StrAppend(&line, " ", Bang(r.proto_negate), "-p ", ProtoName(*r.proto, rs.family));
  }
  if (r.proto) absl::StrAppend(&line, IptablesPorts(r));
  if (r.icmp && rs.family == GenFamily::kIpv6) {
    absl::StrAppend(&line, " -m icmp6 ", Bang(r.icmp->negate), "--icmpv6-type ", r.icmp->type);
    if (r.icmp->code) absl::StrAppend(&line, "/", *r.icmp->code);
  } else if (r.icmp) {
    absl::StrAppend(&line, " -m icmp ", Bang(r.icmp->negate), "--icmp-type ", r.icmp->type);
    if (r.icmp->code) absl::StrAppend(&line, "/", *r.icmp->code);
  }
  if (r.length) {
    absl::StrAppend(&line, " -m length ", Bang(r.length->negate), "--length ", r.length->lo);
    if (r.length->hi != r.length->lo) absl::StrAppend(&line, ":", r.length->hi);
  }
  switch (r.verdict) {
    case GenVerdict::kAccept: absl::StrAppend(&line, " -j ACCEPT"); break;
    case GenVerdict::kDrop: absl::StrAppend(&line, " -j DROP"); break;
    case GenVerdict::kReturn: absl::StrAppend(&line, " -j RETURN"); break;
    case GenVerdict::kJump:
      absl::StrAppend(&line, " -j ", rs.chains[static_cast<size_t>(r.target)].name);
      break;
    case GenVerdict::kGoto:
      absl::StrAppend(&line, " -g ", rs.chains[static_cast<size_t>(r.target)].name);
      break;
    case GenVerdict::kNone: break;
  }
  return line;
}

// ---------------------------------------------------------------- nft

const char* Ne(bool negate) { return negate ? "!= " : ""; }

std::string NftPorts(const GenRule& r) {
  std::string out;
  for (const GenPortMatch& m : r.ports) {
    absl::StrAppend(&out, " ", ProtoName(*r.proto, GenFamily::kIpv4),
                    m.destination ? " dport " : " sport ",
                    Ne(m.negate));
    if (m.multiport) {
      std::vector<std::string> items;
      for (const GenPortRange& pr : m.ranges) items.push_back(RangeText(pr, "-"));
      absl::StrAppend(&out, "{ ", absl::StrJoin(items, ", "), " }");
    } else {
      absl::StrAppend(&out, RangeText(m.ranges[0], "-"));
    }
  }
  if (r.tcp_flags) {
    const GenTcpFlagsMatch& f = *r.tcp_flags;
    std::string compare = f.compare == 0 ? "0" : absl::StrCat("(", FlagNames(f.compare, " | ", false), ")");
    absl::StrAppend(&out, " tcp flags & (", FlagNames(f.mask, " | ", false), ") ",
                    f.negate ? "!= " : "== ", compare);
  }
  return out;
}

std::string NftIface(const char* key, const GenIfaceMatch& m) {
  return absl::StrCat(" ", key, " ", Ne(m.negate), "\"", m.name, m.wildcard ? "*" : "", "\"");
}

// `netdev`: the rule is in a netdev table (see the icmp dependency below).
std::string NftRule(const GenRuleset& rs, const GenRule& r, bool netdev) {
  const GenFamily family = r.family.value_or(rs.family);
  const bool v4 = family == GenFamily::kIpv4;
  const char* ip = v4 ? "ip" : "ip6";
  std::string line;
  // skb->protocol: also right in netdev tables (meta nfproto is netdev there).
  if (r.family_guard) absl::StrAppend(&line, " meta protocol ", ip);
  if (r.src) absl::StrAppend(&line, " ", ip, " saddr ", Ne(r.src->negate), Prefix(*r.src, family));
  if (r.dst) absl::StrAppend(&line, " ", ip, " daddr ", Ne(r.dst->negate), Prefix(*r.dst, family));
  if (r.iif) absl::StrAppend(&line, NftIface("iifname", *r.iif));
  if (r.oif) absl::StrAppend(&line, NftIface("oifname", *r.oif));
  if (r.proto) {
    const bool has_l4 = !r.ports.empty() || r.tcp_flags || r.icmp;
    // IPv6: the upper-layer protocol past any extension headers, as
    // ip6tables' -p (ipv6_find_hdr); `ip6 nexthdr` is only the first header.
    if (!has_l4) {
      absl::StrAppend(&line, v4 ? " ip protocol " : " meta l4proto ", Ne(r.proto_negate),
                      ProtoName(*r.proto, family));
    }
    absl::StrAppend(&line, NftPorts(r));
  }
  if (r.icmp) {
    const char* icmp = v4 ? "icmp" : "icmpv6";
    // In netdev tables nft versions differ in the implicit dependency of an
    // icmp/icmpv6 match: nft 1.0.6 emits `meta l4proto`, the nftables test
    // corpus (and rulejit, which follows it) `ip6 nexthdr` / `ip protocol`;
    // for IPv6 packets with extension headers they differ. Spelled out, both
    // read the rule the same way.
    if (netdev) absl::StrAppend(&line, " meta l4proto ", ProtoName(*r.proto, family));
    absl::StrAppend(&line, " ", icmp, " type ", Ne(r.icmp->negate), r.icmp->type);
    if (r.icmp->code) absl::StrAppend(&line, " ", icmp, " code ", *r.icmp->code);
  }
  if (r.length) {
    absl::StrAppend(&line, " meta length ", Ne(r.length->negate), r.length->lo);
    if (r.length->hi != r.length->lo) absl::StrAppend(&line, "-", r.length->hi);
  }
  switch (r.verdict) {
    case GenVerdict::kAccept: absl::StrAppend(&line, " accept"); break;
    case GenVerdict::kDrop: absl::StrAppend(&line, " drop"); break;
    case GenVerdict::kReturn: absl::StrAppend(&line, " return"); break;
    case GenVerdict::kJump:
      absl::StrAppend(&line, " jump ", rs.chains[static_cast<size_t>(r.target)].name);
      break;
    case GenVerdict::kGoto:
      absl::StrAppend(&line, " goto ", rs.chains[static_cast<size_t>(r.target)].name);
      break;
    case GenVerdict::kNone: absl::StrAppend(&line, " counter"); break;
  }
  return absl::StrCat("    ", line.substr(1), "\n");
}

}  // namespace

std::string Ipv4Text(uint32_t addr) {
  return absl::StrCat(addr >> 24, ".", (addr >> 16) & 0xff, ".", (addr >> 8) & 0xff, ".",
                      addr & 0xff);
}

std::string AddrText(GenAddr addr, GenFamily family) {
  if (family == GenFamily::kIpv4) return Ipv4Text(static_cast<uint32_t>(addr));
  std::array<uint8_t, 16> bytes;
  for (int i = 15; i >= 0; --i, addr >>= 8) bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(addr);
  char text[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, bytes.data(), text, sizeof text);
  return text;
}

int AddrBits(GenFamily family) { return family == GenFamily::kIpv4 ? 32 : 128; }

GenAddr PrefixMask(int prefix, GenFamily family) {
  const int bits = AddrBits(family);
  const GenAddr all = bits == 128 ? ~GenAddr{0} : (GenAddr{1} << bits) - 1;
  return prefix <= 0 ? 0 : (all << (bits - prefix)) & all;
}

GenRuleset GenerateRuleset(std::mt19937& rng, const RulesetGenOptions& options) {
  GenRuleset rs;
  rs.family = options.family;
  rs.mixed = options.mixed;
  rs.nft_inet = Chance(rng, 0.3) || rs.mixed;
  rs.policy_accept = Chance(rng, 0.5);
  const int chain_count = 1 + Uniform(rng, 0, options.max_user_chains);
  for (int c = 0; c < chain_count; ++c) {
    rs.chains.push_back({c == 0 ? "FORWARD" : absl::StrCat("user", c), {}});
  }
  for (int c = 0; c < chain_count; ++c) {
    const int max_rules = c == 0 ? options.max_forward_rules : options.max_user_rules;
    const int count = Uniform(rng, c == 0 ? 1 : 0, max_rules);
    for (int i = 0; i < count; ++i) {
      const GenFamily family = !rs.mixed          ? options.family
                               : Chance(rng, 0.5) ? GenFamily::kIpv4
                                                  : GenFamily::kIpv6;
      GenRule r = RandomRule(rng, c, chain_count, family);
      if (rs.mixed) {
        r.family = family;
        r.family_guard = !r.src && !r.dst && Chance(rng, 0.5);
      }
      rs.chains[static_cast<size_t>(c)].rules.push_back(std::move(r));
    }
  }
  return rs;
}

std::string RenderIptablesSave(const GenRuleset& rs) {
  if (rs.mixed) return "";  // one dump holds one family
  // The tool's own header line tells readers (rulejit) the dump's family.
  std::string out = absl::StrCat(
      rs.family == GenFamily::kIpv6 ? "# Generated by ip6tables-save v1.8.9\n" : "",
      "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ",
                                 rs.policy_accept ? "ACCEPT" : "DROP",
                                 " [0:0]\n:OUTPUT ACCEPT [0:0]\n");
  for (size_t c = 1; c < rs.chains.size(); ++c) {
    absl::StrAppend(&out, ":", rs.chains[c].name, " - [0:0]\n");
  }
  for (const GenChain& chain : rs.chains) {
    for (const GenRule& r : chain.rules) absl::StrAppend(&out, IptablesRule(rs, chain, r), "\n");
  }
  absl::StrAppend(&out, "COMMIT\n");
  return out;
}

std::string RenderNft(const GenRuleset& rs, NftPlacement placement) {
  std::string base;  // chain 0's type line
  std::string table;
  switch (placement) {
    case NftPlacement::kForward:
      table = rs.nft_inet ? "inet" : rs.family == GenFamily::kIpv4 ? "ip" : "ip6";
      base = "type filter hook forward priority 0";
      break;
    case NftPlacement::kNetdevIngress:
      table = "netdev";
      base = absl::StrCat("type filter hook ingress device \"", kFwInputIf, "\" priority 0");
      break;
    case NftPlacement::kNetdevEgress:
      table = "netdev";
      base = absl::StrCat("type filter hook egress device \"", kFwOutputIf, "\" priority 0");
      break;
  }
  std::string out = absl::StrCat("table ", table, " filter {\n");
  // Jump targets first (highest index first), so every chain a rule names is
  // already declared.
  for (size_t c = rs.chains.size(); c-- > 0;) {
    const GenChain& chain = rs.chains[c];
    absl::StrAppend(&out, "  chain ", c == 0 ? "forward" : chain.name, " {\n");
    if (c == 0) {
      absl::StrAppend(&out, "    ", base, "; policy ", rs.policy_accept ? "accept" : "drop",
                      ";\n");
    }
    for (const GenRule& r : chain.rules) {
      absl::StrAppend(&out, NftRule(rs, r, placement != NftPlacement::kForward));
    }
    absl::StrAppend(&out, "  }\n");
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace rulejit::testing
