// Flows of a path walk (path_walk.h): narrowing what a hook sees back to the
// arriving packets, the effects rules write, the kernel's own steps
// (conntrack, NAT rewrite, forwarding checks) and the routing decision as
// operations on flows. Internal to compiler/analysis.
#ifndef RULEJIT_COMPILER_ANALYSIS_PATH_FLOW_H_
#define RULEJIT_COMPILER_ANALYSIS_PATH_FLOW_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/analysis/path_walk.h"

namespace rulejit::analysis {

using Flows = std::vector<PathFlow>;

// The flow's packets whose `now` lies in `part` (a sub-cube of f.now);
// nullopt when none.
std::optional<PathFlow> Narrow(const PathFlow& f, const Cube& part);

// Splits `flows` by the union of disjoint cubes `match`: `hit` those in it,
// `rest` the others.
void SplitFlows(const Flows& flows, const std::vector<Cube>& match, const Space& space,
                Flows& hit, Flows& rest);
// The same by one dimension of `now`.
void SplitFlow(const PathFlow& f, Dim dim, const IntervalSet& set, const Space& space,
               Flows& hit, Flows& rest);

// `now`'s dimension becomes the constant `v` for the hooks after.
void SetConst(PathFlow& f, Dim dim, Value v);

// A rule's effects (lift_cube.h), in order; false when a mark copied from
// the other is not one value (not modelled).
bool ApplyEffects(PathFlow& f, const std::vector<Effect>& effects);

// The conntrack step: ct state new and ct mark 0, or untracked.
void ConntrackStep(PathFlow& f);

// A flow the stack drops (or that is not modelled), with why.
struct StackDrop {
  PathFlow flow;
  std::string why;
};

// Masquerade or redirect: the binding made concrete with the address the
// device gives (runtime/nat.cc's DeviceAddress: the output device's for
// masquerade, the input device's for redirect, loopback for a local
// packet's redirect), then RewriteNat. A device that can't be named
// (no host, several possible) goes to `unknown`; no address: `dropped`.
void DeviceNat(const PathFlow& f, const Effect& binding, const HostModel* host,
               const Space& space, bool local_out, Flows& out, std::vector<StackDrop>& dropped,
               std::vector<StackDrop>& unknown);

// The rewrite by a binding: address, and the port for protocols with
// ports (others keep theirs: an ICMP id is not a dimension). May split.
void RewriteNat(const PathFlow& f, const Effect& binding, const Space& space, Flows& out);


// ip_forward's checks and the TTL / hop limit decrement.
void RouterChecks(const Flows& in, const Space& space, Flows& pass, std::vector<StackDrop>& dropped);

// ip6_rcv_core's address checks (rulejit/route_input.h's Ipv6ReceiveDrop),
// before prerouting; IPv4 flows pass.
void Ipv6ReceiveChecks(const Flows& in, const Space& space, Flows& pass,
                       std::vector<StackDrop>& dropped);

// The routing decision on `host` for the addresses as the flow has them:
// an arriving flow's as rulejit/route_input.h's RouteInput makes it (by
// input device, source and destination), a local one's by its route.
struct Routed {
  Flows local;
  Flows out;  // `now`'s oif set to the route's device
  std::vector<StackDrop> dropped;
};
Routed RouteOnHost(const Flows& in, const HostModel& host, const Space& space, bool arriving);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_PATH_FLOW_H_
