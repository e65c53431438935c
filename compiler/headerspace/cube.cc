// Interval sets, cubes and their descriptions (see cube.h).
#include "compiler/headerspace/cube.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/headerspace/cover.h"

namespace rulejit::headerspace {

const char* DimName(Dim dim) {
  switch (dim) {
    case Dim::kSaddr: return "ip saddr";
    case Dim::kDaddr: return "ip daddr";
    case Dim::kProto: return "meta l4proto";
    case Dim::kSport: return "th sport";
    case Dim::kDport: return "th dport";
    case Dim::kTcpFlags: return "tcp flags";
    case Dim::kIifName: return "iifname";
    case Dim::kOifName: return "oifname";
    case Dim::kCtState: return "ct state";
    case Dim::kMark: return "meta mark";
    case Dim::kFamily: return "meta nfproto";
    case Dim::kTtl: return "ip ttl";
    case Dim::kCtMark: return "ct mark";
    case Dim::kPktType: return "meta pkttype";
    case Dim::kEtherSaddr: return "ether saddr";
    case Dim::kLength: return "meta length";
    case Dim::kCtStatus: return "ct status";
    case Dim::kSocket: return "socket";
    case Dim::kSkUid: return "meta skuid";
    case Dim::kSkGid: return "meta skgid";
    case Dim::kIifType: return "meta iiftype";
    case Dim::kOifType: return "meta oiftype";
    case Dim::kIifGroup: return "meta iifgroup";
    case Dim::kOifGroup: return "meta oifgroup";
    case Dim::kCpu: return "meta cpu";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// IntervalSet

IntervalSet IntervalSet::Range(Value lo, Value hi) {
  IntervalSet s;
  if (lo <= hi) s.ivs_.push_back({lo, hi});
  return s;
}

bool IntervalSet::Contains(Value v) const {
  auto it = std::upper_bound(
      ivs_.begin(), ivs_.end(), v,
      [](Value x, const Interval& iv) { return x < iv.lo; });
  return it != ivs_.begin() && std::prev(it)->hi >= v;
}

bool IntervalSet::IsFull(Value max) const {
  return ivs_.size() == 1 && ivs_[0].lo == 0 && ivs_[0].hi == max;
}

Value IntervalSet::Size() const {
  Value n = 0;
  for (const Interval& iv : ivs_) {
    Value len = iv.hi - iv.lo;  // size - 1
    if (len == kValueMax || n > kValueMax - len - 1) return kValueMax;
    n += len + 1;
  }
  return n;
}

void IntervalSet::Add(Value lo, Value hi) {
  if (lo > hi) return;
  Intervals out;
  out.reserve(ivs_.size() + 1);
  bool placed = false;
  auto push = [&out](Interval iv) {
    // Merge with the previous interval when overlapping or adjacent.
    if (!out.empty() && (out.back().hi == kValueMax || out.back().hi + 1 >= iv.lo)) {
      out.back().hi = std::max(out.back().hi, iv.hi);
    } else {
      out.push_back(iv);
    }
  };
  for (const Interval& iv : ivs_) {
    if (!placed && lo <= iv.lo) {
      push({lo, hi});
      placed = true;
    }
    push(iv);
  }
  if (!placed) push({lo, hi});
  ivs_ = std::move(out);
}

IntervalSet IntervalSet::Union(const IntervalSet& other) const {
  IntervalSet out = *this;
  for (const Interval& iv : other.ivs_) out.Add(iv.lo, iv.hi);
  return out;
}

IntervalSet IntervalSet::Intersect(const IntervalSet& other) const {
  IntervalSet out;
  // The common case of single intervals, without the merge loop.
  if (ivs_.size() == 1 && other.ivs_.size() == 1) {
    Value lo = std::max(ivs_[0].lo, other.ivs_[0].lo);
    Value hi = std::min(ivs_[0].hi, other.ivs_[0].hi);
    if (lo <= hi) out.ivs_.push_back({lo, hi});
    return out;
  }
  size_t i = 0, j = 0;
  while (i < ivs_.size() && j < other.ivs_.size()) {
    const Interval& a = ivs_[i];
    const Interval& b = other.ivs_[j];
    Value lo = std::max(a.lo, b.lo);
    Value hi = std::min(a.hi, b.hi);
    if (lo <= hi) out.ivs_.push_back({lo, hi});
    if (a.hi < b.hi) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

bool IntervalSet::Overlaps(const IntervalSet& other) const {
  size_t i = 0, j = 0;
  while (i < ivs_.size() && j < other.ivs_.size()) {
    const Interval& a = ivs_[i];
    const Interval& b = other.ivs_[j];
    if (std::max(a.lo, b.lo) <= std::min(a.hi, b.hi)) return true;
    if (a.hi < b.hi) {
      ++i;
    } else {
      ++j;
    }
  }
  return false;
}

bool IntervalSet::Covers(const IntervalSet& other) const {
  size_t i = 0;
  for (const Interval& b : other.ivs_) {
    while (i < ivs_.size() && ivs_[i].hi < b.lo) ++i;
    if (i == ivs_.size() || ivs_[i].lo > b.lo || ivs_[i].hi < b.hi) return false;
  }
  return true;
}

IntervalSet IntervalSet::Complement(Value max) const {
  IntervalSet out;
  Value next = 0;
  for (const Interval& iv : ivs_) {
    if (iv.lo > max) break;
    if (iv.lo > next) out.ivs_.push_back({next, iv.lo - 1});
    if (iv.hi >= max) return out;
    next = iv.hi + 1;
  }
  out.ivs_.push_back({next, max});
  return out;
}

IntervalSet IntervalSet::Minus(const IntervalSet& other, Value max) const {
  return Intersect(other.Complement(max));
}

// ---------------------------------------------------------------------------
// Space and cubes

Value Space::Max(Dim dim) const {
  switch (dim) {
    case Dim::kSaddr:
    case Dim::kDaddr: return kValueMax;
    case Dim::kMark:
    case Dim::kCtMark: return 0xffffffffu;
    case Dim::kTtl: return 0xff;
    case Dim::kLength: return kMaxLength6;
    case Dim::kPktType: return link ? kPktTypeDomain.size() - 1 : 0;
    case Dim::kEtherSaddr: return link ? 0xffffffffffffu : 0;
    case Dim::kFamily: return kFamilyIpv6;
    case Dim::kProto:
    case Dim::kTcpFlags: return 0xff;
    case Dim::kSport:
    case Dim::kDport: return 0xffff;
    case Dim::kIifName: return static_cast<uint32_t>(iif.size()) - 1;
    case Dim::kOifName: return static_cast<uint32_t>(oif.size()) - 1;
    case Dim::kCtState: return kCtStateDomain.size() - 1;
    case Dim::kCtStatus: return kCtStatusMax;
    case Dim::kSocket: return socket ? 1 : 0;
    case Dim::kSkUid:
    case Dim::kSkGid: return socket ? 0xffffffffu : 0;
    // Whether the hook has the device or not (its loads break where it has
    // none), so that cubes of one hook fit another along a path.
    case Dim::kIifType:
    case Dim::kOifType: return host == nullptr ? 0xffff : 0;
    case Dim::kIifGroup:
    case Dim::kOifGroup: return host == nullptr ? 0xffffffffu : 0;
    case Dim::kCpu: return 0xffffffffu;  // any CPU may process the packet
  }
  return 0;
}

Cube FamilyCube(const Space& space, uint32_t family) {
  Cube c = Cube::Full(space);
  c.set(Dim::kFamily) = IntervalSet::Single(family);
  if (family == kFamilyIpv4) {
    c.set(Dim::kSaddr) = IntervalSet::Range(0, 0xffffffffu);
    c.set(Dim::kDaddr) = IntervalSet::Range(0, 0xffffffffu);
    c.set(Dim::kLength) = IntervalSet::Range(kMinLength4, kMaxLength4);
  } else {
    c.set(Dim::kLength) = IntervalSet::Range(kMinLength6, kMaxLength6);
    // ipv6_find_hdr walks these (hop-by-hop, routing, fragment, AH,
    // destination options): packets with them are outside the space, so
    // an extension header lookup finds none (lift_cube.cc: Exthdr).
    IntervalSet proto;
    proto.Add(1, 42);
    proto.Add(45, 50);
    proto.Add(52, 59);
    proto.Add(61, 255);
    c.set(Dim::kProto) = proto;
  }
  return c;
}

std::vector<Cube> FullRegion(const Space& space) {
  std::vector<Cube> out;
  if (space.ipv4) out.push_back(FamilyCube(space, kFamilyIpv4));
  if (space.ipv6) out.push_back(FamilyCube(space, kFamilyIpv6));
  return out;
}

Cube Cube::Full(const Space& space) {
  Cube c;
  for (int d = 0; d < kDims; ++d) {
    c.sets_[d] = IntervalSet::Range(0, space.Max(static_cast<Dim>(d)));
  }
  return c;
}

bool Cube::empty() const {
  return std::any_of(sets_.begin(), sets_.end(),
                     [](const IntervalSet& s) { return s.empty(); });
}

bool Overlaps(const Cube& a, const Cube& b) {
  // The most selective dimensions first: addresses and ports.
  static constexpr Dim kOrder[] = {Dim::kSaddr,   Dim::kDport,   Dim::kDaddr,
                                   Dim::kSport,   Dim::kProto,   Dim::kTcpFlags,
                                   Dim::kIifName, Dim::kOifName, Dim::kCtState,
                                   Dim::kMark,    Dim::kFamily,  Dim::kTtl,
                                   Dim::kCtMark,  Dim::kPktType, Dim::kEtherSaddr,
                                   Dim::kLength,  Dim::kCtStatus, Dim::kSocket,
                                   Dim::kSkUid,   Dim::kSkGid,   Dim::kIifType,
                                   Dim::kOifType, Dim::kIifGroup, Dim::kOifGroup,
                                   Dim::kCpu};
  for (Dim d : kOrder) {
    if (!a.get(d).Overlaps(b.get(d))) return false;
  }
  return true;
}

bool Covers(const Cube& a, const Cube& b) {
  for (int d = 0; d < kDims; ++d) {
    if (!a.get(static_cast<Dim>(d)).Covers(b.get(static_cast<Dim>(d)))) return false;
  }
  return true;
}

std::optional<Cube> Intersect(const Cube& a, const Cube& b) {
  if (!Overlaps(a, b)) return std::nullopt;
  Cube out;
  for (int d = 0; d < kDims; ++d) {
    Dim dim = static_cast<Dim>(d);
    out.set(dim) = a.get(dim).Intersect(b.get(dim));
    if (out.get(dim).empty()) return std::nullopt;
  }
  return out;
}

std::vector<Cube> Subtract(const Cube& a, const Cube& b, const Space& space) {
  if (!Overlaps(a, b)) return {a};
  if (Covers(b, a)) return {};
  // Peel one dimension at a time: the part of `a` outside b in dimension d,
  // restricted to b in the dimensions before d.
  std::vector<Cube> out;
  Cube prefix = a;
  for (int d = 0; d < kDims; ++d) {
    Dim dim = static_cast<Dim>(d);
    IntervalSet outside = a.get(dim).Minus(b.get(dim), space.Max(dim));
    if (!outside.empty()) {
      Cube piece = prefix;
      piece.set(dim) = std::move(outside);
      out.push_back(std::move(piece));
    }
    prefix.set(dim) = a.get(dim).Intersect(b.get(dim));
  }
  return out;
}

bool CoveredByUnion(const std::vector<Cube>& region, const std::vector<Cube>& covers,
                    const Space& space, size_t piece_budget) {
  return CoveredByUnion(
      region, covers, piece_budget, [](const Cube& a, const Cube& b) { return Overlaps(a, b); },
      [&space](const Cube& piece, const Cube& cut, std::vector<Cube>& out) {
        for (Cube& c : Subtract(piece, cut, space)) out.push_back(std::move(c));
      });
}

Point PickPoint(const Cube& cube) {
  Point p{};
  for (int d = 0; d < kDims; ++d) {
    p[d] = cube.get(static_cast<Dim>(d)).intervals().front().lo;
  }
  // A SYN starts a flow as NEW in conntrack (handy for replays).
  if (cube.get(Dim::kTcpFlags).Contains(0x02)) {
    p[static_cast<int>(Dim::kTcpFlags)] = 0x02;
  }
  if (cube.get(Dim::kTtl).Contains(kModelTtl)) p[static_cast<int>(Dim::kTtl)] = kModelTtl;
  for (Dim type : {Dim::kIifType, Dim::kOifType}) {
    if (cube.get(type).Contains(kModelLinkType)) p[static_cast<int>(type)] = kModelLinkType;
  }
  if (cube.get(Dim::kEtherSaddr).Contains(kModelSrcMac)) {
    p[static_cast<int>(Dim::kEtherSaddr)] = kModelSrcMac;
  }
  const IntervalSet& proto = cube.get(Dim::kProto);
  if (proto.Contains(6)) {
    p[static_cast<int>(Dim::kProto)] = 6;
  } else if (proto.Contains(17)) {
    p[static_cast<int>(Dim::kProto)] = 17;
  }
  return p;
}

// ---------------------------------------------------------------------------
// Merging

namespace {

// Hash of a cube's sets except dimension `skip`.
size_t HashExcept(const Cube& cube, int skip) {
  size_t h = 0;
  for (int d = 0; d < kDims; ++d) {
    if (d == skip) continue;
    for (const Interval& iv : cube.get(static_cast<Dim>(d)).intervals()) {
      h = absl::HashOf(h, static_cast<uint64_t>(iv.lo), static_cast<uint64_t>(iv.lo >> 64),
                       static_cast<uint64_t>(iv.hi), static_cast<uint64_t>(iv.hi >> 64), d);
    }
  }
  return h;
}

bool EqualExcept(const Cube& a, const Cube& b, int skip) {
  for (int d = 0; d < kDims; ++d) {
    if (d != skip && !(a.get(static_cast<Dim>(d)) == b.get(static_cast<Dim>(d)))) {
      return false;
    }
  }
  return true;
}

}  // namespace

// One pass per dimension groups the cubes by their other dimensions
// (hashed), repeated until nothing merges; linear in the number of cubes
// per pass.
void MergeAdjacent(std::vector<Cube>& cubes) {
  bool merged = true;
  while (merged) {
    merged = false;
    for (int d = 0; d < kDims; ++d) {
      const Dim dim = static_cast<Dim>(d);
      absl::flat_hash_map<size_t, std::vector<size_t>> by_rest;
      std::vector<bool> gone(cubes.size(), false);
      for (size_t i = 0; i < cubes.size(); ++i) {
        std::vector<size_t>& same = by_rest[HashExcept(cubes[i], d)];
        bool absorbed = false;
        for (size_t k : same) {
          if (!EqualExcept(cubes[k], cubes[i], d)) continue;
          cubes[k].set(dim) = cubes[k].get(dim).Union(cubes[i].get(dim));
          gone[i] = absorbed = merged = true;
          break;
        }
        if (!absorbed) same.push_back(i);
      }
      size_t kept = 0;
      for (size_t i = 0; i < cubes.size(); ++i) {
        if (gone[i]) continue;
        if (kept != i) cubes[kept] = std::move(cubes[i]);
        ++kept;
      }
      cubes.resize(kept);
    }
  }
}

// ---------------------------------------------------------------------------
// Descriptions

namespace {

uint32_t Bswap(uint32_t c) {
  return (c >> 24) | ((c >> 8) & 0xff00) | ((c << 8) & 0xff0000) | (c << 24);
}

// Values below 2^64 as decimal (all but addresses).
std::string Dec(Value v) { return absl::StrCat(static_cast<uint64_t>(v)); }

// Mask of the low `bits` bits (bits <= 128).
Value LowMask(int bits) {
  return bits >= 128 ? kValueMax : (Value{1} << bits) - 1;
}

bool IsIpv6Cube(const Cube& cube) {
  return cube.get(Dim::kFamily) == IntervalSet::Single(kFamilyIpv6);
}

// An address interval as CIDR blocks (32- or 128-bit addresses).
void AddressBlocks(Value lo, Value hi, bool ipv6, std::vector<std::string>& out) {
  const int width = ipv6 ? 128 : 32;
  Value cur = lo;
  while (true) {
    int bits = 0;  // host bits of the largest aligned block from cur
    while (bits < width && (cur & LowMask(bits + 1)) == 0 &&
           hi - cur >= LowMask(bits + 1)) {
      ++bits;
    }
    std::string text = AddressText(cur, ipv6);
    out.push_back(bits == 0 ? text : absl::StrCat(text, "/", width - bits));
    Value last = cur + LowMask(bits);
    if (last >= hi) break;
    cur = last + 1;
  }
}

std::string ProtoName(Value p, bool ipv6) {
  switch (static_cast<uint32_t>(p)) {
    case 1: return "icmp";
    case 6: return "tcp";
    case 17: return "udp";
    case 58: return ipv6 ? "icmpv6" : "58";
    default: return Dec(p);
  }
}

std::string CtStateName(Value index) {
  static constexpr const char* kNames[] = {"new", "established", "related",
                                           "invalid", "untracked"};
  return index < 5 ? kNames[static_cast<int>(index)] : "?";
}

std::string MacText(Value v) {
  return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", static_cast<uint32_t>(v >> 40) & 0xff,
                         static_cast<uint32_t>(v >> 32) & 0xff, static_cast<uint32_t>(v >> 24) & 0xff,
                         static_cast<uint32_t>(v >> 16) & 0xff, static_cast<uint32_t>(v >> 8) & 0xff,
                         static_cast<uint32_t>(v) & 0xff);
}

std::string PktTypeName(Value index) {
  static constexpr const char* kNames[] = {"host", "broadcast", "multicast"};
  return index < 3 ? kNames[static_cast<int>(index)] : "?";
}

// A device type as nft names it (its iface_type symbols), else the number.
std::string LinkTypeName(Value type) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {1, "ether"}, {512, "ppp"}, {768, "ipip"}, {769, "ipip6"},
      {772, "loopback"}, {776, "sit"}, {778, "ipgre"}};
  for (const auto& [number, name] : kNames) {
    if (type == number) return name;
  }
  return Dec(type);
}

std::string ValueText(Dim dim, Value lo, Value hi, bool ipv6) {
  switch (dim) {
    case Dim::kEtherSaddr:
      return lo == hi ? MacText(lo) : absl::StrCat(MacText(lo), "-", MacText(hi));
    case Dim::kProto:
      return lo == hi ? ProtoName(lo, ipv6) : absl::StrCat(Dec(lo), "-", Dec(hi));
    case Dim::kMark:
    case Dim::kCtMark:
    case Dim::kIifGroup:
    case Dim::kOifGroup:
      if (lo == hi) return absl::StrFormat("0x%x", Bswap(static_cast<uint32_t>(lo)));
      return absl::StrFormat("0x%x-0x%x", static_cast<uint32_t>(lo),
                             static_cast<uint32_t>(hi));
    case Dim::kTcpFlags:
      return lo == hi ? absl::StrFormat("0x%x", static_cast<uint32_t>(lo))
                      : absl::StrFormat("0x%x-0x%x", static_cast<uint32_t>(lo),
                                        static_cast<uint32_t>(hi));
    case Dim::kFamily:
      return lo == hi ? (lo == kFamilyIpv6 ? "ipv6" : "ipv4") : "{ ipv4, ipv6 }";
    default:
      break;
  }
  return lo == hi ? Dec(lo) : absl::StrCat(Dec(lo), "-", Dec(hi));
}

// `& 0x12 == 0x2` when the set is exactly the values whose masked bits
// equal a constant (how tcp flag and ct status tests look), else nullopt.
// `bits`: the dimension's width; `value`: a coordinate's value.
std::optional<std::string> MaskForm(const IntervalSet& set, int bits,
                                    uint32_t (*value)(uint64_t)) {
  const uint32_t first = value(static_cast<uint64_t>(set.intervals().front().lo));
  uint32_t varying = 0;
  for (const Interval& iv : set.intervals()) {
    for (uint64_t v = static_cast<uint64_t>(iv.lo); v <= iv.hi; ++v) varying |= value(v) ^ first;
  }
  const uint32_t mask = ~varying & ((1u << bits) - 1);
  if (set.Size() != (Value{1} << (bits - __builtin_popcount(mask)))) {
    return std::nullopt;
  }
  return absl::StrFormat("& 0x%x == 0x%x", mask, first & mask);
}

uint32_t SameValue(uint64_t v) { return static_cast<uint32_t>(v); }

std::string SetText(Dim dim, const IntervalSet& set, const Space& space,
                    bool ipv6) {
  if (dim == Dim::kTcpFlags && set.Size() > 1) {
    if (std::optional<std::string> form = MaskForm(set, 8, SameValue)) return *form;
  }
  if (dim == Dim::kCtStatus) {
    if (std::optional<std::string> form = MaskForm(set, 16, CtStatusOf)) return *form;
    // Not one mask: the values themselves (coordinates are bit-reversed).
    std::vector<std::string> values;
    for (const Interval& iv : set.intervals()) {
      for (uint64_t v = static_cast<uint64_t>(iv.lo); v <= iv.hi && values.size() < 8; ++v) {
        values.push_back(absl::StrFormat("0x%x", CtStatusOf(v)));
      }
    }
    if (set.Size() > values.size()) values.push_back("...");
    return values.size() == 1 ? values[0] : absl::StrCat("{ ", absl::StrJoin(values, ", "), " }");
  }
  std::vector<std::string> items;
  for (const Interval& iv : set.intervals()) {
    if (dim == Dim::kSaddr || dim == Dim::kDaddr) {
      AddressBlocks(iv.lo, iv.hi, ipv6, items);
    } else if ((dim == Dim::kIifType || dim == Dim::kOifType) && iv.hi - iv.lo < 8) {
      for (Value v = iv.lo; v <= iv.hi; ++v) items.push_back(LinkTypeName(v));
    } else if (dim == Dim::kIifName || dim == Dim::kOifName ||
               dim == Dim::kCtState || dim == Dim::kPktType) {
      for (Value v = iv.lo; v <= iv.hi; ++v) {
        if (dim == Dim::kCtState) {
          items.push_back(CtStateName(v));
        } else if (dim == Dim::kPktType) {
          items.push_back(PktTypeName(v));
        } else {
          const auto& names = dim == Dim::kIifName ? space.iif : space.oif;
          items.push_back(names[static_cast<size_t>(v)].label);
        }
      }
    } else {
      items.push_back(ValueText(dim, iv.lo, iv.hi, ipv6));
    }
  }
  if (items.size() == 1) return items[0];
  return absl::StrCat("{ ", absl::StrJoin(items, ", "), " }");
}

// "tcp"/"udp" when the protocol is one of them, else "th".
std::string PortPrefix(const Cube& cube) {
  const IntervalSet& p = cube.get(Dim::kProto);
  if (p == IntervalSet::Single(6)) return "tcp";
  if (p == IntervalSet::Single(17)) return "udp";
  return "th";
}

// "icmp type { 8, 0 }" when the cube is ICMP/ICMPv6 and its sport (type
// and code bytes) is whole types, any code; else nullopt.
std::optional<std::string> IcmpTypes(const Cube& cube) {
  const IntervalSet& proto = cube.get(Dim::kProto);
  const char* name = proto == IntervalSet::Single(1)    ? "icmp type "
                     : proto == IntervalSet::Single(58) ? "icmpv6 type "
                                                        : nullptr;
  if (name == nullptr) return std::nullopt;
  std::vector<std::string> types;
  for (const Interval& iv : cube.get(Dim::kSport).intervals()) {
    if ((iv.lo & 0xff) != 0 || (iv.hi & 0xff) != 0xff) return std::nullopt;
    const uint32_t lo = static_cast<uint32_t>(iv.lo >> 8), hi = static_cast<uint32_t>(iv.hi >> 8);
    types.push_back(lo == hi ? absl::StrCat(lo) : absl::StrCat(lo, "-", hi));
  }
  if (types.size() == 1) return absl::StrCat(name, types[0]);
  return absl::StrCat(name, "{ ", absl::StrJoin(types, ", "), " }");
}

}  // namespace

std::string AddressText(Value v, bool ipv6) {
  if (!ipv6) {
    uint32_t a = static_cast<uint32_t>(v);
    return absl::StrFormat("%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff,
                           (a >> 8) & 0xff, a & 0xff);
  }
  uint16_t words[8];
  for (int i = 0; i < 8; ++i) {
    words[i] = static_cast<uint16_t>(v >> (16 * (7 - i)));
  }
  // RFC 5952: the longest run (of two or more) of zero words becomes "::".
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    int j = i;
    while (j < 8 && words[j] == 0) ++j;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j == i ? i + 1 : j;
  }
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ":";
    absl::StrAppend(&out, absl::StrFormat("%x", words[i]));
  }
  return out;
}

