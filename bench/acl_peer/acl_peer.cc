// acl_peer: rulejit against DPDK's rte_acl on the ClassBench sets, side by
// side in one process.
//
//   build/bench/acl_peer [--sets acl1_10K,fw1_10K,ipc1_10K] [--rounds 5]
//                        [--min-seconds 0.5] [--dir ../shared/classbench] [--json]
//                        [-- EAL-ARGS...]
//
// Both read the same Ethernet frames (frontends::TraceFrame of each trace
// line): rulejit classifies whole frames with Program::ClassifyBurst
// (backend jit, classifier on, bursts of 32: what `rulejit bench` does),
// rte_acl gets pointers into those frames at the IPv4 protocol byte
// (bursts of 64, one category). Rules and traces come from rulejit's own
// ClassBench parser. Per set and round: rulejit, then every rte_acl
// algorithm this CPU supports, each building its structure (timed), one
// checked pass against the trace's expected rules, then the trace over and
// over until --min-seconds have passed. The table shows medians over the
// rounds; ratio = rte_acl ns / rulejit ns (> 1: rulejit is faster).
// Memory: rulejit's Program::memory_bytes(); rte_acl's DPDK heap bytes
// left allocated by rte_acl_build (its runtime tables); and for both the
// peak resident growth while building (build_rss.h; the largest of the
// rounds).
//
// Exit status: 0; 1 if either side mismatched a trace's expected rule;
// 2 on bad arguments, unreadable files or a failed build.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/internal.h"
#include "bench/acl_peer/build_rss.h"
#include "bench/acl_peer/dpdk_acl.h"
#include "compiler/classify/classifier.h"
#include "frontends/classbench/classbench.h"
#include "rulejit/rulejit.h"

namespace rulejit::peer {
namespace {

constexpr uint32_t kRulejitBurst = 32;
constexpr uint32_t kAclBurst = 64;

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Options {
  std::vector<std::string> sets = {"acl1_10K", "fw1_10K", "ipc1_10K"};
  int rounds = 5;
  double min_seconds = 0.5;
  std::string dir = std::string(RULEJIT_SHARED_DIR) + "/classbench";
  bool json = false;
  std::vector<std::string> eal_args;  // after `--`, appended to ours
};

constexpr const char* kUsage =
    "usage: acl_peer [--sets A,B,...] [--rounds N] [--min-seconds S] [--dir D] [--json]\n"
    "                [-- EAL-ARGS...]\n";

// --flag VALUE or --flag=VALUE.
std::optional<Options> ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--") {
      o.eal_args.assign(argv + i + 1, argv + argc);
      break;
    }
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (arg != "--json" && i + 1 < argc) {
      value = argv[++i];
    }
    if (arg == "--json") {
      o.json = true;
    } else if (arg == "--sets" && !value.empty()) {
      o.sets = absl::StrSplit(value, ',', absl::SkipEmpty());
    } else if (arg == "--rounds" && std::atoi(value.c_str()) > 0) {
      o.rounds = std::atoi(value.c_str());
    } else if (arg == "--min-seconds" && std::atof(value.c_str()) > 0) {
      o.min_seconds = std::atof(value.c_str());
    } else if (arg == "--dir" && !value.empty()) {
      o.dir = value;
    } else {
      return std::nullopt;
    }
  }
  return o;
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One ClassBench set, parsed once: the chain for rulejit, the fields for
// rte_acl, the trace as frames with both tools' input pointers.
struct Set {
  std::string name;
  ir::Ruleset ruleset;
  std::vector<frontends::ClassBenchRule> rules;
  std::vector<std::vector<uint8_t>> frames;
  std::vector<const uint8_t*> frame_ptrs;
  std::vector<uint32_t> frame_lens;
  std::vector<const uint8_t*> acl_ptrs;  // frame + kAclDataOffset
  std::vector<uint32_t> expected;        // 1-based rule line
};

