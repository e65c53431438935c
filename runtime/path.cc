// A packet's whole path (see path.h for the order and what is modelled).
#include "runtime/path.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "rulejit/route_input.h"
#include "runtime/nat.h"

namespace rulejit::runtime {
namespace {

constexpr uint32_t kDefaultIif = 1;  // device indexes when the host has none
constexpr uint32_t kDefaultOif = 2;
constexpr int32_t kConntrackPriority = -200;  // NF_IP_PRI_CONNTRACK
constexpr int32_t kNatDstPriority = -100;     // NF_IP_PRI_NAT_DST
constexpr int32_t kNatSrcPriority = 100;      // NF_IP_PRI_NAT_SRC
constexpr uint8_t kIcmp = 1, kIcmpv6 = 58;    // IPPROTO_ICMP, IPPROTO_ICMPV6

// The kernel's own steps inside a hook, at their priorities.
enum class Step : uint8_t { kConntrack, kNatDst, kNatSrc };
struct StepAt {
  int32_t priority;
  Step step;
};

std::vector<StepAt> StepsOf(Hook hook) {
  switch (hook) {
    case Hook::kPrerouting:
    case Hook::kOutput:
      return {{kConntrackPriority, Step::kConntrack}, {kNatDstPriority, Step::kNatDst}};
    case Hook::kInput:
    case Hook::kPostrouting:
      return {{kNatSrcPriority, Step::kNatSrc}};
    default:
      return {};
  }
}

void SetName(char (&out)[16], const std::string& name) {
  std::memset(out, 0, sizeof out);
  std::memcpy(out, name.data(), std::min<size_t>(name.size(), 15));
}

// A device the packet passes: looked up in the host model once, where the
// walk meets it, not on every hook.
struct Device {
  uint32_t index = 0;
  std::string name;
  std::optional<uint16_t> type;  // ARPHRD_*, where the host model gives it
  std::optional<uint32_t> group;  // a device of the host model has one
};

Device DeviceOf(const HostInterface& dev) {
  return {dev.index, dev.name, dev.link_type, dev.group};
}

// `dev` where the host has it, else a device the host does not model.
Device DeviceOr(const HostInterface* dev, uint32_t index, std::string name) {
  return dev ? DeviceOf(*dev) : Device{index, std::move(name), std::nullopt, std::nullopt};
}

const HostInterface* DeviceNamed(const HostModel& host, const std::string& name) {
  return name.empty() ? nullptr : host.FindInterface(name);
}

// ip_decrease_ttl: TTL - 1 with the header checksum's incremental update.
void DecreaseTtl(std::vector<uint8_t>& f, uint32_t ip) {
  uint32_t check = static_cast<uint32_t>(f[ip + 11] << 8 | f[ip + 10]);  // as a host word
  check += 1;                                                            // htons(0x0100)
  check += check >= 0xffff;
  f[ip + 10] = static_cast<uint8_t>(check);
  f[ip + 11] = static_cast<uint8_t>(check >> 8);
  --f[ip + 8];
}

// One packet's walk along its path.
class Walk {
 public:
  Walk(const Program& program, const HostModel& host, FlowTable& conntrack,
       const std::vector<PathRunner::HookChains>& hooks, bool nat, RunState* state)
      : program_(program), host_(host), conntrack_(conntrack), hooks_(hooks), nat_(nat),
        state_(state) {}

  PathResult Run(const PathOptions& options, const uint8_t* frame, uint32_t len,
                 const PacketMeta& meta);

 private:
  // The packet as `hook` sees it: no link header where the kernel has
  // none, skb->data at the link header at egress.
  PacketView ViewAt(Hook hook) const {
    PacketView v = view_;
    if (!link_visible_) v.link_off = kAbsent;
    if (hook == Hook::kEgress) v.skb_off = v.link_off;
    return v;
  }
  void Reparse() {
    view_ = ParseFrame(bytes_.data(), static_cast<uint32_t>(bytes_.size()));
  }
  bool Drop(const std::string& why) {
    out_.stack_drop = why;
    return false;
  }