std::string DescribeCube(const Cube& cube, const Space& space) {
  const bool ipv6 = IsIpv6Cube(cube);
  // Full within the cube's family (IPv4 addresses stop at 2^32-1).
  const bool one_family = cube.get(Dim::kFamily).Size() == 1;
  const Cube family =
      one_family ? FamilyCube(space, static_cast<uint32_t>(
                                         cube.get(Dim::kFamily).intervals()[0].lo))
                 : Cube::Full(space);
  std::vector<std::string> parts;
  for (int d = 0; d < kDims; ++d) {
    Dim dim = static_cast<Dim>(d);
    const IntervalSet& s = cube.get(dim);
    if (s == family.get(dim) || s.IsFull(space.Max(dim))) continue;
    if (dim == Dim::kFamily) {
      // Said by the address names, or alone when nothing else is.
      continue;
    }
    if (dim == Dim::kSocket) {
      // A skuid or skgid test implies the socket: said by it.
      const bool owner = !cube.get(Dim::kSkUid).IsFull(space.Max(Dim::kSkUid)) ||
                         !cube.get(Dim::kSkGid).IsFull(space.Max(Dim::kSkGid));
      if (s == IntervalSet::Single(1) && owner) continue;
      parts.push_back(s.Contains(0) ? "(no socket)" : "(a local socket)");
      continue;
    }
    std::string name = DimName(dim);
    if (ipv6 && (dim == Dim::kSaddr || dim == Dim::kDaddr)) {
      name = dim == Dim::kSaddr ? "ip6 saddr" : "ip6 daddr";
    }
    if (dim == Dim::kSport) {
      if (std::optional<std::string> icmp = IcmpTypes(cube)) {
        parts.push_back(*icmp);
        continue;
      }
      name = PortPrefix(cube) + " sport";
    }
    if (dim == Dim::kDport) name = PortPrefix(cube) + " dport";
    if (dim == Dim::kMark && s.Size() != 1) name = "meta mark (register order)";
    if (dim == Dim::kCtMark && s.Size() != 1) name = "ct mark (register order)";
    if (dim == Dim::kTtl && ipv6) name = "ip6 hoplimit";
    if (dim == Dim::kProto && IcmpTypes(cube) && !cube.get(Dim::kSport).IsFull(0xffff)) {
      continue;  // said by "icmp type"
    }
    if (dim == Dim::kProto && (s == IntervalSet::Single(6) ||
                               s == IntervalSet::Single(17))) {
      // Ports already say tcp/udp; keep the protocol explicit only when the
      // ports are not constrained.
      if (!cube.get(Dim::kSport).IsFull(0xffff) ||
          !cube.get(Dim::kDport).IsFull(0xffff)) {
        continue;
      }
    }
    parts.push_back(absl::StrCat(name, " ", SetText(dim, s, space, ipv6)));
  }
  // Say the family when the space has both.
  if (space.ipv4 && space.ipv6 && one_family) {
    parts.insert(parts.begin(), ipv6 ? "meta nfproto ipv6" : "meta nfproto ipv4");
  }
  if (parts.empty()) return "all packets";
  return absl::StrJoin(parts, " ");
}

