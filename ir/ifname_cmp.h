// Interface-name compares in one width: iptables compares `-i eth0` in 8
// bytes ("eth0" and its NUL, rounded up to the register word, as
// iptables-nft emits it), nft's `iifname "eth0"` in 16 (IFNAMSIZ). The
// kernel's meta iifname / oifname (and the bridge port names) load the
// name zero-padded to 16 bytes (nft_meta_get_eval: strncpy), so a compare
// whose data holds a NUL byte decides the same in any width: every byte
// after the NUL is 0 in the register. iptables-legacy agrees (xt's
// ifname_compare with iniface_mask over strlen + 1 bytes). A `+` wildcard
// (`eth+`, nft's "eth*") compares the prefix alone in both, with no NUL,
// and is left as it is.
//
//   ir::WidenIfnameCompares(ruleset);  // then -i eth0 and iifname "eth0" are the same IR
//
// translate's identical-bytecode proof runs it on both sides.
#ifndef RULEJIT_IR_IFNAME_CMP_H_
#define RULEJIT_IR_IFNAME_CMP_H_

#include "ir/ir.h"

namespace rulejit::ir {

// Pads each eq/neq compare of a register that holds an interface name
// (loaded by the expression just before) to 16 bytes with zeros, where its
// data holds a NUL byte. Returns how many compares it widened.
int WidenIfnameCompares(Ruleset& ruleset);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_IFNAME_CMP_H_
