// See rule_packets.h.
#include "tests/kernel/rule_packets.h"

#include <string>

#include "tests/kernel/packet_gen.h"

namespace rulejit::testing {
namespace {

using analysis::Dim;
using analysis::Value;

constexpr uint8_t kIcmp6 = 58;
constexpr uint8_t kAh = 51;

FrameSpec Base(uint8_t proto, uint8_t tos, bool ipv6) {
  FrameSpec s;
  s.src = ipv6 ? "2001:db8:1::3" : "10.1.2.3";
  s.dst = ipv6 ? "2001:db8:5::6" : "172.16.5.6";
  s.proto = proto;
  s.payload.assign(8, 0);
  s.tos = tos;
  if (proto == kIcmp6) s.icmp_type = 128;  // echo request
  return s;
}

bool Forwardable(Value v, bool ipv6) {
  if (ipv6) return ForwardableIpv6(v);
  return v <= 0xffffffffu && ForwardableIpv4(static_cast<uint32_t>(v));
}

// Whether a packet of this protocol is built as the point says: IPv6 next
// headers the kernel walks as extension headers (and AH, which the frame
// builder only builds with a body) are left to the sweep.
bool Buildable(uint32_t proto, const analysis::Space& space, bool ipv6) {
  if (proto == 0 || proto == 255) return false;  // IPv6 hop-by-hop, reserved
  if (!ipv6) return true;
  const analysis::Cube family = analysis::FamilyCube(space, analysis::kFamilyIpv6);
  return proto != kAh && family.get(Dim::kProto).Contains(proto);
}

// The packet of a header-space point, or nullopt when the kernel would not
// forward it (martian or harness addresses) or the point is not buildable.
std::optional<FrameSpec> FromPoint(const analysis::Point& p, const analysis::Space& space,
                                   uint8_t tos, bool ipv6) {
  auto at = [&p](Dim d) { return p[static_cast<int>(d)]; };
  if (!Forwardable(at(Dim::kSaddr), ipv6) || !Forwardable(at(Dim::kDaddr), ipv6)) return std::nullopt;
  const uint32_t proto = static_cast<uint32_t>(at(Dim::kProto));
  if (!Buildable(proto, space, ipv6)) return std::nullopt;
  FrameSpec s = Base(static_cast<uint8_t>(proto), tos, ipv6);
  s.src = analysis::AddressText(at(Dim::kSaddr), ipv6);
  s.dst = analysis::AddressText(at(Dim::kDaddr), ipv6);
  s.sport = static_cast<uint16_t>(at(Dim::kSport));
  s.dport = static_cast<uint16_t>(at(Dim::kDport));
  s.tcp_flags = static_cast<uint8_t>(at(Dim::kTcpFlags));
  // ICMP / ICMPv6: the space's first transport bytes are type and code.
  s.icmp_type = static_cast<uint8_t>(s.sport >> 8);
  s.icmp_code = static_cast<uint8_t>(s.sport);
  return s;
}

// A forwardable address of the set: an end, or next to one, or the middle.
std::optional<Value> ForwardableIn(const analysis::IntervalSet& set, bool ipv6) {
  for (const analysis::Interval& iv : set.intervals()) {
    const Value mid = iv.lo + (iv.hi - iv.lo) / 2;
    for (Value v : {iv.lo + 1, mid, iv.hi - 1, iv.lo, iv.hi}) {
      if (v >= iv.lo && v <= iv.hi && Forwardable(v, ipv6)) return v;
    }
  }
  return std::nullopt;
}

void AddSweep(uint8_t tos, bool ipv6, std::vector<FrameSpec>& out) {
  const uint8_t icmp = ipv6 ? kIcmp6 : 1;
  auto base = [&](uint8_t proto) { return Base(proto, tos, ipv6); };
  for (uint16_t port : {22, 53, 80, 1023, 1024, 65535}) {
    for (uint8_t proto : {6, 17}) {
      FrameSpec s = base(proto);
      s.dport = port;
      s.sport = static_cast<uint16_t>(port ^ 0x5a5a);
      out.push_back(s);
    }
  }
  for (uint8_t flags : {0x02, 0x10, 0x11, 0x04, 0x12, 0x29}) {
    FrameSpec s = base(6);
    s.tcp_flags = flags;
    out.push_back(s);
  }
  const std::vector<uint8_t> types = ipv6 ? std::vector<uint8_t>{1, 2, 128, 129, 135, 136}
                                          : std::vector<uint8_t>{0, 3, 8, 11};
  for (uint8_t type : types) {
    for (uint8_t code : {0, 1}) {
      FrameSpec s = base(icmp);
      s.icmp_type = type;
      s.icmp_code = code;
      out.push_back(s);
    }
  }
  for (size_t len : {100, 600, 1200}) {
    FrameSpec s = base(17);
    s.payload.assign(len, 0);
    out.push_back(s);
  }
  // A first and a non-first fragment (IPv6: a fragment header).
  for (uint8_t proto : {6, 17}) {
    FrameSpec first = base(proto), later = base(proto);
    first.more_fragments = true;
    later.frag_offset = 3;
    if (ipv6) first.ext_headers = later.ext_headers = {44};
    out.push_back(first);
    out.push_back(later);
  }
  if (!ipv6) return;
  // Extension headers before the transport header, and no next header.
  for (const std::vector<uint8_t>& ext : {std::vector<uint8_t>{0}, {60}, {43}, {kAh}, {0, kAh}}) {
    for (uint8_t proto : {uint8_t{6}, uint8_t{17}, icmp}) {
      FrameSpec s = base(proto);
      s.dport = 22;
      s.ext_headers = ext;
      out.push_back(s);
    }
  }
  out.push_back(base(59));
}

}  // namespace

std::vector<FrameSpec> PacketsForRule(const std::optional<analysis::Cube>& cube,
                                      const analysis::Space& space, uint8_t tos, bool ipv6) {
  std::vector<FrameSpec> out;
  AddSweep(tos, ipv6, out);
  if (!cube) return out;
  analysis::Point center = analysis::PickPoint(*cube);
  for (Dim d : {Dim::kSaddr, Dim::kDaddr}) {
    std::optional<Value> a = ForwardableIn(cube->get(d), ipv6);
    if (!a) return out;  // no forwardable packet matches
    center[static_cast<int>(d)] = *a;
  }
  if (std::optional<FrameSpec> s = FromPoint(center, space, tos, ipv6)) out.push_back(*s);
  for (Dim d : {Dim::kSaddr, Dim::kDaddr, Dim::kProto, Dim::kSport, Dim::kDport, Dim::kTcpFlags}) {
    const Value max = ipv6 || (d != Dim::kSaddr && d != Dim::kDaddr) ? space.Max(d) : 0xffffffffu;
    int intervals = 0;
    for (const analysis::Interval& iv : cube->get(d).intervals()) {
      if (++intervals > 3) break;
      // The ends and the values next to them, within [0, max].
      std::vector<Value> values = {iv.lo, iv.hi};
      if (iv.lo > 0) values.push_back(iv.lo - 1);
      if (iv.hi < max) values.push_back(iv.hi + 1);
      for (Value v : values) {
        analysis::Point p = center;
        p[static_cast<int>(d)] = v;
        if (p == center) continue;
        if (std::optional<FrameSpec> s = FromPoint(p, space, tos, ipv6)) out.push_back(*s);
      }
    }
  }
  return out;
}

std::vector<FrameSpec> PacketsForAddress(bool source, Value addr, Value mask, uint8_t tos,
                                         bool ipv6) {
  std::vector<FrameSpec> out;
  const Value lowest = mask & (~mask + 1);
  for (Value a : {addr, addr ^ lowest}) {
    if (!Forwardable(a, ipv6)) continue;
    for (uint8_t proto : {uint8_t{6}, uint8_t{17}, ipv6 ? kIcmp6 : uint8_t{1}}) {
      FrameSpec s = Base(proto, tos, ipv6);
      s.dport = 22;
      (source ? s.src : s.dst) = analysis::AddressText(a, ipv6);
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace rulejit::testing
