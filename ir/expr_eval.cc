// Kernel semantics of the shared expressions (see expr_eval.h). Where the
// kernel's behaviour is not the intuitive one it is marked KERNEL.
#include "ir/expr_eval.h"

#include <algorithm>
#include <cstring>

#include "ir/time_eval.h"
#include "ir/util.h"
#include "packet/checksum.h"

namespace rulejit::ir {
namespace {

constexpr uint8_t kCtDirReplyBit = 1;

uint32_t LoadWord(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void StoreWord(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
// nft_reg_store8 / nft_reg_store16: the value in the low bytes, word zeroed.
void Store8(uint8_t* p, uint8_t v) {
  StoreWord(p, 0);
  p[0] = v;
}
void Store16(uint8_t* p, uint16_t v) {
  StoreWord(p, 0);
  std::memcpy(p, &v, 2);
}
// A meta key that only a packet with `present` (a device, a socket, a CPU)
// has: stored, or no match (NFT_BREAK) without it.
bool StoreWordIf(bool present, uint8_t* p, uint32_t v) {
  if (present) StoreWord(p, v);
  return present;
}
bool Store16If(bool present, uint8_t* p, uint16_t v) {
  if (present) Store16(p, v);
  return present;
}

// Interface name into a 16-byte register area (KERNEL: "" without device).
void StoreIfName(uint8_t* dst, const char (&name)[16], bool present) {
  std::memset(dst, 0, 16);
  if (present) std::memcpy(dst, name, 16);
}

// KERNEL (nft_bitwise_eval_lshift/rshift): words in host order, carry from
// word to word, computed in place (so shifting a register onto itself reads
// words already written, like the kernel).
void ShiftWords(uint32_t* dst, const uint32_t* src, int words, uint32_t shift,
                bool left) {
  uint32_t carry = 0;
  if (left) {
    for (int i = words; i > 0; i--) {
      dst[i - 1] = (src[i - 1] << shift) | carry;
      carry = shift == 0 ? 0 : src[i - 1] >> (32 - shift);
    }
  } else {
    for (int i = 0; i < words; i++) {
      dst[i] = carry | (src[i] >> shift);
      carry = shift == 0 ? 0 : src[i] << (32 - shift);
    }
  }
}

uint16_t Swap16(uint16_t v) { return static_cast<uint16_t>((v >> 8) | (v << 8)); }

// Does `key` fall in [lo, hi] (memcmp order) over `len` bytes at `off`?
bool InRange(const uint8_t* key, const Bytes& lo, const Bytes& hi,
             uint32_t off, uint32_t len) {
  if (lo.size() < off + len || hi.size() < off + len) return false;
  return std::memcmp(key + off, lo.data() + off, len) >= 0 &&
         std::memcmp(key + off, hi.data() + off, len) <= 0;
}

// Whether a memcmp result `d` satisfies `op`.
bool CmpHolds(CmpOp op, int d) {
  switch (op) {
    case CmpOp::kEq: return d == 0;
    case CmpOp::kNeq: return d != 0;
    case CmpOp::kLt: return d < 0;
    case CmpOp::kLte: return d <= 0;
    case CmpOp::kGt: return d > 0;
    case CmpOp::kGte: return d >= 0;
  }
  return false;
}

// Where the kernel's skb->data points: PacketView::skb_off, else the
// network header (else the frame's start).
uint32_t SkbData(const PacketView& pkt) {
  return pkt.skb_off != kAbsent       ? pkt.skb_off
         : pkt.network_off == kAbsent ? 0
                                      : pkt.network_off;
}

}  // namespace

// pkt->thoff of a non-first fragment as an offset into the frame: l4_off,
// but KERNEL: an IPv6 one keeps thoff 0 (ipv6_find_hdr does not set it),
// i.e. skb->data itself, which at netdev egress is the link header (found
// by the kernel campaign, seed 1028: `tcp sport`, `tcp flags` read the
// Ethernet header there; KernelDiff.NftTransportMatchOnIpv6Fragment).
uint32_t LaterFragmentThoff(const PacketView& pkt) {
  return pkt.nfproto == kNfProtoIpv6 && pkt.l4_off != kAbsent ? SkbData(pkt) : pkt.l4_off;
}

uint32_t SkbLen(const PacketView& pkt) {
  const uint32_t base = SkbData(pkt);
  return base <= pkt.len ? pkt.len - base : 0;
}

void StoreBytes(uint8_t* dst, const uint8_t* src, uint32_t len) {
  if (len % 4 != 0) std::memset(dst + (len / 4) * 4, 0, 4);
  std::memcpy(dst, src, len);
}

bool EvalPayloadLoad(const PayloadLoad& e, const PacketView& pkt, uint8_t* regs) {
  const uint32_t base = PayloadOffset(pkt, e.base, e.offset, e.len);
  uint8_t* dst = RegBytes(regs, e.dreg, e.len);
  const uint64_t end = static_cast<uint64_t>(base) + e.offset + e.len;
  if (base == kAbsent || dst == nullptr || end > pkt.len || pkt.data == nullptr) {
    return false;
  }
  StoreBytes(dst, pkt.data + base + e.offset, e.len);
  return true;
}

namespace {

// ipv6_ext_hdr(): the headers ipv6_find_hdr walks over (mobility is not one).
bool Ipv6ExtHdr(uint8_t nexthdr) {
  return nexthdr == 0 || nexthdr == 43 || nexthdr == 44 || nexthdr == 51 ||
         nexthdr == 59 || nexthdr == 60;
}

// ipv6_find_hdr(skb, &offset, target, NULL, NULL) for target >= 0: the
// offset of the header of type `target`, or kAbsent (-ENOENT/-EBADMSG).
// KERNEL: a non-first fragment ends the walk unless the fragment header is
// the target; AH counts its length in 4-byte units, the others in 8.
uint32_t FindIpv6Header(const PacketView& pkt, uint8_t target) {
  if (pkt.nfproto != kNfProtoIpv6 || pkt.network_off == kAbsent ||
      static_cast<uint64_t>(pkt.network_off) + 40 > pkt.len) {
    return kAbsent;  // only IPv6 packets reach these rules (nft adds the dependency)
  }
  uint8_t nexthdr = pkt.data[pkt.network_off + 6];
  uint64_t start = pkt.network_off + 40;
  for (;;) {
    const bool found = nexthdr == target;
    if (!Ipv6ExtHdr(nexthdr) || nexthdr == 59) return found ? static_cast<uint32_t>(start) : kAbsent;
    // KERNEL: a routing header is read as struct ipv6_rt_hdr (4 bytes).
    if (start + (nexthdr == 43 ? 4 : 2) > pkt.len) return kAbsent;
    const uint8_t* hp = pkt.data + start;
    uint64_t hdrlen;
    if (nexthdr == 44) {
      if (start + 4 > pkt.len) return kAbsent;
      const uint16_t frag_off = static_cast<uint16_t>((hp[2] << 8 | hp[3]) & ~0x7);
      if (frag_off != 0) return found ? static_cast<uint32_t>(start) : kAbsent;
      hdrlen = 8;
    } else if (nexthdr == 51) {
      hdrlen = (static_cast<uint64_t>(hp[1]) + 2) << 2;
    } else {
      hdrlen = (static_cast<uint64_t>(hp[1]) + 1) << 3;
    }
    if (found) return static_cast<uint32_t>(start);
    nexthdr = hp[0];
    start += hdrlen;
  }
}

// pkt->thoff as the kernel keeps it (also set on non-first fragments).
uint32_t TransportOffset(const PacketView& pkt) {
  return pkt.fragoff != 0 ? LaterFragmentThoff(pkt) : pkt.transport_off;
}

// nft_exthdr_tcp_eval: the option of `type` in the TCP header (at most 60
// bytes, options after the fixed 20); the offset of its first byte, or
// kAbsent when missing, truncated, or shorter than offset + len.
uint32_t FindTcpOption(const Exthdr& e, const PacketView& pkt) {
  const uint32_t th = pkt.transport_off;
  if (!pkt.l4proto_valid || pkt.l4proto != 6 || pkt.fragoff != 0 || th == kAbsent ||
      static_cast<uint64_t>(th) + 20 > pkt.len) {
    return kAbsent;
  }
  const uint8_t* opt = pkt.data + th;
  const uint32_t hdrlen = (opt[12] >> 4) * 4u;
  if (hdrlen < 20 || static_cast<uint64_t>(th) + hdrlen > pkt.len) return kAbsent;
  uint32_t optl = 1;
  for (uint32_t i = 20; i < hdrlen - 1; i += optl) {
    // optlen(): EOL, NOP and zero-length options advance by one byte.
    optl = opt[i] <= 1 || opt[i + 1] == 0 ? 1 : opt[i + 1];
    if (opt[i] != e.type) continue;
    if (i + optl > hdrlen || e.len + e.offset > optl) return kAbsent;
    return th + i;
  }
  return kAbsent;
}

// nft_exthdr_sctp_eval: the first chunk of `type` after the 12-byte common
// header; kAbsent when none, or (loads) when offset + len leaves the chunk.
uint32_t FindSctpChunk(const Exthdr& e, const PacketView& pkt) {
  const uint32_t th = TransportOffset(pkt);
  if (!pkt.l4proto_valid || pkt.l4proto != 132 || th == kAbsent) return kAbsent;
  uint64_t off = static_cast<uint64_t>(th) + 12;
  do {
    if (off + 4 > pkt.len) break;
    const uint8_t* ch = pkt.data + off;
    const uint32_t len = ch[2] << 8 | ch[3];
    if (len == 0) break;
    if (ch[0] == e.type) {
      if (e.present) return static_cast<uint32_t>(off);
      if (e.offset + e.len > len || off + len > pkt.len) break;
      return static_cast<uint32_t>(off);
    }
    off += Pad4(len);
  } while (off < pkt.len);
  return kAbsent;
}

}  // namespace

bool EvalExthdr(const Exthdr& e, const PacketView& pkt, uint8_t* regs) {
  uint8_t* dst = RegBytes(regs, e.dreg, e.present ? 4 : e.len);
  if (dst == nullptr || pkt.data == nullptr) return false;
  uint32_t at = kAbsent;
  switch (e.op) {
    case ExthdrOp::kIpv6: at = FindIpv6Header(pkt, e.type); break;
    case ExthdrOp::kTcpopt: at = FindTcpOption(e, pkt); break;
    case ExthdrOp::kSctp: at = FindSctpChunk(e, pkt); break;
  }
  if (e.present) {
    // KERNEL: tcp stores a whole u32 (*dest = 1), the others store8; both
    // leave the word reading 0 or 1.
    StoreWord(dst, 0);
    dst[0] = at != kAbsent ? 1 : 0;
    return true;
  }
  const uint64_t end = static_cast<uint64_t>(at) + e.offset + e.len;
  if (at == kAbsent || end > pkt.len) return false;
  StoreBytes(dst, pkt.data + at + e.offset, e.len);
  return true;
}

namespace {

using packet::OnesSum;

// nft_csum_replace on the 16-bit checksum at `at`: ~(~sum - from + to),
// in ones'-complement; KERNEL: a result of 0 is stored as 0xffff
// (CSUM_MANGLED_0).
bool ReplaceChecksum(const PacketView& pkt, uint8_t* data, uint64_t at, uint32_t from,
                     uint32_t to) {
  if (at + 2 > pkt.len) return false;
  uint32_t sum = static_cast<uint32_t>(~(data[at] << 8 | data[at + 1]) & 0xffff);
  sum += (~from & 0xffff);
  sum += to;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  uint16_t out = static_cast<uint16_t>(~sum & 0xffff);
  if (out == 0) out = 0xffff;
  data[at] = static_cast<uint8_t>(out >> 8);
  data[at + 1] = static_cast<uint8_t>(out);
  return true;
}

}  // namespace

void EvalChecksumFill(const PacketView& pkt, const PacketMeta& meta, uint8_t* data) {
  if (meta.csum_partial) CompletePartialChecksum(pkt, data);
}

namespace {

// nft_payload_l4csum_offset: where the transport checksum sits, or kAbsent
// when there is none to update (other protocols, fragments, UDP with a
// zero checksum).
uint32_t L4ChecksumOffset(const PacketView& pkt, const uint8_t* data) {
  const uint32_t th = pkt.transport_off;
  if (!pkt.l4proto_valid || pkt.fragoff != 0 || th == kAbsent) return kAbsent;
  uint32_t off;
  switch (pkt.l4proto) {
    case 6: off = 16; break;
    case 17:
      if (static_cast<uint64_t>(th) + 8 > pkt.len || (data[th + 6] == 0 && data[th + 7] == 0)) {
        return kAbsent;
      }
      off = 6;
      break;
    case 136: off = 6; break;
    case 58: off = 2; break;
    default: return kAbsent;
  }
  return th + off;
}

}  // namespace

bool EvalPayloadWrite(const PayloadWrite& e, const PacketView& pkt, uint8_t* data,
                      const uint8_t* regs) {
  HeaderSlot slot = e.base == PayloadBase::kLink            ? HeaderSlot::kLink
                    : e.base == PayloadBase::kNetwork       ? HeaderSlot::kNetwork
                    : e.base == PayloadBase::kTransport     ? HeaderSlot::kTransport
                    : e.base == PayloadBase::kIp6tTransport ? HeaderSlot::kIp6tTransport
                                                            : HeaderSlot::kInner;
  const uint32_t base = SlotOffset(pkt, slot);
  const uint8_t* src = RegBytes(const_cast<uint8_t*>(regs), e.sreg, e.len);
  const uint64_t at = static_cast<uint64_t>(base) + e.offset;
  if (base == kAbsent || src == nullptr || data == nullptr || at + e.len > pkt.len) return false;
  if (e.csum_type == kCsumInet || e.csum_flags != 0) {
    const uint32_t from = OnesSum(data + at, e.len);
    const uint32_t to = OnesSum(src, e.len);
    if (e.csum_type == kCsumInet &&
        !ReplaceChecksum(pkt, data, static_cast<uint64_t>(base) + e.csum_offset, from, to)) {
      return false;
    }
    if (e.csum_flags & kCsumL4PseudoHdr) {
      const uint32_t l4 = L4ChecksumOffset(pkt, data);
      if (l4 != kAbsent && !ReplaceChecksum(pkt, data, l4, from, to)) return false;
    }
  }
  std::memcpy(data + at, src, e.len);
  return true;
}

bool EvalFusedCmp(const FusedCmp& e, const PacketView& pkt) {
  const uint32_t base = PayloadOffset(pkt, e.load.base, e.load.offset, e.load.len);
  const uint64_t end = static_cast<uint64_t>(base) + e.load.offset + e.load.len;
  if (base == kAbsent || end > pkt.len || pkt.data == nullptr || e.load.len > kRegBytes) {
    return false;
  }
  uint8_t value[kRegBytes] = {};
  std::memcpy(value, pkt.data + base + e.load.offset, e.load.len);
  for (size_t i = 0; i < e.mask.size(); ++i) value[i] &= e.mask[i];
  int d = std::memcmp(value, e.data.data(), std::min<size_t>(e.data.size(), kRegBytes));
  return CmpHolds(e.op, d);
}

uint8_t* RegBytes(uint8_t* regs, Reg reg, uint32_t len) {
  int word = RegWord(reg);
  if (word < 0 || word * 4 + static_cast<uint64_t>(len) > kRegBytes) {
    return nullptr;
  }
  return regs + word * 4;
}

// nft_meta_get_eval
bool EvalMetaLoad(const MetaLoad& e, Family family, const PacketView& pkt,
                  const PacketMeta& m, const MutableMeta& mut, uint8_t* regs) {
  uint8_t* dst = RegBytes(regs, e.dreg, MetaKeyLen(e.key));
  if (dst == nullptr) return false;
  switch (e.key) {
    case MetaKey::kLen: StoreWord(dst, SkbLen(pkt)); return true;
    case MetaKey::kProtocol: {
      // skb->protocol is big-endian: the register holds network order.
      uint8_t be[2] = {static_cast<uint8_t>(pkt.protocol >> 8),
                       static_cast<uint8_t>(pkt.protocol)};
      uint16_t raw;
      std::memcpy(&raw, be, 2);
      Store16(dst, raw);
      return true;
    }
    case MetaKey::kNfProto:
      Store8(dst, family == Family::kNetdev ? kNfProtoNetdev : pkt.nfproto);
      return true;
    case MetaKey::kL4Proto:
      if (!pkt.l4proto_valid) return false;
      Store8(dst, pkt.l4proto);
      return true;
    case MetaKey::kIp6tL4Proto:  // KERNEL: the kernel hotdrops when invalid
      if (!pkt.ip6t_proto_valid) return false;
      Store8(dst, pkt.ip6t_proto);
      return true;
    case MetaKey::kPriority: StoreWord(dst, mut.priority); return true;
    case MetaKey::kMark: StoreWord(dst, mut.mark); return true;
    // KERNEL: no device loads ifindex 0 and name "", only the types fail.
    case MetaKey::kIif: StoreWord(dst, m.has_iif ? m.iif : 0); return true;
    case MetaKey::kOif: StoreWord(dst, m.has_oif ? m.oif : 0); return true;
    case MetaKey::kIifName: StoreIfName(dst, m.iifname, m.has_iif); return true;
    case MetaKey::kOifName: StoreIfName(dst, m.oifname, m.has_oif); return true;
    case MetaKey::kIifType: return Store16If(m.has_iif, dst, m.iiftype);
    case MetaKey::kOifType: return Store16If(m.has_oif, dst, m.oiftype);
    // nft_meta_store_ifgroup: no device, no match.
    case MetaKey::kIifGroup: return StoreWordIf(m.has_iif, dst, m.iifgroup);
    case MetaKey::kOifGroup: return StoreWordIf(m.has_oif, dst, m.oifgroup);
    case MetaKey::kPktType: Store8(dst, m.pkttype); return true;
    // smp_processor_id(): an input (PacketMeta::cpu).
    case MetaKey::kCpu: return StoreWordIf(m.has_cpu, dst, m.cpu);
    // The packet's random draw (get_random_u32), an input as numgen's.
    case MetaKey::kPRandom: StoreWord(dst, m.random); return true;
    // The model has no IPsec: no packet was decapsulated (secpath_exists).
    case MetaKey::kSecPath: Store8(dst, 0); return true;
    // KERNEL: only a full socket with a file has credentials (fsuid, fsgid).
    case MetaKey::kSkUid: return StoreWordIf(m.has_socket, dst, m.sk_uid);
    case MetaKey::kSkGid: return StoreWordIf(m.has_socket, dst, m.sk_gid);
    // The clock the caller gives (ir/time_eval.h).
    case MetaKey::kTimeNs:
    case MetaKey::kTimeDay:
    case MetaKey::kTimeHour: return EvalClockKey(e.key, m, dst);
    default:
      // Refused where they are written (ir/unmodelled.h).
      return false;
  }
}

void EvalMetaSet(const MetaSet& e, const uint8_t* regs, MutableMeta& mut) {
  const uint8_t* src = RegBytes(const_cast<uint8_t*>(regs), e.sreg, 4);
  if (src == nullptr) return;
  switch (e.key) {
    case MetaKey::kMark: mut.mark = LoadWord(src); break;
    case MetaKey::kPriority: mut.priority = LoadWord(src); break;
    default: break;  // pkttype, nftrace, secmark: no effect on the verdict
  }
}

namespace {

// nft_ct_get_eval_counter: one direction's count, or both directions'.
uint64_t CtCounter(const uint64_t (&count)[2], CtDir dir) {
  switch (dir) {
    case CtDir::kOriginal: return count[0];
    case CtDir::kReply: return count[1];
    case CtDir::kNone: break;
  }
  return count[0] + count[1];
}

// The counters (8 bytes, host order) and the tuple's keys of nft_ct_get_eval.
// False: no such value (NFT_BREAK).
bool EvalCtTupleOrCounter(const CtLoad& e, const PacketMeta& m, uint8_t* regs) {
  const auto store64 = [&](uint64_t v) {
    uint8_t* dst = RegBytes(regs, e.dreg, 8);
    if (dst != nullptr) std::memcpy(dst, &v, 8);
    return dst != nullptr;
  };
  switch (e.key) {
    case CtKey::kPkts: return store64(CtCounter(m.ct_packets, e.dir));
    case CtKey::kBytes: return store64(CtCounter(m.ct_bytes, e.dir));
    case CtKey::kAvgPkt: {
      const uint64_t packets = CtCounter(m.ct_packets, e.dir);
      return store64(packets == 0 ? 0 : CtCounter(m.ct_bytes, e.dir) / packets);
    }
    default: break;
  }
  const CtTuple& t = m.ct_tuple[e.dir == CtDir::kReply ? 1 : 0];
  uint8_t* dst = RegBytes(regs, e.dreg, 4);
  if (dst == nullptr) return false;
  switch (e.key) {
    case CtKey::kL3Protocol: Store8(dst, t.family); return true;
    case CtKey::kProtocol: Store8(dst, t.proto); return true;
    default: break;
  }
  if (e.dir == CtDir::kNone) return false;  // the kernel loads these with a direction
  const bool v4 = t.family == kNfProtoIpv4;
  const auto store_addr = [&](const uint8_t (&addr)[16], uint32_t len) {
    uint8_t* area = RegBytes(regs, e.dreg, len);
    if (area != nullptr) std::memcpy(area, addr, len);
    return area != nullptr;
  };
  switch (e.key) {
    case CtKey::kSrc: return store_addr(t.src, v4 ? 4 : 16);
    case CtKey::kDst: return store_addr(t.dst, v4 ? 4 : 16);
    case CtKey::kSrcIp: return v4 && store_addr(t.src, 4);
    case CtKey::kDstIp: return v4 && store_addr(t.dst, 4);
    case CtKey::kSrcIp6: return t.family == kNfProtoIpv6 && store_addr(t.src, 16);
    case CtKey::kDstIp6: return t.family == kNfProtoIpv6 && store_addr(t.dst, 16);
    case CtKey::kProtoSrc:
    case CtKey::kProtoDst: {
      uint16_t v;
      std::memcpy(&v, e.key == CtKey::kProtoSrc ? t.proto_src : t.proto_dst, 2);
      Store16(dst, v);
      return true;
    }
    default: return false;  // refused where written (ir/unmodelled.h)
  }
}

}  // namespace

// nft_ct_get_eval
bool EvalCtLoad(const CtLoad& e, const PacketMeta& m, const MutableMeta& mut,
                uint8_t* regs) {
  uint8_t* dst = RegBytes(regs, e.dreg, 4);
  if (dst == nullptr) return false;
  if (e.key == CtKey::kState) {
    // Always loads: without an entry the packet is invalid or untracked.
    uint32_t state = m.ct_valid ? m.ct_state
                     : m.ct_state == kCtStateUntracked ? kCtStateUntracked
                                                       : kCtStateInvalid;
    StoreWord(dst, state);
    return true;
  }
  if (!m.ct_valid) return false;
  switch (e.key) {
    case CtKey::kDirection: Store8(dst, m.ct_dir & kCtDirReplyBit); return true;
    case CtKey::kStatus: StoreWord(dst, m.ct_status); return true;
    case CtKey::kMark: StoreWord(dst, mut.ct_mark); return true;
    case CtKey::kExpiration: StoreWord(dst, m.ct_expiration_ms); return true;
    case CtKey::kZone:
      Store16(dst, e.dir == CtDir::kNone ? m.ct_zone.id
                                         : m.ct_zone.IdOf(e.dir == CtDir::kReply));
      return true;
    case CtKey::kHelper:
      // No helper is assigned (nf_conntrack_helper is 0, and this load is
      // refused in a ruleset that assigns one: ir/unmodelled.h): nfct_help
      // is null.
      return false;
    case CtKey::kLabels: {
      // No label is set (this load is refused in a ruleset that sets one):
      // the extension's bits, or zeros without it, are all clear.
      uint8_t* labels = RegBytes(regs, e.dreg, 16);
      if (labels != nullptr) std::memset(labels, 0, 16);
      return labels != nullptr;
    }
    default: return EvalCtTupleOrCounter(e, m, regs);
  }
}

void EvalCtSet(const CtSet& e, const PacketMeta& meta, const uint8_t* regs,
               MutableMeta& mut) {
  const uint8_t* src = RegBytes(const_cast<uint8_t*>(regs), e.sreg, 4);
  if (src == nullptr) return;
  if (e.key == CtKey::kZone) {
    // nft_ct_set_zone_eval: only a packet without an entry gets the zone
    // (a template conntrack then looks it up in).
    if (meta.ct_valid) return;
    uint16_t id;
    std::memcpy(&id, src, 2);
    mut.ct_zone.id = id;
    mut.ct_zone.dirs = e.dir == CtDir::kOriginal ? kCtZoneOriginal
                       : e.dir == CtDir::kReply  ? kCtZoneReply
                                                 : kCtZoneOriginal | kCtZoneReply;
    return;
  }
  if (!meta.ct_valid) return;  // no entry: no effect
  if (e.key == CtKey::kMark) mut.ct_mark = LoadWord(src);
}

bool EvalBitwise(const Bitwise& e, uint8_t* regs) {
  uint32_t words = (e.len + 3) / 4;
  uint8_t* src = RegBytes(regs, e.sreg, words * 4);
  uint8_t* dst = RegBytes(regs, e.dreg, words * 4);
  if (src == nullptr || dst == nullptr || e.shift >= 32) return false;
  if (IsRegisterBitwise(e.op)) {
    // nft_bitwise_eval_bool with a register operand, word by word.
    const uint8_t* src2 = RegBytes(regs, e.sreg2, words * 4);
    if (src2 == nullptr) return false;
    for (uint32_t i = 0; i < words * 4; i++) {
      dst[i] = e.op == BitwiseOp::kAndReg  ? src[i] & src2[i]
               : e.op == BitwiseOp::kOrReg ? src[i] | src2[i]
                                           : src[i] ^ src2[i];
    }
    return true;
  }
  if (e.op == BitwiseOp::kMaskXor) {
    // Mask and xor are zero past len (kzalloc'ed nft_data in the kernel).
    for (uint32_t i = 0; i < words * 4; i++) {
      uint8_t mask = i < e.mask.size() ? e.mask[i] : 0;
      uint8_t x = i < e.xor_.size() ? e.xor_[i] : 0;
      dst[i] = (src[i] & mask) ^ x;
    }
    return true;
  }
  // Shift on a word view of the whole file so that overlapping source and
  // destination behave as in the kernel.
  uint32_t file[kRegWords];
  std::memcpy(file, regs, sizeof(file));
  ShiftWords(file + RegWord(e.dreg), file + RegWord(e.sreg),
             static_cast<int>(words), e.shift, e.op == BitwiseOp::kLshift);
  std::memcpy(regs, file, sizeof(file));
  return true;
}

// nft_byteorder_eval; ntoh and hton are the same swap on a little-endian
// host.
bool EvalByteorder(const Byteorder& e, uint8_t* regs) {
  uint32_t span = e.size == 2 ? (e.len / 2) * 4 : e.len;  // see KERNEL below
  uint8_t* src = RegBytes(regs, e.sreg, span);
  uint8_t* dst = RegBytes(regs, e.dreg, span);
  if (src == nullptr || dst == nullptr) return false;
  switch (e.size) {
    case 8:
      for (uint32_t i = 0; i < e.len / 8; i++) {
        uint64_t v;
        std::memcpy(&v, src + i * 8, 8);
        v = __builtin_bswap64(v);
        std::memcpy(dst + i * 8, &v, 8);
      }
      return true;
    case 4:
      for (uint32_t i = 0; i < e.len / 4; i++) {
        StoreWord(dst + i * 4, __builtin_bswap32(LoadWord(src + i * 4)));
      }
      return true;
    case 2:
      // KERNEL: the 16-bit elements are indexed through a union of u32 and
      // u16, so element i is the first half of 32-bit word i.
      for (uint32_t i = 0; i < e.len / 2; i++) {
        uint16_t v;
        std::memcpy(&v, src + i * 4, 2);
        v = Swap16(v);
        std::memcpy(dst + i * 4, &v, 2);
      }
      return true;
    default:
      return false;
  }
}

// nft_cmp_eval: memcmp order.
bool EvalCmp(const Cmp& e, const uint8_t* regs) {
  const uint8_t* src = RegBytes(const_cast<uint8_t*>(regs), e.sreg, e.data.size());
  if (src == nullptr) return false;
  int d = std::memcmp(src, e.data.data(), e.data.size());
  return CmpHolds(e.op, d);
}

// nft_range_eval
bool EvalRange(const Range& e, const uint8_t* regs) {
  size_t len = std::min(e.from.size(), e.to.size());
  const uint8_t* src = RegBytes(const_cast<uint8_t*>(regs), e.sreg, len);
  if (src == nullptr) return false;
  bool inside = std::memcmp(src, e.from.data(), len) >= 0 &&
                std::memcmp(src, e.to.data(), len) <= 0;
  return inside != e.negate;
}

// KERNEL nft_limit: a token bucket counted in nanoseconds. Packets cost
// unit/rate each, the bucket holds `burst` (default 5) packets; bytes cost
// unit*len/rate, the bucket holds unit*(rate+burst)/rate. A bucket starts
// full.
bool WithinLimit(const Limit& e, uint32_t skb_len, uint64_t now_ns,
                 LimitBucket& bucket) {
  if (e.rate == 0) return false;
  using u128 = unsigned __int128;  // nsecs * bytes can pass 2^64
  const uint64_t nsecs = e.unit_seconds * 1000000000ull;
  uint64_t burst = e.burst;
  if (!e.bytes && burst == 0) burst = 5;  // NFT_LIMIT_PKT_BURST_DEFAULT
  // Integer divisions as in the kernel; doubles hold the results exactly
  // up to 2^53 ns (104 days).
  const double tokens_max = static_cast<double>(
      e.bytes ? u128(nsecs) * (e.rate + burst) / e.rate
              : u128(nsecs / e.rate) * burst);
  const double cost = static_cast<double>(
      e.bytes ? u128(nsecs) * skb_len / e.rate : u128(nsecs / e.rate));
  if (!bucket.initialized) bucket = {true, tokens_max, now_ns};
  double elapsed = now_ns > bucket.last_ns ? double(now_ns - bucket.last_ns) : 0.0;
  double tokens = std::min(bucket.tokens + elapsed, tokens_max);
  bucket.last_ns = now_ns;
  if (tokens - cost >= 0) {
    bucket.tokens = tokens - cost;
    return true;
  }
  bucket.tokens = tokens;
  return false;
}

bool QuotaPasses(const Quota& e, uint32_t skb_len, QuotaCount& count) {
  if (!count.initialized) count = {true, e.consumed};
  count.consumed += skb_len;
  const bool overquota = count.consumed > e.bytes;
  return overquota == e.over;
}

bool FlowOffloads(const PacketView& pkt, const PacketMeta& meta) {
  constexpr uint32_t kAssured = 0x4, kConfirmed = 0x8, kSeqAdjust = 0x40,
                     kNatClash = 0x1000, kHelper = 0x2000, kOffload = 0x4000;
  constexpr uint8_t kTcp = 6, kUdp = 17, kFin = 0x01, kRst = 0x04;
  if (!meta.ct_valid || pkt.network_off == kAbsent) return false;
  // nft_flow_offload_skip: IPv4 options.
  if (pkt.nfproto == kNfProtoIpv4 &&
      (pkt.network_off >= pkt.len || (pkt.data[pkt.network_off] & 0x0f) > 5)) {
    return false;
  }
  if (pkt.l4proto == kTcp) {
    if (pkt.transport_off == kAbsent || pkt.transport_off + 14 > pkt.len) return false;
    if (pkt.data[pkt.transport_off + 13] & (kFin | kRst)) return false;
    if (!(meta.ct_state & kCtStateEstablished) || !(meta.ct_status & kAssured)) return false;
  } else if (pkt.l4proto != kUdp) {
    return false;  // GRE (version 0, no NAT) is not modelled: not offloaded
  }
  if (meta.ct_status & (kHelper | kSeqAdjust | kNatClash)) return false;
  return (meta.ct_status & kConfirmed) && !(meta.ct_status & kOffload);
}

std::string_view SetIndex::KeyOf::operator()(int element) const {
  return {reinterpret_cast<const char*>(set->elements[element].key.data()), set->key_len};
}

std::string_view SetIndex::From(int element) const { return KeyOf{&set_}(element); }

std::string_view SetIndex::To(int element) const {
  const SetElement& e = set_.elements[element];
  const Bytes& hi = e.key_end ? *e.key_end : e.key;
  return {reinterpret_cast<const char*>(hi.data()), set_.key_len};
}

SetIndex::SetIndex(const Set& set)
    : set_(set), exact_(0, KeyHash{KeyOf{&set}}, KeyEq{KeyOf{&set}}) {
  if (!set.interval()) {
    kind_ = Kind::kExact;
    exact_.reserve(set.elements.size());
    for (size_t i = 0; i < set.elements.size(); ++i) {
      if (set.elements[i].key.size() < set.key_len) continue;  // never matches
      exact_.insert(static_cast<int>(i));  // the first of equal keys stays
    }
    return;
  }
  if (set.field_lens.size() > 1) {
    kind_ = Kind::kFieldwise;
    return;
  }
  for (size_t i = 0; i < set.elements.size(); ++i) {
    const SetElement& e = set.elements[i];
    const Bytes& hi = e.key_end ? *e.key_end : e.key;
    if (e.key.size() < set.key_len || hi.size() < set.key_len) continue;
    intervals_.push_back(static_cast<int>(i));
  }
  std::stable_sort(intervals_.begin(), intervals_.end(),
                   [&](int a, int b) { return From(a) < From(b); });
  kind_ = Kind::kSorted;
  for (size_t i = 1; i < intervals_.size(); ++i) {
    if (From(intervals_[i]) <= To(intervals_[i - 1])) kind_ = Kind::kScan;
  }
  // kScan goes in element order, so the first element wins.
  if (kind_ == Kind::kScan) std::sort(intervals_.begin(), intervals_.end());
}

bool ConcatElementHolds(const Set& set, const SetElement& el, const uint8_t* key) {
  const Bytes& hi = el.key_end ? *el.key_end : el.key;
  uint32_t off = 0;
  for (uint32_t field_len : set.field_lens) {
    if (!InRange(key, el.key, hi, off, field_len)) return false;
    off += Pad4(field_len);
  }
  return true;
}

int SetIndex::Find(const uint8_t* key) const {
  std::string_view k(reinterpret_cast<const char*>(key), set_.key_len);
  switch (kind_) {
    case Kind::kExact: {
      auto it = exact_.find(k);
      return it == exact_.end() ? -1 : *it;
    }
    case Kind::kFieldwise:
      for (size_t i = 0; i < set_.elements.size(); ++i) {
        if (ConcatElementHolds(set_, set_.elements[i], key)) return static_cast<int>(i);
      }
      return -1;
    case Kind::kScan:
      for (int element : intervals_) {
        if (From(element) <= k && k <= To(element)) return element;
      }
      return -1;
    case Kind::kSorted: {
      // Last interval whose start is <= key.
      auto it = std::upper_bound(
          intervals_.begin(), intervals_.end(), k,
          [&](std::string_view v, int element) { return v < From(element); });
      if (it == intervals_.begin()) return -1;
      --it;
      return k <= To(*it) ? *it : -1;
    }
  }
  return -1;
}

bool EvalLookup(const Lookup& e, const Set& set, const SetIndex& index,
                uint8_t* regs, int* element) {
  const uint8_t* key = RegBytes(regs, e.sreg, set.key_len);
  *element = -1;
  if (key == nullptr) return false;
  int found = index.Find(key);
  if ((found >= 0) == e.invert) return false;
  *element = found;
  if (found < 0 || !e.dreg || *e.dreg == kVerdictReg) return true;
  const SetElement& el = set.elements[found];
  uint8_t* dst = RegBytes(regs, *e.dreg, Pad4(set.data_len));
  if (dst == nullptr || el.data.size() < set.data_len) return false;
  StoreBytes(dst, el.data.data(), set.data_len);
  return true;
}

}  // namespace rulejit::ir
