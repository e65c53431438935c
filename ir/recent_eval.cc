// recent_mt of xt_recent:
//
//   no entry for the (masked) address:  set adds one and matches; the
//                                       others do not match
//   set       records this packet's time; matches
//   remove    drops the entry; matches
//   rcheck / update   match when some recorded time is within `seconds`
//             (any time, without) -- with `hitcount` N, when N of them are;
//             `reap` then drops the table's least recently used address
//             if its last time is older than `seconds`; update records
//             this packet's time when it matched
//   invert    turns every answer around
//
// With `rttl` an entry is only found when its TTL is the packet's. An
// entry keeps its last kRecentStamps times; a table its last used
// kRecentEntries addresses (the least recently used goes). Times are the
// caller's clock in ns; the kernel's are jiffies, so answers at the very
// edge of `seconds` may differ by a jiffy (1-4 ms).
#include "ir/recent_eval.h"

#include <algorithm>

namespace rulejit::ir {
namespace {

constexpr uint64_t kNsPerSecond = 1000000000;

std::string MaskedAddress(const Recent& e, const PacketView& pkt, uint8_t* ttl, uint8_t* family) {
  const uint8_t* ip = pkt.data + pkt.network_off;
  const bool v4 = pkt.nfproto == kNfProtoIpv4;
  const uint8_t* addr = v4 ? (e.rdest ? ip + 16 : ip + 12) : (e.rdest ? ip + 24 : ip + 8);
  const size_t len = v4 ? 4 : 16;
  std::string out(len, '\0');
  for (size_t i = 0; i < len; ++i) out[i] = static_cast<char>(addr[i] & e.mask[i]);
  *ttl = v4 ? ip[8] : ip[7];
  *family = v4 ? 4 : 6;
  return out;
}

void Record(RecentTables::Entry& entry, uint64_t now_ns) {
  if (entry.stamps.size() == kRecentStamps) entry.stamps.erase(entry.stamps.begin());
  entry.stamps.push_back(now_ns);
}

}  // namespace

bool EvalRecent(const Recent& e, const PacketView& pkt, bool forwarded, uint64_t now_ns,
                RecentTables& tables) {
  const bool v4 = pkt.nfproto == kNfProtoIpv4;
  if ((!v4 && pkt.nfproto != kNfProtoIpv6) || pkt.network_off == kAbsent ||
      pkt.len < pkt.network_off + (v4 ? 20u : 40u)) {
    return false;
  }
  uint8_t ttl = 0, family = 0;
  const std::string addr = MaskedAddress(e, pkt, &ttl, &family);
  // KERNEL: "use TTL as seen before forwarding".
  if (forwarded) ttl = static_cast<uint8_t>(ttl + 1);
  std::list<RecentTables::Entry>& table = tables.tables[e.name];
  auto it = std::find_if(table.begin(), table.end(), [&](const RecentTables::Entry& x) {
    return x.family == family && x.addr == addr && (!e.rttl || x.ttl == ttl);
  });
  bool ret = e.invert;
  if (it == table.end()) {
    if (e.op != RecentOp::kSet) return ret;
    if (table.size() == kRecentEntries) table.pop_front();
    table.push_back({family, addr, ttl, {now_ns}});
    return !ret;
  }
  if (e.op == RecentOp::kRemove) {
    table.erase(it);
    return !ret;
  }
  if (e.op == RecentOp::kSet) {
    ret = !ret;
  } else {
    const uint64_t window = uint64_t{e.seconds} * kNsPerSecond;
    const uint64_t since = now_ns > window ? now_ns - window : 0;
    uint32_t hits = 0;
    for (uint64_t stamp : it->stamps) {
      if (e.seconds != 0 && stamp < since) continue;
      if (e.hitcount == 0 || ++hits >= e.hitcount) {
        ret = !ret;
        break;
      }
    }
    // KERNEL: recent_entry_reap looks at the least recently used entry
    // only (not this one when it is about to be updated) and removes it
    // when its last time is older than the window.
    const bool updating = e.op == RecentOp::kUpdate && ret;
    if (e.reap && !(table.begin() == it && updating) && table.front().stamps.back() < since) {
      if (table.begin() == it) {
        table.pop_front();
        return ret;
      }
      table.pop_front();
    }
    if (!updating) return ret;
  }
  Record(*it, now_ns);
  it->ttl = ttl;
  table.splice(table.end(), table, it);  // recent_entry_update: to the LRU tail
  return ret;
}

}  // namespace rulejit::ir
