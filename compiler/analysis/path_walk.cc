// A ruleset's packet path over cubes (see path_walk.h): the hooks in the
// kernel's order, each hook's chains by priority with the conntrack and NAT
// steps among them, chains walked rule by rule on flows.
#include "compiler/analysis/path_walk.h"

#include <climits>
#include <map>
#include <memory>

#include "compiler/analysis/path_flow.h"
#include "ir/hook_order.h"

namespace rulejit::analysis {
namespace {

constexpr int kJumpStackSize = 16;  // NFT_JUMP_STACK_SIZE
constexpr int32_t kConntrackPriority = -200;
constexpr int32_t kNatDstPriority = -100;
constexpr int32_t kNatSrcPriority = 100;

enum class Step : uint8_t { kConntrack, kNatDst, kNatSrc };
struct StepAt {
  int64_t priority;
  Step step;
};

std::vector<StepAt> StepsOf(ir::Hook hook) {
  switch (hook) {
    case ir::Hook::kPrerouting:
    case ir::Hook::kOutput:
      return {{kConntrackPriority, Step::kConntrack}, {kNatDstPriority, Step::kNatDst}};
    case ir::Hook::kInput:
    case ir::Hook::kPostrouting:
      return {{kNatSrcPriority, Step::kNatSrc}};
    default:
      return {};
  }
}

bool Sees(const ir::Table& table, const PathFlow& f) {
  const bool v6 = f.now.get(Dim::kFamily) == IntervalSet::Single(kFamilyIpv6);
  switch (table.family) {
    case ir::Family::kIp: return !v6;
    case ir::Family::kIp6: return v6;
    case ir::Family::kInet: return true;
    default: return false;
  }
}

// A flow a chain decided, with the rule.
struct Decided {
  PathFlow flow;
  ir::VerdictCode verdict;
  ir::RuleRef rule;
};

class PathWalker {
 public:
  PathWalker(const ir::Ruleset& ruleset, const PathSpaces& spaces, const PathOptions& options,
             std::vector<PathOutcome>& out)
      : ruleset_(ruleset), spaces_(spaces), options_(options), out_(out) {}

  void Run(Flows start);

 private:
  const Space& space() const { return spaces_.base(); }
  const headerspace::CubeLifter& LifterAt(ir::Hook hook);
  const LiftedRule& Lifted(ir::Hook hook, const ir::RuleRef& ref);
  void NotModelled(PathFlow f, const ir::RuleRef& where, std::string why) {
    out_.push_back({std::move(f), PathFate::kNotModelled, std::move(why), where});
  }
  void Dropped(PathFlow f, std::string why = "") {
    out_.push_back({std::move(f), PathFate::kDropped, std::move(why), {}});
  }
  void Final(Flows& flows, PathFate fate) {
    for (PathFlow& f : flows) out_.push_back({std::move(f), fate, "", {}});
  }
  void Stack(std::vector<StackDrop>& drops) {
    for (StackDrop& d : drops) Dropped(std::move(d.flow), std::move(d.why));
  }

  // Runs `flows` through chain (table, chain) at `hook`: decided flows go
  // to `decided`, the rest (returned, fell off the end) is returned.
  Flows Walk(ir::Hook hook, int table, int chain, Flows flows, int depth,
             std::vector<Decided>& decided);
  void Branch(ir::Hook hook, const ir::RuleRef& ref, const LiftedBranch& branch, Flows hit,
              int depth, Flows& next, Flows& returned, std::vector<Decided>& decided);
  // One base chain: accepted flows come back (drops end here).
  Flows RunBase(ir::Hook hook, const ir::RuleRef& base, Flows flows);
  Flows RunNat(ir::Hook hook, const std::vector<ir::RuleRef>& chains, bool dst, Flows flows);
  Flows RunHook(ir::Hook hook, Flows flows);
  // Chains at a netdev hook are not modelled: flows reaching them end.
  Flows Netdev(ir::Hook hook, Flows flows);
  void Arrive(Flows flows);
  void LocalOut(Flows flows);
  void Forward(Flows flows);

