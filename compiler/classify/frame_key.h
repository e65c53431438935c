// The classifier key read straight from the frame's bytes, for the frame a
// large ACL sees most: untagged Ethernet, IPv4 with a 20-byte header, not a
// fragment, whole, with at least the 4 port bytes of a transport header.
// For such a frame it equals ExtractKey(runtime::ParseEthernet(frame)) and
// the parse's SkbLen (FrameKeyTest checks both over generated and mutated
// frames); every other frame takes the full parse. Skipping the PacketView
// is what makes it cheaper: the burst path spent about a third of a
// classified packet parsing it (perf, acl1_10K).
#ifndef RULEJIT_COMPILER_CLASSIFY_FRAME_KEY_H_
#define RULEJIT_COMPILER_CLASSIFY_FRAME_KEY_H_

#include <cstdint>

#include "compiler/classify/space.h"

namespace rulejit::classify {

// Fills `key` and `skb_len` (skb->len at the hook, ir::SkbLen: the IP
// packet, plus the link header where skb->data points at it, netdev
// egress) and returns true for the common frame above; false, with both
// unspecified, for any other. Reads only bytes below `len`.
inline bool FastIpv4FrameKey(const uint8_t* f, uint32_t len, bool skb_at_link, Key* key,
                             uint32_t* skb_len) {
  constexpr uint32_t kEth = 14, kIpHeader = 20, kPorts = 4;
  if (f == nullptr || len < kEth + kIpHeader + kPorts) return false;
  auto be16 = [f](uint32_t at) { return (uint32_t{f[at]} << 8) | f[at + 1]; };
  auto be32 = [&be16](uint32_t at) { return (be16(at) << 16) | be16(at + 2); };
  const uint32_t total = be16(kEth + 2);
  const bool simple = be16(12) == 0x0800 && f[kEth] == 0x45 &&
                      (be16(kEth + 6) & 0x3fff) == 0 &&  // neither MF nor an offset
                      total >= kIpHeader + kPorts && total <= len - kEth;
  if (!simple) return false;
  key->v[kSrcAddr] = be32(kEth + 12);
  key->v[kDstAddr] = be32(kEth + 16);
  key->v[kSrcPort] = be16(kEth + kIpHeader);
  key->v[kDstPort] = be16(kEth + kIpHeader + 2);
  key->v[kProto] = f[kEth + 9];
  *skb_len = skb_at_link ? kEth + total : total;
  return true;
}

}  // namespace rulejit::classify

#endif  // RULEJIT_COMPILER_CLASSIFY_FRAME_KEY_H_
