// The classifier (compiler/classify) against the asmjit and LLVM tiers on
// the ClassBench sets: lookup ns/packet over each set's trace (frames from
// frontends::TraceFrame, parsed in both cases; leaf sizes 4, 8, 16), the
// burst lookup over pre-extracted keys and Program::ClassifyBurst over the
// frames (BM_ProgramBurst), build time with the built
// structure's memory, and per tier:
//   BM_JitLinear / BM_LlvmLinear          default options (long liftable
//                                         runs go through the classifier)
//   BM_JitNoClassify / BM_LlvmNoClassify  every rule as the tier's code
//   BM_CompileJit / BM_CompileLlvm        Program::Compile, default options
//
//   build/bench/classify_bench --benchmark_filter=fw1_10K
//
// Each iteration classifies one trace packet (cycling through the trace);
// a mismatch against the trace's expected rule aborts the benchmark.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "api/internal.h"
#include "bench/burst_loop.h"
#include "compiler/classify/classifier.h"
#include "frontends/classbench/classbench.h"
#include "rulejit/rulejit.h"
#include "packet/parse.h"

namespace rulejit {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Set {
  ir::Ruleset ruleset;
  std::vector<frontends::TracePacket> trace;
  std::vector<std::vector<uint8_t>> frames;
};

// Loads a set once per process (the benchmarks of one set share it).
const Set& LoadSet(const std::string& name) {
  static auto* cache = new std::map<std::string, std::unique_ptr<Set>>();
  auto& slot = (*cache)[name];
  if (slot) return *slot;
  slot = std::make_unique<Set>();
  const std::string dir = std::string(RULEJIT_SHARED_DIR) + "/classbench/";
  ir::Diagnostics diags;
  std::string rules = ReadFile(dir + name), trace = ReadFile(dir + name + "_trace");
  int rf = diags.AddFile(name, rules), tf = diags.AddFile(name + "_trace", trace);
  auto rs = frontends::ParseClassBench(rules, rf, diags);
  auto tr = frontends::ParseClassBenchTrace(trace, tf, diags);
  if (!rs.ok() || !tr.ok()) {
    std::fprintf(stderr, "%s\n", diags.Format().c_str());
    std::abort();
  }
  slot->ruleset = *std::move(rs);
  slot->trace = *std::move(tr);
  for (const auto& t : slot->trace) slot->frames.push_back(frontends::TraceFrame(t));
  return *slot;
}

const ir::Chain& ChainOf(const Set& s) { return s.ruleset.tables[0].chains[0]; }

// Argument: the leaf size.
void BM_ClassifierLookup(benchmark::State& state, std::string name) {
  const Set& s = LoadSet(name);
  classify::ClassifierOptions options;
  options.leaf_size = static_cast<uint32_t>(state.range(0));
  auto c = classify::Classifier::Build(ChainOf(s), 0, ChainOf(s).rules.size(), options);
  if (!c.ok()) {
    state.SkipWithError(std::string(c.status().message()).c_str());
    return;
  }
  size_t i = 0;
  for (auto _ : state) {
    const auto& f = s.frames[i];
    PacketView v = packet::ParseEthernet(f.data(), static_cast<uint32_t>(f.size()));
    int rule = c->FirstMatch(v);
    benchmark::DoNotOptimize(rule);
    if (rule != static_cast<int>(s.trace[i].expected_rule) - 1) {
      state.SkipWithError("mismatch against the trace");
      return;
    }
    if (++i == s.frames.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["memory_bytes"] = static_cast<double>(c->memory_bytes());
  state.counters["depth"] = static_cast<double>(c->stats().max_depth);
}

// Argument: the widest instruction set the lookups may use (classify::Isa:
// 0 baseline, 1 AVX2, 2 AVX-512); skipped where the CPU lacks it.
void BM_ClassifierBurst(benchmark::State& state, std::string name) {
  const Set& s = LoadSet(name);
  classify::ClassifierOptions options;
  options.max_isa = static_cast<classify::Isa>(state.range(0));
  if (!classify::CpuHas(options.max_isa)) {
    state.SkipWithError("the CPU lacks this instruction set");
    return;
  }
  auto c = classify::Classifier::Build(ChainOf(s), 0, ChainOf(s).rules.size(), options);
  if (!c.ok()) {
    state.SkipWithError(std::string(c.status().message()).c_str());
    return;
  }
  std::vector<classify::Key> keys;
  for (const auto& f : s.frames) {
    keys.push_back(classify::ExtractKey(packet::ParseEthernet(f.data(), f.size())));
  }
  constexpr uint32_t kBurst = 32;
  std::vector<int> out(kBurst);
  size_t i = 0;
  for (auto _ : state) {
    if (i + kBurst > keys.size()) i = 0;
    c->FirstMatchBurst(keys.data() + i, kBurst, out.data());
    benchmark::DoNotOptimize(out.data());
    i += kBurst;
  }
  state.SetItemsProcessed(state.iterations() * kBurst);
  const classify::Classifier::Stats& st = c->stats();
  state.counters["trees"] = static_cast<double>(st.trees);
  state.counters["leaves"] = static_cast<double>(st.leaves);
  state.counters["boxes_per_leaf"] =
      st.leaves ? static_cast<double>(st.leaf_entries) / static_cast<double>(st.leaves) : 0;
  state.counters["max_leaf"] = static_cast<double>(st.max_leaf);
  // Trees a packet of the trace walks (the single lookup's count).
  double walked = 0;
  for (const classify::Key& key : keys) walked += c->TreesWalked(key);
  state.counters["trees_walked"] = walked / static_cast<double>(keys.size());
  // Binary splits per inner node (8: every node full).
  state.counters["splits_per_node"] =
      st.nodes > st.leaves ? static_cast<double>(st.inner_nodes) /
                                 static_cast<double>(st.nodes - st.leaves)
                           : 0;
}

// Program::ClassifyBurst over the trace's frames in bursts of 32, as
// `rulejit bench` and acl_peer call it: parse (or fast key), the burst
// lookup, verdicts and counters. Beside BM_ClassifierBurst/SET/1 it shows
// what the path around the lookup costs.
void BM_ProgramBurst(benchmark::State& state, std::string name) {
  const Set& s = LoadSet(name);
  auto program = Program::Compile(RulesetOf(s.ruleset), {.backend = Backend::kJit});
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  ClassifyBurstLoop(state, **program, s.frames);
}

// One compiled tier over the set's trace. `classify` false: every rule is
// the tier's own code (no decision structure).
void TierOverTrace(benchmark::State& state, const std::string& name, Backend backend,
                   bool classify) {
  const Set& s = LoadSet(name);
  CompileOptions options;
  options.backend = backend;
  options.classify = classify;
  auto program = Program::Compile(RulesetOf(s.ruleset), options);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  PacketMeta meta;
  size_t i = 0;
  for (auto _ : state) {
    const auto& f = s.frames[i];
    Result r = (*program)->Classify(Hook::kForward, f.data(), static_cast<uint32_t>(f.size()), meta);
    benchmark::DoNotOptimize(r);
    if (r.decided_by.rule != static_cast<int>(s.trace[i].expected_rule) - 1) {
      state.SkipWithError("mismatch against the trace");
      return;
    }
    if (++i == s.frames.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_JitLinear(benchmark::State& state, std::string name) {
  TierOverTrace(state, name, Backend::kJit, true);
}
void BM_LlvmLinear(benchmark::State& state, std::string name) {
  TierOverTrace(state, name, Backend::kLlvm, true);
}
void BM_JitNoClassify(benchmark::State& state, std::string name) {
  TierOverTrace(state, name, Backend::kJit, false);
}
void BM_LlvmNoClassify(benchmark::State& state, std::string name) {
  TierOverTrace(state, name, Backend::kLlvm, false);
}

// Program::Compile of the set for a tier (default options: classifiers).
void CompileTier(benchmark::State& state, const std::string& name, Backend backend) {
  const Set& s = LoadSet(name);
  CompileOptions options;
  options.backend = backend;
  for (auto _ : state) {
    auto program = Program::Compile(RulesetOf(s.ruleset), options);
    benchmark::DoNotOptimize(program);
  }
}
void BM_CompileJit(benchmark::State& state, std::string name) {
  CompileTier(state, name, Backend::kJit);
}
void BM_CompileLlvm(benchmark::State& state, std::string name) {
  CompileTier(state, name, Backend::kLlvm);
}

void BM_ClassifierBuild(benchmark::State& state, std::string name) {
  const Set& s = LoadSet(name);
  size_t memory = 0;
  for (auto _ : state) {
    auto c = classify::Classifier::Build(ChainOf(s), 0, ChainOf(s).rules.size());
    memory = c.ok() ? c->memory_bytes() : 0;
    benchmark::DoNotOptimize(memory);
  }
  state.counters["memory_bytes"] = static_cast<double>(memory);
}

#define CLASSIFY_SET(set)                                                               \
  BENCHMARK_CAPTURE(BM_ClassifierLookup, set, std::string(#set))->Arg(4)->Arg(8)->Arg(16); \
  BENCHMARK_CAPTURE(BM_ClassifierBurst, set, std::string(#set))->Arg(0)->Arg(1)->Arg(2); \
  BENCHMARK_CAPTURE(BM_ProgramBurst, set, std::string(#set));                          \
  BENCHMARK_CAPTURE(BM_JitLinear, set, std::string(#set));                             \
  BENCHMARK_CAPTURE(BM_LlvmLinear, set, std::string(#set));                            \
  BENCHMARK_CAPTURE(BM_JitNoClassify, set, std::string(#set));                         \
  BENCHMARK_CAPTURE(BM_LlvmNoClassify, set, std::string(#set));                        \
  BENCHMARK_CAPTURE(BM_CompileJit, set, std::string(#set))->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_CompileLlvm, set, std::string(#set))->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_ClassifierBuild, set, std::string(#set))                        \
      ->Unit(benchmark::kMillisecond)                                                  \
      ->Iterations(3);

CLASSIFY_SET(acl1_1K)
CLASSIFY_SET(fw1_1K)
CLASSIFY_SET(ipc1_1K)
CLASSIFY_SET(acl1_10K)
CLASSIFY_SET(fw1_10K)
CLASSIFY_SET(ipc1_10K)

}  // namespace
}  // namespace rulejit
