// iptables' TCPMSS target (xt_TCPMSS of Linux 6.18) on the interpreter's
// writable copy of the packet.
#ifndef RULEJIT_IR_TCPMSS_EVAL_H_
#define RULEJIT_IR_TCPMSS_EVAL_H_

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "rulejit/host.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// Rewrites (or adds) the MSS option of the TCP packet in `bytes` (the
// frame `pkt` views; pkt.data must point into it, and both grow by 4
// bytes when an option is added). False when the kernel drops the packet
// (NF_DROP); the target otherwise goes on (XT_CONTINUE).
bool EvalTcpMss(const TcpMss& e, const HostModel& host, PacketView& pkt,
                std::vector<uint8_t>& bytes);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_TCPMSS_EVAL_H_
