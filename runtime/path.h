// A packet's whole path through the hooks, as the kernel runs it, on a
// modelled host: the one definition `rulejit eval --path` uses.
//
//   runtime::Conntrack ct;                     // lives across the packets
//   runtime::PathRunner path(*program, host, ct);
//   runtime::PathOptions opt{.start = runtime::PathStart::kArrives, .iif = "eth0"};
//   runtime::PathResult r = path.Run(opt, frame, len, packet_meta, &state);
//   // r.fate: delivered, forwarded, sent or dropped; r.hooks: every hook
//   // passed with its deciding rule; r.packet: the bytes as they left.
//
// The order (Linux 6.18, net/ipv4 and net/ipv6 with nf_conntrack and
// nf_nat):
//   arriving:  netdev ingress (iif) → prerouting → routing decision →
//              input (delivered) | forward → postrouting → netdev egress
//   local out: routing → output → routing again → postrouting → egress
//              (a local destination then goes through lo: prerouting →
//              input)
// Within a hook, chains run by priority with the kernel's own steps at
// theirs: conntrack at -200 (prerouting, output: a chain before it sees
// `ct state invalid`, and a notrack there makes the packet untracked), the
// NAT steps at -100 (prerouting and output: destination) and 100 (input
// and postrouting: source), where every nat chain of the hook runs in its
// own priority order while the connection has no binding, the first
// binding ends them, and the packet is then rewritten by the connection's
// bindings (also later packets of either direction; an ICMP error
// RELATED to a flow runs no nat chain and is rewritten with the packet it
// quotes, nat.h's TranslateIcmpError); confirmation at the
// end of input or postrouting. A chain at exactly a step's priority runs
// before the step. Before the forward hook the stack drops packets with
// TTL or hop limit ≤ 1 and decrements it; it drops packets not for this
// host's MAC (pkttype other than host) before forwarding.
//
// The routing decision reads the host model (rulejit/host.h) with the
// packet as prerouting left it (so a DNAT may turn a forwarded packet into
// a local one or the reverse), with the kernel's checks of special
// addresses (rulejit/route_input.h: martian sources and destinations,
// limited broadcast, multicast groups; IPv6's receive checks run before
// prerouting): local and broadcast routes deliver, unicast routes forward
// through their first device, no route or a blackhole, unreachable or
// prohibit route drops. Without a host the
// caller fixes the decision (PathOptions::route). Not modelled: policy
// routing (`ip rule`), rp_filter, fragmentation and reassembly, the link
// header a forwarded packet gets at egress (it keeps the one it arrived
// with), the local stack's answers.
#ifndef RULEJIT_RUNTIME_PATH_H_
#define RULEJIT_RUNTIME_PATH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rulejit/host.h"
#include "rulejit/rulejit.h"
#include "runtime/conntrack.h"
#include "runtime/flow_table.h"

namespace rulejit::runtime {

enum class PathStart : uint8_t {
  kArrives,   // the frame arrives on `iif` (its Ethernet header included)
  kLocalOut,  // a local socket sends it (the frame's link header is ignored)
};

// How the routing decision is made.
enum class RouteChoice : uint8_t {
  kHost,     // on the host model
  kLocal,    // fixed: delivered locally
  kForward,  // fixed: forwarded (sent, for local out) through `oif`
};

struct PathOptions {
  PathStart start = PathStart::kArrives;
  RouteChoice route = RouteChoice::kHost;
  // Arriving: the input device. Empty with the host's routing: the device
  // whose MAC the frame is addressed to (frames for another MAC are then
  // PACKET_OTHERHOST, as eth_type_trans makes them).
  std::string iif;
  std::string oif;  // fixed forward route: the output device
  // A transparent bridge (`rulejit run`), as br_netfilter runs the IP
  // hooks for bridged frames: they see the frame whatever MAC it is sent
  // to, and it leaves by `oif` (route kForward) neither routed nor with its
  // TTL or hop limit changed.
  bool bridged = false;
};

enum class Fate : uint8_t {
  kDelivered,  // passed input: handed to a local socket
  kForwarded,  // passed forward, postrouting and egress
  kSent,       // a local packet passed output, postrouting and egress
  kDropped,    // a rule dropped (or rejected or queued) it, or the stack did
};

// One hook the packet passed, with the rule that decided there.
struct HookPass {
  Hook hook;
  Result result;
};

struct PathResult {
  Fate fate = Fate::kDropped;
  std::vector<HookPass> hooks;
  // Why the stack, not a rule, dropped it ("no route", "ttl exceeded",
  // ...); empty when a rule decided.
  std::string stack_drop;
  // The frame as it left (forwarded, sent) or was delivered: after NAT,
  // TTL decrement and the rules' writes.
  std::vector<uint8_t> packet;
  uint32_t oif = 0;  // forwarded or sent: the output device's index
  // A NAT binding of this packet took a port (or echo id) from the random
  // draw (PacketMeta::random): the kernel draws its own, so that port is
  // an example, not the kernel's.
  bool random_port = false;
  // What conntrack made of the packet (ct state and direction as the
  // chains after the conntrack step saw them); ct_state 0: it never got
  // there (dropped before prerouting's conntrack step).
  uint32_t ct_state = 0;
  bool ct_reply = false;
};

class PathRunner {
 public:
  // `program`, `host` and `conntrack` must outlive the runner.
  PathRunner(const Program& program, const HostModel& host, Conntrack& conntrack);
  // The same over any connection table (a shared one's handle).
  PathRunner(const Program& program, const HostModel& host, FlowTable& table);

  // One frame along its path. `meta` gives what the frame does not carry
  // (mark, socket owner, random draw); devices come from `options`.
  PathResult Run(const PathOptions& options, const uint8_t* frame, uint32_t len,
                 const PacketMeta& meta, RunState* state) const;

  // A hook's base chains as the path runs them: the others by priority,
  // the nat chains apart (they run at the NAT step).
  struct HookChains {
    std::vector<RuleRef> plain;
    std::vector<int32_t> priorities;  // of `plain`
    std::vector<RuleRef> nat;
  };

 private:
  PathRunner(const Program& program, const HostModel& host,
             std::unique_ptr<LocalFlowTable> local, FlowTable* table);

  const Program& program_;
  const HostModel& host_;
  std::unique_ptr<LocalFlowTable> local_;  // the first constructor's
  FlowTable& conntrack_;
  std::vector<HookChains> hooks_;  // by Hook
  bool nat_ = false;  // some chain is of type nat: the NAT steps run
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_PATH_H_
