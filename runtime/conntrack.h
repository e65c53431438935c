// A small connection tracker that gives offline packets (pcap files in
// `rulejit eval`, tests) kernel-like `ct state` values.
//
//   runtime::Conntrack ct;
//   for (each frame) {
//     PacketView v = packet::ParseEthernet(data, len);
//     PacketMeta meta = ...;
//     ct.Lookup(v, meta);                        // fills meta.ct_*
//     Result r = program->Run(hook, v, meta, &state);
//     meta.ct_mark = r.ct_mark;                  // keep `ct mark set`
//     ct.Commit(v, meta, r.verdict == Verdict::kAccept);
//   }
//
// What it models (nf_conntrack with default sysctls):
// - A flow is keyed by (IP version, addresses, L4 protocol, ports) or, for
//   ICMP/ICMPv6 echo, the identifier. The reply direction is the swapped key.
// - The first packet of a flow is NEW; it creates the flow only if it is
//   accepted (Commit), as the kernel confirms conntrack entries only when
//   the packet leaves the hooks. Packets in the original direction stay NEW
//   until a reply was seen; replies and later packets are ESTABLISHED.
//   A reply marks the flow seen-reply even if it is then dropped (the kernel
//   does this in nf_conntrack_in, before the filter hooks).
// - TCP: nf_conntrack_tcp_loose=1, so a bare ACK may start a flow (NEW);
//   RST, FIN, SYN+ACK or no flags without a flow are INVALID.
// - ICMP/ICMPv6 errors quoting a known flow are RELATED (reply direction
//   when the quoted packet went in the original direction); errors quoting
//   nothing known are INVALID. ICMP types other than echo request/reply and
//   errors are INVALID (no entry).
// - ct status carries IPS_SEEN_REPLY and IPS_CONFIRMED; ct mark is kept per
//   flow (Commit stores meta.ct_mark).
// What it does not model: TCP state machine and window tracking (every
// packet of a known flow is valid), timeouts and flow removal, expectations
// and helpers, NAT, zones, defragmentation (non-first fragments have no
// ports and are INVALID), IPv6 extension headers inside quoted packets,
// SCTP/DCCP state machines (any packet may create a flow), IPS_ASSURED.
#ifndef RULEJIT_RUNTIME_CONNTRACK_H_
#define RULEJIT_RUNTIME_CONNTRACK_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "rulejit/packet.h"

namespace rulejit::runtime {

// Status bits as the kernel exposes them to `ct status`.
inline constexpr uint32_t kIpsSeenReply = 1u << 1;
inline constexpr uint32_t kIpsConfirmed = 1u << 3;

class Conntrack {
 public:
  // Sets meta.ct_valid, ct_state, ct_dir, ct_status and ct_mark for `pkt`.
  void Lookup(const PacketView& pkt, PacketMeta& meta);
  // Called after the verdict: confirms a new flow when `accepted`, and
  // stores meta.ct_mark on the flow.
  void Commit(const PacketView& pkt, const PacketMeta& meta,
              bool accepted);

  size_t flows() const { return flows_.size(); }

  // A flow key in the original direction. Public for hashing only.
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

 private:
  struct Flow {
    bool seen_reply = false;
    uint32_t mark = 0;
  };
  // How a packet relates to the table.
  struct Match {
    enum Kind { kInvalid, kNew, kKnown, kRelated } kind = kInvalid;
    Key key;             // kNew/kKnown: the packet's flow key (original dir)
    bool reply = false;  // the packet travels in the reply direction
    Flow* flow = nullptr;
  };
  Match Classify(const PacketView& pkt);
  Flow* Find(const Key& key, bool* reply);

  absl::flat_hash_map<Key, Flow> flows_;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_CONNTRACK_H_
