// See rule_packets.h.
#include "tests/kernel/rule_packets.h"

#include <arpa/inet.h>

#include <string>

#include "tests/kernel/packet_gen.h"

namespace rulejit::testing {
namespace {

using analysis::Dim;

std::string Ipv4(uint32_t host_order) {
  in_addr a{htonl(host_order)};
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

FrameSpec Base(uint8_t proto, uint8_t tos) {
  FrameSpec s;
  s.src = "10.1.2.3";
  s.dst = "172.16.5.6";
  s.proto = proto;
  s.payload.assign(8, 0);
  s.tos = tos;
  return s;
}

// The packet of a header-space point, or nullopt when the kernel would not
// forward it (martian or harness addresses).
std::optional<FrameSpec> FromPoint(const analysis::Point& p, uint8_t tos) {
  auto at = [&p](Dim d) { return p[static_cast<int>(d)]; };
  if (!ForwardableIpv4(at(Dim::kSaddr)) || !ForwardableIpv4(at(Dim::kDaddr))) return std::nullopt;
  const uint32_t proto = at(Dim::kProto);
  if (proto == 0 || proto == 255) return std::nullopt;  // IPv6 hop-by-hop, reserved
  FrameSpec s = Base(static_cast<uint8_t>(proto), tos);
  s.src = Ipv4(at(Dim::kSaddr));
  s.dst = Ipv4(at(Dim::kDaddr));
  s.sport = static_cast<uint16_t>(at(Dim::kSport));
  s.dport = static_cast<uint16_t>(at(Dim::kDport));
  s.tcp_flags = static_cast<uint8_t>(at(Dim::kTcpFlags));
  // ICMP: the space's first transport bytes are type and code.
  s.icmp_type = static_cast<uint8_t>(s.sport >> 8);
  s.icmp_code = static_cast<uint8_t>(s.sport);
  return s;
}

// A forwardable address of the set: an end, or next to one, or the middle.
std::optional<uint32_t> ForwardableIn(const analysis::IntervalSet& set) {
  for (const analysis::Interval& iv : set.intervals()) {
    const uint64_t mid = (uint64_t{iv.lo} + iv.hi) / 2;
    for (uint64_t v : {uint64_t{iv.lo} + 1, mid, uint64_t{iv.hi} - 1, uint64_t{iv.lo}, uint64_t{iv.hi}}) {
      if (v >= iv.lo && v <= iv.hi && ForwardableIpv4(static_cast<uint32_t>(v))) {
        return static_cast<uint32_t>(v);
      }
    }
  }
  return std::nullopt;
}

void AddSweep(uint8_t tos, std::vector<FrameSpec>& out) {
  for (uint16_t port : {22, 53, 80, 1023, 1024, 65535}) {
    for (uint8_t proto : {6, 17}) {
      FrameSpec s = Base(proto, tos);
      s.dport = port;
      s.sport = static_cast<uint16_t>(port ^ 0x5a5a);
      out.push_back(s);
    }
  }
  for (uint8_t flags : {0x02, 0x10, 0x11, 0x04, 0x12, 0x29}) {
    FrameSpec s = Base(6, tos);
    s.tcp_flags = flags;
    out.push_back(s);
  }
  for (uint8_t type : {0, 3, 8, 11}) {
    for (uint8_t code : {0, 1}) {
      FrameSpec s = Base(1, tos);
      s.icmp_type = type;
      s.icmp_code = code;
      out.push_back(s);
    }
  }
  for (size_t len : {100, 600, 1200}) {
    FrameSpec s = Base(17, tos);
    s.payload.assign(len, 0);
    out.push_back(s);
  }
  FrameSpec first = Base(6, tos), later = Base(6, tos);
  first.more_fragments = true;
  later.frag_offset = 3;
  out.push_back(first);
  out.push_back(later);
}

}  // namespace

std::vector<FrameSpec> PacketsForRule(const std::optional<analysis::Cube>& cube,
                                      const analysis::Space& space, uint8_t tos) {
  std::vector<FrameSpec> out;
  AddSweep(tos, out);
  if (!cube) return out;
  analysis::Point center = analysis::PickPoint(*cube);
  for (Dim d : {Dim::kSaddr, Dim::kDaddr}) {
    std::optional<uint32_t> a = ForwardableIn(cube->get(d));
    if (!a) return out;  // no forwardable packet matches
    center[static_cast<int>(d)] = *a;
  }
  if (std::optional<FrameSpec> s = FromPoint(center, tos)) out.push_back(*s);
  for (Dim d : {Dim::kSaddr, Dim::kDaddr, Dim::kProto, Dim::kSport, Dim::kDport, Dim::kTcpFlags}) {
    const uint64_t max = space.Max(d);
    int intervals = 0;
    for (const analysis::Interval& iv : cube->get(d).intervals()) {
      if (++intervals > 3) break;
      for (int64_t v : {int64_t{iv.lo} - 1, int64_t{iv.lo}, int64_t{iv.hi}, int64_t{iv.hi} + 1}) {
        if (v < 0 || static_cast<uint64_t>(v) > max) continue;
        analysis::Point p = center;
        p[static_cast<int>(d)] = static_cast<uint32_t>(v);
        if (p == center) continue;
        if (std::optional<FrameSpec> s = FromPoint(p, tos)) out.push_back(*s);
      }
    }
  }
  return out;
}

}  // namespace rulejit::testing
