// The wall-clock matches, on the clock the caller gives (PacketMeta's
// clock_ns and kernel timezone, never the machine's own):
//
//   meta time  [ meta load time => reg R ]  ns since the epoch, 8 bytes
//   meta day   [ meta load day => reg R ]   0 Sunday .. 6, kernel timezone
//   meta hour  [ meta load hour => reg R ]  seconds since midnight UTC
//   -m time    [ time date ... ]            xt_time's time_mt
//
// as net/netfilter/nft_meta.c (nft_meta_get_eval_time) and xt_time.c
// compute them, down to their integer types.
#ifndef RULEJIT_IR_TIME_EVAL_H_
#define RULEJIT_IR_TIME_EVAL_H_

#include <cstdint>

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// Whether `key` is one of the clock's meta keys (time, day, hour).
bool IsClockKey(MetaKey key);
// Whether the key's value depends on the kernel timezone (day).
bool NeedsKernelTz(MetaKey key);

// Stores the clock key's value into `dst` (MetaKeyLen bytes, host order);
// false (NFT_BREAK) when the clock, or for `day` the kernel timezone, is
// not given.
bool EvalClockKey(MetaKey key, const PacketMeta& meta, uint8_t* dst);

// xt_time's verdict for the packet's clock; false without the clock, or
// without the kernel timezone when e.kerneltz.
bool EvalTimeMatch(const TimeMatch& e, const PacketMeta& meta);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_TIME_EVAL_H_
