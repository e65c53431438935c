// iptables' string match (xt_string: skb_find_text with the bm or kmp
// text search of Linux 6.18).
#ifndef RULEJIT_IR_STRING_EVAL_H_
#define RULEJIT_IR_STRING_EVAL_H_

#include <cstdint>

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// The match's answer for this packet (invert applied).
bool EvalStringMatch(const StringMatch& e, const PacketView& pkt);

// The kernel's toupper (lib/ctype.c): lower-case ASCII and Latin-1
// letters (0xdf-0xf6, 0xf8-0xff) less 32; every other byte unchanged.
uint8_t KernelToUpper(uint8_t c);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_STRING_EVAL_H_
