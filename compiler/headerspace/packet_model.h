// The concrete packet of a header-space point: what the lifter probes rule
// expressions with, and what `diff` hands out as a witness.
//
//   ModelPacket pkt = BuildModelPacket(point, space, ir::Hook::kInput);
//   PacketView view = pkt.View();      // points into pkt.frame
//   program->Run(hook, view, pkt.meta);
//
// Layout: Ethernet II (hidden at output/postrouting, as the kernel has no
// link header there; the destination MAC gives the pkttype, the source MAC
// is the ether saddr dimension), an IPv4 header of 20 bytes or an IPv6 header of 40
// (protocol / next header, ttl / hop limit, addresses from the point), then a 20-byte
// transport region (then zeros up to the point's meta length): ports at 0..3, TCP data offset at 12, the tcp flags
// dimension at byte 13, whatever the protocol. The view is what the frame
// parser (packet/parse.h) makes of the frame, so a witness replayed
// from a pcap by `rulejit eval` is seen exactly as the analysis saw it.
#ifndef RULEJIT_COMPILER_HEADERSPACE_PACKET_MODEL_H_
#define RULEJIT_COMPILER_HEADERSPACE_PACKET_MODEL_H_

#include <cstdint>
#include <vector>

#include "compiler/headerspace/cube.h"
#include "ir/hook_order.h"
#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::headerspace {

inline constexpr uint32_t kModelLinkLen = 14;
inline constexpr uint32_t kModelIpLen = 20;
inline constexpr uint32_t kModelIp6Len = 40;
inline constexpr uint32_t kModelL4Len = 20;
// The longest frame (meta length up to kMaxLength6).
inline constexpr uint32_t kModelMaxLen = kModelLinkLen + kMaxLength6;

struct ModelPacket {
  std::vector<uint8_t> frame;  // Ethernet + IPv4/IPv6 + transport region
  bool link_visible = true;    // false at output/postrouting
  uint8_t proto = 0;
  PacketMeta meta;

  // A view into `frame` (valid while this object lives and is not moved).
  PacketView View() const;
};

ModelPacket BuildModelPacket(const Point& point, const Space& space,
                             ir::Hook hook);

// The model packet as a real one that goes through the stack and
// conntrack (a path's witness, `diff --path --pcap`): the IPv4 header
// checksum, the UDP length, and the TCP, UDP, ICMP and ICMPv6 checksums
// filled in (conntrack counts a bad checksum or UDP length as invalid).
// None of these bytes is a dimension, so the cube analysis sees the same.
ModelPacket BuildPathWitness(const Point& point, const Space& space, ir::Hook hook);

// The parts of BuildModelPacket, for callers that probe many points without
// allocating: the frame into `out` (kModelMaxLen bytes; returns its
// length), the metadata, and whether the hook sees the link header.
uint32_t BuildModelFrame(const Point& point, uint8_t* out);
PacketMeta BuildModelMeta(const Point& point, const Space& space);
inline bool LinkVisible(ir::Hook hook) {
  return hook != ir::Hook::kOutput && hook != ir::Hook::kPostrouting;
}

// Whether the hook has an input / output device: ir/hook_order.h.
using ir::HookHasInputDevice;
using ir::HookHasOutputDevice;

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_PACKET_MODEL_H_
