// hashlimit_mt of xt_hashlimit (revision 3), per packet:
//
//   key      the packet's fields in `mode` (source/destination address
//            under its prefix length, source/destination port; the rest
//            zero); ports are read at the transport header of the
//            protocols that have them (TCP, UDP, UDP-Lite, DCCP, SCTP,
//            ESP's SPI, AH's SPI), zero for other protocols; an
//            unreadable port drops the packet (hotdrop)
//   new key  a full table (HashlimitMaxEntries) drops the packet;
//            otherwise the bucket starts full: `burst` packets' worth
//            of credit (bytes: one second's credit, refilled `burst`
//            more times when it runs out)
//   refill   credit grows per jiffy up to the cap (rateinfo_recalc)
//   match    the packet's cost (one packet, or 16-byte chunks of its
//            length) fits in the credit: the credit pays it and the
//            match holds; otherwise not; `invert` turns the answer
//   rate     with rate_match, the key counts packets (bytes) per
//            `interval` seconds: it matches while the count is within
//            the burst and the previous window was not over the rate
//
// Every use sets the key's expiry to now + `expire` ms. The kernel's
// garbage collector removes expired keys every gc_interval ms, from a
// timer started when the table is made; the model removes them as soon as
// they expire (a key reused between its expiry and the next collection
// keeps its bucket in the kernel and starts afresh here). Times are the
// caller's clock in ns, counted in jiffies of kHashlimitHz.
#include "ir/hashlimit_eval.h"

#include <algorithm>

#include "ir/expr_eval.h"