  bool RunHook(Hook hook);
  Result RunChains(Hook hook, std::span<const RuleRef> chains, Result* decided);
  bool ConntrackStep(Hook hook);
  bool NatStep(Hook hook, Manip manip, const std::vector<RuleRef>& nat_chains, Result* decided);
  bool Arrive(const PathOptions& options);
  bool LocalOut(const PathOptions& options);
  bool Deliver();
  bool RouterChecks();
  bool Forward(bool bridged);
  bool Postrouting();
  // The routing decision: kOut with oif_ the output device.
  enum class Route { kLocal, kOut, kDrop };
  Route Decide(const PathOptions& options, bool arriving);
  void SetOif(uint32_t index);
  void SetDevices(Hook hook);

  const Program& program_;
  const HostModel& host_;
  FlowTable& conntrack_;
  const std::vector<PathRunner::HookChains>& hooks_;
  const bool nat_;
  RunState* state_;

  std::vector<uint8_t> bytes_;
  PacketView view_;
  PacketMeta meta_;
  bool link_visible_ = true;
  bool notrack_ = false;
  bool tracked_ = false;  // the conntrack step ran (or a looped packet kept it)
  Conntrack::Entry entry_;
  Device iif_, oif_;
  // The caller's types and groups, for devices off the host.
  uint16_t given_iiftype_ = 1, given_oiftype_ = 1;
  uint32_t given_iifgroup_ = 0, given_oifgroup_ = 0;
  PathResult out_;
};

void Walk::SetDevices(Hook hook) {
  meta_.has_iif = HookHasInputDevice(hook) && iif_.index != 0;
  meta_.has_oif = HookHasOutputDevice(hook) && oif_.index != 0;
  meta_.iif = meta_.has_iif ? iif_.index : 0;
  meta_.oif = meta_.has_oif ? oif_.index : 0;
  SetName(meta_.iifname, meta_.has_iif ? iif_.name : "");
  SetName(meta_.oifname, meta_.has_oif ? oif_.name : "");
  // The device types the host model gives (Program::Compile refused a
  // ruleset that reads them on a host that leaves one out).
  meta_.iiftype = iif_.type.value_or(given_iiftype_);
  meta_.oiftype = oif_.type.value_or(given_oiftype_);
  meta_.iifgroup = iif_.group.value_or(given_iifgroup_);
  meta_.oifgroup = oif_.group.value_or(given_oifgroup_);
}

// Runs `chains` of `hook`; carries marks, notrack and written bytes to
// what follows and records the deciding rule.
Result Walk::RunChains(Hook hook, std::span<const RuleRef> chains, Result* decided) {
  if (chains.empty()) return Result{};
  std::vector<uint8_t> written;
  Result r = program_.RunChains(hook, chains, ViewAt(hook), meta_, state_, &written);
  meta_.mark = r.mark;
  meta_.ct_mark = r.ct_mark;
  meta_.ct_zone = r.ct_zone;  // a `ct zone set` before conntrack picks its zone
  if (r.notrack) notrack_ = true;
  if (!written.empty()) {
    bytes_ = std::move(written);
    Reparse();
  }
  if (r.decided_by.table >= 0 || r.verdict != Verdict::kAccept) *decided = r;
  return r;
}

// nf_conntrack_in: attaches the entry (or untracked, after a notrack);
// false when it drops the packet (the table is full).
bool Walk::ConntrackStep(Hook hook) {
  if (tracked_) return true;  // a looped-back packet keeps its entry
  tracked_ = true;
  if (notrack_) {
    entry_.kind = Conntrack::Entry::kUntracked;
    meta_.ct_valid = false;
    meta_.ct_state = kCtStateUntracked;
  } else {
    entry_ = conntrack_.In(view_, meta_, /*arriving=*/hook == Hook::kPrerouting);
  }
  out_.ct_state = meta_.ct_state;
  out_.ct_reply = meta_.ct_valid && meta_.ct_dir != 0;
  if (entry_.kind == Conntrack::Entry::kDropped) return Drop("conntrack: table full");
  return true;
}

// nf_nat_inet_fn: the nat chains while the manip is unbound, then the
// rewrite by the connection's bindings.
bool Walk::NatStep(Hook hook, Manip manip, const std::vector<RuleRef>& nat_chains,
                   Result* decided) {
  if (!nat_) return true;
  Conntrack::Flow* flow = conntrack_.FlowOf(entry_);
  if (flow == nullptr) return true;
  if (entry_.kind == Conntrack::Entry::kRelated &&
      (view_.l4proto == kIcmp || view_.l4proto == kIcmpv6)) {
    // nf_nat_ipv4_fn: an ICMP error of a flow runs no nat chain; it is
    // rewritten as its flow's packets are, the packet it quotes too.
    meta_.ct_status = flow->Status(true);
    const bool verify = (hook == Hook::kPrerouting || hook == Hook::kInput) && !meta_.csum_partial;
    if (!TranslateIcmpError(*flow, entry_.reply, manip, bytes_, view_, verify)) {
      return Drop("NAT: the ICMP error of a NATed flow cannot be translated");
    }
    return true;
  }
  if (!flow->nat_done[static_cast<int>(manip)]) {
    std::shared_ptr<const NatChange> binding;
    for (const RuleRef& chain : nat_chains) {
      Result r = RunChains(hook, std::span(&chain, 1), decided);
      if (r.verdict != Verdict::kAccept) return false;
      if (r.nat) {
        binding = r.nat;
        break;
      }
    }
    NatSite site{.host = &host_, .iif = iif_.index, .oif = oif_.index,
                 .local_out = hook == Hook::kOutput, .random = meta_.random};
    switch (BindNat(conntrack_, *flow, manip, binding.get(), site)) {
      case NatOutcome::kBound: break;
      case NatOutcome::kBoundRandomPort: out_.random_port = true; break;
      case NatOutcome::kDrop: return Drop("NAT: the device has no address to map to");
    }
  }
  // The chains after the step see the binding in `ct status`.
  meta_.ct_status = flow->Status(entry_.kind != Conntrack::Entry::kNew);
  Conntrack::ShowFlow(*flow, meta_);  // the reply tuple as bound
  // The rewrite is in place and moves no header: the view stays valid.
  TranslatePacket(*flow, entry_.reply, manip, bytes_, view_);
  return true;
}

// One hook: its chains by priority, the kernel's steps among them.
bool Walk::RunHook(Hook hook) {
  SetDevices(hook);
  const PathRunner::HookChains& chains = hooks_[static_cast<int>(hook)];
  const std::vector<RuleRef>& plain = chains.plain;
  const std::vector<int32_t>& priorities = chains.priorities;
  const std::vector<RuleRef>& nat_chains = chains.nat;
  Result decided;
  size_t next = 0;
  bool ok = true;
  auto run_until = [&](int64_t priority) {
    size_t end = next;
    while (end < plain.size() && priorities[end] <= priority) ++end;
    ok = RunChains(hook, std::span<const RuleRef>(plain).subspan(next, end - next), &decided)
             .verdict == Verdict::kAccept;
    next = end;
    return ok;
  };
  for (const StepAt& step : StepsOf(hook)) {
    if (!run_until(step.priority)) break;
    switch (step.step) {
      case Step::kConntrack: ok = ConntrackStep(hook); break;
      case Step::kNatDst: ok = NatStep(hook, Manip::kDst, nat_chains, &decided); break;
      case Step::kNatSrc: ok = NatStep(hook, Manip::kSrc, nat_chains, &decided); break;
    }
    if (!ok) break;
  }
  if (ok) run_until(INT64_MAX);
  out_.hooks.push_back({hook, decided});
  return ok;
}

void Walk::SetOif(uint32_t index) {
  oif_ = DeviceOr(host_.FindInterface(index), index, "");
}

// An arriving packet is routed as ip_route_input_noref / ip6_route_input
// route it (rulejit/route_input.h); a local one by its route alone.
Walk::Route Walk::Decide(const PathOptions& options, bool arriving) {
  const bool v6 = view_.nfproto == kNfProtoIpv6;
  if (options.route != RouteChoice::kHost) {
    if (options.route == RouteChoice::kLocal) return Route::kLocal;
    const HostInterface* dev = DeviceNamed(host_, options.oif);
    oif_ = DeviceOr(dev, kDefaultOif, options.oif);
    return Route::kOut;
  }
  if (view_.network_off == kAbsent) return Drop("no route: not an IP packet"), Route::kDrop;
  const uint8_t* saddr = view_.data + view_.network_off + (v6 ? 8 : 12);
  const uint8_t* daddr = view_.data + view_.network_off + (v6 ? 24 : 16);
  if (arriving) {
    const InputRoute in = RouteInput(host_, v6 ? 6 : 4, saddr, daddr, iif_.index);
    switch (in.kind) {
      case InputRouteKind::kLocal: return Route::kLocal;
      case InputRouteKind::kForward: SetOif(in.oif); return Route::kOut;
      case InputRouteKind::kDrop: return Drop(in.why), Route::kDrop;
    }
  }
  const HostRoute* route = host_.LookupRoute(v6 ? 6 : 4, daddr);
  if (route == nullptr) return Drop("no route to the destination"), Route::kDrop;
  switch (route->type) {
    case RouteType::kLocal:
    case RouteType::kBroadcast:
    case RouteType::kMulticast:
      return Route::kLocal;
    case RouteType::kUnicast: {
      if (route->oifs.empty()) return Drop("route without a device"), Route::kDrop;
      SetOif(route->oifs.front());
      return Route::kOut;
    }
    default:
      return Drop("the route is blackhole, unreachable or prohibit"), Route::kDrop;
  }
}

bool Walk::Deliver() {
  link_visible_ = true;
  oif_ = {};
  if (!RunHook(Hook::kInput)) return false;
  out_.fate = Fate::kDelivered;
  return true;
}

// ip_forward / ip6_forward's checks before the forward hook: the frame is
// for this host's MAC, its TTL or hop limit allows one more hop (then
// decremented), IPv6 link-local addresses stay on their link and an
// unspecified source is not forwarded (ip6_forward; its multicast and
// loopback sources ip6_rcv_core dropped already).
bool Walk::RouterChecks() {
  if (meta_.pkttype != kPktHost) return Drop("not addressed to this host's MAC");
  const uint32_t ip = view_.network_off;
  const bool v6 = view_.nfproto == kNfProtoIpv6;
  const uint32_t hop_off = ip + (v6 ? 7 : 8);
  if (hop_off >= bytes_.size()) return Drop("truncated IP header");
  if (bytes_[hop_off] <= 1) return Drop(v6 ? "hop limit exceeded" : "ttl exceeded");
  if (v6) {
    const uint8_t* src = &bytes_[ip + 8];
    const uint8_t* dst = &bytes_[ip + 24];
    auto link_local = [](const uint8_t* a) { return a[0] == 0xfe && (a[1] & 0xc0) == 0x80; };
    if (link_local(src) || link_local(dst)) return Drop("link-local addresses are not forwarded");
    if (std::all_of(src, src + 16, [](uint8_t b) { return b == 0; })) {
      return Drop("unspecified source address");
    }
    --bytes_[hop_off];
  } else {
    DecreaseTtl(bytes_, ip);
  }
  return true;
}

// forward, then postrouting and egress; a bridge skips the router's checks.
bool Walk::Forward(bool bridged) {
  if (!bridged && !RouterChecks()) return false;
  if (!RunHook(Hook::kForward)) return false;
  if (!Postrouting()) return false;
  out_.fate = Fate::kForwarded;
  return true;
}

// postrouting, confirmation, netdev egress on the output device.
bool Walk::Postrouting() {
  const bool ok = RunHook(Hook::kPostrouting);
  conntrack_.Confirm(entry_, meta_, ok);
  if (!ok) return false;
  link_visible_ = true;
  return RunHook(Hook::kEgress);
}

// eth_type_trans: the frame's type by its destination MAC, where the
// device's own MAC is known.
uint8_t PacketType(const HostInterface& dev, const uint8_t* dst_mac, uint8_t given) {
  if (!dev.has_mac) return given;
  if (dst_mac[0] & 1) {
    const bool broadcast = std::all_of(dst_mac, dst_mac + 6, [](uint8_t b) { return b == 0xff; });
    return broadcast ? kPktBroadcast : kPktMulticast;
  }
  return std::equal(dev.mac.begin(), dev.mac.end(), dst_mac) ? kPktHost : kPktOtherHost;
}

bool Walk::Arrive(const PathOptions& options) {
  const HostInterface* in = DeviceNamed(host_, options.iif);
  // Without a named device, the one whose MAC the frame is addressed to.
  if (in == nullptr && options.iif.empty() && options.route == RouteChoice::kHost) {
    if (bytes_.size() < 6 || (in = host_.FindInterfaceByMac(bytes_.data())) == nullptr) {
      return Drop("no device of the host has the frame's destination MAC (give --iif)");
    }
  }
  iif_ = DeviceOr(in, kDefaultIif, options.iif);
  if (options.bridged) {
    meta_.pkttype = kPktHost;  // a bridge passes frames for any MAC
  } else if (in != nullptr && bytes_.size() >= 6) {
    meta_.pkttype = PacketType(*in, bytes_.data(), meta_.pkttype);
  }
  if (meta_.pkttype == kPktOtherHost) return Drop("not addressed to this host's MAC");
  if (!RunHook(Hook::kIngress)) return false;
  if (view_.network_off == kAbsent) {
    if (!options.bridged) return Drop("not an IP packet (no IP hook sees it)");
    // A bridge passes other protocols (ARP) without the IP hooks.
    if (Decide(options, true) != Route::kOut || !RunHook(Hook::kEgress)) return false;
    out_.fate = Fate::kForwarded;
    return true;
  }
  // ip6_rcv_core's address checks come before prerouting.
  if (view_.nfproto == kNfProtoIpv6 && options.route == RouteChoice::kHost && !options.bridged) {
    const uint8_t* ip = view_.data + view_.network_off;
    if (const char* why = Ipv6ReceiveDrop(ip + 8, ip + 24)) return Drop(why);
  }
  if (!RunHook(Hook::kPrerouting)) return false;
  switch (Decide(options, true)) {
    case Route::kDrop: return false;
    case Route::kLocal: {
      const bool ok = Deliver();
      conntrack_.Confirm(entry_, meta_, ok);
      return ok;
    }
    case Route::kOut: return Forward(options.bridged);
  }
  return false;
}

bool Walk::LocalOut(const PathOptions& options) {
  link_visible_ = false;
  meta_.pkttype = kPktHost;
  Route route = Decide(options, false);
  if (route == Route::kDrop) return false;
  if (route == Route::kLocal) {
    const HostInterface* lo = DeviceNamed(host_, "lo");
    oif_ = DeviceOr(lo, kDefaultOif, "lo");
  }
  if (!RunHook(Hook::kOutput)) return false;
  // ip_route_me_harder: a DNAT at output routes the packet again.
  if (options.route == RouteChoice::kHost) {
    route = Decide(options, false);
    if (route == Route::kDrop) return false;
  }
  if (!Postrouting()) return false;
  if (route != Route::kLocal) {
    out_.fate = Fate::kSent;
    return true;
  }
  // Through lo: prerouting and input, with the entry it already has.
  iif_ = oif_;
  if (!RunHook(Hook::kPrerouting)) return false;
  return Deliver();
}

PathResult Walk::Run(const PathOptions& options, const uint8_t* frame, uint32_t len,
                     const PacketMeta& meta) {
  bytes_.assign(frame, frame + len);
  Reparse();
  meta_ = meta;
  given_iiftype_ = meta.iiftype;
  given_oiftype_ = meta.oiftype;
  given_iifgroup_ = meta.iifgroup;
  given_oifgroup_ = meta.oifgroup;
  meta_.ct_valid = false;
  meta_.ct_state = 0;
  const bool ok = options.start == PathStart::kArrives ? Arrive(options) : LocalOut(options);
  if (!ok) {
    out_.fate = Fate::kDropped;
    conntrack_.Confirm(entry_, meta_, false);
  }
  out_.oif = out_.fate == Fate::kForwarded || out_.fate == Fate::kSent ? oif_.index : 0;
  out_.packet = std::move(bytes_);
  return std::move(out_);
}

}  // namespace

PathRunner::PathRunner(const Program& program, const HostModel& host, Conntrack& conntrack)
    : PathRunner(program, host, std::make_unique<LocalFlowTable>(conntrack), nullptr) {}

PathRunner::PathRunner(const Program& program, const HostModel& host, FlowTable& table)
    : PathRunner(program, host, nullptr, &table) {}

PathRunner::PathRunner(const Program& program, const HostModel& host,
                       std::unique_ptr<LocalFlowTable> local, FlowTable* table)
    : program_(program), host_(host), local_(std::move(local)),
      conntrack_(table != nullptr ? *table : *local_) {
  for (int h = 0; h <= static_cast<int>(Hook::kEgress); ++h) {
    HookChains& chains = hooks_.emplace_back();
    for (const BaseChainInfo& c : program.BaseChains(static_cast<Hook>(h))) {
      nat_ |= c.nat;
      if (c.nat) {
        chains.nat.push_back(c.chain);
      } else {
        chains.plain.push_back(c.chain);
        chains.priorities.push_back(c.priority);
      }
    }
  }
}

PathResult PathRunner::Run(const PathOptions& options, const uint8_t* frame, uint32_t len,
                           const PacketMeta& meta, RunState* state) const {
  return Walk(program_, host_, conntrack_, hooks_, nat_, state).Run(options, frame, len, meta);
}

}  // namespace rulejit::runtime