  const ir::Ruleset& ruleset_;
  const PathSpaces& spaces_;
  const PathOptions& options_;
  std::vector<PathOutcome>& out_;
  std::map<ir::Hook, std::unique_ptr<headerspace::CubeLifter>> lifters_;
  std::map<std::tuple<int, int, int, int>, LiftedRule> cache_;
};

const headerspace::CubeLifter& PathWalker::LifterAt(ir::Hook hook) {
  auto& l = lifters_[hook];
  if (!l) {
    l = std::make_unique<headerspace::CubeLifter>(ruleset_, spaces_.at(hook), hook,
                                                  headerspace::Effects::kPath);
  }
  return *l;
}

const LiftedRule& PathWalker::Lifted(ir::Hook hook, const ir::RuleRef& ref) {
  auto key = std::make_tuple(static_cast<int>(hook), ref.table, ref.chain, ref.rule);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const ir::Rule& r = ruleset_.tables[ref.table].chains[ref.chain].rules[ref.rule];
    it = cache_.emplace(key, LifterAt(hook).Lift(ref.table, r)).first;
  }
  return it->second;
}

void PathWalker::Branch(ir::Hook hook, const ir::RuleRef& ref, const LiftedBranch& branch,
                        Flows hit, int depth, Flows& next, Flows& returned,
                        std::vector<Decided>& decided) {
  Flows applied;
  for (PathFlow& f : hit) {
    const bool dnat = f.dnat.has_value(), snat = f.snat.has_value();
    if (!ApplyEffects(f, branch.effects)) {
      NotModelled(std::move(f), ref, "copies a mark that is not one value here");
      continue;
    }
    if (f.dnat.has_value() != dnat || f.snat.has_value() != snat) f.nat_rule = ref;
    applied.push_back(std::move(f));
  }
  hit = std::move(applied);
  switch (branch.verdict) {
    case ir::VerdictCode::kContinue:
    case ir::VerdictCode::kBreak:
      next.insert(next.end(), hit.begin(), hit.end());
      return;
    case ir::VerdictCode::kAccept:
    case ir::VerdictCode::kDrop:
      for (PathFlow& f : hit) decided.push_back({std::move(f), branch.verdict, ref});
      return;
    case ir::VerdictCode::kReturn:
      returned.insert(returned.end(), hit.begin(), hit.end());
      return;
    case ir::VerdictCode::kJump:
    case ir::VerdictCode::kGoto: {
      const ir::Table& t = ruleset_.tables[ref.table];
      const ir::Chain* target = t.FindChain(branch.target);
      if (target == nullptr) {  // the interpreter: no match
        next.insert(next.end(), hit.begin(), hit.end());
        return;
      }
      const int index = static_cast<int>(target - t.chains.data());
      if (branch.verdict == ir::VerdictCode::kJump) {
        if (depth >= kJumpStackSize) {
          for (PathFlow& f : hit) decided.push_back({std::move(f), ir::VerdictCode::kDrop, ref});
          return;
        }
        Flows back = Walk(hook, ref.table, index, std::move(hit), depth + 1, decided);
        next.insert(next.end(), back.begin(), back.end());
      } else {
        Flows back = Walk(hook, ref.table, index, std::move(hit), depth, decided);
        returned.insert(returned.end(), back.begin(), back.end());
      }
      return;
    }
    default:
      for (PathFlow& f : hit) {
        NotModelled(std::move(f), ref, "a verdict outside accept and drop (queue)");
      }
  }
}

Flows PathWalker::Walk(ir::Hook hook, int table, int chain, Flows flows, int depth,
                       std::vector<Decided>& decided) {
  const ir::Chain& ch = ruleset_.tables[table].chains[chain];
  Flows returned;
  for (size_t i = 0; i < ch.rules.size() && !flows.empty(); ++i) {
    const ir::RuleRef ref{table, chain, static_cast<int>(i)};
    const LiftedRule& lifted = Lifted(hook, ref);
    if (!lifted.exact) {
      if (!lifted.unknown_on) {  // what it matches is unknown: all stop here
        for (PathFlow& f : flows) NotModelled(std::move(f), ref, lifted.reason);
        return returned;
      }
      // Only a statement is not modelled: the packets it reaches stop.
      Flows hit, rest;
      SplitFlows(flows, *lifted.unknown_on, space(), hit, rest);
      for (PathFlow& f : hit) NotModelled(std::move(f), ref, lifted.reason);
      flows = std::move(rest);
      continue;
    }
    Flows next;
    for (const LiftedBranch& branch : lifted.branches) {
      if (flows.empty()) break;
      Flows hit, rest;
      SplitFlows(flows, {branch.match}, space(), hit, rest);
      flows = std::move(rest);
      if (!hit.empty()) {
        Branch(hook, ref, branch, std::move(hit), depth, next, returned, decided);
      }
    }
    flows.insert(flows.end(), next.begin(), next.end());
  }
  returned.insert(returned.end(), flows.begin(), flows.end());
  return returned;
}

Flows PathWalker::RunBase(ir::Hook hook, const ir::RuleRef& base, Flows flows) {
  const ir::Table& table = ruleset_.tables[base.table];
  Flows seen, accepted;
  for (PathFlow& f : flows) (Sees(table, f) ? seen : accepted).push_back(std::move(f));
  if (seen.empty()) return accepted;
  std::vector<Decided> decided;
  Flows fell = Walk(hook, base.table, base.chain, std::move(seen), 0, decided);
  const ir::VerdictCode policy = table.chains[base.chain].base->policy == ir::VerdictCode::kDrop
                                     ? ir::VerdictCode::kDrop
                                     : ir::VerdictCode::kAccept;
  for (PathFlow& f : fell) decided.push_back({std::move(f), policy, {base.table, base.chain, -1}});
  for (Decided& d : decided) {
    d.flow.trail.back().rule = d.rule;
    if (d.verdict == ir::VerdictCode::kDrop) {
      Dropped(std::move(d.flow));
    } else {
      accepted.push_back(std::move(d.flow));
    }
  }
  return accepted;
}

// nf_nat_inet_fn for a connection's first packet: the nat chains in their
// priority order until one binds this manip, then the rewrite.
Flows PathWalker::RunNat(ir::Hook hook, const std::vector<ir::RuleRef>& chains, bool dst,
                         Flows flows) {
  Flows passing, unbound;
  for (PathFlow& f : flows) {
    // No entry (untracked): the kernel's NAT step does nothing.
    (f.tracked && !f.notrack ? unbound : passing).push_back(std::move(f));
  }
  for (const ir::RuleRef& chain : chains) {
    if (unbound.empty()) break;
    Flows after = RunBase(hook, chain, std::move(unbound));
    unbound.clear();
    for (PathFlow& f : after) {
      const bool bound = dst ? f.dnat.has_value() : f.snat.has_value();
      if (!bound) {
        unbound.push_back(std::move(f));
        continue;
      }
      const Effect& binding = dst ? *f.dnat : *f.snat;
      if (binding.kind == Effect::Kind::kMasq || binding.kind == Effect::Kind::kRedir) {
        std::vector<StackDrop> dropped, unknown;
        DeviceNat(f, binding, options_.host, space(), hook == ir::Hook::kOutput, passing,
                  dropped, unknown);
        Stack(dropped);
        for (StackDrop& u : unknown) {
          const ir::RuleRef where = u.flow.nat_rule;
          NotModelled(std::move(u.flow), where, std::move(u.why));
        }
        continue;
      }
      RewriteNat(f, binding, space(), passing);
    }
  }
  passing.insert(passing.end(), unbound.begin(), unbound.end());
  return passing;
}

Flows PathWalker::RunHook(ir::Hook hook, Flows flows) {
  std::vector<ir::RuleRef> plain, nat;
  std::vector<int32_t> priorities;
  for (const ir::RuleRef& c : ir::BaseChainsAt(ruleset_, hook)) {
    const ir::BaseChain& base = *ruleset_.tables[c.table].chains[c.chain].base;
    if (base.type == "nat") {
      nat.push_back(c);
    } else {
      plain.push_back(c);
      priorities.push_back(base.priority);
    }
  }
  for (PathFlow& f : flows) f.trail.push_back({hook, {}});
  size_t next = 0;
  auto run_until = [&](int64_t priority) {
    while (next < plain.size() && priorities[next] <= priority && !flows.empty()) {
      flows = RunBase(hook, plain[next++], std::move(flows));
    }
  };
  for (const StepAt& step : StepsOf(hook)) {
    run_until(step.priority);
    switch (step.step) {
      case Step::kConntrack:
        for (PathFlow& f : flows) ConntrackStep(f);
        break;
      case Step::kNatDst:
        flows = RunNat(hook, nat, true, std::move(flows));
        break;
      case Step::kNatSrc:
        flows = RunNat(hook, nat, false, std::move(flows));
        break;
    }
  }
  run_until(INT64_MAX);
  return flows;
}

Flows PathWalker::Netdev(ir::Hook hook, Flows flows) {
  for (PathFlow& f : flows) f.trail.push_back({hook, {}});  // as eval --explain lists it
  const std::vector<ir::RuleRef> chains = ir::BaseChainsAt(ruleset_, hook);
  if (chains.empty()) return flows;
  for (PathFlow& f : flows) {
    NotModelled(std::move(f), chains.front(), "netdev ingress/egress chains are not modelled");
  }
  return {};
}

void PathWalker::Forward(Flows flows) {
  Flows pass;
  std::vector<StackDrop> drops;
  RouterChecks(flows, space(), pass, drops);
  Stack(drops);
  Flows out = RunHook(ir::Hook::kPostrouting, RunHook(ir::Hook::kForward, std::move(pass)));
  out = Netdev(ir::Hook::kEgress, std::move(out));
  Final(out, PathFate::kForwarded);
}

void PathWalker::Arrive(Flows flows) {
  flows = Netdev(ir::Hook::kIngress, std::move(flows));
  if (options_.host != nullptr) {  // as runtime/path.cc, with a host only
    Flows pass;
    std::vector<StackDrop> drops;
    Ipv6ReceiveChecks(flows, space(), pass, drops);
    Stack(drops);
    flows = std::move(pass);
  }
  flows = RunHook(ir::Hook::kPrerouting, std::move(flows));
  if (options_.host == nullptr) {
    if (options_.path == PathKind::kInput) {
      Flows in = RunHook(ir::Hook::kInput, std::move(flows));
      Final(in, PathFate::kDelivered);
    } else {
      Forward(std::move(flows));
    }
    return;
  }
  Routed routed = RouteOnHost(flows, *options_.host, space(), /*arriving=*/true);
  Stack(routed.dropped);
  Flows in = RunHook(ir::Hook::kInput, std::move(routed.local));
  Final(in, PathFate::kDelivered);
  Forward(std::move(routed.out));
}

void PathWalker::LocalOut(Flows flows) {
  if (options_.host != nullptr) {
    Routed routed = RouteOnHost(flows, *options_.host, space(), /*arriving=*/false);
    Stack(routed.dropped);
    for (PathFlow& f : routed.local) {
      NotModelled(std::move(f), {}, "a local packet to this host (through lo) is not modelled");
    }
    flows = std::move(routed.out);
  }
  flows = RunHook(ir::Hook::kOutput, std::move(flows));
  if (options_.host != nullptr) {  // ip_route_me_harder after a DNAT
    Routed again = RouteOnHost(flows, *options_.host, space(), /*arriving=*/false);
    Stack(again.dropped);
    for (PathFlow& f : again.local) {
      NotModelled(std::move(f), {}, "a local packet to this host (through lo) is not modelled");
    }
    flows = std::move(again.out);
  }
  flows = Netdev(ir::Hook::kEgress, RunHook(ir::Hook::kPostrouting, std::move(flows)));
  Final(flows, PathFate::kSent);
}

void PathWalker::Run(Flows start) {
  if (options_.path == PathKind::kOutput) {
    LocalOut(std::move(start));
  } else {
    Arrive(std::move(start));
  }
}

}  // namespace

