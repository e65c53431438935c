// `rulejit eval FILE PCAP [--hook H | --path P] [--iif IF] [--oif IF] [--host HOST]
//                        [--explain] [--json] [--backend interp] [--format F] [--ipset FILE]`
//
// --path forward|input|output runs every frame along its whole path
// (tools/eval_path.h). Otherwise it runs every frame of PCAP through the ruleset at one hook with the chosen
// tier (--backend interp|jit|llvm|auto; auto = the best compiled tier) and prints
// one line per frame:
//   0 accept
//   1 drop firewall.ipt:17         (--explain: the deciding rule)
//   2 drop policy                  (--explain: a chain policy decided)
//   {"index":2,"verdict":"drop","rule":"policy"}       (--json)
//
// Packet metadata comes from the flags and the frame: the input device
// exists at prerouting/input/forward/ingress, the output device at
// forward/output/postrouting/egress (ifindex 1 for --iif, 2 for --oif, or
// the device's index on the --host model, which then must have it);
// pkttype from the destination MAC; conntrack state from a flow tracker fed
// in pcap order, where accepted packets create or confirm flows. Frames
// with an Ethernet header lose it at output/postrouting, where the kernel
// has none yet; at egress it is built, and `meta length` counts it.
// The wall clock is --time T (every frame) or --time pcap (each frame's
// capture time); the kernel timezone --kernel-tz (tools/clock_option.h);
// what the kernel draws at random --random, --symhash, --jhash-seed; the
// CPU the kernel processes packets on --cpu (tools/draw_option.h).
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/internal.h"
#include "ir/hook_order.h"
#include "rulejit/rulejit.h"
#include "tools/json.h"
#include "runtime/conntrack.h"
#include "tools/clock_option.h"
#include "tools/draw_option.h"
#include "tools/conntrack_option.h"
#include "tools/commands.h"
#include "tools/eval_path.h"
#include "tools/host_option.h"
#include "tools/pcap_source.h"