std::optional<Set> LoadSet(const std::string& dir, const std::string& name) {
  const std::string rules_path = dir + "/" + name, trace_path = rules_path + "_trace";
  std::optional<std::string> rules_text = ReadFile(rules_path), trace_text = ReadFile(trace_path);
  if (!rules_text || !trace_text) {
    std::fprintf(stderr, "acl_peer: cannot read %s or %s\n", rules_path.c_str(), trace_path.c_str());
    return std::nullopt;
  }
  ir::Diagnostics diags;
  const int rf = diags.AddFile(rules_path, *rules_text), tf = diags.AddFile(trace_path, *trace_text);
  auto ruleset = frontends::ParseClassBench(*rules_text, rf, diags);
  auto rules = frontends::ParseClassBenchRules(*rules_text, rf, diags);
  auto trace = frontends::ParseClassBenchTrace(*trace_text, tf, diags);
  if (!ruleset.ok() || !rules.ok() || !trace.ok()) {
    std::fprintf(stderr, "%s", diags.Format().c_str());
    return std::nullopt;
  }
  Set set;
  set.name = name;
  set.ruleset = *std::move(ruleset);
  set.rules = *std::move(rules);
  for (const frontends::TracePacket& p : *trace) {
    set.frames.push_back(frontends::TraceFrame(p));
    set.expected.push_back(p.expected_rule);
  }
  for (const std::vector<uint8_t>& f : set.frames) {
    set.frame_ptrs.push_back(f.data());
    set.frame_lens.push_back(static_cast<uint32_t>(f.size()));
    set.acl_ptrs.push_back(f.data() + kAclDataOffset);
  }
  return set;
}

// One tool (or rte_acl algorithm) in one round.
struct Sample {
  double ns_per_packet = 0;
  double build_ms = 0;
  size_t memory_bytes = 0;
  size_t build_peak_bytes = 0;  // resident memory the build rose by at most
  uint64_t mismatches = 0;
};

