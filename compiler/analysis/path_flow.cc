// Operations on the flows of a path walk (see path_flow.h).
#include "compiler/analysis/path_flow.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "rulejit/route_input.h"

namespace rulejit::analysis {
namespace {

constexpr uint32_t kCtNew = 0;        // index of `new` in kCtStateDomain
constexpr uint32_t kCtUntracked = 4;  // index of `untracked`
constexpr uint32_t kPktHostIndex = 0;  // index of PACKET_HOST in kPktTypeDomain
constexpr uint32_t kTtlMax = 255;

IntervalSet Shifted(const IntervalSet& set, bool up) {
  IntervalSet out;
  for (const Interval& iv : set.intervals()) {
    if (up) {
      out.Add(iv.lo + 1, iv.hi + 1);
    } else if (iv.hi > 0) {
      out.Add(iv.lo == 0 ? 0 : iv.lo - 1, iv.hi - 1);
    }
  }
  return out;
}

bool IsIpv6(const PathFlow& f) {
  return f.now.get(Dim::kFamily) == IntervalSet::Single(kFamilyIpv6);
}

// The Value of an address in network order (4 or 16 bytes).
Value AddressValue(const uint8_t* a, int len) {
  Value v = 0;
  for (int i = 0; i < len; ++i) v = v << 8 | a[i];
  return v;
}

void AddressBytes(Value v, int len, uint8_t* out) {
  for (int i = len - 1; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}

// The destinations of one family cut where the host's routes begin and
// end, each piece with what the FIB decides for it: "local", "out:DEV" or
// "drop:WHY".
std::map<std::string, IntervalSet> RoutePieces(const HostModel& host, bool v6) {
  const int len = v6 ? 16 : 4;
  const Value max = v6 ? kValueMax : Value{0xffffffff};
  std::vector<Value> starts = {0};
  for (const HostRoute& r : host.routes) {
    if (r.family != (v6 ? 6 : 4)) continue;
    const Value lo = AddressValue(r.dst.data(), len);
    const int host_bits = len * 8 - r.prefix_len;
    const Value span = host_bits >= 128 ? kValueMax : (Value{1} << host_bits) - 1;
    starts.push_back(lo);
    if (span < max - lo) starts.push_back(lo + span + 1);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::map<std::string, IntervalSet> pieces;
  for (size_t i = 0; i < starts.size(); ++i) {
    const Value lo = starts[i];
    const Value hi = i + 1 < starts.size() ? starts[i + 1] - 1 : max;
    uint8_t addr[16] = {};
    AddressBytes(lo, len, addr);
    const HostRoute* route = host.LookupRoute(v6 ? 6 : 4, addr);
    std::string key;
    if (route == nullptr) {
      key = "drop:no route to the destination";
    } else if (route->type == RouteType::kLocal || route->type == RouteType::kBroadcast ||
               route->type == RouteType::kMulticast) {
      key = "local";
    } else if (route->type == RouteType::kUnicast) {
      const HostInterface* dev =
          route->oifs.empty() ? nullptr : host.FindInterface(route->oifs.front());
      key = dev == nullptr ? "drop:route without a device" : absl::StrCat("out:", dev->name);
    } else {
      key = "drop:the route is blackhole, unreachable or prohibit";
    }
    pieces[key].Add(lo, hi);
  }
  return pieces;
}

// The address ranges between consecutive cuts (rulejit/route_input.h) as
// Values of one family.
std::vector<IntervalSet> CutRanges(const std::vector<std::array<uint8_t, 16>>& cuts, bool v6) {
  const Value max = v6 ? kValueMax : Value{0xffffffff};
  std::vector<IntervalSet> ranges;
  for (size_t i = 0; i < cuts.size(); ++i) {
    const Value lo = AddressValue(cuts[i].data(), 16);
    const Value hi = i + 1 < cuts.size() ? AddressValue(cuts[i + 1].data(), 16) - 1 : max;
    ranges.push_back(IntervalSet::Range(lo, hi));
  }
  return ranges;
}

std::string InputKey(const InputRoute& r, const HostModel& host) {
  switch (r.kind) {
    case InputRouteKind::kLocal: return "local";
    case InputRouteKind::kForward: {
      const HostInterface* dev = host.FindInterface(r.oif);
      return dev == nullptr ? "drop:route without a device" : absl::StrCat("out:", dev->name);
    }
    case InputRouteKind::kDrop: break;
  }
  return absl::StrCat("drop:", r.why);
}

// RouteInput over ranges: for each class of input devices that decide
// alike, the classes of sources that decide alike, each with the
// destinations of every decision ("local", "out:DEV", "drop:WHY").
struct SourceClass {
  IntervalSet sources;
  std::map<std::string, IntervalSet> by_key;
};
struct DeviceClass {
  IntervalSet iifs;  // values of Dim::kIifName
  std::vector<SourceClass> sources;
};

std::vector<DeviceClass> InputClasses(const HostModel& host, const Space& space, bool v6) {
  const uint8_t family = v6 ? 6 : 4;
  const auto src_cuts = RouteInputCuts(host, family, true);
  const auto dst_cuts = RouteInputCuts(host, family, false);
  const std::vector<IntervalSet> dst_ranges = CutRanges(dst_cuts, v6);
  const std::vector<IntervalSet> src_ranges = CutRanges(src_cuts, v6);
  // Per device: the decision for every source range (rows) and
  // destination range (columns); devices with the same table decide alike.
  using Table = std::vector<std::vector<std::string>>;
  std::map<Table, IntervalSet> devices_by_table;
  const size_t iifs = std::max<size_t>(space.iif.size(), 1);
  for (size_t v = 0; v < iifs; ++v) {
    const HostInterface* dev = v < space.iif.size() ? host.FindInterface(space.iif[v].name) : nullptr;
    const uint32_t iif = dev != nullptr ? dev->index : 0;
    Table table;
    for (const auto& src : src_cuts) {
      std::vector<std::string>& row = table.emplace_back();
      for (const auto& dst : dst_cuts) {
        const int skip = v6 ? 0 : 12;
        row.push_back(InputKey(RouteInput(host, family, src.data() + skip, dst.data() + skip, iif), host));
      }
    }
    IntervalSet& devices = devices_by_table[table];
    devices = devices.Union(IntervalSet::Single(static_cast<Value>(v)));
  }
  std::vector<DeviceClass> out;
  for (const auto& [table, devices] : devices_by_table) {
    DeviceClass& d = out.emplace_back();
    d.iifs = devices;
    std::map<std::vector<std::string>, IntervalSet> sources_by_row;
    for (size_t r = 0; r < table.size(); ++r) {
      sources_by_row[table[r]] = sources_by_row[table[r]].Union(src_ranges[r]);
    }
    for (const auto& [row, sources] : sources_by_row) {
      SourceClass& c = d.sources.emplace_back();
      c.sources = sources;
      for (size_t i = 0; i < row.size(); ++i) c.by_key[row[i]] = c.by_key[row[i]].Union(dst_ranges[i]);
    }
  }
  return out;
}

// The arriving flows routed by RouteInput: split by input device, source
// and destination where its answer changes.
void RouteArriving(const Flows& in, const HostModel& host, const Space& space, Flows& pieces,
                   std::vector<std::string>& keys) {
  const std::vector<DeviceClass> classes[2] = {InputClasses(host, space, false),
                                               InputClasses(host, space, true)};
  for (const PathFlow& f : in) {
    for (const DeviceClass& d : classes[IsIpv6(f) ? 1 : 0]) {
      Flows on_dev, rest;
      if (space.iif.empty()) {
        on_dev = {f};
      } else {
        SplitFlow(f, Dim::kIifName, d.iifs, space, on_dev, rest);
      }
      for (const PathFlow& g : on_dev) {
        for (const SourceClass& c : d.sources) {
          Flows from, rest2;
          SplitFlow(g, Dim::kSaddr, c.sources, space, from, rest2);
          for (const PathFlow& h : from) {
            for (const auto& [key, dsts] : c.by_key) {
              Flows hit, rest3;
              SplitFlow(h, Dim::kDaddr, dsts, space, hit, rest3);
              for (PathFlow& x : hit) {
                pieces.push_back(std::move(x));
                keys.push_back(key);
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

std::optional<PathFlow> Narrow(const PathFlow& f, const Cube& part) {
  PathFlow g = f;
  g.now = part;
  for (int d = 0; d < kDims; ++d) {
    const Dim dim = static_cast<Dim>(d);
    switch (f.rel[d]) {
      case Rel::kSame:
        g.origin.set(dim) = f.origin.get(dim).Intersect(part.get(dim));
        break;
      case Rel::kDecremented:
        g.origin.set(dim) = f.origin.get(dim).Intersect(Shifted(part.get(dim), true));
        break;
      case Rel::kConst:
        break;
    }
  }
  if (g.origin.empty() || g.now.empty()) return std::nullopt;
  return g;
}

void SplitFlows(const Flows& flows, const std::vector<Cube>& match, const Space& space,
                Flows& hit, Flows& rest) {
  for (const PathFlow& f : flows) {
    std::vector<Cube> left = {f.now};
    for (const Cube& m : match) {
      std::vector<Cube> next;
      for (const Cube& c : left) {
        if (!Overlaps(c, m)) {
          next.push_back(c);
          continue;
        }
        if (std::optional<Cube> both = Intersect(c, m)) {
          if (std::optional<PathFlow> g = Narrow(f, *both)) hit.push_back(std::move(*g));
        }
        for (Cube& r : Subtract(c, m, space)) next.push_back(std::move(r));
      }
      left = std::move(next);
    }
    for (const Cube& c : left) {
      if (std::optional<PathFlow> g = Narrow(f, c)) rest.push_back(std::move(*g));
    }
  }
}

void SplitFlow(const PathFlow& f, Dim dim, const IntervalSet& set, const Space& space,
               Flows& hit, Flows& rest) {
  Cube m = f.now;
  m.set(dim) = f.now.get(dim).Intersect(set);
  if (m.empty()) {
    rest.push_back(f);
    return;
  }
  SplitFlows({f}, {m}, space, hit, rest);
}

void SetConst(PathFlow& f, Dim dim, Value v) {
  f.now.set(dim) = IntervalSet::Single(v);
  f.rel[static_cast<int>(dim)] = Rel::kConst;
}

// The value a mark effect sets: a constant, or computed from the other
// mark's value (one constant on every flow: marks start at 0 and are only
// ever set to constants); nullopt when that is not one value.
std::optional<Value> MarkValue(const PathFlow& f, const Effect& e) {
  if (!e.from) return e.value;
  const IntervalSet& src = f.now.get(*e.from);
  if (src.Size() != 1) return std::nullopt;
  return (src.intervals().front().lo & e.mask) ^ e.xor_;
}

bool ApplyEffects(PathFlow& f, const std::vector<Effect>& effects) {
  for (const Effect& e : effects) {
    switch (e.kind) {
      case Effect::Kind::kSetMark:
      case Effect::Kind::kSetCtMark: {
        const bool ct = e.kind == Effect::Kind::kSetCtMark;
        // No entry (before conntrack, or untracked): nothing to set.
        if (ct && !(f.tracked && !f.notrack)) break;
        const std::optional<Value> v = MarkValue(f, e);
        if (!v) return false;
        SetConst(f, ct ? Dim::kCtMark : Dim::kMark, *v);
        break;
      }
      case Effect::Kind::kNotrack:
        if (!f.tracked) f.notrack = true;  // an attached entry stays
        break;
      case Effect::Kind::kDnat:
      case Effect::Kind::kRedir:
        if (!f.dnat) f.dnat = e;
        break;
      case Effect::Kind::kSnat:
      case Effect::Kind::kMasq:
        if (!f.snat) f.snat = e;
        break;
    }
  }
  return true;
}

void ConntrackStep(PathFlow& f) {
  if (f.tracked) return;
  f.tracked = true;
  if (f.notrack) {
    SetConst(f, Dim::kCtState, kCtUntracked);
    return;
  }
  SetConst(f, Dim::kCtState, kCtNew);
  SetConst(f, Dim::kCtMark, 0);
}

void RewriteNat(const PathFlow& f, const Effect& binding, const Space& space, Flows& out) {
  const bool dst = binding.kind == Effect::Kind::kDnat;
  PathFlow g = f;
  if (binding.has_addr) SetConst(g, dst ? Dim::kDaddr : Dim::kSaddr, binding.value);
  if (!binding.has_port) {
    out.push_back(std::move(g));
    return;
  }
  // Protocols whose NAT maps ports: tcp, udp, dccp, sctp, udplite.
  IntervalSet ported;
  for (Value p : {6, 17, 33, 132, 136}) ported.Add(p, p);
  Flows hit, rest;
  SplitFlow(g, Dim::kProto, ported, space, hit, rest);
  for (PathFlow& h : hit) {
    SetConst(h, dst ? Dim::kDport : Dim::kSport, binding.port);
    out.push_back(std::move(h));
  }
  for (PathFlow& r : rest) out.push_back(std::move(r));
}

// The device's prefixes of one family in order, each with its address
// (IPv6 link-local addresses are no source for the world), as
// runtime/nat.cc's DeviceAddress picks: the first whose subnet holds
// `near`, else the first.
void DeviceNat(const PathFlow& f, const Effect& binding, const HostModel* host,
               const Space& space, bool local_out, Flows& out, std::vector<StackDrop>& dropped,
               std::vector<StackDrop>& unknown) {
  const bool v6 = IsIpv6(f);
  const bool masq = binding.kind == Effect::Kind::kMasq;
  Effect concrete = binding;
  concrete.kind = masq ? Effect::Kind::kSnat : Effect::Kind::kDnat;
  concrete.has_addr = true;
  if (!masq && local_out) {  // redirect of a local packet: to loopback
    concrete.value = v6 ? 1 : 0x7f000001;
    RewriteNat(f, concrete, space, out);
    return;
  }
  const IntervalSet& dev_value = f.now.get(masq ? Dim::kOifName : Dim::kIifName);
  const auto& domain = masq ? space.oif : space.iif;
  const HostInterface* dev = nullptr;
  if (host != nullptr && dev_value.Size() == 1) {
    dev = host->FindInterface(domain[static_cast<size_t>(dev_value.intervals().front().lo)].name);
  }
  if (dev == nullptr) {
    unknown.push_back({f, absl::StrCat(masq ? "masquerade" : "redirect",
                                       " takes the device's address: needs --host and a ",
                                       masq ? "route" : "--iif", " naming a device of it")});
    return;
  }
  const int len = v6 ? 16 : 4;
  std::vector<const HostAddress*> addrs;
  for (const HostAddress& a : dev->addresses) {
    if (a.family != (v6 ? 6 : 4)) continue;
    if (v6 && a.addr[0] == 0xfe && (a.addr[1] & 0xc0) == 0x80) continue;
    addrs.push_back(&a);
  }
  if (addrs.empty()) {
    dropped.push_back({f, "NAT: the device has no address to map to"});
    return;
  }
  Flows rest = {f};
  for (const HostAddress* a : addrs) {
    const Value addr = AddressValue(a->addr.data(), len);
    const int host_bits = len * 8 - a->prefix_len;
    const Value span = host_bits >= 128 ? kValueMax : (Value{1} << host_bits) - 1;
    const Value net = addr & ~span;
    Flows hit, miss;
    for (const PathFlow& r : rest) {
      SplitFlow(r, Dim::kDaddr, IntervalSet::Range(net, net + span), space, hit, miss);
    }
    concrete.value = addr;
    for (const PathFlow& h : hit) RewriteNat(h, concrete, space, out);
    rest = std::move(miss);
  }
  concrete.value = AddressValue(addrs.front()->addr.data(), len);
  for (const PathFlow& r : rest) RewriteNat(r, concrete, space, out);
}

void RouterChecks(const Flows& in, const Space& space, Flows& pass,
                  std::vector<StackDrop>& dropped) {
  for (const PathFlow& f : in) {
    Flows host, other;
    SplitFlow(f, Dim::kPktType, IntervalSet::Single(kPktHostIndex), space, host, other);
    for (PathFlow& o : other) dropped.push_back({std::move(o), "not addressed to this host's MAC"});
    for (const PathFlow& h : host) {
      Flows live, expired;
      SplitFlow(h, Dim::kTtl, IntervalSet::Range(2, kTtlMax), space, live, expired);
      for (PathFlow& e : expired) {
        dropped.push_back({std::move(e), IsIpv6(h) ? "hop limit exceeded" : "ttl exceeded"});
      }
      for (PathFlow& l : live) {
        Flows ok = {std::move(l)};
        if (IsIpv6(ok.front())) {
          const IntervalSet link_local = IntervalSet::Range(
              Value{0xfe80} << 112, (Value{0xfe80} << 112) + (Value{1} << 118) - 1);
          Flows bad, good, bad2, good2;
          SplitFlow(ok.front(), Dim::kSaddr, link_local, space, bad, good);
          for (const PathFlow& g : good) SplitFlow(g, Dim::kDaddr, link_local, space, bad2, good2);
          for (PathFlow& b : bad) dropped.push_back({std::move(b), "link-local addresses are not forwarded"});
          for (PathFlow& b : bad2) dropped.push_back({std::move(b), "link-local addresses are not forwarded"});
          // ip6_forward: an unspecified source is not forwarded.
          Flows any, named;
          for (const PathFlow& g : good2) SplitFlow(g, Dim::kSaddr, IntervalSet::Single(0), space, any, named);
          for (PathFlow& b : any) dropped.push_back({std::move(b), "unspecified source address"});
          ok = std::move(named);
        }
        for (PathFlow& g : ok) {
          const int t = static_cast<int>(Dim::kTtl);
          g.now.set(Dim::kTtl) = Shifted(g.now.get(Dim::kTtl), false);
          if (g.rel[t] == Rel::kSame) g.rel[t] = Rel::kDecremented;
          pass.push_back(std::move(g));
        }
      }
    }
  }
}

// Sends each flow (with its decision key) where the decision says.
void Place(PathFlow h, const std::string& key, const Space& space, Routed& out) {
  if (key == "local") {
    out.local.push_back(std::move(h));
  } else if (key.starts_with("out:")) {
    const std::string dev = key.substr(4);
    const auto it = std::find_if(space.oif.begin(), space.oif.end(),
                                 [&](const NameValue& v) { return v.name == dev; });
    if (it == space.oif.end()) {
      out.dropped.push_back({std::move(h), "output device outside the name domain"});
      return;
    }
    SetConst(h, Dim::kOifName, static_cast<Value>(it - space.oif.begin()));
    out.out.push_back(std::move(h));
  } else {
    out.dropped.push_back({std::move(h), key.substr(5)});
  }
}

Routed RouteOnHost(const Flows& in, const HostModel& host, const Space& space, bool arriving) {
  Routed out;
  if (arriving) {
    Flows pieces;
    std::vector<std::string> keys;
    RouteArriving(in, host, space, pieces, keys);
    for (size_t i = 0; i < pieces.size(); ++i) Place(std::move(pieces[i]), keys[i], space, out);
    return out;
  }
  const std::map<std::string, IntervalSet> pieces[2] = {RoutePieces(host, false),
                                                        RoutePieces(host, true)};
  for (const PathFlow& f : in) {
    for (const auto& [key, set] : pieces[IsIpv6(f) ? 1 : 0]) {
      Flows hit, rest;
      SplitFlow(f, Dim::kDaddr, set, space, hit, rest);
      for (PathFlow& h : hit) Place(std::move(h), key, space, out);
    }
  }
  return out;
}

void Ipv6ReceiveChecks(const Flows& in, const Space& space, Flows& pass,
                       std::vector<StackDrop>& dropped) {
  // Ipv6ReceiveDrop's answer for a source is the same with any
  // destination that passes, and the reverse: each range asked once.
  static constexpr uint8_t kFine[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
  std::map<std::string, IntervalSet> bad_src, bad_dst;
  const auto src_cuts = Ipv6ReceiveCuts(true), dst_cuts = Ipv6ReceiveCuts(false);
  const std::vector<IntervalSet> src_ranges = CutRanges(src_cuts, true);
  const std::vector<IntervalSet> dst_ranges = CutRanges(dst_cuts, true);
  IntervalSet good_src, good_dst;
  for (size_t i = 0; i < src_cuts.size(); ++i) {
    const char* why = Ipv6ReceiveDrop(src_cuts[i].data(), kFine);
    if (why != nullptr) bad_src[why] = bad_src[why].Union(src_ranges[i]);
    else good_src = good_src.Union(src_ranges[i]);
  }
  for (size_t i = 0; i < dst_cuts.size(); ++i) {
    const char* why = Ipv6ReceiveDrop(kFine, dst_cuts[i].data());
    if (why != nullptr) bad_dst[why] = bad_dst[why].Union(dst_ranges[i]);
    else good_dst = good_dst.Union(dst_ranges[i]);
  }
  for (const PathFlow& f : in) {
    if (!IsIpv6(f)) {
      pass.push_back(f);
      continue;
    }
    Flows ok_dst, rest;
    for (const auto& [why, set] : bad_dst) {
      Flows hit;
      SplitFlow(f, Dim::kDaddr, set, space, hit, rest);
      for (PathFlow& h : hit) dropped.push_back({std::move(h), why});
    }
    SplitFlow(f, Dim::kDaddr, good_dst, space, ok_dst, rest);
    for (const PathFlow& g : ok_dst) {
      for (const auto& [why, set] : bad_src) {
        Flows hit;
        SplitFlow(g, Dim::kSaddr, set, space, hit, rest);
        for (PathFlow& h : hit) dropped.push_back({std::move(h), why});
      }
      Flows ok;
      SplitFlow(g, Dim::kSaddr, good_src, space, ok, rest);
      for (PathFlow& o : ok) pass.push_back(std::move(o));
    }
  }
}

}  // namespace rulejit::analysis
