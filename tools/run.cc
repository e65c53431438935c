// `rulejit run FILE --in A --out B [--ctl PATH] [--queues N]
//                   [--stats-interval S] [--duration S] [--backend B]
//                   [--log FILE] [--generic] [--format F] [--ipset FILE]`
//
// A bump-in-the-wire firewall, a transparent bridge: frames arriving on A
// take the path of `eval --path forward` (netdev ingress chains of device
// A, prerouting, forward with iif A and oif B, postrouting, egress chains
// of device B; conntrack and NAT), and those no hook dropped are sent out
// of B (NATed, partial checksums completed); the same from B to A. The
// host is this machine (ReadLocalHost); --sysctl sets conntrack's sysctls.
// Time matches read this machine's real-time clock and kernel timezone
// (sys_tz), as the kernel does: its own explicit inputs, once per burst.
// A reject sends its RST or ICMP error back out of the interface the frame
// came in on (runtime/reject.h); log statements (LOG, nft log, NFLOG) write
// the kernel's log line (runtime/log_line.h) to stderr, or appended to
// --log FILE. See runtime/xdp/engine.h. Output on stdout:
//
//   ready in=fwin/native/copy out=fwout/native/copy backend=jit hooks=ingress,forward/forward queues=1 ctl=/run/rulejit/fwin-fwout.sock
//   stats t=1.0 fwin rx=120 tx=0 drop=20 err=0 fwout rx=0 tx=100 drop=0 err=0
//   reload generation=2 file=rules.ipt ok
//   reload failed file=rules.ipt (generation 2 keeps running)
//   final fwin rx_packets=120 rx_bytes=7200 tx_packets=0 tx_bytes=0 dropped=20 tx_errors=0 kernel_rx_dropped=0
//   final fwout ...
//   rule rules.ipt:3 filter/FORWARD#1 packets=100 bytes=6000
//   policy filter/FORWARD packets=20
//
// `ready` comes once the AF_XDP sockets and the control socket are open (scripts
// wait for it); it gives per interface the XDP mode (native/generic) and
// the sockets' mode (zerocopy where the driver has it, else copy), and the
// hooks frames pass from --in / from --out (`none`: everything passes); `stats` every --stats-interval seconds; `reload` after each
// reload (ctl or SIGHUP); the `final` and per-rule lines when SIGINT/SIGTERM
// arrives or --duration seconds have passed. `rule` lines list every rule
// (packets/bytes of its counter, 0 for rules without one), `policy` lines
// every base chain (frames its policy decided).
//
// The main thread is the control thread: it waits in poll() on a signalfd
// (SIGINT, SIGTERM, SIGHUP) and the control socket (tools/control.h), and
// does the reloads, so compiling a new ruleset never touches the workers.
// Requests: `stats` (the `iface` lines), `counters` (`rule`/`policy`
// lines), `reload [FILE]` (FILE defaults to the file given at start; SIGHUP
// always re-reads that one), `conntrack list [json]` (every worker's live
// flows, one `conntrack -L` line or JSON object each, then a `flows N`
// summary line), `conntrack flush` (empties the tables, `flushed N`). A reload that fails to load or compile leaves
// the running ruleset in place and answers with the located diagnostics.
//
// Exit status: 0 clean stop, 1 bad ruleset, 2 bad command line or missing
// interface, 3 the AF_XDP sockets or the control socket could not be opened
// (permission, busy queue, no AF_XDP, socket in use).
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/internal.h"
#include "rulejit/host.h"
#include "rulejit/rulejit.h"
#include "runtime/conntrack_list.h"
#include "runtime/xdp/engine.h"
#include "tools/commands.h"
#include "tools/conntrack_option.h"
#include "tools/control.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "run";

