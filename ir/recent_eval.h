// iptables' recent match (xt_recent of Linux 6.18) on tables the caller
// keeps across packets.
#ifndef RULEJIT_IR_RECENT_EVAL_H_
#define RULEJIT_IR_RECENT_EVAL_H_

#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// xt_recent's module defaults: entries per table (ip_list_tot) and times
// kept per entry (ip_pkt_list_tot).
inline constexpr size_t kRecentEntries = 200;
inline constexpr size_t kRecentStamps = 20;

// The tables of every recent name, as one network namespace holds them.
struct RecentTables {
  struct Entry {
    uint8_t family = 4;
    std::string addr;  // masked address bytes (4 or 16)
    uint8_t ttl = 0;
    std::vector<uint64_t> stamps;  // ns, oldest first, at most kRecentStamps
  };
  // Per name, most recently used last (the kernel's LRU list).
  std::map<std::string, std::list<Entry>> tables;
};

// The match's answer for this packet at `now_ns`, updating `tables` as
// xt_recent does. `forwarded`: the packet has an output device and no
// local socket (the kernel then counts the TTL as before forwarding, +1).
bool EvalRecent(const Recent& e, const PacketView& pkt, bool forwarded, uint64_t now_ns,
                RecentTables& tables);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_RECENT_EVAL_H_
