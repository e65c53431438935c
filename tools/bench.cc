// `rulejit bench FILE --trace T [--backend B] [--no-classify]
//                     [--hook H | --path P [--iif IF] [--oif IF] [--host HOST]
//                                [--shared-conntrack]] [--json] [--format F] [--ipset FILE]`
// `rulejit bench --sweep N,N,... [--svg FILE]`: tools/bench_sweep.h.
//
// Classification throughput of the compiled ruleset over a trace: a pcap of
// Ethernet frames, or a ClassBench trace (`SRC DST SPORT DPORT PROTO
// [RULE]`, turned into Ethernet/IPv4 frames whose first four transport
// bytes carry the ports). It builds the Program (timed), classifies the
// frames in bursts of 32 with ClassifyBurst (parse + classify, the real
// path), repeating the trace until at least 0.5 s have passed, and prints
//   packets, Mpps, ns/packet, build ms, memory of the built code, and
//   mismatches against the trace's expected rules (ClassBench traces: the
//   1-based line of the first matching rule; 0 = none).
// --path forward|input|output measures the whole path instead
// (runtime/path.h, as `eval --path`: every hook, conntrack, NAT, routing
// on --host), one frame at a time with one connection table across the
// repeated trace; mismatches are then not checked.
// --time T and --kernel-tz give the clock inputs (tools/clock_option.h) to
// every frame.
// --shared-conntrack runs the path over the table `run --queues N` shares
// (runtime/shared_conntrack.h), from one thread: what its locks cost.
// --json ends the output with one JSON object with the keys packets mpps
// ns_per_packet build_ms memory_bytes mismatches.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "api/internal.h"
#include "frontends/classbench/classbench.h"
#include "rulejit/rulejit.h"
#include "runtime/conntrack.h"
#include "runtime/path.h"
#include "tools/bench_sweep.h"
#include "tools/clock_option.h"
#include "tools/draw_option.h"
#include "runtime/shared_conntrack.h"
#include "tools/commands.h"
#include "tools/eval_path.h"
#include "tools/host_option.h"
#include "tools/pcap_source.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "bench";
constexpr double kMinSeconds = 0.5;

struct TraceFrames {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<uint32_t> expected;  // 1-based rule line; 0 = none; empty = unknown
};

bool LooksLikePcap(const std::string& text) {
  if (text.size() < 4) return false;
  uint32_t magic;
  std::memcpy(&magic, text.data(), 4);
  return magic == 0xa1b2c3d4 || magic == 0xd4c3b2a1 || magic == 0xa1b23c4d ||
         magic == 0x4d3cb2a1 || magic == 0x0a0d0d0a;
}

absl::StatusOr<TraceFrames> LoadTrace(const std::string& path, std::ostream& err) {
  std::string error;
  std::optional<std::string> text = ReadFile(path, error);
  if (!text) return absl::InvalidArgumentError(error);
  TraceFrames trace;
  if (LooksLikePcap(*text)) {
    absl::Status status = ForEachFrame(path, [&](const Frame& frame) {
      if (frame.view.link_off != 0) return;  // bench replays Ethernet frames
      trace.frames.emplace_back(frame.view.data, frame.view.data + frame.view.len);
    });
    if (!status.ok()) return status;
    if (trace.frames.empty()) {
      return absl::InvalidArgumentError(path + ": error: no Ethernet frames to replay");
    }
    return trace;
  }
  ir::Diagnostics diags;
  int file = diags.AddFile(path, *text);
  auto packets = frontends::ParseClassBenchTrace(*text, file, diags);
  if (!packets.ok()) {
    err << diags.Format();
    return packets.status();
  }
  for (const frontends::TracePacket& p : *packets) {
    trace.frames.push_back(frontends::TraceFrame(p));
    trace.expected.push_back(p.expected_rule);
  }
  if (trace.frames.empty()) return absl::InvalidArgumentError(path + ": error: empty trace");
  return trace;
}