const char* PathFateName(PathFate fate) {
  switch (fate) {
    case PathFate::kDropped: return "dropped";
    case PathFate::kDelivered: return "delivered";
    case PathFate::kForwarded: return "forwarded";
    case PathFate::kSent: return "sent";
    case PathFate::kNotModelled: return "not modelled";
  }
  return "?";
}

PathSpaces::PathSpaces(const std::vector<const ir::Ruleset*>& rulesets,
                       const PathOptions& options) {
  SpaceOptions so{.hook = ir::Hook::kForward, .iif = options.iif, .oif = options.oif};
  if (options.host != nullptr) {
    for (const HostInterface& i : options.host->interfaces) so.device_names.push_back(i.name);
  }
  base_ = BuildSpace(rulesets, so);
  for (int h = 0; h < static_cast<int>(hooks_.size()); ++h) {
    const auto hook = static_cast<ir::Hook>(h);
    hooks_[h] = base_;
    hooks_[h].has_iif = HookHasInputDevice(hook) && options.path != PathKind::kOutput;
    hooks_[h].has_oif = HookHasOutputDevice(hook);
    // Link visibility stays on: the lifter hides the link header by hook
    // (its loads match nothing there), and the flows carry pkttype and
    // source MAC as the hook has them; a link-less space would shrink
    // those dimensions' domains and no cube of one hook would fit another.
    hooks_[h].link = true;
  }
  witness_ = base_;
  witness_.has_iif = options.path != PathKind::kOutput;
  // The output device is a parameter only where no host routes the packet.
  witness_.has_oif = options.host == nullptr && options.path != PathKind::kInput;
  witness_.link = options.path != PathKind::kOutput;
}

