// The box projection of header space (compiler/headerspace/README.md): five dimensions (source and destination
// IPv4 address, source and destination port, layer-4 protocol), a packet's
// point in it (Key) and a rule's box in it (Box).
//
// Each dimension's domain is the field's values plus one extra value,
// "absent" = 2^bits, for packets where the field cannot be read (the
// payload load or `meta l4proto` of a rule would fail: no match). A rule
// that loads a field constrains that dimension to an interval inside
// [0, 2^bits - 1], so it never matches a packet without the field; a rule
// that does not load it spans [0, 2^bits] and matches regardless. With this
// encoding "the rule's expressions match the packet" is exactly "the
// packet's key lies in the rule's box", and the decision structure needs no
// special case for missing headers.
//
// Which bytes each dimension reads (the same bounds the kernel's loads use):
//   src addr  4 bytes at network header + 12   (network_off + 16 <= len)
//   dst addr  4 bytes at network header + 16   (network_off + 20 <= len)
//   src port  2 bytes at transport header + 0  (transport_off + 2 <= len)
//   dst port  2 bytes at transport header + 2  (transport_off + 4 <= len)
//   proto     meta l4proto                     (l4proto_valid)
// The port loads take the kernel's fast path: on non-first fragments they
// read the fragment's data (ir::PayloadSlot, PacketView::l4_off). The
// address bytes are read whatever the family, as the payload load does; in
// an `ip` table only IPv4 packets reach the chain anyway.
#ifndef RULEJIT_COMPILER_HEADERSPACE_BOX_H_
#define RULEJIT_COMPILER_HEADERSPACE_BOX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr_eval.h"
#include "rulejit/packet.h"

namespace rulejit::headerspace {

enum BoxDim : uint8_t { kSrcAddr = 0, kDstAddr = 1, kSrcPort = 2, kDstPort = 3, kProto = 4 };
inline constexpr int kBoxDims = 5;
inline constexpr uint32_t kDimBits[kBoxDims] = {32, 32, 16, 16, 8};

// The "field absent" value of dimension d (one past its largest value).
constexpr uint64_t AbsentValue(int d) { return uint64_t{1} << kDimBits[d]; }
// The largest value the field itself can take.
constexpr uint64_t FieldMax(int d) { return AbsentValue(d) - 1; }

// A packet's point in header space.
struct Key {
  uint64_t v[kBoxDims];
};

// Inclusive intervals per dimension. Default: everything (absent included).
struct Box {
  uint64_t lo[kBoxDims] = {0, 0, 0, 0, 0};
  uint64_t hi[kBoxDims] = {AbsentValue(0), AbsentValue(1), AbsentValue(2),
                        AbsentValue(3), AbsentValue(4)};

  bool Empty() const {
    for (int d = 0; d < kBoxDims; ++d) {
      if (lo[d] > hi[d]) return true;
    }
    return false;
  }
  bool Contains(const Key& k) const {
    for (int d = 0; d < kBoxDims; ++d) {
      if (k.v[d] < lo[d] || k.v[d] > hi[d]) return false;
    }
    return true;
  }
  // True when this box contains all of `other` (which must not be empty).
  bool Covers(const Box& other) const {
    for (int d = 0; d < kBoxDims; ++d) {
      if (lo[d] > other.lo[d] || hi[d] < other.hi[d]) return false;
    }
    return true;
  }
  bool Intersects(const Box& other) const {
    for (int d = 0; d < kBoxDims; ++d) {
      if (lo[d] > other.hi[d] || other.lo[d] > hi[d]) return false;
    }
    return true;
  }
  // True when the rule behind the box loads dimension d (so packets
  // without the field never match).
  bool Requires(int d) const { return hi[d] < AbsentValue(d); }
};

// Whether the boxes of `covers` together contain all of `box`: `box` minus
// each cover in turn, kept as disjoint pieces. Gives up (false) when the
// pieces would exceed `piece_budget`, so the answer "covered" is exact and
// "not covered" may be a miss.
bool CoveredByUnion(const Box& box, const std::vector<Box>& covers, size_t piece_budget);

// "sa=[lo,hi] da=... sp=... dp=... pr=..." for test messages.
std::string BoxToString(const Box& box);

// The packet's key: each field read with the bounds its load would use;
// with `ports_first_fragment_only` (BoxContext) a non-first fragment has
// no ports.
inline Key ExtractKey(const PacketView& pkt, bool ports_first_fragment_only = false) {
  Key k;
  const uint8_t* p = pkt.data;
  const uint64_t len = p == nullptr ? 0 : pkt.len;
  const uint64_t net = pkt.network_off;
  auto be32 = [p](uint64_t at) {
    return (uint32_t{p[at]} << 24) | (uint32_t{p[at + 1]} << 16) |
           (uint32_t{p[at + 2]} << 8) | uint32_t{p[at + 3]};
  };
  auto be16 = [p](uint64_t at) { return (uint32_t{p[at]} << 8) | uint32_t{p[at + 1]}; };
  const bool has_net = pkt.network_off != kAbsent;
  k.v[kSrcAddr] = has_net && net + 16 <= len ? be32(net + 12) : AbsentValue(kSrcAddr);
  k.v[kDstAddr] = has_net && net + 20 <= len ? be32(net + 16) : AbsentValue(kDstAddr);
  // The port loads (2 aligned bytes) take the kernel's fast path, which
  // reads non-first fragments too (ir::PayloadSlot).
  const uint64_t th = ir::PayloadOffset(pkt, ir::PayloadBase::kTransport, 0, 2);
  static_assert(ir::PayloadSlot(ir::PayloadBase::kTransport, 0, 2) ==
                ir::PayloadSlot(ir::PayloadBase::kTransport, 2, 2));
  const bool has_th = th != kAbsent;
  k.v[kSrcPort] = has_th && th + 2 <= len ? be16(th) : AbsentValue(kSrcPort);
  k.v[kDstPort] = has_th && th + 4 <= len ? be16(th + 2) : AbsentValue(kDstPort);
  if (ports_first_fragment_only && pkt.fragoff != 0) {
    k.v[kSrcPort] = AbsentValue(kSrcPort);
    k.v[kDstPort] = AbsentValue(kDstPort);
  }
  k.v[kProto] = pkt.l4proto_valid ? pkt.l4proto : AbsentValue(kProto);
  return k;
}

}  // namespace rulejit::headerspace

#endif  // RULEJIT_COMPILER_HEADERSPACE_BOX_H_