namespace rulejit::tools {
namespace {

constexpr absl::string_view kName = "eval";
constexpr size_t kIfNameMax = 15;  // IFNAMSIZ - 1
constexpr uint32_t kIifIndex = 1;
constexpr uint32_t kOifIndex = 2;

struct EvalOptions {
  Backend backend = Backend::kAuto;
  ir::Hook hook = ir::Hook::kInput;
  std::string iif;
  std::string oif;
  std::shared_ptr<const HostModel> host;  // --host; null without
  bool explain = false;
  bool json = false;
  bool ct = false;  // --ct
  std::optional<runtime::PathOptions> path;  // --path
  runtime::ConntrackOptions conntrack;        // --sysctl
  ClockOptions clock;                         // --time, --kernel-tz
  DrawOptions draws;                          // --random, --symhash, --jhash-seed, --cpu
};

// Packets leave the stack at these hooks before any link header is built.
bool HookSeesNoLinkHeader(ir::Hook hook) {
  return hook == ir::Hook::kOutput || hook == ir::Hook::kPostrouting;
}

// iptables-save dumps have the five IP hooks, not the netdev ones.
bool HookValidFor(InputFormat format, ir::Hook hook) {
  if (format != InputFormat::kIptables && format != InputFormat::kIptablesNft) return true;
  return hook != ir::Hook::kIngress && hook != ir::Hook::kEgress;
}

absl::Status CheckInterfaceName(absl::string_view flag, const std::string& name,
                                bool hook_has_device, ir::Hook hook) {
  if (name.empty()) return absl::OkStatus();
  if (!hook_has_device) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " has no meaning at hook ", ir::HookName(hook)));
  }
  if (name.size() > kIfNameMax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " '", name, "' is longer than ", kIfNameMax, " bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<EvalOptions> ReadOptions(const Args& args) {
  EvalOptions options;
  std::string backend = args.value_or("backend", "auto");
  std::optional<Backend> chosen = BackendFromName(backend);
  if (!chosen) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --backend '", backend, "' (expected interp, jit, llvm or auto)"));
  }
  options.backend = *chosen;
  std::string hook_name = args.value_or("hook", "input");
  std::optional<ir::Hook> hook = ir::HookFromName(hook_name);
  if (!hook) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown hook '", hook_name, "'"));
  }
  options.hook = *hook;
  options.iif = args.value_or("iif", "");
  options.oif = args.value_or("oif", "");
  options.explain = args.has("explain");
  options.json = args.has("json");
  options.ct = args.has("ct");
  absl::StatusOr<std::shared_ptr<const HostModel>> host = LoadHostOption(args.value("host"));
  if (!host.ok()) return host.status();
  options.host = *std::move(host);
  absl::StatusOr<runtime::ConntrackOptions> conntrack = ParseConntrackSysctls(args.value("sysctl"));
  if (!conntrack.ok()) return conntrack.status();
  options.conntrack = *conntrack;
  absl::StatusOr<ClockOptions> clock = ReadClockOptions(args);
  if (!clock.ok()) return clock.status();
  options.clock = *clock;
  absl::StatusOr<DrawOptions> draws = ReadDrawOptions(args);
  if (!draws.ok()) return draws.status();
  options.draws = *draws;
  if (std::optional<std::string> path = args.value("path")) {
    if (args.has("hook")) return absl::InvalidArgumentError("--path and --hook exclude each other");
    absl::StatusOr<runtime::PathOptions> along =
        PathFromFlags(*path, options.iif, options.oif, options.host != nullptr);
    if (!along.ok()) return along.status();
    options.path = *along;
    return options;
  }
  if (args.has("write-pcap")) return absl::InvalidArgumentError("--write-pcap needs --path");
  if (absl::Status s = CheckInterfaceName("iif", options.iif,
                                          ir::HookHasInputDevice(*hook), *hook);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckInterfaceName("oif", options.oif,
                                          ir::HookHasOutputDevice(*hook), *hook);
      !s.ok()) {
    return s;
  }
  return options;
}

// A device's index: its own on the host model, else the fixed default.
absl::StatusOr<uint32_t> DeviceIndex(const EvalOptions& options, const std::string& name,
                                     uint32_t fixed) {
  return options.host ? HostDeviceIndex(*options.host, name) : fixed;
}

// The metadata every frame shares: devices as the hook has them.
absl::StatusOr<PacketMeta> DeviceMeta(const EvalOptions& options) {
  PacketMeta meta;
  meta.has_iif = ir::HookHasInputDevice(options.hook);
  meta.has_oif = ir::HookHasOutputDevice(options.hook);
  if (!options.iif.empty()) {
    std::memcpy(meta.iifname, options.iif.data(), options.iif.size());
    absl::StatusOr<uint32_t> index = DeviceIndex(options, options.iif, kIifIndex);
    if (!index.ok()) return absl::InvalidArgumentError(absl::StrCat("--iif: ", index.status().message()));
    meta.iif = *index;
  }
  if (!options.oif.empty()) {
    std::memcpy(meta.oifname, options.oif.data(), options.oif.size());
    absl::StatusOr<uint32_t> index = DeviceIndex(options, options.oif, kOifIndex);
    if (!index.ok()) return absl::InvalidArgumentError(absl::StrCat("--oif: ", index.status().message()));
    meta.oif = *index;
  }
  // The devices' types and groups on the host model (else Ethernet and
  // group 0, PacketMeta's own).
  if (options.host) {
    const HostInterface* in = options.host->FindInterface(meta.iif);
    const HostInterface* out = options.host->FindInterface(meta.oif);
    if (in && in->link_type) meta.iiftype = *in->link_type;
    if (out && out->link_type) meta.oiftype = *out->link_type;
    if (in) meta.iifgroup = in->group;
    if (out) meta.oifgroup = out->group;
  }
  return meta;
}

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kAccept: return "accept";
    case Verdict::kDrop: return "drop";
    case Verdict::kQueue: return "queue";
  }
  return "?";
}