struct RunOptions {
  runtime::EngineOptions engine;
  Backend backend = Backend::kAuto;
  LoadInput format;
  std::string file;           // the ruleset given at start (SIGHUP re-reads it)
  std::string ctl;            // control socket path; empty = none
  double stats_interval = 0;  // seconds; 0 = no periodic stats
  double duration = 0;        // seconds; 0 = until a signal
  std::string log;            // --log FILE; empty = stderr
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
  options.engine.force_generic = args.has("generic");
  std::string backend = args.value_or("backend", "auto");
  std::optional<Backend> chosen = BackendFromName(backend);
  if (!chosen) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --backend '", backend, "' (expected interp, jit, llvm or auto)"));
  }
  options.backend = *chosen;
  std::string queues = args.value_or("queues", "1");
  if (!absl::SimpleAtoi(queues, &options.engine.queues) ||
      options.engine.queues == 0 || options.engine.queues > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("--queues wants a number from 1 to 256, not '", queues, "'"));
  }
  absl::StatusOr<runtime::ConntrackOptions> conntrack = ParseConntrackSysctls(args.value("sysctl"));
  if (!conntrack.ok()) return conntrack.status();
  options.engine.conntrack = *conntrack;
  options.ctl = args.value_or("ctl", DefaultControlPath(*in, *out));
  if (options.ctl == "none") options.ctl.clear();
  absl::StatusOr<double> interval = Seconds(args, "stats-interval");
  if (!interval.ok()) return interval.status();
  absl::StatusOr<double> duration = Seconds(args, "duration");
  if (!duration.ok()) return duration.status();
  options.stats_interval = *interval;
  options.duration = *duration;
  options.log = args.value_or("log", "");
  return options;
}

std::string StatsLine(const runtime::Engine& engine, double elapsed) {
  std::string line = absl::StrFormat("stats t=%.1f", elapsed);
  for (auto side : {runtime::Engine::kIn, runtime::Engine::kOut}) {
    runtime::PortStats s = engine.Stats(side);
    absl::StrAppend(&line, " ", engine.attachment(side).name(),
                    " rx=", s.rx_packets, " tx=", s.tx_packets,
                    " drop=", s.dropped, " err=", s.tx_errors);
  }
  return line + "\n";
}

// "copy" or "zerocopy" when every queue's socket on `side` got that mode,
// else the mode of each queue in order ("zerocopy,copy").
std::string SocketModes(const runtime::Engine& engine, runtime::Engine::Side side) {
  std::vector<std::string> modes;
  bool same = true;
  for (uint32_t q = 0; q < engine.queues(); ++q) {
    modes.push_back(engine.ZeroCopy(side, q) ? "zerocopy" : "copy");
    same = same && modes.back() == modes.front();
  }
  return same ? modes.front() : absl::StrJoin(modes, ",");
}

// The hooks frames from `side` pass ("ingress,forward,egress"), or "none".
std::string HookList(const runtime::Engine& engine, runtime::Engine::Side side) {
  std::vector<std::string> names;
  for (Hook hook : engine.Hooks(side)) names.push_back(ir::HookName(hook));
  return names.empty() ? "none" : absl::StrJoin(names, ",");
}

// One line per interface, starting with `prefix` ("final" or "iface").
std::string InterfaceLines(const runtime::Engine& engine,
                           absl::string_view prefix) {
  std::string text;
  for (auto side : {runtime::Engine::kIn, runtime::Engine::kOut}) {
    runtime::PortStats s = engine.Stats(side);
    runtime::XskKernelStats k = engine.KernelStats(side);
    absl::StrAppend(&text, prefix, " ", engine.attachment(side).name(),
                    " rx_packets=", s.rx_packets, " rx_bytes=", s.rx_bytes,
                    " tx_packets=", s.tx_packets, " tx_bytes=", s.tx_bytes,
                    " dropped=", s.dropped, " tx_errors=", s.tx_errors,
                    " kernel_rx_dropped=", k.rx_dropped, "\n");
  }
  return text;
}

// One `rule` line per rule and one `policy` line per base chain of the
// running ruleset.
std::string CounterLines(const runtime::Engine& engine) {
  const ir::Ruleset& ruleset = IrOf(engine.program().ruleset());
  runtime::CounterSnapshot counts = engine.Counters();
  std::string text;
  for (size_t t = 0; t < ruleset.tables.size(); ++t) {
    const ir::Table& table = ruleset.tables[t];
    for (size_t c = 0; c < table.chains.size(); ++c) {
      const ir::Chain& chain = table.chains[c];
      std::string name = absl::StrCat(table.name, "/", chain.name);
      for (size_t r = 0; r < chain.rules.size(); ++r) {
        const ir::Counter& counter = counts.rules[t][c][r];
        std::string where = ruleset.Where(chain.rules[r].loc);
        absl::StrAppend(&text, "rule ", where.empty() ? "-" : where, " ",
                        name, "#", r + 1, " packets=", counter.packets,
                        " bytes=", counter.bytes, "\n");
      }
      if (chain.base) {
        absl::StrAppend(&text, "policy ", name,
                        " packets=", counts.policy[t][c], "\n");
      }
    }
  }
  return text;
}

