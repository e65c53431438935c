// QuiescentSlots: the reloader may retire an object only once no worker can
// still hold it.
#include "runtime/xdp/quiescence.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rulejit::runtime {
namespace {

TEST(QuiescentSlots, AwakeWorkerBlocksUntilItPassesOrIdles) {
  QuiescentSlots slots(2);
  EXPECT_TRUE(slots.AllPast(1));  // nobody started: all idle
  slots.Awake(0);
  EXPECT_FALSE(slots.AllPast(1));  // worker 0 may load generation 1's predecessor
  slots.Passed(0, 1);
  EXPECT_TRUE(slots.AllPast(1));
  EXPECT_FALSE(slots.AllPast(2));
  slots.Idle(0);
  EXPECT_TRUE(slots.AllPast(2));
  slots.Awake(0);  // back with what it last held: 1
  EXPECT_FALSE(slots.AllPast(2));
  EXPECT_TRUE(slots.AllPast(1));
}

// Workers load the current object, check it is alive while "using" it, and
// go idle now and then; the reloader swaps and retires (marks dead, keeps
// the memory so a late use is seen, not a crash) as soon as AllPast says.
TEST(QuiescentSlots, NoWorkerEverUsesARetiredObject) {
  struct Obj {
    uint64_t number = 0;
    std::atomic<bool> alive{true};
  };
  constexpr uint32_t kWorkers = 3;
  constexpr uint64_t kSwaps = 3000;
  QuiescentSlots slots(kWorkers);
  std::vector<std::unique_ptr<Obj>> all;
  all.push_back(std::make_unique<Obj>());
  all.back()->number = 1;
  std::atomic<Obj*> current{all.back().get()};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> dead_uses{0}, uses{0};

  std::vector<std::thread> workers;
  for (uint32_t w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      slots.Awake(w);
      for (uint64_t turn = 0; !stop.load(); ++turn) {
        Obj* obj = current.load(std::memory_order_seq_cst);
        for (int i = 0; i < 50; ++i) {
          if (!obj->alive.load(std::memory_order_relaxed)) ++dead_uses;
        }
        ++uses;
        slots.Passed(w, obj->number);
        if (turn % 7 == w) {
          slots.Idle(w);
          std::this_thread::yield();
          slots.Awake(w);
        }
      }
      slots.Idle(w);
    });
  }
  // Swap only once every worker is in its loop, so the swaps race them.
  while (uses.load() < kWorkers * 10) std::this_thread::yield();
  for (uint64_t n = 2; n <= kSwaps; ++n) {
    auto next = std::make_unique<Obj>();
    next->number = n;
    Obj* old = current.load();
    current.store(next.get(), std::memory_order_seq_cst);
    all.push_back(std::move(next));
    while (!slots.AllPast(n)) std::this_thread::yield();
    old->alive.store(false, std::memory_order_relaxed);
  }
  stop = true;
  for (auto& t : workers) t.join();
  EXPECT_EQ(dead_uses.load(), 0u);
  EXPECT_GT(uses.load(), kWorkers * 10);
}

}  // namespace
}  // namespace rulejit::runtime
