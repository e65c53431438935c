// A small connection tracker that gives offline packets (pcap files in
// `rulejit eval`, the whole path of runtime/path.h, tests) kernel-like
// `ct state` values and NAT bindings.
//
// One hook (`rulejit eval --hook`):
//   runtime::Conntrack ct;
//   for (each frame) {
//     PacketView v = rulejit::ParseFrame(data, len);
//     PacketMeta meta = ...;
//     ct.Lookup(v, meta);                        // fills meta.ct_*
//     Result r = program->Run(hook, v, meta, &state);
//     meta.ct_mark = r.ct_mark;                  // keep `ct mark set`
//     ct.Commit(v, meta, r.verdict == Verdict::kAccept);
//   }
// The whole path (runtime/path.cc) attaches an entry at the conntrack step
// (In), binds NAT at the NAT steps (NatDone, Bind, Translation) and
// confirms at the end of the path (Confirm).
//
// What it models (nf_conntrack with default sysctls):
// - A flow has two tuples, the original direction's (as its first packet
//   was seen) and the reply direction's (as replies will look: the
//   original reversed, then changed by NAT). A tuple is (IP version,
//   addresses, L4 protocol, ports) or, for ICMP/ICMPv6 echo, the
//   identifier in both ports.
// - The first packet of a flow is NEW; it creates the flow only if it is
//   accepted (Commit/Confirm), as the kernel confirms conntrack entries only
//   when the packet leaves the hooks. Packets in the original direction stay
//   NEW until a reply was seen; replies and later packets are ESTABLISHED.
//   A reply marks the flow seen-reply even if it is then dropped (the kernel
//   does this in nf_conntrack_in, before the filter hooks).
// - TCP: nf_conntrack_tcp_loose=1, so a bare ACK may start a flow (NEW);
//   RST, FIN, SYN+ACK or no flags without a flow are INVALID.
// - ICMP/ICMPv6 errors quoting a known flow are RELATED (reply direction
//   when the quoted packet went in the original direction); errors quoting
//   nothing known are INVALID. ICMP types other than echo request/reply and
//   errors are INVALID (no entry).
// - ct status carries IPS_SEEN_REPLY, IPS_CONFIRMED and the NAT bits; ct
//   mark is kept per flow (Commit/Confirm store meta.ct_mark).
// - NAT (nf_nat_core): a flow's source and destination manips are each
//   bound once, by the first packet that passes that NAT step (a binding,
//   or the null binding when no nat chain bound it); later packets of
//   either direction are rewritten from the other direction's tuple.
// What it does not model: TCP state machine and window tracking (every
// packet of a known flow is valid), timeouts and flow removal, expectations
// and helpers, zones, defragmentation (non-first fragments have no ports
// and are INVALID), IPv6 extension headers inside quoted packets,
// SCTP/DCCP state machines (any packet may create a flow), IPS_ASSURED,
// NAT of the packet quoted inside an ICMP error.
#ifndef RULEJIT_RUNTIME_CONNTRACK_H_
#define RULEJIT_RUNTIME_CONNTRACK_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "rulejit/packet.h"

namespace rulejit::runtime {

// Status bits as the kernel exposes them to `ct status`.
inline constexpr uint32_t kIpsSrcNat = 1u << 4;
inline constexpr uint32_t kIpsDstNat = 1u << 5;
inline constexpr uint32_t kIpsSeenReply = 1u << 1;
inline constexpr uint32_t kIpsConfirmed = 1u << 3;
inline constexpr uint32_t kIpsSrcNatDone = 1u << 7;
inline constexpr uint32_t kIpsDstNatDone = 1u << 8;

// The two NAT manips (NF_NAT_MANIP_SRC / _DST).
enum class Manip : uint8_t { kSrc = 0, kDst = 1 };

class Conntrack {
 public:
  // A flow tuple. Public for hashing and for NAT (runtime/nat.h).
  struct Key {
    uint8_t family = 0;  // kNfProtoIpv4 / kNfProtoIpv6
    uint8_t proto = 0;
    uint16_t sport = 0;  // ICMP: the echo identifier in both ports
    uint16_t dport = 0;
    std::array<uint8_t, 16> src{};
    std::array<uint8_t, 16> dst{};

    Key Reversed() const;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.family, k.proto, k.sport, k.dport,
                        k.src, k.dst);
    }
  };

  struct Flow {
    Key tuple[2];  // [0] original direction, [1] reply direction
    bool seen_reply = false;
    uint32_t mark = 0;
    uint32_t nat_status = 0;           // kIpsSrcNat | kIpsDstNat
    bool nat_done[2] = {false, false};  // indexed by Manip

    // `ct status` as the kernel shows it (IPS_* bits of what is modelled).
    uint32_t Status(bool confirmed) const {
      return (confirmed ? kIpsConfirmed : 0u) | (seen_reply ? kIpsSeenReply : 0u) | nat_status |
             (nat_done[0] ? kIpsSrcNatDone : 0u) | (nat_done[1] ? kIpsDstNatDone : 0u);
    }
  };

  // What conntrack attached to one packet (nf_conntrack_in): the handle the
  // path keeps from the conntrack step to confirmation.
  struct Entry {
    enum Kind { kInvalid, kNew, kKnown, kRelated, kUntracked } kind = kInvalid;
    bool reply = false;  // the packet travels in the reply direction
    // kNew: the unconfirmed flow, owned by the packet until Confirm.
    std::optional<Flow> pending;
    // kKnown, kRelated: the confirmed flow's index.
    uint32_t flow = 0;
  };

  // One hook: sets meta.ct_valid, ct_state, ct_dir, ct_status and ct_mark
  // for `pkt`.
  void Lookup(const PacketView& pkt, PacketMeta& meta);
  // Called after the verdict: confirms a new flow when `accepted`, and
  // stores meta.ct_mark on the flow.
  void Commit(const PacketView& pkt, const PacketMeta& meta, bool accepted);

  // The whole path. In: the conntrack step (marks a reply's flow
  // seen-reply) with meta.ct_* filled as the chains after it see them.
  Entry In(const PacketView& pkt, PacketMeta& meta);
  // The flow an entry refers to (null for invalid and untracked).
  Flow* FlowOf(Entry& entry);
  // Whether the entry's reply tuple `candidate` is taken by another flow
  // (nf_nat_used_tuple).
  bool ReplyTupleTaken(const Key& candidate) const;
  // Confirmation at the end of the path: an accepted new flow joins the
  // table (both tuples; the entry then refers to it, kKnown); every flow
  // keeps meta.ct_mark.
  void Confirm(Entry& entry, const PacketMeta& meta, bool accepted);

  size_t flows() const { return flows_.size(); }
  const Flow& flow(size_t index) const { return flows_[index]; }

 private:
  Entry Attach(const PacketView& pkt);
  // The flow and direction of a tuple, if some confirmed flow has it.
  bool Find(const Key& key, uint32_t* flow, bool* reply) const;
  void Insert(const Flow& flow);

  std::vector<Flow> flows_;
  // tuple -> flow index << 1 | direction
  absl::flat_hash_map<Key, uint32_t> tuples_;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_CONNTRACK_H_