// The 1-based source line of the deciding rule, 0 for a policy.
uint32_t DecidingLine(const Program& program, const RuleRef& ref) {
  if (ref.table < 0 || ref.chain < 0 || ref.rule < 0) return 0;
  return IrOf(program.ruleset()).tables[ref.table].chains[ref.chain].rules[ref.rule].loc.line;
}

// The trace along the whole path, frame by frame.
Measurement MeasurePath(const Program& program, const HostModel& host,
                        const runtime::PathOptions& path, const TraceFrames& trace,
                        const PacketMeta& meta, bool shared) {
  runtime::Conntrack conntrack;
  runtime::LocalFlowTable local(conntrack);
  runtime::SharedConntrack shared_table({});
  runtime::SharedConntrack::Handle handle(shared_table);
  runtime::PathRunner runner(program, host, shared ? static_cast<runtime::FlowTable&>(handle)
                                                   : static_cast<runtime::FlowTable&>(local));
  RunState state;
  Measurement m;
  const auto start = std::chrono::steady_clock::now();
  while (m.seconds < kMinSeconds) {
    for (const std::vector<uint8_t>& f : trace.frames) {
      runner.Run(path, f.data(), static_cast<uint32_t>(f.size()), meta, &state);
    }
    m.packets += trace.frames.size();
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return m;
}

int RunBench(const Args& args, Streams io) {
  if (args.has("sweep")) return RunBenchSweep(args, io);
  if (args.positional_count() == 0) return UsageError(kName, "FILE is required (or --sweep)", io.err);
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  std::optional<std::string> trace_path = args.value("trace");
  if (!trace_path) return UsageError(kName, "--trace T is required", io.err);
  std::optional<Backend> backend = BackendFromName(args.value_or("backend", "auto"));
  if (!backend) return UsageError(kName, "unknown --backend (expected interp, jit, llvm or auto)", io.err);
  std::optional<Hook> hook = ir::HookFromName(args.value_or("hook", "forward"));
  if (!hook) return UsageError(kName, "unknown --hook", io.err);

  std::optional<LoadedRuleset> loaded = LoadRuleset(args.positional(0), *format, io.err);
  if (!loaded) return kExitInputError;
  absl::StatusOr<TraceFrames> trace = LoadTrace(*trace_path, io.err);
  if (!trace.ok()) {
    io.err << trace.status().message() << "\n";
    return kExitInputError;
  }

  absl::StatusOr<std::shared_ptr<const HostModel>> host = LoadHostOption(args.value("host"));
  if (!host.ok()) return UsageError(kName, host.status().message(), io.err);
  std::optional<runtime::PathOptions> path;
  if (std::optional<std::string> name = args.value("path")) {
    if (args.has("hook")) return UsageError(kName, "--path and --hook exclude each other", io.err);
    absl::StatusOr<runtime::PathOptions> along = PathFromFlags(
        *name, args.value_or("iif", ""), args.value_or("oif", ""), *host != nullptr);
    if (!along.ok()) return UsageError(kName, along.status().message(), io.err);
    path = *along;
  }
  absl::StatusOr<ClockOptions> clock = ReadClockOptions(args);
  if (!clock.ok()) return UsageError(kName, clock.status().message(), io.err);
  if (clock->from_frames) return UsageError(kName, "--time pcap: give one time (T)", io.err);
  absl::StatusOr<DrawOptions> draws = ReadDrawOptions(args);
  if (!draws.ok()) return UsageError(kName, draws.status().message(), io.err);
  if (!CheckClockInputs(loaded->ruleset, *clock, /*frames=*/false, io.err) ||
      !CheckDrawInputs(loaded->ruleset, *draws, io.err)) {
    return kExitInputError;
  }
  CompileOptions options{.backend = *backend};
  options.classify = !args.has("no-classify");
  options.host = *host;
  const auto build_start = std::chrono::steady_clock::now();
  std::unique_ptr<const Program> program =
      CompileOrReport(kName, std::move(loaded->ruleset), options, io.err);
  const double build_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - build_start).count();
  if (!program) return kExitInputError;

  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  ApplyClock(*clock, 0, &meta);
  ApplyDraws(*draws, &meta);
  uint64_t mismatches = 0;
  if (!trace->expected.empty() && !path) {  // one checked pass over the trace
    RunState state;
    for (size_t i = 0; i < trace->frames.size(); ++i) {
      const auto& f = trace->frames[i];
      Result r = program->Classify(*hook, f.data(), f.size(), meta, &state);
      mismatches += DecidingLine(*program, r.decided_by) != trace->expected[i];
    }
  }
  const HostModel fallback = LoopbackHost();
  PacketMeta path_meta;
  ApplyClock(*clock, 0, &path_meta);
  ApplyDraws(*draws, &path_meta);
  Measurement m = path ? MeasurePath(*program, *host ? **host : fallback, *path, *trace,
                                     path_meta, args.has("shared-conntrack"))
                       : MeasureBursts(*program, *hook, trace->frames, meta, kMinSeconds);
  const double ns = m.seconds * 1e9 / m.packets;
  const double mpps = m.packets / m.seconds / 1e6;
  const size_t memory = program->memory_bytes();
  io.out << absl::StrFormat(
      "backend %s: %u packets in %.3f s: %.3f Mpps, %.1f ns/packet; build %.2f ms; "
      "memory %u bytes; mismatches %u%s\n",
      BackendName(program->backend()), m.packets, m.seconds, mpps, ns, build_ms, memory,
      mismatches,
      path                     ? " (not checked along the path)"
      : trace->expected.empty() ? " (trace has no expected rules)"
                                : "");
  if (args.has("json")) {
    io.out << absl::StrFormat(
        "{\"packets\":%u,\"mpps\":%.6f,\"ns_per_packet\":%.3f,\"build_ms\":%.3f,"
        "\"memory_bytes\":%u,\"mismatches\":%u}\n",
        m.packets, mpps, ns, build_ms, memory, mismatches);
  }
  return kExitOk;
}

}  // namespace

