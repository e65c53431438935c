// The cube projection of header space (compiler/headerspace/README.md): the
// packets of the packet model that the analyses (diff, lint) reason about,
// and the cubes that describe sets of them.
//
//   Space space = ...;                        // dimensions and their domains
//   Cube all = Cube::Full(space);
//   Cube ssh = all;
//   ssh.set(Dim::kDport) = IntervalSet::Single(22);
//   std::vector<Cube> rest = Subtract(all, ssh, space);
//
// The space is IPv4 (unfragmented, no IP options) and, when some table of
// the comparison sees IPv6, IPv6 without extension headers (next header is
// never hop-by-hop, routing, fragment or destination options), each with a
// 20-byte transport region after the IP header (so every load of transport
// bytes 0..19 is in bounds whatever the protocol). Its dimensions:
//   ip/ip6 saddr, daddr (one 128-bit dimension each; IPv4 packets use
//   0..2^32-1), l4proto (8; the IPv6 next header), th sport, th dport (16;
//   icmp/icmpv6 type and code are the sport bytes),
//   tcp flags (transport byte 13, 8 bits), iifname / oifname (finite
//   domains: the names the rulesets mention plus one name per prefix class
//   and one "other"), ct state (new established related invalid untracked),
//   meta mark (32 bits, coordinate = the register bytes read big-endian, so
//   that memcmp order is numeric order), family (0 IPv4, 1 IPv6),
//   ip ttl / ip6 hoplimit (8), ct mark (32 bits, coordinate as meta mark;
//   only packets with a conntrack entry have one), meta pkttype (host,
//   broadcast, multicast: what the destination MAC says; only host where
//   the hook has no link header) and ether saddr (48 bits; a single value
//   where the hook has no link header, whose loads then fail), meta length
//   (the IP packet's length: IPv4 40..65535, IPv6 60..65575; the model
//   pads the transport region with zeros up to it), ct status (16 bits,
//   coordinate: CtStatusOf; only packets with a conntrack entry have one),
//   socket (0: no local socket with a file, 1: one, whose owner meta skuid
//   / skgid and iptables' owner match read; only 0 where the hook has no
//   socket, see Space::socket), meta skuid and skgid (32 bits each, the
//   socket file's fsuid / fsgid; meaningful only with socket 1).
// Every other header byte, length, and metadata is outside the space:
// rules that read them are "not reasoned about exactly".
//
// A cube is one interval set per dimension (their product). Values of the
// enumerated dimensions (names, ct state) are indexes into the Space's
// domain lists. Every cube the analyses build lies inside one family's cube
// (FamilyCube: its address and protocol domains), because they all start
// from FullRegion and only intersect and subtract.
#ifndef RULEJIT_COMPILER_HEADERSPACE_CUBE_H_
#define RULEJIT_COMPILER_HEADERSPACE_CUBE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace rulejit {
struct HostModel;
}

