// The marks a one-hook walk's later rules read (flatten.h): after `meta
// mark set` or `ct mark set` a rule sees the written value, not the
// arriving packet's. Each mark is kept as a function of the arriving
// packet, (origin's `src` mark & mask) ^ xor: the identity, a constant
// (mask 0), or a copy of either mark through masks (MARK --set-xmark,
// CONNMARK --save-mark / --restore-mark, `mark set mark or 0x4000`).
// Functions of this form compose into one of the same form, so a walk
// piece carries one MarkNow per mark, and a rule's match on what the hook
// sees becomes a match on the arriving packets (SeenAs), exactly.
//
//   Now now;                                  // identity: nothing set yet
//   now = Apply(now, effects);                // a rule's mark effects
//   std::optional<Cube> m = SeenAs(match, now, space, why);  // on origins
//
// Internal to compiler/analysis.
#ifndef RULEJIT_COMPILER_ANALYSIS_MARK_NOW_H_
#define RULEJIT_COMPILER_ANALYSIS_MARK_NOW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/analysis/space.h"

namespace rulejit::analysis {

// A mark as (origin's `src` & mask) ^ xor.
struct MarkNow {
  Dim src = Dim::kMark;
  uint32_t mask = 0xffffffff;
  uint32_t xor_ = 0;
  bool operator==(const MarkNow&) const = default;
};

// What later rules read as meta mark and ct mark.
struct Now {
  MarkNow mark{Dim::kMark};
  MarkNow ct{Dim::kCtMark};
  bool operator==(const Now&) const = default;
  bool Identity() const { return *this == Now{}; }
};

// `now` after a rule's effects (lift_cube.h: kSetMark / kSetCtMark only;
// the lifter records no other kind for a one-hook walk).
Now Apply(Now now, const std::vector<headerspace::Effect>& effects);

// The arriving packets whose view under `now` lies in `match`: `match`
// with its mark dimensions replaced by their preimages. nullopt when none;
// sets `why` (and returns nullopt) when a preimage needs more intervals
// than the walk keeps.
std::optional<Cube> SeenAs(const Cube& match, const Now& now, const Space& space,
                           std::string& why);

// The values x of a 32-bit mark with (x & f.mask) ^ f.xor_ in `set`, or
// nullopt when that takes more than `budget` intervals.
std::optional<IntervalSet> Preimage(const IntervalSet& set, const MarkNow& f, size_t budget);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_MARK_NOW_H_