namespace rulejit::ir {
namespace {

constexpr uint64_t kScale = 1000000;  // XT_HASHLIMIT_SCALE_v2
constexpr uint64_t kByteShift = 4;    // XT_HASHLIMIT_BYTE_SHIFT
constexpr uint64_t kNsPerJiffy = 1000000000 / kHashlimitHz;

constexpr uint64_t PowerOfTwoBelow(uint64_t x) {
  uint64_t p = 1;
  while (p <= x / 2) p *= 2;
  return p;
}
// CREDITS_PER_JIFFY (revision 2+) and CREDITS_PER_JIFFY_BYTES.
constexpr uint64_t kCreditsPerJiffy = PowerOfTwoBelow(~uint64_t{0} / (kHashlimitHz * 86400));
constexpr uint64_t kCreditsPerJiffyBytes = PowerOfTwoBelow(0xffffffffu / kHashlimitHz);
constexpr uint64_t kByteCreditFill = kCreditsPerJiffyBytes * kHashlimitHz;

uint64_t MsToJiffies(uint32_t ms) {
  const uint64_t per = 1000 / kHashlimitHz;
  return (uint64_t{ms} + per - 1) / per;
}

// ipv6_skip_exthdr from the fixed header: the upper-layer offset and
// protocol (a non-first fragment stops at its fragment header); false
// when a header cannot be read or there is no next header.
bool SkipIpv6Extensions(const PacketView& pkt, uint32_t* off, uint8_t* proto) {
  const uint8_t* ip = pkt.data + pkt.network_off;
  uint8_t next = ip[6];
  uint32_t start = pkt.network_off + 40;
  for (;;) {
    if (next != 0 && next != 43 && next != 44 && next != 51 && next != 59 && next != 60) break;
    if (next == 59 || start + 2 > pkt.len) return false;
    const uint8_t* h = pkt.data + start;
    uint32_t len = 0;
    if (next == 44) {
      if (start + 4 > pkt.len) return false;
      if (((h[2] << 8) | h[3]) & ~0x7) break;
      len = 8;
    } else if (next == 51) {
      len = (uint32_t{h[1]} + 2) << 2;
    } else {
      len = (uint32_t{h[1]} + 1) << 3;
    }
    next = h[0];
    start += len;
  }
  *off = start;
  *proto = next;
  return true;
}

// proto_ports_offset: where the two 16-bit "ports" sit in the header.
int PortsOffset(uint8_t proto) {
  switch (proto) {
    case 6: case 17: case 33: case 50: case 132: case 136: return 0;
    case 51: return 4;
    default: return -1;
  }
}

void MaskPrefix(uint8_t* addr, size_t len, uint8_t prefix) {
  for (size_t i = 0; i < len; ++i) {
    const int bits = std::clamp(static_cast<int>(prefix) - static_cast<int>(i) * 8, 0, 8);
    addr[i] &= static_cast<uint8_t>(0xff00 >> bits);
  }
}

// hashlimit_init_dst: the key bytes, false for a hotdrop.
bool KeyOf(const Hashlimit& e, const PacketView& pkt, std::string* key) {
  const bool v4 = pkt.nfproto == kNfProtoIpv4;
  const uint8_t* ip = pkt.data + pkt.network_off;
  const size_t alen = v4 ? 4 : 16;
  uint8_t k[36] = {};
  if (e.mode & kHashlimitSrcIp) {
    std::copy_n(ip + (v4 ? 12 : 8), alen, k);
    MaskPrefix(k, alen, e.srcmask);
  }
  if (e.mode & kHashlimitDstIp) {
    std::copy_n(ip + (v4 ? 16 : 24), alen, k + 16);
    MaskPrefix(k + 16, alen, e.dstmask);
  }
  if (e.mode & (kHashlimitSrcPort | kHashlimitDstPort)) {
    uint32_t off = pkt.network_off + (ip[0] & 0x0f) * 4u;
    uint8_t proto = ip[9];
    if (!v4 && !SkipIpv6Extensions(pkt, &off, &proto)) return false;
    const int poff = PortsOffset(proto);
    if (poff >= 0) {
      if (off + poff + 4 > pkt.len) return false;
      const uint8_t* ports = pkt.data + off + poff;
      if (e.mode & kHashlimitSrcPort) std::copy_n(ports, 2, k + 32);
      if (e.mode & kHashlimitDstPort) std::copy_n(ports + 2, 2, k + 34);
    }
  }
  key->assign(reinterpret_cast<const char*>(k), sizeof k);
  return true;
}

uint64_t UserToRateBytes(uint32_t user) {
  const uint64_t r = user ? 0xffffffffu / user : 0xffffffffu;
  return (r - 1) << kByteShift;
}

// rateinfo_init.
void InitBucket(const Hashlimit& e, uint64_t now, HashlimitEntry& b) {
  b.prev = now;
  if (e.rate_match) {
    if (e.bytes) {
      b.rate = UserToRateBytes(static_cast<uint32_t>(e.avg));
      b.burst = static_cast<int64_t>(e.burst ? e.burst * b.rate : b.rate);
    } else {
      b.rate = e.avg ? kScale / e.avg : 0;
      b.burst = static_cast<int64_t>(e.burst + b.rate);
    }
    b.interval = e.interval;
  } else if (e.bytes) {
    b.credit = kByteCreditFill;
    b.cost = HashlimitUserToCreditsByte(e.avg);
    b.credit_cap = e.burst;
  } else {
    b.credit = HashlimitUserToCredits(e.avg * e.burst);
    b.cost = HashlimitUserToCredits(e.avg);
    b.credit_cap = b.credit;
  }
}

// rateinfo_recalc.
void Refill(const Hashlimit& e, uint64_t now, HashlimitEntry& b) {
  const uint64_t delta = now - b.prev;
  if (delta == 0) return;
  if (e.rate_match) {
    const uint64_t interval = b.interval * kHashlimitHz;
    if (delta < interval) return;
    b.prev = now;
    b.prev_window = b.current_rate * interval > delta * b.rate;
    b.current_rate = 0;
    return;
  }
  b.prev = now;
  uint64_t cap = b.credit_cap;
  if (e.bytes) {
    const uint64_t before = b.credit;
    b.credit += kCreditsPerJiffyBytes * delta;
    cap = kByteCreditFill;
    if (before >= b.credit) {
      b.credit = cap;
      return;
    }
  } else {
    b.credit += delta * kCreditsPerJiffy;
  }
  b.credit = std::min(b.credit, cap);
}

// hashlimit_byte_cost: the packet's cost, refilling an empty bucket while
// refills remain.
uint64_t ByteCost(uint32_t len, HashlimitEntry& b) {
  const uint64_t cost = std::min((uint64_t{len >> kByteShift} + 1) * b.cost, kByteCreditFill);
  if (b.credit < cost && b.credit_cap != 0) {
    --b.credit_cap;
    b.credit = kByteCreditFill;
  }
  return static_cast<uint32_t>(cost);
}

}  // namespace

uint64_t HashlimitUserToCredits(uint64_t user) {
  // Wraps as the kernel's u64 arithmetic does (its load check relies on it).
  if constexpr (kScale >= kHashlimitHz * kCreditsPerJiffy) {
    return user / (kScale / (kHashlimitHz * kCreditsPerJiffy));
  } else {
    return user * (kHashlimitHz * kCreditsPerJiffy / kScale);
  }
}

uint64_t HashlimitUserToCreditsByte(uint64_t user) {
  const uint64_t us = uint64_t{static_cast<uint32_t>(user)} * kByteCreditFill;
  return static_cast<uint32_t>(us >> 32);
}

uint32_t HashlimitMaxEntries(const Hashlimit& e) {
  const uint32_t size = e.size != 0 ? e.size : 8192;
  if (e.max == 0) return 8 * size;
  return std::max(e.max, size);
}

HashlimitResult EvalHashlimit(const Hashlimit& e, const PacketView& pkt, uint64_t now_ns,
                              HashlimitTables& tables) {
  const bool v4 = pkt.nfproto == kNfProtoIpv4;
  if ((!v4 && pkt.nfproto != kNfProtoIpv6) || pkt.network_off == kAbsent ||
      pkt.len < pkt.network_off + (v4 ? 20u : 40u)) {
    return HashlimitResult::kNoMatch;
  }
  std::string key;
  if (!KeyOf(e, pkt, &key)) return HashlimitResult::kHotdrop;
  const uint64_t now = now_ns / kNsPerJiffy;
  std::map<std::string, HashlimitEntry>& table = tables.tables[{e.name, pkt.nfproto}];
  std::erase_if(table, [&](const auto& kv) { return now >= kv.second.expires; });
  auto it = table.find(key);
  if (it == table.end()) {
    if (table.size() >= HashlimitMaxEntries(e)) return HashlimitResult::kHotdrop;
    it = table.emplace(key, HashlimitEntry{}).first;
    InitBucket(e, now, it->second);
  } else {
    Refill(e, now, it->second);
  }
  HashlimitEntry& b = it->second;
  b.expires = now + MsToJiffies(e.expire);
  const uint32_t skb_len = SkbLen(pkt);
  bool within = false;
  if (e.rate_match) {
    b.current_rate += e.bytes ? skb_len : 1;
    within = !b.prev_window && static_cast<int64_t>(b.current_rate) <= b.burst;
  } else {
    const uint64_t cost = e.bytes ? ByteCost(skb_len, b) : b.cost;
    within = b.credit >= cost;
    if (within) b.credit -= cost;
  }
  return within != e.invert ? HashlimitResult::kMatch : HashlimitResult::kNoMatch;
}

}  // namespace rulejit::ir
