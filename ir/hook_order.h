// Which base chains run at a hook, in which order, and whether a chain sees
// a given packet: the part of nf_tables' hook registration that every tier
// needs. Shared by the interpreter and the compiled Program.
#ifndef RULEJIT_IR_HOOK_ORDER_H_
#define RULEJIT_IR_HOOK_ORDER_H_

#include <vector>

#include "ir/interp.h"
#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// Base chains registered at `hook`, sorted by priority; equal priorities
// keep table order, then chain order (registration order).
std::vector<RuleRef> BaseChainsAt(const Ruleset& ruleset, Hook hook);

// Whether a base chain of `table` at `hook` sees the packet: ip tables see
// IPv4, ip6 tables IPv6, inet both; netdev (and inet ingress) chains only
// packets on their device (iifname at ingress, oifname at egress); bridge
// and arp tables never see IP hooks. Chains of type nat see only a
// connection's first packet (ct state new).
bool ChainSeesPacket(const Table& table, const Chain& chain, Hook hook,
                     const PacketView& pkt, const PacketMeta& meta);
// The same from the packet's family alone (PacketView::nfproto), all that
// ChainSeesPacket reads of the packet: the fast paths ask it without a view.
bool ChainSeesFamily(const Table& table, const Chain& chain, Hook hook, uint8_t nfproto,
                     const PacketMeta& meta);

// Whether packets at `hook` have an input (output) device (public:
// rulejit/types.h).
using rulejit::HookHasInputDevice;
using rulejit::HookHasOutputDevice;

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_HOOK_ORDER_H_
