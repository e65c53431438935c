// `rulejit run FILE --in A --out B [--stats-interval S] [--duration S]
//                   [--backend B] [--generic] [--format F]`
//
// A bump-in-the-wire firewall: frames arriving on A are classified by the
// ruleset's forward hook (iif A, oif B; for iptables dumps the FORWARD
// chain) and accepted ones are sent out of B unchanged; the same from B to
// A. See runtime/xdp/engine.h. Output on stdout:
//
//   ready in=fwin/native out=fwout/native backend=jit hook=forward
//   stats t=1.0 fwin rx=120 tx=0 drop=20 err=0 fwout rx=0 tx=100 drop=0 err=0
//   final fwin rx_packets=120 rx_bytes=7200 tx_packets=0 tx_bytes=0 dropped=20 tx_errors=0 kernel_rx_dropped=0
//   final fwout ...
//   rule rules.ipt:3 filter/FORWARD#1 packets=100 bytes=6000
//   policy filter/FORWARD packets=20
//
// `ready` comes once both sockets are open (scripts wait for it); `stats`
// every --stats-interval seconds; the `final` and per-rule lines when
// SIGINT/SIGTERM arrives or --duration seconds have passed. `rule` lines
// list every rule (packets/bytes of its counter, 0 for rules without one),
// `policy` lines every base chain (frames its policy decided).
//
// Exit status: 0 clean stop, 1 bad ruleset, 2 bad command line or missing
// interface, 3 the AF_XDP sockets could not be opened (permission, busy
// queue, no AF_XDP).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rulejit/rulejit.h"
#include "runtime/xdp/engine.h"
#include "tools/commands.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "run";
constexpr int kExitOpenFailed = 3;

struct RunOptions {
  runtime::EngineOptions engine;
  Backend backend = Backend::kAuto;
  double stats_interval = 0;  // seconds; 0 = no periodic stats
  double duration = 0;        // seconds; 0 = until a signal
};

absl::StatusOr<double> Seconds(const Args& args, absl::string_view flag) {
  std::optional<std::string> text = args.value(flag);
  if (!text) return 0.0;
  double value = 0;
  if (!absl::SimpleAtod(*text, &value) || !std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " wants a number of seconds >= 0, not '", *text, "'"));
  }
  return value;
}

absl::StatusOr<RunOptions> ReadOptions(const Args& args) {
  RunOptions options;
  std::optional<std::string> in = args.value("in");
  std::optional<std::string> out = args.value("out");
  if (!in || !out || in->empty() || out->empty()) {
    return absl::InvalidArgumentError("--in IF and --out IF are required");
  }
  options.engine.in = *in;
  options.engine.out = *out;
  options.engine.port.force_generic = args.has("generic");
  std::string backend = args.value_or("backend", "auto");
  std::optional<Backend> chosen = BackendFromName(backend);
  if (!chosen) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --backend '", backend, "' (expected interp, jit, llvm or auto)"));
  }
  options.backend = *chosen;
  absl::StatusOr<double> interval = Seconds(args, "stats-interval");
  if (!interval.ok()) return interval.status();
  absl::StatusOr<double> duration = Seconds(args, "duration");
  if (!duration.ok()) return duration.status();
  options.stats_interval = *interval;
  options.duration = *duration;
  return options;
}

std::string StatsLine(const runtime::Engine& engine, double elapsed) {
  std::string line = absl::StrFormat("stats t=%.1f", elapsed);
  for (auto side : {runtime::Engine::kIn, runtime::Engine::kOut}) {
    runtime::PortStats s = engine.Stats(side);
    absl::StrAppend(&line, " ", engine.port(side).name(), " rx=", s.rx_packets,
                    " tx=", s.tx_packets, " drop=", s.dropped,
                    " err=", s.tx_errors);
  }
  return line + "\n";
}

std::string FinalLines(const runtime::Engine& engine) {
  std::string text;
  for (auto side : {runtime::Engine::kIn, runtime::Engine::kOut}) {
    runtime::PortStats s = engine.Stats(side);
    runtime::XskKernelStats k = engine.port(side).KernelStats();
    absl::StrAppend(&text, "final ", engine.port(side).name(),
                    " rx_packets=", s.rx_packets, " rx_bytes=", s.rx_bytes,
                    " tx_packets=", s.tx_packets, " tx_bytes=", s.tx_bytes,
                    " dropped=", s.dropped, " tx_errors=", s.tx_errors,
                    " kernel_rx_dropped=", k.rx_dropped, "\n");
  }
  return text;
}

