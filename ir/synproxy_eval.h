// nft's synproxy (nft_synproxy_do_eval), statement or object, on the
// interpreter: what it does to the verdict of the packet it sees.
#ifndef RULEJIT_IR_SYNPROXY_EVAL_H_
#define RULEJIT_IR_SYNPROXY_EVAL_H_

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// kBreak (no TCP header), kDrop (a bad checksum, unreadable options, a SYN
// the kernel answers itself and steals, an ACK without a cookie the kernel
// issued), or kContinue (other TCP packets). See ir::Synproxy.
VerdictCode EvalSynproxy(const PacketView& pkt, const PacketMeta& meta);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_SYNPROXY_EVAL_H_
