// `rulejit eval --path` (see eval_path.h).
#include "tools/eval_path.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "runtime/conntrack.h"
#include "tools/json.h"
#include "tools/pcap_sink.h"
#include "tools/pcap_source.h"

namespace rulejit::tools {
namespace {

constexpr uint32_t kEthHeader = 14;

const char* FateName(runtime::Fate fate) {
  switch (fate) {
    case runtime::Fate::kDelivered: return "delivered";
    case runtime::Fate::kForwarded: return "forwarded";
    case runtime::Fate::kSent: return "sent";
    case runtime::Fate::kDropped: return "dropped";
  }
  return "?";
}

// The frame with an Ethernet header, as the path takes it: captures
// without one (raw IP, Linux cooked) get a blank header.
std::vector<uint8_t> EthernetFrame(const PacketView& view) {
  if (view.link_off == 0) return std::vector<uint8_t>(view.data, view.data + view.len);
  std::vector<uint8_t> out(kEthHeader, 0);
  out[12] = view.nfproto == kNfProtoIpv6 ? 0x86 : 0x08;
  out[13] = view.nfproto == kNfProtoIpv6 ? 0xdd : 0x00;
  if (view.network_off != kAbsent && view.network_off <= view.len) {
    out.insert(out.end(), view.data + view.network_off, view.data + view.len);
  }
  return out;
}

std::string ResultLine(const ir::Ruleset& ruleset, uint32_t index,
                       const runtime::PathResult& r, PathOutput output) {
  const bool accepted = r.fate != runtime::Fate::kDropped;
  const char* verdict = accepted ? "accept" : "drop";
  if (output.json) {
    std::string hooks;
    for (const runtime::HookPass& pass : r.hooks) {
      absl::StrAppend(&hooks, hooks.empty() ? "" : ",", "{\"hook\":\"", HookName(pass.hook),
                      "\",\"rule\":", JsonString(RuleText(ruleset, pass.result.decided_by, "none")),
                      "}");
    }
    std::string line = absl::StrCat("{\"index\":", index, ",\"verdict\":\"", verdict,
                                    "\",\"fate\":\"", FateName(r.fate), "\",\"hooks\":[",
                                    hooks, "]");
    if (!r.stack_drop.empty()) absl::StrAppend(&line, ",\"stack\":", JsonString(r.stack_drop));
    if (r.random_port) absl::StrAppend(&line, ",\"random_port\":true");
    if (output.ct) absl::StrAppend(&line, ",\"ct\":\"", CtText(r.ct_state, r.ct_reply), "\"");
    return line + "}\n";
  }
  std::string line = absl::StrCat(index, " ", verdict);
  if (accepted) absl::StrAppend(&line, " ", FateName(r.fate));
  // The NAT chose a port from a random draw: the kernel's differs.
  if (r.random_port) absl::StrAppend(&line, " random-port");
  if (output.explain) {
    for (const runtime::HookPass& pass : r.hooks) {
      absl::StrAppend(&line, " ", HookName(pass.hook), "=",
                      RuleText(ruleset, pass.result.decided_by, "none"));
    }
    if (!r.stack_drop.empty()) absl::StrAppend(&line, " stack=\"", r.stack_drop, "\"");
  }
  if (output.ct) absl::StrAppend(&line, " ct=", CtText(r.ct_state, r.ct_reply));
  return line + "\n";
}

}  // namespace

std::string CtText(uint32_t ct_state, bool reply) {
  const char* state = "none";
  switch (ct_state) {
    case kCtStateInvalid: state = "invalid"; break;
    case kCtStateNew: state = "new"; break;
    case kCtStateEstablished: state = "established"; break;
    case kCtStateRelated: state = "related"; break;
    case kCtStateUntracked: state = "untracked"; break;
    default: break;
  }
  return absl::StrCat(state, reply ? ",reply" : "");
}

std::string RuleText(const ir::Ruleset& ruleset, const RuleRef& ref, const char* no_chain) {
  if (ref.table < 0 || ref.chain < 0) return no_chain;
  if (ref.rule < 0) return "policy";
  const ir::Chain& chain = ruleset.tables[ref.table].chains[ref.chain];
  std::string where = ruleset.Where(chain.rules[ref.rule].loc);
  // Synthetic rules have no location; name them by chain and position.
  return where.empty() ? absl::StrCat(chain.name, "#", ref.rule + 1) : where;
}

absl::StatusOr<runtime::PathOptions> PathFromFlags(const std::string& path,
                                                   const std::string& iif,
                                                   const std::string& oif, bool have_host) {
  runtime::PathOptions options{.iif = iif, .oif = oif};
  if (path == "input") {
    options.route = runtime::RouteChoice::kLocal;
  } else if (path == "forward") {
    options.route = runtime::RouteChoice::kForward;
  } else if (path == "output") {
    options.start = runtime::PathStart::kLocalOut;
    options.route = runtime::RouteChoice::kForward;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --path '", path, "' (expected forward, input or output)"));
  }
  if (have_host) options.route = runtime::RouteChoice::kHost;
  if (options.start == runtime::PathStart::kLocalOut && !iif.empty()) {
    return absl::InvalidArgumentError("--iif has no meaning on the output path");
  }
  return options;
}

int EvalAlongPath(const Program& program, const HostModel& host,
                  const runtime::PathOptions& path, PathOutput output,
                  const std::string& pcap, Streams io) {
  std::unique_ptr<PcapSink> sink;
  if (!output.write_pcap.empty()) {
    absl::StatusOr<std::unique_ptr<PcapSink>> opened = PcapSink::Open(output.write_pcap);
    if (!opened.ok()) {
      io.err << opened.status().message() << "\n";
      return kExitInputError;
    }
    sink = *std::move(opened);
  }
  runtime::Conntrack conntrack(output.conntrack);
  runtime::PathRunner runner(program, host, conntrack);
  RunState state;
  const ir::Ruleset& ruleset = IrOf(program.ruleset());
  absl::Status status = ForEachFrame(pcap, [&](const Frame& frame) {
    std::vector<uint8_t> bytes = EthernetFrame(frame.view);
    PacketMeta meta;
    meta.pkttype = frame.pkttype;
    ApplyClock(output.clock, frame.time_ns, &meta);
    ApplyDraws(output.draws, &meta);
    state.set_now_ns(frame.time_ns);
    conntrack.set_now_ns(frame.time_ns);
    runtime::PathResult r = runner.Run(path, bytes.data(), static_cast<uint32_t>(bytes.size()),
                                       meta, &state);
    io.out << ResultLine(ruleset, frame.index, r, output);
    if (sink && r.fate != runtime::Fate::kDropped) sink->Write(r.packet, frame.time_ns);
  });
  io.out.flush();
  if (!status.ok()) {
    io.err << status.message() << "\n";
    return kExitInputError;
  }
  return kExitOk;
}

}  // namespace rulejit::tools