std::vector<PathFlow> StartFlows(const PathSpaces& spaces, const PathOptions& options) {
  const Space& space = spaces.base();
  constexpr uint32_t kCtInvalid = 3;  // no entry yet: `ct state` reads invalid
  std::vector<PathFlow> flows;
  for (const Cube& family : FullRegion(space)) {
    const bool v6 = family.get(Dim::kFamily) == IntervalSet::Single(kFamilyIpv6);
    // Per protocol, the first packets conntrack makes a new entry for.
    std::vector<Cube> parts;
    Cube tcp = family;
    tcp.set(Dim::kProto) = family.get(Dim::kProto).Intersect(IntervalSet::Single(6));
    tcp.set(Dim::kTcpFlags) = IntervalSet::Single(0x02);
    parts.push_back(tcp);
    Cube icmp = family;
    const Value icmp_proto = v6 ? 58 : 1;
    icmp.set(Dim::kProto) = IntervalSet::Single(icmp_proto);
    const Value echo = v6 ? 128 : 8;
    icmp.set(Dim::kSport) = IntervalSet::Range(echo << 8, echo << 8 | 0xff);
    parts.push_back(icmp);
    IntervalSet excluded;
    for (Value p : {Value{6}, icmp_proto, Value{33}, Value{132}}) excluded.Add(p, p);
    Cube other = family;
    other.set(Dim::kProto) = family.get(Dim::kProto).Minus(excluded, space.Max(Dim::kProto));
    parts.push_back(other);
    for (Cube& c : parts) {
      if (c.empty()) continue;
      c.set(Dim::kMark) = IntervalSet::Single(0);
      c.set(Dim::kCtState) = IntervalSet::Single(0);  // printed: the first packet
      if (options.path == PathKind::kOutput) {
        c.set(Dim::kPktType) = IntervalSet::Single(0);
        c.set(Dim::kIifName) = IntervalSet::Single(0);
        c.set(Dim::kEtherSaddr) = IntervalSet::Single(0);
      }
      if (options.host != nullptr && options.path != PathKind::kOutput) {
        // Ordinary unicast addresses only: the stack's handling of the
        // special ones (broadcast, multicast groups, "this network",
        // loopback, unspecified) is not modelled.
        const IntervalSet special =
            v6 ? IntervalSet::Range(0, (Value{1} << 120) - 1)  // ::/8
                     .Union(IntervalSet::Range(Value{0xff} << 120, kValueMax))  // ff00::/8
               : IntervalSet::Range(0, 0x00ffffff)  // 0/8
                     .Union(IntervalSet::Range(0x7f000000, 0x7fffffff))  // 127/8
                     .Union(IntervalSet::Range(0xe0000000, 0xffffffff));  // 224/4, 240/4
        for (Dim d : {Dim::kSaddr, Dim::kDaddr}) {
          c.set(d) = c.get(d).Minus(special, space.Max(d));
        }
      }
      if (options.host != nullptr || options.path == PathKind::kInput) {
        c.set(Dim::kOifName) = IntervalSet::Single(0);  // the route sets it
      }
      PathFlow f{.origin = c, .now = c};
      SetConst(f, Dim::kCtState, kCtInvalid);
      flows.push_back(std::move(f));
    }
  }
  return flows;
}

std::vector<PathOutcome> WalkPath(const ir::Ruleset& ruleset, const PathSpaces& spaces,
                                  const PathOptions& options) {
  std::vector<PathOutcome> out;
  PathWalker(ruleset, spaces, options, out).Run(StartFlows(spaces, options));
  return out;
}

}  // namespace rulejit::analysis