// The control thread's state: the engine and the reload bookkeeping.
struct Control {
  Control(const RunOptions& o, runtime::Engine& e, Streams io,
          std::string start)
      : options(o), engine(e), out(io.out), err(io.err), file(std::move(start)) {}

  const RunOptions& options;
  runtime::Engine& engine;
  std::ostream& out;
  std::ostream& err;
  uint64_t reloads = 0;
  uint64_t failed_reloads = 0;
  std::string file;  // the ruleset running now
};

// Loads and compiles `path` off the hot path and swaps it in. On failure
// the running ruleset stays and the reply carries the diagnostics.
ControlReply Reload(Control& control, const std::string& path) {
  std::ostringstream diagnostics;
  std::unique_ptr<const Program> program;
  if (std::optional<LoadedRuleset> loaded =
          LoadRuleset(path, control.options.format, diagnostics)) {
    CompileOptions compile;
    compile.backend = control.options.backend;
    compile.host = control.options.engine.host;
    program = CompileOrReport(kName, std::move(loaded->ruleset), compile,
                              diagnostics);
  }
  ControlReply reply;
  if (!program) {
    ++control.failed_reloads;
    reply.body = diagnostics.str();
    reply.error = absl::StrCat("reload of ", path, " failed; generation ",
                               control.engine.generation(),
                               " (", control.file, ") keeps running");
    control.out << "reload failed file=" << path << " (generation "
                << control.engine.generation() << " keeps running)\n"
                << std::flush;
    return reply;
  }
  uint64_t generation = control.engine.Reload(std::move(program));
  ++control.reloads;
  control.file = path;
  reply.ok = true;
  reply.body = absl::StrCat("generation ", generation, " file=", path, "\n",
                            diagnostics.str());  // warnings, if any
  control.out << "reload generation=" << generation << " file=" << path
              << " ok\n" << std::flush;
  return reply;
}

// `conntrack list [json]` and `conntrack flush`, served by the workers
// between bursts (engine.h).
ControlReply Conntrack(Control& control, const std::string& request) {
  ControlReply reply;
  if (request == "conntrack flush") {
    reply.ok = true;
    reply.body = absl::StrCat("flushed ", control.engine.FlushConntrack(), "\n");
    return reply;
  }
  const bool json = request == "conntrack list json";
  if (request != "conntrack list" && !json) {
    reply.error = absl::StrCat("unknown request '", request,
                               "' (expected conntrack list [json] or conntrack flush)");
    return reply;
  }
  uint64_t now_ns = 0;
  std::vector<runtime::Conntrack::Flow> flows = control.engine.ConntrackFlows(&now_ns);
  for (const runtime::Conntrack::Flow& flow : flows) {
    absl::StrAppend(&reply.body, json ? runtime::ConntrackJson(flow, now_ns)
                                      : runtime::ConntrackLine(flow, now_ns), "\n");
  }
  absl::StrAppend(&reply.body, "flows ", flows.size(), "\n");
  reply.ok = true;
  return reply;
}