// Runs `burst(first, n)` over the trace until min_seconds have passed.
template <typename Burst>
double NsPerPacket(size_t packets, uint32_t burst_size, double min_seconds, Burst burst) {
  uint64_t done = 0;
  double seconds = 0;
  const Clock::time_point start = Clock::now();
  while (seconds < min_seconds) {
    for (size_t i = 0; i < packets; i += burst_size) {
      burst(i, static_cast<uint32_t>(std::min<size_t>(burst_size, packets - i)));
    }
    done += packets;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return seconds * 1e9 / static_cast<double>(done);
}

std::optional<Sample> RunRulejit(const Set& set, double min_seconds) {
  CompileOptions options;
  options.backend = Backend::kJit;
  options.classify = true;
  Sample s;
  Ruleset ruleset = RulesetOf(set.ruleset);  // Compile consumes its ruleset
  BuildRss rss;
  rss.Start();
  const Clock::time_point start = Clock::now();
  auto program = Program::Compile(std::move(ruleset), options);
  s.build_ms = MsSince(start);
  s.build_peak_bytes = rss.PeakBytes();
  if (!program.ok()) {
    std::fprintf(stderr, "acl_peer: %s: rulejit: %s\n", set.name.c_str(),
                 std::string(program.status().message()).c_str());
    return std::nullopt;
  }
  const Program& p = **program;
  s.memory_bytes = p.memory_bytes();
  // The deciding rule's source line (the policy has none: 0).
  const ir::Ruleset& rs = IrOf(p.ruleset());
  auto line_of = [&rs](const RuleRef& ref) -> uint32_t {
    if (ref.table < 0 || ref.chain < 0 || ref.rule < 0) return 0;
    return rs.tables[ref.table].chains[ref.chain].rules[ref.rule].loc.line;
  };
  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  RunState state;
  std::vector<Result> results(kRulejitBurst);
  auto burst = [&](size_t first, uint32_t n) {
    p.ClassifyBurst(Hook::kForward, &set.frame_ptrs[first], &set.frame_lens[first], n, meta,
                    results.data(), &state);
  };
  const size_t packets = set.frames.size();
  for (size_t i = 0; i < packets; i += kRulejitBurst) {
    const auto n = static_cast<uint32_t>(std::min<size_t>(kRulejitBurst, packets - i));
    burst(i, n);
    for (uint32_t j = 0; j < n; ++j) s.mismatches += line_of(results[j].decided_by) != set.expected[i + j];
  }
  s.ns_per_packet = NsPerPacket(packets, kRulejitBurst, min_seconds, burst);
  return s;
}

Sample RunAclAlgorithm(const Set& set, const DpdkAcl& acl, const AclAlgorithm& alg,
                       double min_seconds) {
  Sample s;
  const size_t packets = set.frames.size();
  std::vector<uint32_t> results(packets);
  auto burst = [&](size_t first, uint32_t n) {
    acl.Classify(alg, const_cast<const uint8_t**>(&set.acl_ptrs[first]), &results[first], n);
  };
  for (size_t i = 0; i < packets; i += kAclBurst) {
    burst(i, static_cast<uint32_t>(std::min<size_t>(kAclBurst, packets - i)));
  }
  for (size_t i = 0; i < packets; ++i) s.mismatches += results[i] != set.expected[i];
  s.ns_per_packet = NsPerPacket(packets, kAclBurst, min_seconds, burst);
  return s;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// All rounds of one tool: medians of each quantity, except the worst
// build peak and mismatch count.
struct Summary {
  std::string name;
  double ns_per_packet = 0, build_ms = 0, memory_bytes = 0, build_peak_bytes = 0;
  uint64_t mismatches = 0;
};

Summary Summarize(const std::string& name, const std::vector<Sample>& samples) {
  std::vector<double> ns, build, memory, peak;
  Summary sum;
  sum.name = name;
  for (const Sample& s : samples) {
    ns.push_back(s.ns_per_packet);
    build.push_back(s.build_ms);
    memory.push_back(static_cast<double>(s.memory_bytes));
    peak.push_back(static_cast<double>(s.build_peak_bytes));
    sum.mismatches = std::max(sum.mismatches, s.mismatches);
  }
  sum.ns_per_packet = Median(ns);
  sum.build_ms = Median(build);
  sum.memory_bytes = Median(memory);
  // The largest, not the median: DPDK's heap keeps freed pages resident,
  // so later rounds' tables can land on pages an earlier round touched.
  sum.build_peak_bytes = *std::max_element(peak.begin(), peak.end());
  return sum;
}

struct SetResult {
  std::string set;
  size_t rules = 0, packets = 0;
  Summary rulejit;
  std::vector<Summary> acl;  // per algorithm
  const Summary& BestAcl() const {
    return *std::min_element(acl.begin(), acl.end(), [](const Summary& a, const Summary& b) {
      return a.ns_per_packet < b.ns_per_packet;
    });
  }
};

// Rounds of: rulejit, then one rte_acl build and every algorithm on it.
std::optional<SetResult> BenchSet(const Set& set, const Options& o) {
  std::vector<Sample> rulejit;
  std::map<std::string, std::vector<Sample>> acl;
  std::vector<std::string> alg_order;
  for (int round = 0; round < o.rounds; ++round) {
    std::optional<Sample> rj = RunRulejit(set, o.min_seconds);
    if (!rj) return std::nullopt;
    rulejit.push_back(*rj);

    std::string error;
    BuildRss rss;
    rss.Start();
    const Clock::time_point start = Clock::now();
    std::unique_ptr<DpdkAcl> ctx = DpdkAcl::Build(set.rules, error);
    const double build_ms = MsSince(start);
    const size_t build_peak = rss.PeakBytes();
    if (!ctx) {
      std::fprintf(stderr, "acl_peer: %s: %s\n", set.name.c_str(), error.c_str());
      return std::nullopt;
    }
    std::vector<AclAlgorithm> algs = ctx->SupportedAlgorithms();
    std::string line = absl::StrFormat("%s round %d: rulejit %.1f ns", set.name, round + 1,
                                       rj->ns_per_packet);
    for (const AclAlgorithm& alg : algs) {
      Sample s = RunAclAlgorithm(set, *ctx, alg, o.min_seconds);
      s.build_ms = build_ms;
      s.memory_bytes = ctx->memory_bytes();
      s.build_peak_bytes = build_peak;
      if (round == 0) alg_order.push_back(alg.name);
      acl[alg.name].push_back(s);
      line += absl::StrFormat(", %s %.1f ns", alg.name, s.ns_per_packet);
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  SetResult r;
  r.set = set.name;
  r.rules = set.rules.size();
  r.packets = set.frames.size();
  r.rulejit = Summarize("rulejit", rulejit);
  for (const std::string& name : alg_order) r.acl.push_back(Summarize(name, acl[name]));
  return r;
}

std::string MiB(double bytes) { return absl::StrFormat("%.2f", bytes / (1024.0 * 1024.0)); }

// The CPU's model name (/proc/cpuinfo), for the figures' record.
std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

void PrintTable(const std::vector<SetResult>& results, int rounds) {
  std::printf("\nCPU: %s; rulejit's classifier walks with %s\n", CpuModel().c_str(),
              classify::IsaName(classify::BestIsaUpTo(classify::Isa::kAvx512)));
  std::printf("per algorithm, median of %d rounds (ns/packet):\n", rounds);
  for (const SetResult& r : results) {
    std::string line = absl::StrFormat("  %-10s rulejit %.1f", r.set, r.rulejit.ns_per_packet);
    for (const Summary& a : r.acl) line += absl::StrFormat(" | %s %.1f", a.name, a.ns_per_packet);
    std::printf("%s\n", line.c_str());
  }
  std::printf("\n%-10s %6s %6s | %9s %7s | %-9s %9s %8s | %6s | %9s %10s | %8s %8s | %9s %10s | %5s %5s\n",
              "set", "rules", "pkts", "rj ns/pkt", "rj Mpps", "acl alg", "acl ns/pk", "acl Mpps",
              "ratio", "rj bld ms", "acl bld ms", "rj MiB", "acl MiB", "rj pk MiB", "acl pk MiB",
              "rj mm", "acl mm");
  for (const SetResult& r : results) {
    const Summary& best = r.BestAcl();
    uint64_t acl_mismatches = 0;
    for (const Summary& a : r.acl) acl_mismatches = std::max(acl_mismatches, a.mismatches);
    std::printf("%s\n",
                absl::StrFormat("%-10s %6u %6u | %9.1f %7.2f | %-9s %9.1f %8.2f | %6.2f | %9.1f "
                                "%10.1f | %8s %8s | %9s %10s | %5u %5u",
                                r.set, r.rules, r.packets, r.rulejit.ns_per_packet,
                                1e3 / r.rulejit.ns_per_packet, best.name, best.ns_per_packet,
                                1e3 / best.ns_per_packet,
                                best.ns_per_packet / r.rulejit.ns_per_packet, r.rulejit.build_ms,
                                best.build_ms, MiB(r.rulejit.memory_bytes),
                                MiB(best.memory_bytes), MiB(r.rulejit.build_peak_bytes),
                                MiB(best.build_peak_bytes), r.rulejit.mismatches, acl_mismatches)
                    .c_str());
  }
  std::printf("ratio = best rte_acl ns/packet / rulejit ns/packet (> 1: rulejit faster); "
              "MiB = built tables; pk MiB = peak resident growth while building (max of rounds); "
              "mm = mismatches vs the trace (worst round; acl: worst algorithm)\n");
}

std::string ToolJson(const Summary& s) {
  return absl::StrFormat(
      "{\"ns_per_packet\":%.3f,\"mpps\":%.6f,\"build_ms\":%.3f,\"memory_bytes\":%.0f,"
      "\"build_peak_bytes\":%.0f,\"mismatches\":%u}",
      s.ns_per_packet, 1e3 / s.ns_per_packet, s.build_ms, s.memory_bytes, s.build_peak_bytes,
      s.mismatches);
}

// One object per set: rulejit, the fastest rte_acl algorithm, the ratio,
// and every algorithm.
void PrintJson(const std::vector<SetResult>& results) {
  for (const SetResult& r : results) {
    const Summary& best = r.BestAcl();
    std::string algs;
    for (const Summary& a : r.acl) {
      algs += absl::StrFormat("%s\"%s\":%s", algs.empty() ? "" : ",", a.name, ToolJson(a));
    }
    std::printf("%s\n", absl::StrFormat("{\"set\":\"%s\",\"rules\":%u,\"packets\":%u,\"rulejit\":%s,"
                                       "\"acl_best_alg\":\"%s\",\"acl_best\":%s,\"ratio\":%.4f,"
                                       "\"acl\":{%s}}",
                                       r.set, r.rules, r.packets, ToolJson(r.rulejit), best.name,
                                       ToolJson(best), best.ns_per_packet / r.rulejit.ns_per_packet,
                                       algs)
                           .c_str());
  }
}

int Main(int argc, char** argv) {
  std::optional<Options> options = ParseArgs(argc, argv);
  if (!options) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  std::string error;
  if (!InitEal(options->eal_args, error)) {
    std::fprintf(stderr, "acl_peer: %s\n", error.c_str());
    return 2;
  }
  std::vector<SetResult> results;
  bool mismatched = false;
  for (const std::string& name : options->sets) {
    std::optional<Set> set = LoadSet(options->dir, name);
    if (!set) return 2;
    std::optional<SetResult> r = BenchSet(*set, *options);
    if (!r) return 2;
    mismatched |= r->rulejit.mismatches != 0;
    for (const Summary& a : r->acl) mismatched |= a.mismatches != 0;
    results.push_back(*std::move(r));
  }
  PrintTable(results, options->rounds);
  if (options->json) PrintJson(results);
  if (mismatched) std::fprintf(stderr, "acl_peer: mismatches against the trace's expected rules\n");
  return mismatched ? 1 : 0;
}

}  // namespace
}  // namespace rulejit::peer

int main(int argc, char** argv) { return rulejit::peer::Main(argc, argv); }
