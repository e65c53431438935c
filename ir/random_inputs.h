// Which of the kernel's random draws a ruleset reads (rulejit::RandomInputs):
// the offline tools refuse a ruleset that reads one they were not given
// (tools/draw_option.h), and `run` draws per packet only what is read.
#ifndef RULEJIT_IR_RANDOM_INPUTS_H_
#define RULEJIT_IR_RANDOM_INPUTS_H_

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

enum class RandomInput { kNone, kRandom, kSymhash, kJhashSeed };

// The draw one expression reads: numgen random and meta random (iptables'
// statistic) read PacketMeta::random, symhash PacketMeta::symhash, a jhash
// without a seed PacketMeta::jhash_seed.
RandomInput RandomInputOf(const Expr& e);

// Every draw the ruleset reads; NAT (a Nat expression or a nat chain)
// reads `random` too, the kernel's draw for a port to map to.
RandomInputs RandomInputsRead(const Ruleset& ruleset);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_RANDOM_INPUTS_H_