ControlReply Handle(Control& control, const std::string& request) {
  ControlReply reply;
  if (request.rfind("conntrack ", 0) == 0) return Conntrack(control, request);
  if (request == "stats") {
    reply.ok = true;
    reply.body = absl::StrCat(
        "generation ", control.engine.generation(), " file=", control.file,
        " reloads=", control.reloads, " failed_reloads=",
        control.failed_reloads, " queues=", control.engine.queues(), "\n",
        InterfaceLines(control.engine, "iface"));
    for (uint32_t q = 0; q < control.engine.queues(); ++q) {
      for (auto side : {runtime::Engine::kIn, runtime::Engine::kOut}) {
        runtime::PortStats s = control.engine.QueueStats(side, q);
        absl::StrAppend(&reply.body, "queue ", q, " ",
                        control.engine.attachment(side).name(),
                        " rx_packets=", s.rx_packets,
                        " tx_packets=", s.tx_packets, " dropped=", s.dropped,
                        " tx_errors=", s.tx_errors, "\n");
      }
    }
    return reply;
  }
  if (request == "counters") {
    reply.ok = true;
    reply.body = CounterLines(control.engine);
    return reply;
  }
  if (request == "reload") return Reload(control, control.options.file);
  if (request.rfind("reload ", 0) == 0) {
    return Reload(control, request.substr(7));
  }
  reply.error = absl::StrCat("unknown request '", request,
                             "' (expected stats, counters, reload [FILE] or conntrack list|flush)");
  return reply;
}

// Serves signals, control requests and the stats timer until SIGINT/SIGTERM
// or the end of --duration.
void ControlLoop(Control& control, int signal_fd, ControlServer* server) {
  using Clock = std::chrono::steady_clock;
  const RunOptions& options = control.options;
  const Clock::time_point start = Clock::now();
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double next_stats = options.stats_interval;
  for (;;) {
    double now = seconds_since_start();
    double wake = now + 3600;  // no deadline: wake now and then anyway
    if (options.duration > 0) wake = std::min(wake, options.duration);
    if (options.stats_interval > 0) wake = std::min(wake, next_stats);
    int timeout_ms = static_cast<int>(std::ceil(std::max(0.0, wake - now) * 1000));
    pollfd fds[2] = {{signal_fd, POLLIN, 0},
                     {server ? server->fd() : -1, POLLIN, 0}};
    poll(fds, 2, timeout_ms);
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (read(signal_fd, &info, sizeof info) == sizeof info) {
        if (info.ssi_signo != SIGHUP) return;
        // Nobody asked over the socket: the diagnostics go to stderr.
        ControlReply reply = Reload(control, options.file);
        if (!reply.ok) {
          control.err << reply.body << "rulejit run: error: " << reply.error
                      << "\n" << std::flush;
        }
      }
    }
    if (server && (fds[1].revents & POLLIN)) {
      server->ServeOne(
          [&](const std::string& request) { return Handle(control, request); });
    }
    now = seconds_since_start();
    if (options.stats_interval > 0 && now >= next_stats) {
      control.out << StatsLine(control.engine, now) << std::flush;
      while (next_stats <= now) next_stats += options.stats_interval;
    }
    if (options.duration > 0 && now >= options.duration) return;
  }
}

int OpenErrorExit(const absl::Status& status, std::ostream& err) {
  err << "rulejit run: error: " << status.message() << "\n";
  return absl::IsNotFound(status) || absl::IsInvalidArgument(status)
             ? kExitUsage
             : kExitUnavailable;
}

std::string Absolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

