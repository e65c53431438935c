// Kernel semantics of the expressions that every tier shares out of line:
// meta and ct loads, byte order, shifts, ordered compares, ranges, limits
// and set lookups. The reference interpreter and the JIT helpers both call
// these, so the meaning of each is written down exactly once.
//
// Registers are the VM's 64-byte register file; `word` arguments are 32-bit
// word indexes (ir::RegWord). A `false` return is NFT_BREAK (no match).
#ifndef RULEJIT_IR_EXPR_EVAL_H_
#define RULEJIT_IR_EXPR_EVAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::ir {

// NFPROTO_NETDEV: what meta nfproto reports in netdev-family chains.
inline constexpr uint8_t kNfProtoNetdev = 5;

// Per-packet values that statements can change while the ruleset runs.
struct MutableMeta {
  uint32_t mark = 0;
  uint32_t priority = 0;
  uint32_t ct_mark = 0;
  CtZone ct_zone;  // `ct zone set` before conntrack: the zone it looks up in
  // The socket a tproxy assigned to the packet (skb->sk): an index into
  // HostModel::sockets, -1 none. Later socket expressions read it.
  int32_t tproxy_socket = -1;

  static MutableMeta Of(const PacketMeta& meta) {
    return {meta.mark, meta.priority, meta.ct_mark, meta.ct_zone, -1};
  }
};

// skb->len as the kernel sees it at the hook: from skb->data on, i.e. the
// network header, or PacketView::skb_off (the link header at netdev egress).
uint32_t SkbLen(const PacketView& pkt);

// nft_data_copy / payload load: zero the last word the value touches, then
// copy (the kernel's `dest[len / 4] = 0` when len % 4 != 0).
void StoreBytes(uint8_t* dst, const uint8_t* src, uint32_t len);

// The register bytes of `reg` when `len` bytes fit in the file, else null.
uint8_t* RegBytes(uint8_t* regs, Reg reg, uint32_t len);

// Which header offset a payload load reads from. The kernel chooses the
// ops of a payload expression once, when the rule is loaded
// (nft_payload_select_ops): loads of 1, 2 or 4 bytes, at an offset that is
// a multiple of their length, from the network or transport header take the
// fast path (nft_payload_fast_eval, inlined in nf_tables_core.c); the rest
// take the generic one (nft_payload_eval).
// KERNEL: the fast path does not check the fragment offset (verified on
// Linux 6.18: tests/kernel/kernel_diff_test.cc, NftTransportMatchOnFragment).
// On a non-first fragment a fast transport load reads the fragment's data
// where a transport header would start (pkt->thoff, PacketView::l4_off);
// the generic path refuses every transport and inner load there.
// Every tier (interpreter, JIT, classifier, LLVM) decides with this one
// function, statically, from the load's (base, offset, len).
enum class HeaderSlot : uint8_t {
  kLink,           // generic path, link header
  kNetwork,        // either path: the network header
  kTransport,      // generic path: absent on non-first fragments
  kInner,          // generic path: absent on non-first fragments
  kTransportFast,  // fast path: pkt->thoff, also on non-first fragments
  kIp6tTransport,  // ip6tables' protoff (PayloadBase::kIp6tTransport)
};
inline constexpr int kHeaderSlots = 6;

constexpr HeaderSlot PayloadSlot(PayloadBase base, uint32_t offset, uint32_t len) {
  const bool fast = (len == 1 || len == 2 || len == 4) && offset % len == 0;
  switch (base) {
    case PayloadBase::kLink: return HeaderSlot::kLink;
    case PayloadBase::kNetwork: return HeaderSlot::kNetwork;
    case PayloadBase::kTransport:
      return fast ? HeaderSlot::kTransportFast : HeaderSlot::kTransport;
    case PayloadBase::kInner: return HeaderSlot::kInner;
    case PayloadBase::kIp6tTransport: return HeaderSlot::kIp6tTransport;
  }
  return HeaderSlot::kInner;
}