Command BenchCommand() {
  return Command{
      .name = kName,
      .synopsis = "bench --sweep N,N,... [--svg FILE] | bench FILE --trace T [--backend interp|jit|llvm|auto] [--no-classify] "
                  "[--hook H | --path forward|input|output [--iif IF] [--oif IF] "
                  "[--host FILE|local] [--shared-conntrack]] [--time T] "
                  "[--kernel-tz +HH:MM|UTC|local] [--random N] [--symhash N] [--jhash-seed N] [--cpu N] "
                  "[--json] [--format F] [--ipset FILE]",
      .summary = "classification throughput over a pcap or ClassBench trace",
      .spec = {.flags = {{"trace", true},
                         {"backend", true},
                         {"no-classify", false},
                         {"hook", true},
                         {"path", true},
                         {"iif", true},
                         {"oif", true},
                         {"host", true},
                         {"time", true},
                         {"kernel-tz", true},
                         {"random", true},
                         {"symhash", true},
                         {"jhash-seed", true},
                         {"cpu", true},
                         {"shared-conntrack", false},
                         {"json", false},
                         {"format", true},
                         {"ipset", true},
                         {"sweep", true},
                         {"svg", true}},
               .positionals = {"[FILE]"}},
      .run = RunBench,
      .description =
          "Builds the program (timed) and classifies the frames of the trace in bursts, "
          "repeating it for at least half a second; prints packets, Mpps, ns/packet, build "
          "time, code size and mismatches against a ClassBench trace's expected rules.\n\n"
          "--sweep N,N,... measures ns/packet on generated rulesets of N rules for every "
          "tier (interp, jit, llvm) and prints a table; --svg FILE also draws it as an SVG "
          "plot (log axes, one series per tier).",
      .examples = {{"rulejit bench fw1_1K --trace fw1_1K_trace --backend jit",
                    "Throughput of the jit tier on a ClassBench ruleset and trace."},
                   {"rulejit bench --sweep 10,100,1000,10000 --svg bench.svg",
                    "ns/packet against ruleset size for each tier, as a table and a plot."}},
  };
}

}  // namespace rulejit::tools
