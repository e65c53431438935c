// Chain → runs of liftable / non-liftable rules (see segments.h).
#include "compiler/classify/segments.h"

#include "compiler/headerspace/lift_box.h"

namespace rulejit::classify {

std::vector<Segment> SplitChain(const ir::Chain& chain, const BoxContext& context) {
  std::vector<Segment> out;
  for (size_t i = 0; i < chain.rules.size(); ++i) {
    const bool liftable = headerspace::LiftToBox(chain.rules[i], context).ok();
    if (out.empty() || out.back().liftable != liftable) out.push_back({i, i, liftable});
    out.back().end = i + 1;
  }
  return out;
}

}  // namespace rulejit::classify