// The fast path's transport offset on a non-first fragment (expr_eval.cc).
uint32_t LaterFragmentThoff(const PacketView& pkt);

// Offset in `pkt` of a slot's header, or kAbsent (then every load from it
// is NFT_BREAK). Inline: every tier asks it for every packet.
inline uint32_t SlotOffset(const PacketView& pkt, HeaderSlot slot) {
  const bool later_fragment = pkt.fragoff != 0;
  switch (slot) {
    case HeaderSlot::kLink: return pkt.link_off;
    case HeaderSlot::kNetwork: return pkt.network_off;
    case HeaderSlot::kTransport: return later_fragment ? kAbsent : pkt.transport_off;
    case HeaderSlot::kInner: return later_fragment ? kAbsent : pkt.inner_off;
    case HeaderSlot::kTransportFast:
      return later_fragment ? LaterFragmentThoff(pkt) : pkt.transport_off;
    // KERNEL: ip6tables' matches refuse non-first fragments (ip6t_off is
    // kAbsent there), whatever the load's size.
    case HeaderSlot::kIp6tTransport: return pkt.ip6t_off;
  }
  return kAbsent;
}

// The header offset a payload load of (base, offset, len) uses in `pkt`.
inline uint32_t PayloadOffset(const PacketView& pkt, PayloadBase base,
                              uint32_t offset, uint32_t len) {
  return SlotOffset(pkt, PayloadSlot(base, offset, len));
}

// [ payload load ] into the register file; false on NFT_BREAK (header
// absent, bytes past the end of the packet, register out of range).
bool EvalPayloadLoad(const PayloadLoad& e, const PacketView& pkt, uint8_t* regs);

// A fused load/mask/compare straight from the packet (no register written).
bool EvalFusedCmp(const FusedCmp& e, const PacketView& pkt);

// [ exthdr load ]: IPv6 extension header (ipv6_find_hdr), TCP option or
// SCTP chunk lookup, as nft_exthdr_{ipv6,tcp,sctp}_eval. False on
// NFT_BREAK; `present` loads never break.
bool EvalExthdr(const Exthdr& e, const PacketView& pkt, uint8_t* regs);

// [ payload write ] as nft_payload_set_eval: stores the register bytes into
// `data` (the caller's writable copy of pkt.data, same offsets) and updates
// the checksums it names. False on NFT_BREAK (header absent, bytes past the
// end).
bool EvalPayloadWrite(const PayloadWrite& e, const PacketView& pkt, uint8_t* data,
                      const uint8_t* regs);

// CHECKSUM --checksum-fill on `data` (the writable copy of pkt.data):
// when the packet's checksum is partial, its TCP or UDP checksum computed
// in full (pseudo-header and segment), 0 stored as 0xffff as
// skb_checksum_help does. Other packets and protocols: nothing.
void EvalChecksumFill(const PacketView& pkt, const PacketMeta& meta, uint8_t* data);

// Register-file operations; each takes the whole 64-byte file and returns
// false on NFT_BREAK (including registers out of range in unverified IR).
bool EvalMetaLoad(const MetaLoad& e, Family family, const PacketView& pkt,
                  const PacketMeta& meta, const MutableMeta& mut,
                  uint8_t* regs);
bool EvalCtLoad(const CtLoad& e, const PacketMeta& meta,
                const MutableMeta& mut, uint8_t* regs);
// meta set / ct set: keys without a model have no effect.
void EvalMetaSet(const MetaSet& e, const uint8_t* regs, MutableMeta& mut);
void EvalCtSet(const CtSet& e, const PacketMeta& meta, const uint8_t* regs,
               MutableMeta& mut);
bool EvalBitwise(const Bitwise& e, uint8_t* regs);
bool EvalByteorder(const Byteorder& e, uint8_t* regs);
bool EvalCmp(const Cmp& e, const uint8_t* regs);
bool EvalRange(const Range& e, const uint8_t* regs);

