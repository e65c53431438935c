// Interpreter vs asmjit vs LLVM on linear chains of N iptables-style rules
// (`-s 10.X.Y.0/24 -p tcp --dport P -j ACCEPT`), with a packet that matches
// no rule (the worst case: every rule runs) and compile time per tier.
//   BM_Classify*  default options (runs of >= 256 liftable rules go to a
//                 classifier, so from 1000 rules the tiers share it);
//                 BM_ClassifyBurstJit: Program::ClassifyBurst over frames
//                 that hit (1 in 4) and miss
//   BM_Linear*    classify off: every rule is the tier's own code (runs of
//                 rules alike but for one constant still share a compare
//                 tree: merge-set-runs); BM_LinearRules* also without that
//                 pass, one rule after the other (NoShare: nor share-loads)
//   BM_Compile*   Program::Compile, default options; BM_CompileLinear*
//                 classify off
//   BM_Seed*      the seed chain: INPUT jumps to N x `-A test ! -s
//                 10.0.0.0/10 -j DROP` (parsed from iptables-save text,
//                 default options), a packet from
//                 10.1.1.1 that every rule lets pass; BM_CompileSeed*
//   BM_SharedFields*  N nft rules loading the same four fields, passing
//                 all but the last range: share-loads on, and off (NoShare)
//
//   build/bench/jit_bench --benchmark_filter='Jit|Llvm'
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/internal.h"
#include "bench/burst_loop.h"
#include "compiler/classify/classifier.h"
#include "packet/parse.h"
#include "rulejit/rulejit.h"

namespace rulejit {
namespace {

ir::Node N(ir::Expr e) { return ir::Node{std::move(e), {}}; }

// The compiled program, or null after marking the benchmark skipped.
std::unique_ptr<const Program> CompileOrSkip(benchmark::State& state, ir::Ruleset ruleset,
                                             const CompileOptions& options) {
  auto program = Program::Compile(RulesetOf(std::move(ruleset)), options);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return nullptr;
  }
  return *std::move(program);
}

ir::Ruleset LinearChain(int rules) {
  ir::Ruleset rs;
  rs.files.push_back("bench");
  ir::Table t;
  t.family = ir::Family::kIp;
  t.name = "filter";
  ir::Chain c;
  c.name = "FORWARD";
  c.base = ir::BaseChain{"filter", ir::Hook::kForward, 0, {}, ir::VerdictCode::kDrop};
  for (int i = 0; i < rules; ++i) {
    ir::Rule r;
    r.exprs.push_back(N(ir::PayloadLoad{ir::PayloadBase::kNetwork, 12, 4, 1}));
    r.exprs.push_back(N(ir::Bitwise{ir::BitwiseOp::kMaskXor, 1, 1, 4,
                                    {0xff, 0xff, 0xff, 0}, {0, 0, 0, 0}, 0}));
    r.exprs.push_back(N(ir::Cmp{ir::CmpOp::kEq, 1,
                                {10, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i), 0}}));
    r.exprs.push_back(N(ir::MetaLoad{ir::MetaKey::kL4Proto, 1}));
    r.exprs.push_back(N(ir::Cmp{ir::CmpOp::kEq, 1, {6}}));
    r.exprs.push_back(N(ir::PayloadLoad{ir::PayloadBase::kTransport, 2, 2, 1}));
    uint16_t port = 1000 + i % 60000;
    r.exprs.push_back(N(ir::Cmp{ir::CmpOp::kEq, 1,
                                {static_cast<uint8_t>(port >> 8), static_cast<uint8_t>(port)}}));
    r.exprs.push_back(N(ir::Counter{}));
    r.exprs.push_back(N(ir::Immediate{ir::kVerdictReg, {}, {ir::VerdictCode::kAccept, ""}}));
    c.rules.push_back(std::move(r));
  }
  t.chains.push_back(std::move(c));
  rs.tables.push_back(std::move(t));
  return rs;
}