// One `rule` line per rule and one `policy` line per base chain.
std::string CounterLines(const Program& program,
                         const runtime::Engine& engine) {
  const ir::Ruleset& ruleset = program.ruleset();
  std::string text;
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    const ir::Table& table = ruleset.tables[t];
    for (size_t c = 0; c < table.chains.size(); ++c) {
      const ir::Chain& chain = table.chains[c];
      std::string name = absl::StrCat(table.name, "/", chain.name);
      for (size_t r = 0; r < chain.rules.size(); ++r) {
        RuleRef ref{static_cast<int>(t), static_cast<int>(c),
                    static_cast<int>(r)};
        ir::Counter counter = engine.run_state().CounterOf(ref);
        std::string where = ruleset.Where(chain.rules[r].loc);
        absl::StrAppend(&text, "rule ", where.empty() ? "-" : where, " ",
                        name, "#", r + 1, " packets=", counter.packets,
                        " bytes=", counter.bytes, "\n");
      }
      if (chain.base) {
        absl::StrAppend(&text, "policy ", name, " packets=",
                        engine.PolicyPackets(static_cast<int>(t),
                                             static_cast<int>(c)),
                        "\n");
      }
    }
  }
  return text;
}

// Waits for SIGINT/SIGTERM (blocked in every thread, so only this wait sees
// them) or the end of --duration, printing stats on the way.
void WaitForStop(const RunOptions& options, const runtime::Engine& engine,
                 const sigset_t& signals, Streams io) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double next_stats = options.stats_interval;
  for (;;) {
    double now = seconds_since_start();
    double wake = 3600;  // no deadline: wake now and then anyway
    if (options.duration > 0) wake = std::min(wake, options.duration);
    if (options.stats_interval > 0) wake = std::min(wake, next_stats);
    double wait = std::max(0.0, wake - now);
    timespec timeout{};
    timeout.tv_sec = static_cast<time_t>(wait);
    timeout.tv_nsec = static_cast<long>((wait - std::floor(wait)) * 1e9);
    if (sigtimedwait(&signals, nullptr, &timeout) > 0) return;
    now = seconds_since_start();
    if (options.stats_interval > 0 && now >= next_stats) {
      io.out << StatsLine(engine, now) << std::flush;
      while (next_stats <= now) next_stats += options.stats_interval;
    }
    if (options.duration > 0 && now >= options.duration) return;
  }
}

int OpenErrorExit(const absl::Status& status, std::ostream& err) {
  err << "rulejit run: error: " << status.message() << "\n";
  return absl::IsNotFound(status) || absl::IsInvalidArgument(status)
             ? kExitUsage
             : kExitOpenFailed;
}

int RunRun(const Args& args, Streams io) {
  absl::StatusOr<std::optional<InputFormat>> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  absl::StatusOr<RunOptions> options = ReadOptions(args);
  if (!options.ok()) {
    return UsageError(kName, options.status().message(), io.err);
  }
  std::optional<LoadedRuleset> loaded =
      LoadRuleset(args.positional(0), *format, io.err);
  if (!loaded) return kExitInputError;
  std::unique_ptr<const Program> program = CompileOrReport(
      kName, std::move(loaded->ruleset), {.backend = options->backend}, io.err);
  if (!program) return kExitInputError;

  // Block the stop signals before any thread exists, so all inherit the mask
  // and the main thread alone takes them with sigtimedwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  runtime::QuietXdpLibraries();
  absl::StatusOr<std::unique_ptr<runtime::Engine>> engine =
      runtime::Engine::Open(*program, options->engine);
  if (!engine.ok()) return OpenErrorExit(engine.status(), io.err);
  const runtime::XskPort& in = (*engine)->port(runtime::Engine::kIn);
  const runtime::XskPort& out = (*engine)->port(runtime::Engine::kOut);
  io.out << "ready in=" << in.name() << "/" << runtime::XdpModeName(in.mode())
         << " out=" << out.name() << "/" << runtime::XdpModeName(out.mode())
         << " backend=" << BackendName(program->backend())
         << " hook=" << ir::HookName(options->engine.hook) << "\n"
         << std::flush;

  std::atomic<bool> stop{false};
  std::thread worker([&] { (*engine)->Run(stop); });
  WaitForStop(*options, **engine, signals, io);
  stop.store(true);
  worker.join();
  io.out << FinalLines(**engine) << CounterLines(*program, **engine)
         << std::flush;
  return kExitOk;
}

}  // namespace

Command RunCommand() {
  return Command{
      .name = kName,
      .synopsis =
          "run FILE --in IF --out IF [--stats-interval S] [--duration S] "
          "[--backend interp|jit|llvm|auto] [--generic] [--format F]",
      .summary =
          "AF_XDP bump-in-the-wire firewall between two interfaces "
          "(forward hook; SIGINT/SIGTERM stop it and print counters)",
      .spec = {.flags = {{"in", true},
                         {"out", true},
                         {"stats-interval", true},
                         {"duration", true},
                         {"backend", true},
                         {"generic", false},
                         {"format", true}},
               .positionals = {"FILE"}},
      .run = RunRun,
  };
}

}  // namespace rulejit::tools
