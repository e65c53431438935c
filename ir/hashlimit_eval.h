// iptables' hashlimit match (xt_hashlimit revision 3 of Linux 6.18) on
// tables the caller keeps across packets.
#ifndef RULEJIT_IR_HASHLIMIT_EVAL_H_
#define RULEJIT_IR_HASHLIMIT_EVAL_H_

#include <cstdint>
#include <map>
#include <string>

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// The kernel's tick rate the model counts in (CONFIG_HZ of the kernel the
// differential runs on; its buckets gain credit per jiffy).
inline constexpr uint64_t kHashlimitHz = 250;

// One key's bucket (dsthash_ent's rateinfo): token mode uses credit,
// credit_cap and cost; rate-match mode the other four.
struct HashlimitEntry {
  uint64_t expires = 0;  // jiffies
  uint64_t prev = 0;     // jiffies
  uint64_t credit = 0, credit_cap = 0, cost = 0;
  uint64_t interval = 0, prev_window = 0, current_rate = 0, rate = 0;
  int64_t burst = 0;
};

// The tables of every hashlimit name, per family, as one network namespace
// holds them: key bytes (the masked dsthash_dst) to bucket.
struct HashlimitTables {
  std::map<std::pair<std::string, uint8_t>, std::map<std::string, HashlimitEntry>> tables;
};

enum class HashlimitResult : uint8_t { kNoMatch, kMatch, kHotdrop };

// The match's answer for this packet at `now_ns`, updating `tables` as
// hashlimit_mt does. kHotdrop: the kernel drops the packet (its ports
// cannot be read, or the table is full).
HashlimitResult EvalHashlimit(const Hashlimit& e, const PacketView& pkt, uint64_t now_ns,
                              HashlimitTables& tables);

// The kernel's table limit for `e` (htable_create): size 0 is 8192
// buckets (a host with over 1 GiB of memory), max 0 is 8 x size, and max
// is at least size.
uint32_t HashlimitMaxEntries(const Hashlimit& e);

// user2credits of revision 2 and 3: the credits a `user` rate costs.
uint64_t HashlimitUserToCredits(uint64_t user);
// user2credits_byte: the credits of one 16-byte chunk at byte rate `user`.
uint64_t HashlimitUserToCreditsByte(uint64_t user);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_HASHLIMIT_EVAL_H_
