// The classifier key of the common IPv4 frame, from the packet module's
// fast 5-tuple reader (packet/fast_ipv4.h) without a full parse: the burst
// path's cheap way to a Key.
#ifndef RULEJIT_COMPILER_CLASSIFY_FRAME_KEY_H_
#define RULEJIT_COMPILER_CLASSIFY_FRAME_KEY_H_

#include <cstdint>

#include "compiler/classify/space.h"
#include "packet/fast_ipv4.h"

namespace rulejit::classify {

// packet::FastIpv4FiveTuple as a Key: true (key and skb_len filled) for the
// common frame, false for every other.
inline bool FastIpv4FrameKey(const uint8_t* frame, uint32_t len, bool skb_at_link, Key* key,
                             uint32_t* skb_len) {
  packet::FiveTuple t;
  if (!packet::FastIpv4FiveTuple(frame, len, skb_at_link, &t, skb_len)) return false;
  key->v[kSrcAddr] = t.saddr;
  key->v[kDstAddr] = t.daddr;
  key->v[kSrcPort] = t.sport;
  key->v[kDstPort] = t.dport;
  key->v[kProto] = t.proto;
  return true;
}

}  // namespace rulejit::classify

#endif  // RULEJIT_COMPILER_CLASSIFY_FRAME_KEY_H_