namespace rulejit::headerspace {

enum class Dim : uint8_t {
  kSaddr, kDaddr, kProto, kSport, kDport, kTcpFlags, kIifName, kOifName,
  kCtState, kMark, kFamily, kTtl, kCtMark, kPktType, kEtherSaddr, kLength,
  kCtStatus, kSocket, kSkUid, kSkGid, kIifType, kOifType, kIifGroup, kOifGroup, kCpu,
};
inline constexpr int kDims = 25;

// meta iiftype / oiftype (ARPHRD_*): free dimensions without a host
// model; on one (`diff --host`) each device's type is the host's, a
// function of the name dimension, and these stay 0 (lift_cube_fields.cc).
inline constexpr uint32_t kModelLinkType = 1;  // ARPHRD_ETHER, witnesses' choice
// meta iifgroup / oifgroup (iptables' devgroup) likewise: free 32-bit
// dimensions without a host model (the register bytes, as the mark), the
// host's group of each device on one.

// ct status: the kernel's 16 status bits (IPS_EXPECTED .. IPS_HW_OFFLOAD),
// as a coordinate with the bits in reverse order (IPS_EXPECTED is the
// highest coordinate bit), so that a test of one of the low, commonly
// tested bits (expected, seen-reply, assured, confirmed, snat, dnat) is a
// few intervals: a test of bit k is 2^k intervals.
inline constexpr uint32_t kCtStatusMax = 0xffff;
constexpr uint32_t CtStatusOf(uint64_t coordinate) {
  uint32_t status = 0;
  for (int bit = 0; bit < 16; ++bit) {
    if ((coordinate >> bit) & 1) status |= 1u << (15 - bit);
  }
  return status;
}
// The coordinate of a status (the same bit reversal; bits above 15 dropped).
constexpr uint32_t CtStatusCoordinate(uint32_t status) { return CtStatusOf(status & 0xffff); }

// meta length of each family's smallest packet (IP header and the 20-byte
// transport region) and largest one (the 16-bit IPv4 total length / IPv6
// payload length).
inline constexpr uint32_t kMinLength4 = 40;
inline constexpr uint32_t kMinLength6 = 60;
inline constexpr uint32_t kMaxLength4 = 0xffff;
inline constexpr uint32_t kMaxLength6 = 0xffff + 40;
const char* DimName(Dim dim);

// A dimension value: wide enough for IPv6 addresses.
using Value = unsigned __int128;
inline constexpr Value kValueMax = ~Value{0};

// Values of Dim::kFamily.
inline constexpr uint32_t kFamilyIpv4 = 0;
inline constexpr uint32_t kFamilyIpv6 = 1;

// Inclusive interval of dimension values.
struct Interval {
  Value lo = 0;
  Value hi = 0;
  bool operator==(const Interval&) const = default;
};

// Sorted, disjoint, non-adjacent intervals.
class IntervalSet {
 public:
  IntervalSet() = default;
  // Most sets of a cube are one interval: kept inline, no allocation.
  using Intervals = absl::InlinedVector<Interval, 1>;

  static IntervalSet Range(Value lo, Value hi);  // empty when lo > hi
  static IntervalSet Single(Value v) { return Range(v, v); }

  bool empty() const { return ivs_.empty(); }
  const Intervals& intervals() const { return ivs_; }
  bool Contains(Value v) const;
  bool IsFull(Value max) const;
  Value Size() const;  // saturates at kValueMax

  IntervalSet Intersect(const IntervalSet& other) const;
  bool Overlaps(const IntervalSet& other) const;  // without allocating
  bool Covers(const IntervalSet& other) const;    // other ⊆ this
  IntervalSet Union(const IntervalSet& other) const;
  IntervalSet Complement(Value max) const;  // within [0, max]
  IntervalSet Minus(const IntervalSet& other, Value max) const;
  void Add(Value lo, Value hi);  // any order; merges

  bool operator==(const IntervalSet&) const = default;

 private:
  Intervals ivs_;
};

// The conntrack states of the ct state domain, in domain order.
inline constexpr std::array<uint32_t, 5> kCtStateDomain = {
    1u << 3 /*new*/, 1u << 1 /*established*/, 1u << 2 /*related*/,
    1u << 0 /*invalid*/, 1u << 6 /*untracked*/};

// The packet types of the meta pkttype domain, in domain order
// (PACKET_HOST, PACKET_BROADCAST, PACKET_MULTICAST).
inline constexpr std::array<uint8_t, 3> kPktTypeDomain = {0, 1, 2};

// One value of an interface-name dimension.
struct NameValue {
  std::string name;   // a concrete name (witness); "" = no device
  std::string label;  // how descriptions show the class: "eth0", "eth*", ...
};

// The dimensions' domains, shared by both rulesets of a comparison.
struct Space {
  std::vector<NameValue> iif;  // index = value of Dim::kIifName
  std::vector<NameValue> oif;
  bool has_iif = false;  // the hook has an input device
  bool has_oif = false;
  bool ipv4 = true;   // the families in the space
  bool ipv6 = false;
  bool link = true;   // the hook sees the link header (not output/postrouting)
  // A packet may carry a local socket with a file (meta skuid / skgid and
  // xt_owner read it): output and postrouting (locally sent packets), and
  // input (early demux may attach an established socket). Prerouting and
  // forward never have one (ip_forward drops a packet with skb->sk).
  bool socket = false;
  // The host the rulesets run on (`diff --host`): fib answers from its
  // routes and addresses (lift_cube_fib.cc). Null: fib is not modelled.
  const HostModel* host = nullptr;