// 10.255.255.1 -> 10.0.0.2 tcp 1234 -> 9: matches no rule above.
std::vector<uint8_t> MissFrame() {
  std::vector<uint8_t> f(14 + 20 + 20, 0);
  f[12] = 0x08;
  f[14] = 0x45;
  f[14 + 2] = 0;
  f[14 + 3] = 40;
  f[14 + 8] = 64;
  f[14 + 9] = 6;
  const uint8_t src[4] = {10, 255, 255, 1}, dst[4] = {10, 0, 0, 2};
  std::memcpy(&f[14 + 12], src, 4);
  std::memcpy(&f[14 + 16], dst, 4);
  f[34] = 0x04;
  f[35] = 0xd2;
  f[37] = 9;
  f[34 + 12] = 0x50;
  return f;
}

// The seed chain as iptables-save prints it: INPUT jumps to `test`, which
// holds N copies of the rule.
ir::Ruleset SeedChain(int rules) {
  std::string text = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
                     ":test - [0:0]\n-A INPUT -j test\n";
  for (int i = 0; i < rules; ++i) text += "-A test ! -s 10.0.0.0/10 -j DROP\n";
  text += "COMMIT\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "seed.ipt");
  return rs.ok() ? IrOf(*rs) : ir::Ruleset{};
}

void Seed(benchmark::State& state, Backend backend) {
  const auto program =
      CompileOrSkip(state, SeedChain(state.range(0)), {.backend = backend});
  if (!program) return;
  std::vector<uint8_t> frame = MissFrame();
  frame[14 + 13] = 1;  // 10.1.255.1: inside 10.0.0.0/10, so no rule drops it
  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  RunState run_state;
  for (auto _ : state) {
    Result r = program->Classify(Hook::kInput, frame.data(), frame.size(), meta, &run_state);
    if (r.verdict != Verdict::kAccept) state.SkipWithError("seed frame was dropped");
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

void CompileSeed(benchmark::State& state, Backend backend) {
  ir::Ruleset rs = SeedChain(state.range(0));
  for (auto _ : state) {
    auto program = Program::Compile(RulesetOf(rs), {.backend = backend});
    benchmark::DoNotOptimize(program);
  }
}

void BM_SeedInterp(benchmark::State& s) { Seed(s, Backend::kInterp); }
void BM_SeedJit(benchmark::State& s) { Seed(s, Backend::kJit); }
void BM_SeedLlvm(benchmark::State& s) { Seed(s, Backend::kLlvm); }
void BM_CompileSeedJit(benchmark::State& s) { CompileSeed(s, Backend::kJit); }
void BM_CompileSeedLlvm(benchmark::State& s) { CompileSeed(s, Backend::kLlvm); }
BENCHMARK(BM_SeedInterp)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_SeedJit)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_SeedLlvm)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_CompileSeedJit)->RangeMultiplier(10)->Range(10, 10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileSeedLlvm)->RangeMultiplier(10)->Range(10, 10000)->Unit(benchmark::kMillisecond);

// N rules `ip saddr 10.0.0.0/8 ip daddr 10.0.0.0/16 tcp sport 1024-65535
// tcp dport P-P+1 accept` that the miss frame passes but for the last
// range: every rule loads four fields the others load too (share-loads).
ir::Ruleset SharedFieldsChain(int rules) {
  std::string text = "table ip t {\n chain forwarding {\n  type filter hook forward priority 0; policy drop;\n";
  for (int i = 0; i < rules; ++i) {
    const int port = 10 + 2 * (i % 30000);
    text += "  ip saddr 10.0.0.0/8 ip daddr 10.0.0.0/16 tcp sport 1024-65535 tcp dport " +
            std::to_string(port) + "-" + std::to_string(port + 1) + " accept\n";
  }
  text += " }\n}\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(text, "shared.nft");
  return rs.ok() ? IrOf(*rs) : ir::Ruleset{};
}

