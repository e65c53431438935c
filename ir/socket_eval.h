// The nft `socket` and `tproxy` expressions (nft_socket.c, nft_tproxy.c of
// Linux 6.18, with iptables' TPROXY as tproxy `else drop`) on the host
// model's sockets, shared by the interpreter and the JIT helpers.
#ifndef RULEJIT_IR_SOCKET_EVAL_H_
#define RULEJIT_IR_SOCKET_EVAL_H_

#include <cstdint>

#include "ir/ir.h"
#include "rulejit/host.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// The socket of the packet: `assigned` (an index of host.sockets a tproxy
// gave it, -1 none), else nf_sk_lookup_slow_v4/v6 on the host model. -1:
// no socket.
int32_t PacketSocket(const PacketView& pkt, const PacketMeta& meta, const HostModel& host,
                     int32_t assigned);

// Writes the socket key into the register file; false on NFT_BREAK (no
// socket; a key the model cannot answer).
bool EvalSocket(const Socket& e, const PacketView& pkt, const PacketMeta& meta,
                const HostModel& host, int32_t assigned, uint8_t* regs);

// What a tproxy does to the packet: go on with the rule (the socket is
// now `assigned`), end it (NFT_BREAK), or drop the packet (TPROXY).
enum class TproxyOutcome : uint8_t { kGoOn, kBreak, kDrop };
TproxyOutcome EvalTproxy(const Tproxy& e, const PacketView& pkt, const PacketMeta& meta,
                         const HostModel& host, const uint8_t* regs, int32_t& assigned);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_SOCKET_EVAL_H_