  Value Max(Dim dim) const;  // largest value of the dimension, any family
};

class Cube {
 public:
  // Every dimension at [0, Max]: a bounding box of all families.
  static Cube Full(const Space& space);
  const IntervalSet& get(Dim d) const { return sets_[static_cast<int>(d)]; }
  IntervalSet& set(Dim d) { return sets_[static_cast<int>(d)]; }
  bool empty() const;
  bool operator==(const Cube&) const = default;

 private:
  std::array<IntervalSet, kDims> sets_;
};

// The packets of one family (kFamilyIpv4 / kFamilyIpv6): IPv4 addresses
// are 0..2^32-1, IPv6 next headers leave out the extension headers.
Cube FamilyCube(const Space& space, uint32_t family);
// The whole space: one FamilyCube per family of the space.
std::vector<Cube> FullRegion(const Space& space);

// Whether a ∩ b is non-empty (cheap: no allocation).
bool Overlaps(const Cube& a, const Cube& b);
// Whether b ⊆ a.
bool Covers(const Cube& a, const Cube& b);
// a ∩ b, or nullopt when empty.
std::optional<Cube> Intersect(const Cube& a, const Cube& b);
// a \ b as disjoint cubes (at most kDims of them).
std::vector<Cube> Subtract(const Cube& a, const Cube& b, const Space& space);
// Whether the union of `covers` contains every cube of `region` (cover.h:
// "true" is exact; "false" may be a miss beyond `piece_budget` pieces).
bool CoveredByUnion(const std::vector<Cube>& region, const std::vector<Cube>& covers,
                    const Space& space, size_t piece_budget);

// Coalesces disjoint cubes that differ in one dimension only (their union
// is then a cube), repeated until none do: the same set of packets in
// fewer, larger cubes. Order of first appearance is kept.
void MergeAdjacent(std::vector<Cube>& cubes);

// A concrete point: one value per dimension.
using Point = std::array<Value, kDims>;
// The ttl and source MAC witnesses prefer (those of the model packet
// before these were dimensions).
inline constexpr uint32_t kModelTtl = 64;
inline constexpr Value kModelSrcMac = 0x020000000001;
// A point of the cube (prefers TCP, then UDP, for the protocol, SYN for
// the tcp flags, ttl 64 and the model's source MAC 02:00:00:00:00:01;
// lowest values elsewhere, so ct state new, pkttype host and marks 0 when
// the cube has them). The cube must not be empty.
Point PickPoint(const Cube& cube);

// nft-like text of a cube: `ip saddr 10.0.0.0/10 tcp dport 22-25`; full
// dimensions are left out; "all packets" when every dimension is full.
std::string DescribeCube(const Cube& cube, const Space& space);
// One line for a point: `tcp 10.0.0.1:1024 -> 10.0.0.2:22 flags 0x02 ...`
// (IPv6: `tcp [2001:db8::1]:1024 -> [::]:22 ...`); ttl, ct mark, pkttype
// and MAC only when they are not PickPoint's preferred values.
std::string DescribePoint(const Point& point, const Space& space);
// Address text: dotted quad for IPv4, RFC 5952 for IPv6.
std::string AddressText(Value v, bool ipv6);

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_CUBE_H_
