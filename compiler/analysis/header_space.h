// Header space: the packets the analyses (diff, later shadowed rules) reason
// about, and the cubes that describe sets of them.
//
//   Space space = ...;                        // dimensions and their domains
//   Cube all = Cube::Full(space);
//   Cube ssh = all;
//   ssh.set(Dim::kDport) = IntervalSet::Single(22);
//   std::vector<Cube> rest = Subtract(all, ssh, space);
//
// The space is IPv4, unfragmented, no IP options, with a 20-byte transport
// region after the IP header (so every load of transport bytes 0..19 is in
// bounds whatever the protocol). Its dimensions:
//   ip saddr, ip daddr (32 bits), l4proto (8), th sport, th dport (16),
//   tcp flags (transport byte 13, 8 bits), iifname / oifname (finite
//   domains: the names the rulesets mention plus one name per prefix class
//   and one "other"), ct state (new established related invalid untracked),
//   meta mark (32 bits, coordinate = the register bytes read big-endian, so
//   that memcmp order is numeric order).
// Every other header byte, length, and metadata is outside the space:
// rules that read them are "not reasoned about exactly".
//
// A cube is one interval set per dimension (their product). Values of the
// enumerated dimensions (names, ct state) are indexes into the Space's
// domain lists.
#ifndef RULEJIT_COMPILER_ANALYSIS_HEADER_SPACE_H_
#define RULEJIT_COMPILER_ANALYSIS_HEADER_SPACE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rulejit::analysis {

enum class Dim : uint8_t {
  kSaddr, kDaddr, kProto, kSport, kDport, kTcpFlags, kIifName, kOifName,
  kCtState, kMark,
};
inline constexpr int kDims = 10;
const char* DimName(Dim dim);

// Inclusive interval of dimension values.
struct Interval {
  uint32_t lo = 0;
  uint32_t hi = 0;
  bool operator==(const Interval&) const = default;
};

// Sorted, disjoint, non-adjacent intervals.
class IntervalSet {
 public:
  IntervalSet() = default;
  static IntervalSet Range(uint32_t lo, uint32_t hi);  // empty when lo > hi
  static IntervalSet Single(uint32_t v) { return Range(v, v); }

  bool empty() const { return ivs_.empty(); }
  const std::vector<Interval>& intervals() const { return ivs_; }
  bool Contains(uint32_t v) const;
  bool IsFull(uint32_t max) const;
  uint64_t Size() const;

  IntervalSet Intersect(const IntervalSet& other) const;
  bool Overlaps(const IntervalSet& other) const;  // without allocating
  IntervalSet Union(const IntervalSet& other) const;
  IntervalSet Complement(uint32_t max) const;  // within [0, max]
  IntervalSet Minus(const IntervalSet& other, uint32_t max) const;
  void Add(uint32_t lo, uint32_t hi);  // any order; merges

  bool operator==(const IntervalSet&) const = default;

 private:
  std::vector<Interval> ivs_;
};

// The conntrack states of the ct state domain, in domain order.
inline constexpr std::array<uint32_t, 5> kCtStateDomain = {
    1u << 3 /*new*/, 1u << 1 /*established*/, 1u << 2 /*related*/,
    1u << 0 /*invalid*/, 1u << 6 /*untracked*/};

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

  uint32_t Max(Dim dim) const;  // largest value of the dimension
};

class Cube {
 public:
  static Cube Full(const Space& space);
  const IntervalSet& get(Dim d) const { return sets_[static_cast<int>(d)]; }
  IntervalSet& set(Dim d) { return sets_[static_cast<int>(d)]; }
  bool empty() const;
  bool operator==(const Cube&) const = default;

 private:
  std::array<IntervalSet, kDims> sets_;
};

// Whether a ∩ b is non-empty (cheap: no allocation).
bool Overlaps(const Cube& a, const Cube& b);
// a ∩ b, or nullopt when empty.
std::optional<Cube> Intersect(const Cube& a, const Cube& b);
// a \ b as disjoint cubes (at most kDims of them).
std::vector<Cube> Subtract(const Cube& a, const Cube& b, const Space& space);

// A concrete point: one value per dimension.
using Point = std::array<uint32_t, kDims>;
// A point of the cube (prefers TCP, then UDP, for the protocol, SYN for
// the tcp flags; lowest values elsewhere, so ct state new and mark 0 when
// the cube has them). The cube must not be empty.
Point PickPoint(const Cube& cube);

// nft-like text of a cube: `ip saddr 10.0.0.0/10 tcp dport 22-25`; full
// dimensions are left out; "all packets" when every dimension is full.
std::string DescribeCube(const Cube& cube, const Space& space);
// One line for a point: `tcp 10.0.0.1:1024 -> 10.0.0.2:22 flags 0x02 ...`.
std::string DescribePoint(const Point& point, const Space& space);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_HEADER_SPACE_H_