std::string ResultLine(const EvalOptions& options, const ir::Ruleset& ruleset,
                       uint32_t index, const Result& result, const PacketMeta& meta) {
  const char* verdict = VerdictName(result.verdict);
  const std::string ct = CtText(meta.ct_state, meta.ct_valid && meta.ct_dir != 0);
  if (options.json) {
    return absl::StrCat(
        "{\"index\":", index, ",\"verdict\":\"", verdict,
        "\",\"rule\":", JsonString(RuleText(ruleset, result.decided_by, "policy")),
        options.ct ? absl::StrCat(",\"ct\":\"", ct, "\"") : "", "}\n");
  }
  std::string line = absl::StrCat(index, " ", verdict);
  if (options.explain) {
    absl::StrAppend(&line, " ", RuleText(ruleset, result.decided_by, "policy"));
  }
  if (options.ct) absl::StrAppend(&line, " ct=", ct);
  return line + "\n";
}

// Everything that lives across the frames of one run.
struct EvalRun {
  const EvalOptions& options;
  const Program& program;
  RunState state;
  runtime::Conntrack conntrack;
  PacketMeta device_meta;
};

std::string EvalFrame(EvalRun& run, const Frame& frame) {
  PacketView view = HookSeesNoLinkHeader(run.options.hook)
                            ? WithoutLinkHeader(frame.view)
                            : frame.view;
  // At egress skb->data is the link header (meta length counts it).
  if (run.options.hook == ir::Hook::kEgress) view.skb_off = view.link_off;
  PacketMeta meta = run.device_meta;
  ApplyClock(run.options.clock, frame.time_ns, &meta);
  ApplyDraws(run.options.draws, &meta);
  // Locally sent packets are PACKET_HOST whatever MAC the capture shows.
  meta.pkttype =
      HookSeesNoLinkHeader(run.options.hook) ? kPktHost : frame.pkttype;
  run.conntrack.set_now_ns(frame.time_ns);
  // Conntrack ran at prerouting, where checksums are verified, unless the
  // packet is locally generated.
  runtime::Conntrack::Entry entry =
      run.conntrack.In(view, meta, /*arriving=*/run.options.hook != ir::Hook::kOutput);
  run.state.set_now_ns(frame.time_ns);
  Result result = run.program.Run(run.options.hook, view, meta, &run.state);
  meta.ct_mark = result.ct_mark;  // a `ct mark set` sticks to the flow
  run.conntrack.Confirm(entry, meta, result.verdict == Verdict::kAccept);
  return ResultLine(run.options, IrOf(run.program.ruleset()), frame.index, result, meta);
}

