// The marks a one-hook walk carries (see mark_now.h): composing mark
// writes, and turning a match on the marks a rule sees into a match on
// the arriving packets' marks (the preimage of an interval set under
// x -> (x & mask) ^ xor, through aligned blocks).
#include "compiler/analysis/mark_now.h"

#include <bit>

namespace rulejit::analysis {
namespace {

constexpr uint32_t kMarkMax = 0xffffffffu;
constexpr size_t kPreimageBudget = 4096;  // intervals, as MaskedEquals' bound

// Adds {x : x & m == v} (v within m) to `out`: one interval per setting
// of m's zero bits above its lowest one; false past `budget`.
bool AddMasked(uint32_t m, uint32_t v, IntervalSet& out, size_t& budget) {
  if (m == 0) {
    out.Add(0, kMarkMax);
    return true;
  }
  const int low = std::countr_zero(m);
  const uint64_t span = uint64_t{1} << low;  // the free bits below m's lowest one
  const uint32_t free = ~m & ~static_cast<uint32_t>(span - 1);
  const size_t count = size_t{1} << std::popcount(free);
  if (count > budget) return false;
  budget -= count;
  uint32_t s = 0;
  do {  // every subset of `free`
    const uint64_t base = v | s;
    out.Add(base, base + span - 1);
    s = (s - free) & free;
  } while (s != 0);
  return true;
}

}  // namespace

std::optional<IntervalSet> Preimage(const IntervalSet& set, const MarkNow& f, size_t budget) {
  if (set.empty()) return IntervalSet{};
  const IntervalSet full = IntervalSet::Range(0, kMarkMax);
  if (f.mask == 0) return set.Contains(f.xor_) ? full : IntervalSet{};
  if (set.Covers(full) || (f.mask == kMarkMax && f.xor_ == 0)) return set;
  IntervalSet out;
  for (const Interval& iv : set.intervals()) {
    if (iv.lo > kMarkMax) break;
    uint64_t lo = static_cast<uint64_t>(iv.lo);
    const uint64_t hi = std::min<uint64_t>(static_cast<uint64_t>(iv.hi), kMarkMax);
    while (lo <= hi) {  // the largest aligned block at lo within [lo, hi]
      int k = lo == 0 ? 32 : std::countr_zero(lo);
      while (lo + (uint64_t{1} << k) - 1 > hi) --k;
      const uint32_t top = k == 32 ? 0 : ~static_cast<uint32_t>((uint64_t{1} << k) - 1);
      const uint32_t p = static_cast<uint32_t>(lo);
      // Bits of `top` the mask clears come from xor alone: they must agree.
      if (((f.xor_ ^ p) & top & ~f.mask) == 0) {
        const uint32_t m = f.mask & top;
        if (budget == 0 || !AddMasked(m, (p ^ f.xor_) & m, out, budget)) return std::nullopt;
      }
      lo += uint64_t{1} << k;
    }
  }
  return out;
}

Now Apply(Now now, const std::vector<headerspace::Effect>& effects) {
  using Kind = headerspace::Effect::Kind;
  for (const headerspace::Effect& e : effects) {
    if (e.kind != Kind::kSetMark && e.kind != Kind::kSetCtMark) continue;
    const bool meta = e.kind == Kind::kSetMark;
    MarkNow next;
    if (e.from) {
      const MarkNow& from = *e.from == Dim::kMark ? now.mark : now.ct;
      const auto mask = static_cast<uint32_t>(e.mask);
      next = {from.src, from.mask & mask, (from.xor_ & mask) ^ static_cast<uint32_t>(e.xor_)};
    } else {
      next = {Dim::kMark, 0, static_cast<uint32_t>(e.value)};
    }
    // A constant reads no mark: one form for it, so equal views compare equal.
    if (next.mask == 0) next.src = meta ? Dim::kMark : Dim::kCtMark;
    (meta ? now.mark : now.ct) = next;
  }
  return now;
}

std::optional<Cube> SeenAs(const Cube& match, const Now& now, const Space& space,
                           std::string& why) {
  if (now.Identity()) return match;
  std::optional<IntervalSet> mark = Preimage(match.get(Dim::kMark), now.mark, kPreimageBudget);
  std::optional<IntervalSet> ct = Preimage(match.get(Dim::kCtMark), now.ct, kPreimageBudget);
  if (!mark || !ct) {
    why = "reads a mark an earlier rule set through a mask, which takes more than 4096 "
          "intervals of the arriving mark (not modelled)";
    return std::nullopt;
  }
  Cube out = match;
  out.set(Dim::kMark) = IntervalSet::Range(0, space.Max(Dim::kMark));
  out.set(Dim::kCtMark) = IntervalSet::Range(0, space.Max(Dim::kCtMark));
  out.set(now.mark.src) = out.get(now.mark.src).Intersect(*mark);
  out.set(now.ct.src) = out.get(now.ct.src).Intersect(*ct);
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace rulejit::analysis