void SharedFields(benchmark::State& state, bool share) {
  CompileOptions options{.backend = Backend::kJit};
  options.classify = false;
  if (!share) options.disabled_passes.push_back("share-loads");
  const auto program =
      CompileOrSkip(state, SharedFieldsChain(state.range(0)), options);
  if (!program) return;
  std::vector<uint8_t> frame = MissFrame();
  PacketMeta meta;
  RunState run_state;
  for (auto _ : state) {
    Result r = program->Classify(Hook::kForward, frame.data(), frame.size(), meta, &run_state);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_SharedFieldsJit(benchmark::State& s) { SharedFields(s, true); }
void BM_SharedFieldsNoShareJit(benchmark::State& s) { SharedFields(s, false); }
BENCHMARK(BM_SharedFieldsJit)->RangeMultiplier(10)->Range(10, 1000);
BENCHMARK(BM_SharedFieldsNoShareJit)->RangeMultiplier(10)->Range(10, 1000);

void Classify(benchmark::State& state, Backend backend, bool classify = true,
              bool merge_runs = true, bool share_loads = true) {
  CompileOptions options{.backend = backend};
  options.classify = classify;
  if (!merge_runs) options.disabled_passes.push_back("merge-set-runs");
  if (!share_loads) options.disabled_passes.push_back("share-loads");
  const auto program =
      CompileOrSkip(state, LinearChain(state.range(0)), options);
  if (!program) return;
  std::vector<uint8_t> frame = MissFrame();
  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  RunState run_state;
  for (auto _ : state) {
    Result r = program->Classify(Hook::kForward, frame.data(), frame.size(), meta, &run_state);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

// The distinct chain through ClassifyBurst (bursts of 32, as `rulejit
// bench` and the AF_XDP runtime call it), over 1024 frames: a quarter aimed
// at a rule (source 10.X.Y.1 and port of rule i), the rest at random
// sources in 10.0.0.0/8 and random ports, nearly all misses.
void ClassifyBurst(benchmark::State& state, Backend backend) {
  const int rules = static_cast<int>(state.range(0));
  const auto program =
      CompileOrSkip(state, LinearChain(rules), {.backend = backend});
  if (!program) return;
  std::vector<std::vector<uint8_t>> frames(1024, MissFrame());
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u; };
  for (size_t i = 0; i < frames.size(); ++i) {
    std::vector<uint8_t>& f = frames[i];
    const uint32_t r = next() >> 8;
    const int rule = static_cast<int>(r % static_cast<uint32_t>(rules));
    const uint16_t port = i % 4 == 0 ? static_cast<uint16_t>(1000 + rule % 60000)
                                     : static_cast<uint16_t>(next() >> 16);
    f[14 + 13] = i % 4 == 0 ? static_cast<uint8_t>(rule >> 8) : static_cast<uint8_t>(r >> 16);
    f[14 + 14] = i % 4 == 0 ? static_cast<uint8_t>(rule) : static_cast<uint8_t>(r >> 8);
    f[36] = static_cast<uint8_t>(port >> 8);
    f[37] = static_cast<uint8_t>(port);
  }
  ClassifyBurstLoop(state, *program, frames);
}

void BM_ClassifyInterp(benchmark::State& s) { Classify(s, Backend::kInterp); }
void BM_ClassifyBurstJit(benchmark::State& s) { ClassifyBurst(s, Backend::kJit); }
void BM_ClassifyJit(benchmark::State& s) { Classify(s, Backend::kJit); }
void BM_ClassifyLlvm(benchmark::State& s) { Classify(s, Backend::kLlvm); }
void BM_LinearJit(benchmark::State& s) { Classify(s, Backend::kJit, false); }
void BM_LinearLlvm(benchmark::State& s) { Classify(s, Backend::kLlvm, false); }
void BM_LinearRulesInterp(benchmark::State& s) { Classify(s, Backend::kInterp, false, false); }
void BM_LinearRulesJit(benchmark::State& s) { Classify(s, Backend::kJit, false, false); }
void BM_LinearRulesNoShareJit(benchmark::State& s) {
  Classify(s, Backend::kJit, false, false, false);
}
BENCHMARK(BM_ClassifyInterp)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_ClassifyJit)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_ClassifyBurstJit)->RangeMultiplier(10)->Range(1000, 10000);
BENCHMARK(BM_ClassifyLlvm)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_LinearJit)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_LinearLlvm)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_LinearRulesInterp)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_LinearRulesJit)->RangeMultiplier(10)->Range(10, 10000);
BENCHMARK(BM_LinearRulesNoShareJit)->RangeMultiplier(10)->Range(10, 10000);

