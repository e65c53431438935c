// Which register words an expression reads: the liveness facts passes need.
#ifndef RULEJIT_IR_REG_USE_H_
#define RULEJIT_IR_REG_USE_H_

#include <cstdint>

#include "ir/ir.h"

namespace rulejit::ir {

// Bit i set = 32-bit data word i (0..15) is read by `expr` (in `table`, for
// set key lengths). Registers out of range read nothing.
uint32_t WordsRead(const Expr& expr, const Table& table);

// Bits for the words of `len` bytes starting at register `reg`.
uint32_t WordMask(Reg reg, uint32_t len);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_REG_USE_H_