// Token bucket of one limit expression, as nft_limit keeps it (in ns).
struct LimitBucket {
  bool initialized = false;
  double tokens = 0;
  uint64_t last_ns = 0;
};
// True when the packet is within the limit (the caller applies `over`).
bool WithinLimit(const Limit& e, uint32_t skb_len, uint64_t now_ns,
                 LimitBucket& bucket);

// Consumed bytes of one quota expression (nft_quota keeps them per rule).
struct QuotaCount {
  bool initialized = false;
  uint64_t consumed = 0;
};
// nft_quota_do_eval: adds the packet's length to the consumed bytes, then
// says whether the rule goes on: while consumed <= bytes, or with `over`
// once consumed > bytes.
// KERNEL: nft_overquota compares after adding, with '>' (since Linux 5.5;
// 0 bytes left still lets the last packet through).
bool QuotaPasses(const Quota& e, uint32_t skb_len, QuotaCount& count);

// nft_flow_offload_eval's test: whether `flow add @ft` offloads the
// packet's connection (see ir::FlowOffload). The ct status bits are the
// kernel's IPS_*; a helper shows as IPS_HELPER, TCP's ESTABLISHED state as
// ct state established with IPS_ASSURED (nf_conntrack_tcp_established). The
// route lookup for both directions is assumed to succeed, and no packet
// has an IPsec path.
bool FlowOffloads(const PacketView& pkt, const PacketMeta& meta);

// Whether an interval element of a concatenated set holds `key` (key_len
// bytes): field by field, over each field's real length, as the kernel's
// pipapo sets match (the padding is ignored).
bool ConcatElementHolds(const Set& set, const SetElement& el, const uint8_t* key);

// A set built for lookups: a hash of exact keys (hash sets), intervals
// sorted by start for a binary search (rbtree sets: nf_tables intervals
// never overlap; if they do, every interval is scanned in order), or, for
// intervals over concatenations, a scan matching field by field over each
// field's real length as the kernel's pipapo sets do.
//
// It holds element numbers only, reading keys from the set itself: 4 bytes
// an element (a hash of key copies took 86 MB for a million-element set,
// built once for the interpreter and once for the JIT).
class SetIndex {
 public:
  explicit SetIndex(const Set& set);
  // Index into set.elements of the element holding `key` (key_len bytes),
  // or -1.
  int Find(const uint8_t* key) const;

 private:
  // Hash and equality of element numbers by their keys' first key_len
  // bytes, and of such an element with a key to look up.
  struct KeyOf {
    const Set* set;
    std::string_view operator()(int element) const;
    std::string_view operator()(std::string_view key) const { return key; }
  };
  struct KeyHash {
    using is_transparent = void;
    KeyOf key;
    template <typename K> size_t operator()(const K& k) const {
      return absl::Hash<std::string_view>()(key(k));
    }
  };
  struct KeyEq {
    using is_transparent = void;
    KeyOf key;
    template <typename A, typename B> bool operator()(const A& a, const B& b) const {
      return key(a) == key(b);
    }
  };
  enum class Kind { kExact, kSorted, kScan, kFieldwise };

  std::string_view From(int element) const;  // an interval's first key
  std::string_view To(int element) const;    // its last (inclusive)

  const Set& set_;
  Kind kind_;
  absl::flat_hash_set<int, KeyHash, KeyEq> exact_;
  std::vector<int> intervals_;  // element numbers: by start, or in order (kScan)
};

// lookup: the element the key finds (or -1) through `index`; applies
// inversion; copies map data into dreg. `element` receives the element for
// verdict maps. False on NFT_BREAK.
bool EvalLookup(const Lookup& e, const Set& set, const SetIndex& index,
                uint8_t* regs, int* element);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_EXPR_EVAL_H_
