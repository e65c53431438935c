// Interval sets, cubes and their descriptions (see header_space.h).
#include "compiler/analysis/header_space.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rulejit::analysis {

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
  }
  return "?";
}

// ---------------------------------------------------------------------------
// IntervalSet

IntervalSet IntervalSet::Range(uint32_t lo, uint32_t hi) {
  IntervalSet s;
  if (lo <= hi) s.ivs_.push_back({lo, hi});
  return s;
}

bool IntervalSet::Contains(uint32_t v) const {
  auto it = std::upper_bound(
      ivs_.begin(), ivs_.end(), v,
      [](uint32_t x, const Interval& iv) { return x < iv.lo; });
  return it != ivs_.begin() && std::prev(it)->hi >= v;
}

bool IntervalSet::IsFull(uint32_t max) const {
  return ivs_.size() == 1 && ivs_[0].lo == 0 && ivs_[0].hi == max;
}

uint64_t IntervalSet::Size() const {
  uint64_t n = 0;
  for (const Interval& iv : ivs_) n += uint64_t{iv.hi} - iv.lo + 1;
  return n;
}

void IntervalSet::Add(uint32_t lo, uint32_t hi) {
  if (lo > hi) return;
  std::vector<Interval> out;
  out.reserve(ivs_.size() + 1);
  bool placed = false;
  auto push = [&out](Interval iv) {
    // Merge with the previous interval when overlapping or adjacent.
    if (!out.empty() && uint64_t{out.back().hi} + 1 >= iv.lo) {
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
  size_t i = 0, j = 0;
  while (i < ivs_.size() && j < other.ivs_.size()) {
    const Interval& a = ivs_[i];
    const Interval& b = other.ivs_[j];
    uint32_t lo = std::max(a.lo, b.lo);
    uint32_t hi = std::min(a.hi, b.hi);
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

IntervalSet IntervalSet::Complement(uint32_t max) const {
  IntervalSet out;
  uint64_t next = 0;
  for (const Interval& iv : ivs_) {
    if (iv.lo > next) out.ivs_.push_back({static_cast<uint32_t>(next), iv.lo - 1});
    next = uint64_t{iv.hi} + 1;
  }
  if (next <= max) out.ivs_.push_back({static_cast<uint32_t>(next), max});
  return out;
}

IntervalSet IntervalSet::Minus(const IntervalSet& other, uint32_t max) const {
  return Intersect(other.Complement(max));
}

// ---------------------------------------------------------------------------
// Space and cubes

uint32_t Space::Max(Dim dim) const {
  switch (dim) {
    case Dim::kSaddr:
    case Dim::kDaddr:
    case Dim::kMark: return 0xffffffffu;
    case Dim::kProto:
    case Dim::kTcpFlags: return 0xff;
    case Dim::kSport:
    case Dim::kDport: return 0xffff;
    case Dim::kIifName: return static_cast<uint32_t>(iif.size()) - 1;
    case Dim::kOifName: return static_cast<uint32_t>(oif.size()) - 1;
    case Dim::kCtState: return kCtStateDomain.size() - 1;
  }
  return 0;
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
                                   Dim::kMark};
  for (Dim d : kOrder) {
    if (!a.get(d).Overlaps(b.get(d))) return false;
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

Point PickPoint(const Cube& cube) {
  Point p{};
  for (int d = 0; d < kDims; ++d) {
    p[d] = cube.get(static_cast<Dim>(d)).intervals().front().lo;
  }
  // A SYN starts a flow as NEW in conntrack (handy for replays).
  if (cube.get(Dim::kTcpFlags).Contains(0x02)) {
    p[static_cast<int>(Dim::kTcpFlags)] = 0x02;
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
// Descriptions

namespace {

uint32_t Bswap(uint32_t c) {
  return (c >> 24) | ((c >> 8) & 0xff00) | ((c << 8) & 0xff0000) | (c << 24);
}

std::string Ip(uint32_t v) {
  return absl::StrFormat("%u.%u.%u.%u", v >> 24, (v >> 16) & 0xff,
                         (v >> 8) & 0xff, v & 0xff);
}

// An address interval as CIDR blocks.
void AddressBlocks(uint32_t lo, uint32_t hi, std::vector<std::string>& out) {
  uint64_t cur = lo;
  while (cur <= hi) {
    int bits = 0;  // host bits of the largest aligned block from cur
    while (bits < 32 && (cur & ((uint64_t{1} << (bits + 1)) - 1)) == 0 &&
           cur + (uint64_t{1} << (bits + 1)) - 1 <= hi) {
      ++bits;
    }
    uint32_t v = static_cast<uint32_t>(cur);
    out.push_back(bits == 0 ? Ip(v) : absl::StrCat(Ip(v), "/", 32 - bits));
    cur += uint64_t{1} << bits;
  }
}

std::string ProtoName(uint32_t p) {
  switch (p) {
    case 1: return "icmp";
    case 6: return "tcp";
    case 17: return "udp";
    default: return absl::StrCat(p);
  }
}

std::string CtStateName(uint32_t index) {
  static constexpr const char* kNames[] = {"new", "established", "related",
                                           "invalid", "untracked"};
  return index < 5 ? kNames[index] : "?";
}

std::string ValueText(Dim dim, uint32_t lo, uint32_t hi, const Space& space) {
  switch (dim) {
    case Dim::kProto:
      return lo == hi ? ProtoName(lo) : absl::StrCat(lo, "-", hi);
    case Dim::kMark:
      if (lo == hi) return absl::StrFormat("0x%x", Bswap(lo));
      return absl::StrFormat("0x%x-0x%x", lo, hi);
    case Dim::kTcpFlags:
      return lo == hi ? absl::StrFormat("0x%x", lo)
                      : absl::StrFormat("0x%x-0x%x", lo, hi);
    default:
      break;
  }
  return lo == hi ? absl::StrCat(lo) : absl::StrCat(lo, "-", hi);
}

// `& 0x12 == 0x2` when the 8-bit set is exactly the values whose masked
// bits equal a constant (how tcp flag tests look), else nullopt.
std::optional<std::string> MaskForm(const IntervalSet& set) {
  uint32_t first = set.intervals().front().lo;
  uint32_t varying = 0;
  for (const Interval& iv : set.intervals()) {
    for (uint32_t v = iv.lo; v <= iv.hi; ++v) varying |= v ^ first;
  }
  uint32_t mask = ~varying & 0xff;
  if (set.Size() != (uint64_t{1} << (8 - __builtin_popcount(mask)))) {
    return std::nullopt;
  }
  return absl::StrFormat("& 0x%x == 0x%x", mask, first & mask);
}

std::string SetText(Dim dim, const IntervalSet& set, const Space& space) {
  if (dim == Dim::kTcpFlags && set.Size() > 1) {
    if (std::optional<std::string> form = MaskForm(set)) return *form;
  }
  std::vector<std::string> items;
  for (const Interval& iv : set.intervals()) {
    if (dim == Dim::kSaddr || dim == Dim::kDaddr) {
      AddressBlocks(iv.lo, iv.hi, items);
    } else if (dim == Dim::kIifName || dim == Dim::kOifName ||
               dim == Dim::kCtState) {
      for (uint32_t v = iv.lo; v <= iv.hi; ++v) {
        if (dim == Dim::kCtState) {
          items.push_back(CtStateName(v));
        } else {
          const auto& names = dim == Dim::kIifName ? space.iif : space.oif;
          items.push_back(names[v].label);
        }
      }
    } else {
      items.push_back(ValueText(dim, iv.lo, iv.hi, space));
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

}  // namespace

std::string DescribeCube(const Cube& cube, const Space& space) {
  std::vector<std::string> parts;
  for (int d = 0; d < kDims; ++d) {
    Dim dim = static_cast<Dim>(d);
    const IntervalSet& s = cube.get(dim);
    if (s.IsFull(space.Max(dim))) continue;
    std::string name = DimName(dim);
    if (dim == Dim::kSport) name = PortPrefix(cube) + " sport";
    if (dim == Dim::kDport) name = PortPrefix(cube) + " dport";
    if (dim == Dim::kMark && s.Size() != 1) name = "meta mark (register order)";
    if (dim == Dim::kProto && (s == IntervalSet::Single(6) ||
                               s == IntervalSet::Single(17))) {
      // Ports already say tcp/udp; keep the protocol explicit only when the
      // ports are not constrained.
      if (!cube.get(Dim::kSport).IsFull(0xffff) ||
          !cube.get(Dim::kDport).IsFull(0xffff)) {
        continue;
      }
    }
    parts.push_back(absl::StrCat(name, " ", SetText(dim, s, space)));
  }
  if (parts.empty()) return "all packets";
  return absl::StrJoin(parts, " ");
}

std::string DescribePoint(const Point& p, const Space& space) {
  auto at = [&p](Dim d) { return p[static_cast<int>(d)]; };
  std::string out = absl::StrCat(
      ProtoName(at(Dim::kProto)), " ", Ip(at(Dim::kSaddr)), ":",
      at(Dim::kSport), " -> ", Ip(at(Dim::kDaddr)), ":", at(Dim::kDport),
      absl::StrFormat(" flags 0x%02x", at(Dim::kTcpFlags)));
  if (space.has_iif) {
    absl::StrAppend(&out, " iif \"", space.iif[at(Dim::kIifName)].name, "\"");
  }
  if (space.has_oif) {
    absl::StrAppend(&out, " oif \"", space.oif[at(Dim::kOifName)].name, "\"");
  }
  absl::StrAppend(&out, " ct ", CtStateName(at(Dim::kCtState)));
  // The mark coordinate is the register bytes big-endian: show the value.
  absl::StrAppend(&out, absl::StrFormat(" mark 0x%x", Bswap(at(Dim::kMark))));
  return out;
}

}  // namespace rulejit::analysis
