// The benchmark loop over Program::ClassifyBurst shared by jit_bench and
// classify_bench: bursts of 32 frames, as `rulejit bench`, acl_peer and the
// AF_XDP runtime call it, cycling through `frames`.
#ifndef RULEJIT_BENCH_BURST_LOOP_H_
#define RULEJIT_BENCH_BURST_LOOP_H_

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "rulejit/rulejit.h"

namespace rulejit {

inline void ClassifyBurstLoop(benchmark::State& state, const Program& program,
                              const std::vector<std::vector<uint8_t>>& frames) {
  std::vector<const uint8_t*> ptrs;
  std::vector<uint32_t> lens;
  for (const auto& f : frames) {
    ptrs.push_back(f.data());
    lens.push_back(static_cast<uint32_t>(f.size()));
  }
  constexpr uint32_t kBurst = 32;
  std::vector<Result> results(kBurst);
  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  RunState run_state;
  size_t at = 0;
  for (auto _ : state) {
    if (at + kBurst > ptrs.size()) at = 0;
    program.ClassifyBurst(Hook::kForward, &ptrs[at], &lens[at], kBurst, meta, results.data(),
                          &run_state);
    benchmark::DoNotOptimize(results.data());
    at += kBurst;
  }
  state.SetItemsProcessed(state.iterations() * kBurst);
}

}  // namespace rulejit

#endif  // RULEJIT_BENCH_BURST_LOOP_H_