std::string DescribePoint(const Point& p, const Space& space) {
  auto at = [&p](Dim d) { return p[static_cast<int>(d)]; };
  const bool ipv6 = at(Dim::kFamily) == kFamilyIpv6;
  auto host = [ipv6](Value addr, Value port) {
    std::string a = AddressText(addr, ipv6);
    return ipv6 ? absl::StrCat("[", a, "]:", Dec(port)) : absl::StrCat(a, ":", Dec(port));
  };
  std::string out = absl::StrCat(
      ProtoName(at(Dim::kProto), ipv6), " ", host(at(Dim::kSaddr), at(Dim::kSport)),
      " -> ", host(at(Dim::kDaddr), at(Dim::kDport)),
      absl::StrFormat(" flags 0x%02x", static_cast<uint32_t>(at(Dim::kTcpFlags))));
  if (space.has_iif) {
    absl::StrAppend(&out, " iif \"", space.iif[static_cast<size_t>(at(Dim::kIifName))].name, "\"");
  }
  if (space.has_oif) {
    absl::StrAppend(&out, " oif \"", space.oif[static_cast<size_t>(at(Dim::kOifName))].name, "\"");
  }
  absl::StrAppend(&out, " ct ", CtStateName(at(Dim::kCtState)));
  // The mark coordinate is the register bytes big-endian: show the value.
  absl::StrAppend(&out, absl::StrFormat(" mark 0x%x", Bswap(static_cast<uint32_t>(at(Dim::kMark)))));
  // The newer dimensions only when they are not the preferred values, so
  // witnesses of rulesets that don't look at them read as before.
  if (at(Dim::kTtl) != kModelTtl) absl::StrAppend(&out, " ttl ", Dec(at(Dim::kTtl)));
  if (at(Dim::kCtMark) != 0) {
    absl::StrAppend(&out, absl::StrFormat(" ct mark 0x%x",
                                          Bswap(static_cast<uint32_t>(at(Dim::kCtMark)))));
  }
  if (at(Dim::kCtStatus) != 0) {
    absl::StrAppend(&out, absl::StrFormat(" ct status 0x%x",
                                          CtStatusOf(static_cast<uint64_t>(at(Dim::kCtStatus)))));
  }
  if (at(Dim::kPktType) != 0) absl::StrAppend(&out, " pkttype ", PktTypeName(at(Dim::kPktType)));
  // Device types are coordinates only without a host model.
  if (space.has_iif && space.Max(Dim::kIifType) != 0 && at(Dim::kIifType) != kModelLinkType) {
    absl::StrAppend(&out, " iiftype ", LinkTypeName(at(Dim::kIifType)));
  }
  if (space.has_oif && space.Max(Dim::kOifType) != 0 && at(Dim::kOifType) != kModelLinkType) {
    absl::StrAppend(&out, " oiftype ", LinkTypeName(at(Dim::kOifType)));
  }
  if (at(Dim::kCpu) != 0) absl::StrAppend(&out, " cpu ", Dec(at(Dim::kCpu)));
  for (Dim group : {Dim::kIifGroup, Dim::kOifGroup}) {
    if (at(group) == 0 || !(group == Dim::kIifGroup ? space.has_iif : space.has_oif)) continue;
    absl::StrAppend(&out, group == Dim::kIifGroup ? " iifgroup " : " oifgroup ",
                    Bswap(static_cast<uint32_t>(at(group))));
  }
  if (at(Dim::kLength) != (ipv6 ? kMinLength6 : kMinLength4)) {
    absl::StrAppend(&out, " length ", Dec(at(Dim::kLength)));
  }
  if (at(Dim::kSocket) == 1) {
    absl::StrAppend(&out, " socket skuid ", Dec(at(Dim::kSkUid)), " skgid ",
                    Dec(at(Dim::kSkGid)));
  }
  if (space.link && at(Dim::kEtherSaddr) != kModelSrcMac) {
    absl::StrAppend(&out, " ether saddr ", MacText(at(Dim::kEtherSaddr)));
  }
  return out;
}

}  // namespace rulejit::headerspace
