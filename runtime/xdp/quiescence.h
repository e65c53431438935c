// Quiescent-state tracking for swapping what the workers read without a
// lock on their side (a small RCU): the reloader publishes a new object
// under a higher generation number and frees the old one only once every
// worker has shown it no longer holds it.
//
//   worker, each burst:   g = current.load()  ...use g...  Passed(w, g.number)
//   worker, going idle:   Idle(w)   [block in poll]   Awake(w)
//   reloader:             current.store(next)  ...  until AllPast(next.number)
//                         then free the old object
//
// A worker holds at most one object at a time, the one it loaded at the
// start of its burst. After Passed(w, n) it holds nothing older than n;
// while idle it holds nothing at all. So once every worker has passed n or
// is idle, no worker can still use an object older than n.
//
// Ordering: Passed is a release store (the burst's reads of the old object
// happen before the reloader's acquire load sees n). Awake is a seq_cst
// store followed by the worker's seq_cst load of `current`; the reloader's
// store of `current` is seq_cst too and precedes its loads here. So either
// the reloader sees the worker awake (not idle, number < n: it waits) or the
// worker's load sees the new object; it can never free what a waking worker
// is about to load.
//
// The worker side costs nothing per packet and, in a steady flow, nothing
// per burst: Passed stores only when the number changes.
#ifndef RULEJIT_RUNTIME_XDP_QUIESCENCE_H_
#define RULEJIT_RUNTIME_XDP_QUIESCENCE_H_

#include <atomic>
#include <cstdint>
#include <memory>

namespace rulejit::runtime {

class QuiescentSlots {
 public:
  explicit QuiescentSlots(uint32_t workers);

  // Worker side: `worker` in [0, workers).
  void Passed(uint32_t worker, uint64_t number) {
    Slot& slot = slots_[worker];
    if (slot.last == number) return;
    slot.last = number;
    slot.seen.store(number, std::memory_order_release);
  }
  void Idle(uint32_t worker) {
    slots_[worker].seen.store(kIdle, std::memory_order_release);
  }
  void Awake(uint32_t worker) {
    Slot& slot = slots_[worker];
    slot.seen.store(slot.last, std::memory_order_seq_cst);
  }

  // Reloader side: true once every worker has passed `number` or is idle.
  bool AllPast(uint64_t number) const;

 private:
  static constexpr uint64_t kIdle = UINT64_MAX;
  struct alignas(64) Slot {
    std::atomic<uint64_t> seen{kIdle};
    uint64_t last = 0;  // the worker's own copy of what it published
  };
  uint32_t count_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_XDP_QUIESCENCE_H_
