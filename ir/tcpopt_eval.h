// nft's TCP option write (nft_exthdr_tcp_set_eval) and the route-derived
// MSS it is usually given (nft_rt's NFT_RT_TCPMSS), on the interpreter's
// writable packet and the host model:
//
//   tcp flags syn tcp option maxseg size set rt mtu
//     [ rt load tcpmss => reg 1 ] [ byteorder ... ]
//     [ exthdr write tcpopt reg 1 => 2b @ 2 + 2 ]
#ifndef RULEJIT_IR_TCPOPT_EVAL_H_
#define RULEJIT_IR_TCPOPT_EVAL_H_

#include <cstdint>

#include "ir/ir.h"
#include "rulejit/host.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// Writes the register bytes into the first TCP option of e.type of the
// packet (`data` is the writable copy pkt views); false is NFT_BREAK. A
// checksum left partial (meta.csum_partial) is not updated, as
// inet_proto_csum_replace2/4 leave a CHECKSUM_PARTIAL packet's.
bool EvalExthdrWrite(const ExthdrWrite& e, const PacketView& pkt, const PacketMeta& meta,
                     uint8_t* data, const uint8_t* regs);

// get_tcpmss into the 2-byte register; false (NFT_BREAK) when the packet
// has no route to its destination on the host model.
bool EvalRt(const Rt& e, const PacketView& pkt, const HostModel& host, uint8_t* regs);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_TCPOPT_EVAL_H_
