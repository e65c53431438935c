// The nft `fib` expression on the host model: nft_fib4_eval(_type) and
// nft_fib6_eval(_type) of Linux 6.18, shared by the interpreter and the
// JIT helpers.
#ifndef RULEJIT_IR_FIB_EVAL_H_
#define RULEJIT_IR_FIB_EVAL_H_

#include <cstdint>

#include "ir/ir.h"
#include "rulejit/host.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// Writes the fib result into the register file; false on NFT_BREAK (no
// IPv4/IPv6 header in the packet).
bool EvalFib(const Fib& e, Hook hook, const PacketView& pkt, const PacketMeta& meta,
             const HostModel& host, uint8_t* regs);

// The host every tier uses when none is given (rulejit::LoopbackHost()).
const HostModel& DefaultHost();

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_FIB_EVAL_H_
