// Inside api/ only: an Ethernet frame parsed as a hook sees it (no link
// header at output and postrouting, skb->data at the link header at netdev
// egress). Program::Classify uses it, and the C API's
// rulejit_classify_chains, which hands the view to Program::RunChains.
#ifndef RULEJIT_API_PARSE_AT_HOOK_H_
#define RULEJIT_API_PARSE_AT_HOOK_H_

#include <cstdint>

#include "rulejit/packet.h"
#include "rulejit/types.h"

namespace rulejit {

PacketView ParseAtHook(Hook hook, const uint8_t* frame, uint32_t len);

}  // namespace rulejit

#endif  // RULEJIT_API_PARSE_AT_HOOK_H_
