// `rulejit bench --sweep 10,100,1000,10000 [--svg FILE] [--no-classify]`:
// ns/packet against the number of rules, for every tier (interp, jit,
// llvm), on generated rulesets, printed as a table and, with --svg, drawn
// as an SVG plot (tools/svg_plot.h; log axes, one series per tier).
//
// The ruleset of N rules is one forward chain, policy drop, rule i
//   ip saddr 10.(i/256).(i%256).0/24 tcp dport (1024 + 7i mod 60000) accept
// and the trace 1024 TCP packets, each aimed at a rule spread over the
// whole chain (every 8th misses every rule: the policy decides it). The
// kernel is not measured by bench (bench/ has the kernel's throughput
// scripts), so the plot shows rulejit's tiers only.
#ifndef RULEJIT_TOOLS_BENCH_SWEEP_H_
#define RULEJIT_TOOLS_BENCH_SWEEP_H_

#include <cstdint>
#include <vector>

#include "rulejit/rulejit.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace rulejit::tools {

struct Measurement {
  uint64_t packets = 0;
  double seconds = 0;
};

// Classifies `frames` in bursts of 32 at `hook`, repeating them until
// `min_seconds` have passed.
Measurement MeasureBursts(const Program& program, Hook hook,
                          const std::vector<std::vector<uint8_t>>& frames,
                          const PacketMeta& meta, double min_seconds);

int RunBenchSweep(const Args& args, Streams io);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_BENCH_SWEEP_H_
