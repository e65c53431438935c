// See bench_sweep.h.
#include "tools/bench_sweep.h"

#include <chrono>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "frontends/classbench/classbench.h"
#include "tools/load.h"
#include "tools/svg_plot.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "bench";
constexpr uint32_t kBurst = 32;
constexpr double kSweepSeconds = 0.3;  // per (size, tier) point
constexpr int kRounds = 3;
constexpr uint32_t kMaxRules = 65536;   // one /24 per rule in 10.0.0.0/8
constexpr int kTracePackets = 1024;

uint32_t RuleAddress(uint32_t i) { return (10u << 24) | (i << 8); }
uint16_t RulePort(uint32_t i) { return static_cast<uint16_t>(1024 + (7 * i) % 60000); }

std::string SweepRuleset(uint32_t rules) {
  std::string text = "table ip sweep {\n\tchain forward {\n"
                     "\t\ttype filter hook forward priority 0; policy drop;\n";
  for (uint32_t i = 0; i < rules; ++i) {
    uint32_t a = RuleAddress(i);
    absl::StrAppendFormat(&text, "\t\tip saddr 10.%u.%u.0/24 tcp dport %u accept\n",
                          (a >> 16) & 255, (a >> 8) & 255, RulePort(i));
  }
  return text + "\t}\n}\n";
}

std::vector<std::vector<uint8_t>> SweepTrace(uint32_t rules) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t k = 0; k < kTracePackets; ++k) {
    const uint32_t r = static_cast<uint32_t>((uint64_t{k} * 2654435761u) % rules);
    frontends::TracePacket p;
    p.src = RuleAddress(r) | 1;
    p.dst = 0xc0a80001;
    p.sport = static_cast<uint16_t>(40000 + k);
    p.dport = k % 8 == 7 ? 1 : RulePort(r);  // port 1: no rule's
    p.proto = 6;
    frames.push_back(frontends::TraceFrame(p));
  }
  return frames;
}

absl::StatusOr<std::vector<uint32_t>> ParseSizes(const std::string& list) {
  std::vector<uint32_t> sizes;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(part, &n) || n == 0 || n > kMaxRules) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sweep: '", std::string(part), "' is not a rule count in 1..", kMaxRules));
    }
    sizes.push_back(n);
  }
  return sizes;
}

// ns/packet of one tier on the ruleset of `rules` rules; nullopt when it
// does not compile (reported on err).
std::optional<double> MeasureTier(Backend backend, uint32_t rules, bool classify,
                                  std::ostream& err) {
  absl::StatusOr<Ruleset> ruleset = ParseRuleset(SweepRuleset(rules), "sweep.nft");
  if (!ruleset.ok()) {
    err << "rulejit bench: error: " << ruleset.status().message() << "\n";
    return std::nullopt;
  }
  CompileOptions options{.backend = backend};
  options.classify = classify;
  absl::StatusOr<std::unique_ptr<const Program>> program =
      Program::Compile(*std::move(ruleset), options);
  if (!program.ok()) {
    err << "rulejit bench: error: " << BackendName(backend) << ": "
        << program.status().message() << "\n";
    return std::nullopt;
  }
  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  // The best of a few rounds: the machine's other work only ever slows a
  // round down.
  const std::vector<std::vector<uint8_t>> trace = SweepTrace(rules);
  double best = 0;
  for (int round = 0; round < kRounds; ++round) {
    Measurement m = MeasureBursts(**program, Hook::kForward, trace, meta, kSweepSeconds / kRounds);
    double ns = m.seconds * 1e9 / m.packets;
    if (round == 0 || ns < best) best = ns;
  }
  return best;
}

}  // namespace

Measurement MeasureBursts(const Program& program, Hook hook,
                          const std::vector<std::vector<uint8_t>>& frames,
                          const PacketMeta& meta, double min_seconds) {
  std::vector<const uint8_t*> ptrs;
  std::vector<uint32_t> lens;
  for (const auto& f : frames) {
    ptrs.push_back(f.data());
    lens.push_back(static_cast<uint32_t>(f.size()));
  }
  std::vector<Result> results(kBurst);
  RunState state;
  Measurement m;
  const auto start = std::chrono::steady_clock::now();
  while (m.seconds < min_seconds) {
    for (size_t i = 0; i < ptrs.size(); i += kBurst) {
      uint32_t n = static_cast<uint32_t>(std::min<size_t>(kBurst, ptrs.size() - i));
      program.ClassifyBurst(hook, &ptrs[i], &lens[i], n, meta, results.data(), &state);
    }
    m.packets += ptrs.size();
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return m;
}

int RunBenchSweep(const Args& args, Streams io) {
  if (args.positional_count() != 0 || args.has("trace")) {
    return UsageError(kName, "--sweep takes no FILE and no --trace (it generates both)", io.err);
  }
  absl::StatusOr<std::vector<uint32_t>> sizes = ParseSizes(args.value_or("sweep", ""));
  if (!sizes.ok()) return UsageError(kName, sizes.status().message(), io.err);
  const Backend tiers[] = {Backend::kInterp, Backend::kJit, Backend::kLlvm};
  SvgPlot plot{.title = "rulejit: ns/packet against ruleset size (forward, 1024-packet trace)",
               .x_label = "rules",
               .y_label = "ns/packet"};
  io.out << absl::StrFormat("%8s", "rules");
  for (Backend b : tiers) {
    io.out << absl::StrFormat("  %12s", absl::StrCat(BackendName(b), " ns/pkt"));
    plot.series.push_back({BackendName(b), {}});
  }
  io.out << "\n";
  for (uint32_t n : *sizes) {
    io.out << absl::StrFormat("%8u", n);
    for (size_t t = 0; t < std::size(tiers); ++t) {
      std::optional<double> ns = MeasureTier(tiers[t], n, !args.has("no-classify"), io.err);
      if (!ns) return kExitInputError;
      io.out << absl::StrFormat("  %12.1f", *ns);
      plot.series[t].points.push_back({static_cast<double>(n), *ns});
    }
    io.out << "\n";
  }
  if (std::optional<std::string> svg = args.value("svg")) {
    std::ofstream file(*svg);
    file << RenderSvg(plot);
    if (!file.good()) {
      io.err << "rulejit bench: error: cannot write " << *svg << "\n";
      return kExitInputError;
    }
    io.out << "plot written to " << *svg << "\n";
  }
  return kExitOk;
}

}  // namespace rulejit::tools