int RunRun(const Args& args, Streams io) {
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  absl::StatusOr<RunOptions> options = ReadOptions(args);
  if (!options.ok()) {
    return UsageError(kName, options.status().message(), io.err);
  }
  options->format = *format;
  // Reloads happen after a possible chdir of nobody, but be safe: keep the
  // start file absolute so SIGHUP finds it whatever the cwd.
  options->file = Absolute(args.positional(0));
  // The host is this machine: its interfaces' addresses (masquerade, fib).
  absl::StatusOr<HostModel> host = ReadLocalHost();
  if (!host.ok()) {
    io.err << "rulejit run: error: reading this host's interfaces: " << host.status().message()
           << "\n";
    return kExitUnavailable;
  }
  options->engine.host = std::make_shared<const HostModel>(*std::move(host));
  std::optional<LoadedRuleset> loaded =
      LoadRuleset(args.positional(0), *format, io.err);
  if (!loaded) return kExitInputError;
  CompileOptions compile;
  compile.backend = options->backend;
  compile.host = options->engine.host;
  std::unique_ptr<const Program> program =
      CompileOrReport(kName, std::move(loaded->ruleset), compile, io.err);
  if (!program) return kExitInputError;
  const Backend backend = program->backend();

  // Block the signals before any thread exists, so all inherit the mask
  // and the control thread alone takes them, from its signalfd.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    io.err << "rulejit run: error: signalfd: " << strerror(errno) << "\n";
    return kExitUnavailable;
  }

  // Log lines: stderr, or appended to --log FILE (one write each).
  options->engine.log_fd = STDERR_FILENO;
  if (!options->log.empty()) {
    options->engine.log_fd =
        open(options->log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (options->engine.log_fd < 0) {
      io.err << "rulejit run: error: --log " << options->log << ": " << strerror(errno) << "\n";
      return kExitUnavailable;
    }
  }

  runtime::QuietXdpLibraries();
  absl::StatusOr<std::unique_ptr<runtime::Engine>> engine =
      runtime::Engine::Open(std::move(program), options->engine);
  if (!engine.ok()) return OpenErrorExit(engine.status(), io.err);
  runtime::Engine& running = **engine;

  // After the engine: a busy queue is reported as such, not as a busy
  // control socket.
  std::unique_ptr<ControlServer> server;
  if (!options->ctl.empty()) {
    absl::StatusOr<std::unique_ptr<ControlServer>> listening =
        ControlServer::Listen(options->ctl);
    if (!listening.ok()) {
      io.err << "rulejit run: error: " << listening.status().message() << "\n";
      return kExitUnavailable;
    }
    server = *std::move(listening);
  }

  const runtime::XdpAttachment& in = running.attachment(runtime::Engine::kIn);
  const runtime::XdpAttachment& out = running.attachment(runtime::Engine::kOut);
  io.out << "ready in=" << in.name() << "/" << runtime::XdpModeName(in.mode())
         << "/" << SocketModes(running, runtime::Engine::kIn)
         << " out=" << out.name() << "/" << runtime::XdpModeName(out.mode())
         << "/" << SocketModes(running, runtime::Engine::kOut)
         << " backend=" << BackendName(backend)
         << " hooks=" << HookList(running, runtime::Engine::kIn) << "/"
         << HookList(running, runtime::Engine::kOut)
         << " queues=" << running.queues()
         << " ctl=" << (server ? server->path() : "none") << "\n"
         << std::flush;

  running.Start();
  Control control(*options, running, io, args.positional(0));
  ControlLoop(control, signal_fd, server.get());
  running.Stop();
  close(signal_fd);
  io.out << InterfaceLines(running, "final") << CounterLines(running)
         << std::flush;
  return kExitOk;
}

}  // namespace

Command RunCommand() {
  return Command{
      .name = kName,
      .synopsis =
          "run FILE --in IF --out IF [--ctl PATH|none] [--queues N] "
          "[--stats-interval S] [--duration S] [--backend interp|jit|llvm|auto] "
          "[--log FILE] [--generic] [--sysctl nf_conntrack_NAME=V,...] [--format F] [--ipset FILE]",
      .summary =
          "AF_XDP bump-in-the-wire firewall between two interfaces "
          "(netdev ingress, forward, netdev egress hooks; rejects answered back out of the "
          "arrival interface, log lines on stderr or --log FILE; `rulejit ctl` or SIGHUP reload it, "
          "SIGINT/SIGTERM stop it and print counters)",
      .spec = {.flags = {{"in", true},
                         {"out", true},
                         {"ctl", true},
                         {"queues", true},
                         {"stats-interval", true},
                         {"duration", true},
                         {"backend", true},
                         {"generic", false},
                         {"sysctl", true},
                         {"log", true},
                         {"format", true}, {"ipset", true}},
               .positionals = {"FILE"}},
      .run = RunRun,
      .description =
          "A transparent bridge between --in and --out over AF_XDP: frames take the path of "
          "`eval --path forward` and those no hook dropped leave by the other interface. "
          "Prints a ready line once the sockets are open, stats every --stats-interval "
          "seconds, and counters when stopped.",
      .examples = {{"rulejit run rules.nft --in eth0 --out eth1 --stats-interval 1",
                    "Filters between eth0 and eth1, printing statistics every second."}},
  };
}

}  // namespace rulejit::tools
