// Bounds on one line of an iptables-save dump (internal to
// frontends/iptables): iptables-restore's own, so that what it refuses (or
// would cut apart) is a located error here too, and no line can make the
// frontend allocate without end. The frontend has no recursion the input
// controls (user chains are lowered one by one; jumps are checked by the
// compiler), so lines are the only sizes to bound.
#ifndef RULEJIT_FRONTENDS_IPTABLES_LIMITS_H_
#define RULEJIT_FRONTENDS_IPTABLES_LIMITS_H_

#include <cstddef>

namespace rulejit::frontends::iptables_internal {

// iptables-restore reads lines with fgets into `char buffer[10240]`: a
// longer line is read as two, each parsed on its own (checked with
// iptables-legacy-restore 1.8.9: 10,239 bytes and the newline read as one
// line, 10,240 cut the last byte off).
inline constexpr size_t kMaxLineBytes = 10240 - 1;  // fgets keeps the NUL

// add_param_to_argv's `char param_buffer[1024]`: "Parameter too long!".
inline constexpr size_t kMaxParamBytes = 1024 - 1;

// MAX_ARGC 255 in xshared.h ("Parser cannot handle more arguments"), less
// the `iptables -t TABLE` iptables-restore puts in front and the final NULL.
inline constexpr size_t kMaxArgs = 255 - 4;

}  // namespace rulejit::frontends::iptables_internal

#endif  // RULEJIT_FRONTENDS_IPTABLES_LIMITS_H_