void Compile(benchmark::State& state, Backend backend, bool classify = true) {
  ir::Ruleset rs = LinearChain(state.range(0));
  CompileOptions options{.backend = backend};
  options.classify = classify;
  for (auto _ : state) {
    auto program = Program::Compile(RulesetOf(rs), options);
    benchmark::DoNotOptimize(program);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_CompileJit(benchmark::State& s) { Compile(s, Backend::kJit); }
void BM_CompileLlvm(benchmark::State& s) { Compile(s, Backend::kLlvm); }
void BM_CompileLinearJit(benchmark::State& s) { Compile(s, Backend::kJit, false); }
void BM_CompileLinearLlvm(benchmark::State& s) { Compile(s, Backend::kLlvm, false); }
BENCHMARK(BM_CompileJit)->RangeMultiplier(10)->Range(10, 10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileLlvm)->RangeMultiplier(10)->Range(10, 10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileLinearJit)->RangeMultiplier(10)->Range(10, 10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileLinearLlvm)->RangeMultiplier(10)->Range(10, 10000)->Unit(benchmark::kMillisecond);

// The classifier alone on the distinct chain: Classifier::FirstMatch of
// the miss frame's key (no parse, no Program), argument: the widest
// instruction set (classify::Isa: 0 baseline, 1 AVX2, 2 AVX-512); with
// the tree's shape (trees, leaves, nodes the key's walk visits).
void BM_ClassifierKey(benchmark::State& state) {
  const ir::Ruleset rs = LinearChain(10000);
  classify::ClassifierOptions options;
  options.max_isa = static_cast<classify::Isa>(state.range(0));
  if (!classify::CpuHas(options.max_isa)) {
    state.SkipWithError("the CPU lacks this instruction set");
    return;
  }
  const ir::Chain& chain = rs.tables[0].chains[0];
  auto c = classify::Classifier::Build(chain, 0, chain.rules.size(), options);
  if (!c.ok()) {
    state.SkipWithError(std::string(c.status().message()).c_str());
    return;
  }
  const std::vector<uint8_t> frame = MissFrame();
  const classify::Key key =
      c->KeyOf(packet::ParseEthernet(frame.data(), static_cast<uint32_t>(frame.size())));
  for (auto _ : state) {
    int rule = c->FirstMatch(key);
    benchmark::DoNotOptimize(rule);
  }
  state.SetItemsProcessed(state.iterations());
  const classify::Classifier::Arrays a = c->arrays();
  uint32_t steps = 0;
  for (uint32_t t = 0; t < a.tree_count; ++t) {
    for (uint32_t n = a.trees[t].root; a.nodes[n].dim != classify::Classifier::kLeafDim; ++steps) {
      const classify::Classifier::Node& node = a.nodes[n];
      uint32_t below = 0;
      for (uint32_t i = 0; i < node.used; ++i) {
        below += (static_cast<uint32_t>(node.threshold[i]) ^ 0x80000000u) < key.v[node.dim];
      }
      n = node.child + below;
    }
  }
  state.counters["trees"] = static_cast<double>(c->stats().trees);
  state.counters["leaves"] = static_cast<double>(c->stats().leaves);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["binary_depth"] = static_cast<double>(c->stats().max_depth);
}
BENCHMARK(BM_ClassifierKey)->DenseRange(0, 2);

}  // namespace
}  // namespace rulejit