int RunEval(const Args& args, Streams io) {
  absl::StatusOr<LoadInput> format = FormatOption(args);
  if (!format.ok()) return UsageError(kName, format.status().message(), io.err);
  absl::StatusOr<EvalOptions> options = ReadOptions(args);
  if (!options.ok()) {
    return UsageError(kName, options.status().message(), io.err);
  }
  std::optional<LoadedRuleset> loaded =
      LoadRuleset(args.positional(0), *format, io.err);
  if (!loaded) return kExitInputError;
  if (!options->path && !HookValidFor(loaded->format, options->hook)) {
    return UsageError(kName,
                      absl::StrCat("hook ", ir::HookName(options->hook),
                                   " is not evaluated for iptables dumps "
                                   "(they have the five IP hooks)"),
                      io.err);
  }

  if (const ir::Node* read = FirstHostRead(loaded->ruleset); read && !options->host) {
    io.err << loaded->ruleset.Where(read->loc)
           << (ReadsSockets(read->expr)
                   ? ": error: this rule looks up the host's sockets: give --host FILE with "
                     "a \"sockets\" list (see README, the host model)\n"
                   : ": error: this rule asks the host's addresses and routes: give --host FILE "
                     "(ip -j addr/route output, see rulejit/host.h) or --host local\n");
    return kExitInputError;
  }
  if (!CheckClockInputs(loaded->ruleset, options->clock, /*frames=*/true, io.err) ||
      !CheckDrawInputs(loaded->ruleset, options->draws, io.err)) {
    return kExitInputError;
  }
  absl::StatusOr<PacketMeta> device_meta = DeviceMeta(*options);
  if (!device_meta.ok()) return UsageError(kName, device_meta.status().message(), io.err);
  CompileOptions compile{.backend = options->backend};
  compile.host = options->host;
  std::unique_ptr<const Program> program =
      CompileOrReport(kName, std::move(loaded->ruleset), compile, io.err);
  if (!program) return kExitInputError;
  if (options->path) {
    const HostModel host = options->host ? *options->host : LoopbackHost();
    return EvalAlongPath(*program, host, *options->path,
                         {.explain = options->explain,
                          .json = options->json,
                          .ct = options->ct,
                          .write_pcap = args.value_or("write-pcap", ""),
                          .conntrack = options->conntrack,
                          .clock = options->clock,
                          .draws = options->draws},
                         args.positional(1), io);
  }
  EvalRun run{.options = *options,
              .program = *program,
              .state = {},
              .conntrack = runtime::Conntrack(options->conntrack),
              .device_meta = *device_meta};
  absl::Status status = ForEachFrame(
      args.positional(1),
      [&](const Frame& frame) { io.out << EvalFrame(run, frame); });
  io.out.flush();
  if (!status.ok()) {
    io.err << status.message() << "\n";
    return kExitInputError;
  }
  return kExitOk;
}

}  // namespace

Command EvalCommand() {
  return Command{
      .name = kName,
      .synopsis =
          "eval FILE PCAP [--hook H | --path forward|input|output [--write-pcap OUT]] [--iif IF] [--oif IF] [--host FILE|local] "
          "[--sysctl nf_conntrack_NAME=V,...] [--time T|pcap] [--kernel-tz +HH:MM|UTC|local] [--random N] [--symhash N] [--jhash-seed N] [--cpu N] [--explain] [--ct] [--json] [--backend interp|jit|llvm|auto] [--format F] [--ipset FILE]",
      .summary =
          "print '<index> <verdict>' for every frame of PCAP "
          "(--explain: deciding rule as FILE:LINE or 'policy')",
      .spec = {.flags = {{"hook", true},
                         {"path", true},
                         {"write-pcap", true},
                         {"iif", true},
                         {"oif", true},
                         {"host", true},
                         {"sysctl", true},
                         {"time", true},
                         {"kernel-tz", true},
                         {"random", true},
                         {"symhash", true},
                         {"jhash-seed", true},
                         {"cpu", true},
                         {"explain", false},
                         {"ct", false},
                         {"json", false},
                         {"backend", true},
                         {"format", true}, {"ipset", true}},
               .positionals = {"FILE", "PCAP"}},
      .run = RunEval,
      .description =
          "Runs every frame of PCAP through the ruleset at one hook and "
          "prints \"INDEX VERDICT\" per frame; --explain adds the deciding rule (FILE:LINE, "
          "or policy), --json prints one JSON object per frame. --path forward|input|output "
          "runs each frame along its whole path instead (every hook, conntrack, NAT, "
          "routing on --host). PCAP \"-\" reads the capture from standard input.",
      .examples = {{"rulejit eval rules.ipt capture.pcap --explain",
                    "Verdicts of the input hook, with the deciding rules."},
                   {"tcpdump -w - -c 100 | rulejit eval rules.nft - --hook forward --iif eth0",
                    "Verdicts for live traffic captured on stdin, as if forwarded from eth0."}},
  };
}

}  // namespace rulejit::tools
