// Splitting a chain into runs of rules that lift to boxes (they can go to a
// classifier) and runs that do not (they stay linear), in chain order.
//
//   for (const classify::Segment& s : classify::SplitChain(chain)) {
//     if (s.liftable && s.end - s.begin >= threshold)
//       ... Classifier::Build(chain, s.begin, s.end) ...
//     else
//       ... rules [s.begin, s.end) run linearly ...
//   }
//
// Running the segments in order, each returning its first matching rule,
// is the linear chain: a lifted rule always ends the walk of the chain when
// it matches (headerspace/lift_box.h requires a terminal verdict), so rules after it are
// never reached.
#ifndef RULEJIT_COMPILER_CLASSIFY_SEGMENTS_H_
#define RULEJIT_COMPILER_CLASSIFY_SEGMENTS_H_

#include <cstddef>
#include <vector>

#include "compiler/classify/space.h"
#include "ir/ir.h"

namespace rulejit::classify {

struct Segment {
  size_t begin = 0;  // first rule index in the chain
  size_t end = 0;    // one past the last
  bool liftable = false;
};

// Maximal runs covering every rule of `chain` exactly once, in order.
std::vector<Segment> SplitChain(const ir::Chain& chain, const BoxContext& context = {});

}  // namespace rulejit::classify

#endif  // RULEJIT_COMPILER_CLASSIFY_SEGMENTS_H_
