// Microbenchmarks of the reference interpreter on linear iptables chains,
// and of the iptables-save frontend.
//
// The ruleset for N rules is generated: rule i accepts
//   -s (10 + i/256).(i%256).0.0/16 -p tcp --dport (1000 + i)
// and the INPUT policy is DROP. Two packets per size: one that only the
// last rule matches (the worst case a linear chain has for a hit) and one
// that no rule matches (falls through to the policy). Items are packets.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "frontends/iptables/iptables.h"
#include "ir/diag.h"
#include "ir/interp.h"
#include "packet/parse.h"
#include "tests/support/frames.h"

namespace rulejit {
namespace {

// An iptables-save dump with `rules` generated INPUT rules.
std::string LinearDump(int rules) {
  std::string text =
      "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n"
      ":OUTPUT ACCEPT [0:0]\n";
  for (int i = 0; i < rules; ++i) {
    absl::StrAppendFormat(&text,
                          "-A INPUT -s %d.%d.0.0/16 -p tcp -m tcp --dport %d "
                          "-j ACCEPT\n",
                          10 + i / 256, i % 256, 1000 + i);
  }
  return text + "COMMIT\n";
}

// A SYN that rule `i` matches (its source network and port).
std::vector<uint8_t> FrameForRule(int i) {
  testing::FrameSpec spec;
  spec.src = absl::StrFormat("%d.%d.1.2", 10 + i / 256, i % 256);
  spec.dst = "192.0.2.1";
  spec.sport = 40000;
  spec.dport = static_cast<uint16_t>(1000 + i);
  return testing::BuildFrame(spec);
}

// A SYN no generated rule matches.
std::vector<uint8_t> FrameForNoRule() {
  testing::FrameSpec spec;
  spec.src = "192.0.2.99";
  spec.dst = "192.0.2.1";
  spec.dport = 9;
  return testing::BuildFrame(spec);
}

void RunLinearChain(benchmark::State& state, bool hit_last) {
  const int rules = static_cast<int>(state.range(0));
  ir::Diagnostics diags;
  std::string text = LinearDump(rules);
  int file = diags.AddFile("bench.ipt", text);
  absl::StatusOr<ir::Ruleset> ruleset =
      frontends::ParseIptablesSave(text, file, diags);
  if (!ruleset.ok()) {
    state.SkipWithError(diags.Format().c_str());
    return;
  }
  std::vector<uint8_t> frame =
      hit_last ? FrameForRule(rules - 1) : FrameForNoRule();
  PacketView view = packet::ParseEthernet(frame.data(), frame.size());
  PacketMeta meta;
  meta.has_iif = true;
  meta.iif = 1;
  ir::Interpreter interp(*ruleset);
  const ir::VerdictCode expected =
      hit_last ? ir::VerdictCode::kAccept : ir::VerdictCode::kDrop;
  if (interp.Run(ir::Hook::kInput, view, meta).verdict != expected) {
    state.SkipWithError(
        "unexpected verdict: benchmark would measure the wrong path");
    return;
  }
  for (auto _ : state) {
    ir::EvalResult result = interp.Run(ir::Hook::kInput, view, meta);
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["rules"] = rules;
}

void BM_InterpLinearChainLastRule(benchmark::State& state) {
  RunLinearChain(state, /*hit_last=*/true);
}
void BM_InterpLinearChainNoMatch(benchmark::State& state) {
  RunLinearChain(state, /*hit_last=*/false);
}
BENCHMARK(BM_InterpLinearChainLastRule)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_InterpLinearChainNoMatch)->Arg(10)->Arg(100)->Arg(1000);

// Frontend cost: parse (and lower) a 1000-rule dump. Items are rules.
void BM_IptablesParse(benchmark::State& state) {
  const int rules = static_cast<int>(state.range(0));
  const std::string text = LinearDump(rules);
  for (auto _ : state) {
    ir::Diagnostics diags;
    int file = diags.AddFile("bench.ipt", text);
    absl::StatusOr<ir::Ruleset> ruleset =
        frontends::ParseIptablesSave(text, file, diags);
    if (!ruleset.ok()) {
      state.SkipWithError(diags.Format().c_str());
      return;
    }
    benchmark::DoNotOptimize(ruleset);
  }
  state.SetItemsProcessed(state.iterations() * rules);
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_IptablesParse)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rulejit
