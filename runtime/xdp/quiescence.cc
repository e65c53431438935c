// Quiescent-state tracking for the workers (see quiescence.h).
#include "runtime/xdp/quiescence.h"

namespace rulejit::runtime {

QuiescentSlots::QuiescentSlots(uint32_t workers)
    : count_(workers), slots_(std::make_unique<Slot[]>(workers)) {}

bool QuiescentSlots::AllPast(uint64_t number) const {
  for (uint32_t w = 0; w < count_; ++w) {
    if (slots_[w].seen.load(std::memory_order_seq_cst) < number) return false;
  }
  return true;
}

}  // namespace rulejit::runtime
