// A ruleset's whole packet path over cubes: the model's packets of a
// connection's first packet pushed through the hooks of a path in the
// kernel's order (runtime/path.h is the concrete twin), carrying what a
// rule writes that later hooks read. `diff --path` compares two of these
// (path_diff.h).
//
//   PathSpaces spaces({&old_rs, &new_rs}, options);
//   std::vector<PathOutcome> out = WalkPath(ruleset, spaces, options);
//   for (const PathOutcome& o : out) ... o.flow.origin, o.fate, o.flow.trail
//
// Order (as runtime/path.cc): arriving packets: netdev ingress, prerouting
// (chains by priority; conntrack at -200; the nat chains at -100 in their
// own priority order until one binds), the routing decision, then input
// (nat chains at 100) or forward and postrouting (nat chains at 100) and
// egress; local out: routing, output, routing again, postrouting.
//
// What is carried: meta mark and ct mark set to constants (or copied from
// each other through a mask: marks are one constant on every flow), notrack (ct
// state untracked at the conntrack step), DNAT and SNAT to one address
// and port (the cube's address / port dimension becomes that constant for
// the hooks after the NAT step), masquerade and redirect to the device's
// address on the host model. A flow keeps both the arriving packets
// (`origin`, where witnesses come from) and what the current hook sees
// (`now`); each dimension of `now` is the origin's, a constant, or the
// origin's minus one (the TTL after forwarding), so narrowing `now` by a
// rule's match narrows `origin` exactly.
//
// The first packet of a connection only (nat chains see nothing else):
// arriving packets have mark 0 and no conntrack entry before the conntrack
// step (ct state invalid, as the kernel's chains at raw priority see it);
// after it, ct state new, ct mark 0 (or untracked after notrack). The
// packets are those conntrack makes a new entry for: TCP with SYN alone,
// ICMP / ICMPv6 echo requests, UDP and the other protocols conntrack tracks
// generically; SCTP and DCCP (state machines of their own) and other ICMP
// types are outside the scope. Under a host model, arriving packets have
// ordinary unicast addresses (not in 0/8, 127/8, 224/4, 240/4; IPv6 not in
// ::/8 or ff00::/8): the stack's own handling of broadcast, multicast
// groups, loopback and unspecified addresses is not modelled.
//
// Not modelled (the flow ends as PathFate::kNotModelled with the rule or
// chain and the reason, never guessed; where the rule's match is exact and
// only a statement is not, LiftedRule::unknown_on, only the packets it
// matches end there): rules the cube lifter can't lift
// (lift_cube.h), NAT to a range or prefix, masquerade and redirect whose
// device is not a named device of the host model (path_flow.h), netdev
// ingress/egress chains, queue verdicts, local output delivered through lo.
// The routing decision: with a host model (rulejit/host.h) the kernel's
// for the addresses as prerouting left them (rulejit/route_input.h: local,
// forwarded through the route's device, dropped as martian, without a
// route or for a multicast group not joined; IPv6's receive checks before
// prerouting), as runtime/path.cc makes it; without one, fixed by the path
// as `rulejit eval --path` does (input: delivered, forward and output: out
// through --oif).
#ifndef RULEJIT_COMPILER_ANALYSIS_PATH_WALK_H_
#define RULEJIT_COMPILER_ANALYSIS_PATH_WALK_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "compiler/analysis/space.h"
#include "ir/ir.h"
#include "rulejit/host.h"

namespace rulejit::analysis {

using headerspace::Effect;

enum class PathKind : uint8_t { kForward, kInput, kOutput };
enum class PathFate : uint8_t { kDropped, kDelivered, kForwarded, kSent, kNotModelled };
const char* PathFateName(PathFate fate);

struct PathOptions {
  PathKind path = PathKind::kForward;
  std::optional<std::string> iif;  // fixes the input device's name
  std::optional<std::string> oif;  // without a host: the output device
  const HostModel* host = nullptr;  // null: the route is fixed by the path
};

// How a dimension of what a hook sees relates to the arriving packet.
enum class Rel : uint8_t { kSame, kConst, kDecremented };

// The rule that decided at a hook (table -1: none did; rule -1: policy).
struct HookStep {
  ir::Hook hook = ir::Hook::kPrerouting;
  ir::RuleRef rule;
};

struct PathFlow {
  Cube origin;  // the arriving (or locally sent) packets
  Cube now;     // the same packets as the current hook sees them
  std::array<Rel, kDims> rel{};
  bool tracked = false;  // the conntrack step ran
  bool notrack = false;
  std::optional<Effect> dnat, snat;  // the connection's bindings
  ir::RuleRef nat_rule;              // the rule that made the last one
  std::vector<HookStep> trail;
};

struct PathOutcome {
  PathFlow flow;
  PathFate fate = PathFate::kDropped;
  std::string why;   // a stack drop's reason, or why not modelled
  ir::RuleRef where;  // not modelled: the rule (rule -1: the chain)
};

// The spaces of the hooks of a comparison: the same dimensions and
// domains, each hook with its own devices and link visibility.
class PathSpaces {
 public:
  PathSpaces(const std::vector<const ir::Ruleset*>& rulesets, const PathOptions& options);
  const Space& at(ir::Hook hook) const { return hooks_[static_cast<int>(hook)]; }
  // For printing the arriving packets (their devices as the path gives).
  const Space& witness() const { return witness_; }
  const Space& base() const { return base_; }

 private:
  Space base_;
  Space witness_;
  std::array<Space, 8> hooks_;
};

std::vector<PathOutcome> WalkPath(const ir::Ruleset& ruleset, const PathSpaces& spaces,
                                  const PathOptions& options);

// The arriving packets of the path's scope (see above), as flows.
std::vector<PathFlow> StartFlows(const PathSpaces& spaces, const PathOptions& options);

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_PATH_WALK_H_
