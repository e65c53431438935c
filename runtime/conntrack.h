// Connection tracking as nf_conntrack does it (Linux 6.18, default
// sysctls unless ConntrackOptions says otherwise), for offline packets
// (`rulejit eval`, the whole path of runtime/path.h, tests).
//
//   runtime::Conntrack ct;                      // lives across the packets
//   for (each frame) {
//     ct.set_now_ns(frame_time);                 // packet time: timeouts
//     PacketView v = rulejit::ParseFrame(data, len);
//     Conntrack::Entry e = ct.In(v, meta, /*arriving=*/true);  // fills meta.ct_*
//     Result r = program->Run(hook, v, meta, &state);
//     meta.ct_mark = r.ct_mark;                  // keep `ct mark set`
//     ct.Confirm(e, meta, r.verdict == Verdict::kAccept);
//   }
// The whole path (runtime/path.cc) calls In at the conntrack step, binds
// NAT at the NAT steps (FlowOf, nat.h) and confirms at the end of the path.
//
// What it models (nf_conntrack_core.c's nf_conntrack_in and the protocol
// trackers; each rule cites its kernel function):
// - A flow has two tuples, the original direction's (as its first packet
//   was seen) and the reply direction's (the original inverted, then
//   changed by NAT). A tuple is (IP version, addresses, L4 protocol, ports)
//   and, for ICMP/ICMPv6, (identifier, type, code); the reply tuple holds
//   the reply's type (an echo reply whose code differs from the request's
//   is not the flow's).
// - The first packet creates a flow that joins the table only when the
//   packet is accepted at the end of its path (Confirm). Original-direction
//   packets are NEW until a reply was seen, then ESTABLISHED; replies are
//   ESTABLISHED. A reply marks the flow seen-reply before the filter hooks,
//   even if a rule then drops it.
// - TCP: the state machine and window tracking of nf_conntrack_proto_tcp.c
//   (conntrack_tcp.h): out-of-window and impossible segments are INVALID,
//   a bare ACK may pick a connection up (tcp_loose), a SYN after a close
//   reopens the flow, an RST before any reply ends it.
// - ICMP/ICMPv6 (conntrack_icmp.h): requests start flows (echo, timestamp,
//   information, address mask; ICMPv6 echo and node information); errors
//   quoting a known flow and sent to its endpoint are RELATED; ICMPv6
//   neighbour/router discovery and MLD are UNTRACKED; anything else is
//   INVALID.
// - SCTP: the chunk checks, state machine, verification tags and timeouts
//   of nf_conntrack_proto_sctp.c (conntrack_sctp.h); the CRC32c verified
//   at prerouting; ESTABLISHED makes a flow assured.
// - UDP: length and checksum checks; 30 s until a reply, 120 s for a
//   stream (a reply more than 2 s after the first packet; IPS_ASSURED).
//   UDP-Lite: its checksum verified with UDP's number in the
//   pseudo-header, as udplite_error does (correct ones are INVALID).
//   GRE: keyed by the PPTP call id (version 1), assured after a reply.
// - Checksums are verified where the kernel verifies them: at prerouting
//   (`arriving`), unless the packet's checksum is partial.
// - Timeouts in packet time (set_now_ns): an expired flow is gone, its
//   next packet starts a new one; a sweep frees expired flows' slots.
// - ct status: IPS_SEEN_REPLY, IPS_ASSURED, IPS_CONFIRMED and the NAT
//   bits; ct mark per flow.
// - NAT (nf_nat_core, nat.h): a flow's source and destination manips are
//   each bound once, by the first packet that passes that NAT step.
// - Zones: a packet is looked up in the zone its template gave it
//   (PacketMeta::ct_zone, from `ct zone set` / CT --zone before the
//   conntrack step), per direction as nf_ct_zone_id says; equal tuples in
//   different zones are different flows. `ct zone` reads the flow's.
// - Tuples as `ct original|reply saddr ...` read them, and the counters
//   of `ct packets|bytes|avgpkt` and iptables' connbytes (nf_conn_acct:
//   packets the tracker accepted, as nf_ct_refresh_acct counts them, and
//   their IP lengths; RELATED ICMP errors are not counted).
// - `ct expiration`: the time left after this packet's refresh (0 for an
//   unconfirmed flow, whose timeout the kernel keeps relative).
// - The table's size (ConntrackOptions::max, nf_conntrack_max): a new flow
//   in a full table evicts a flow that is not assured (or has expired)
//   from 8 places at a rotating cursor, where the kernel looks in 8 hash
//   buckets its random seed picks; without one the packet is dropped
//   (Entry::kDropped).
// Not modelled: expectations and helpers (no flow is RELATED but by an
// ICMP error), defragmentation (a non-first fragment is INVALID, a
// first fragment is tracked as if whole), DCCP's state machine (Linux
// 6.16 removed it: DCCP is the generic protocol), a template's own ct
// keys before the conntrack step (there `ct zone` does not match and
// `ct state` reads invalid; the kernel reads the template's zone and
// `new`). (NAT of the packet quoted inside an ICMP error: nat.h.)
#ifndef RULEJIT_RUNTIME_CONNTRACK_H_
#define RULEJIT_RUNTIME_CONNTRACK_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "rulejit/packet.h"
#include "runtime/conntrack_sctp.h"
#include "runtime/conntrack_tcp.h"

namespace rulejit::runtime {

// Status bits as the kernel exposes them to `ct status`.
inline constexpr uint32_t kIpsSeenReply = 1u << 1;
inline constexpr uint32_t kIpsAssured = 1u << 2;
inline constexpr uint32_t kIpsConfirmed = 1u << 3;
inline constexpr uint32_t kIpsSrcNat = 1u << 4;
inline constexpr uint32_t kIpsDstNat = 1u << 5;
inline constexpr uint32_t kIpsSrcNatDone = 1u << 7;
inline constexpr uint32_t kIpsDstNatDone = 1u << 8;

// The net.netfilter.nf_conntrack_* sysctls the tracker reads, with Linux
// 6.18's defaults. Timeouts in seconds.
struct ConntrackOptions {
  bool checksum = true;                // nf_conntrack_checksum
  bool tcp_loose = true;               // nf_conntrack_tcp_loose
  bool tcp_be_liberal = false;         // nf_conntrack_tcp_be_liberal
  bool tcp_ignore_invalid_rst = false; // nf_conntrack_tcp_ignore_invalid_rst
  uint32_t tcp_max_retrans = 3;        // nf_conntrack_tcp_max_retrans
  // nf_conntrack_tcp_timeout_*, by TcpState (kTcpNone unused).
  std::array<uint32_t, 10> tcp_timeouts = {0,       120, 60,  432000, 120,
                                           60,      30,  120, 10,     120};
  uint32_t tcp_timeout_retrans = 300;
  uint32_t tcp_timeout_unacknowledged = 300;
  uint32_t udp_timeout = 30;           // nf_conntrack_udp_timeout
  uint32_t udp_timeout_stream = 120;   // nf_conntrack_udp_timeout_stream
  uint32_t icmp_timeout = 30;          // nf_conntrack_icmp_timeout
  uint32_t icmpv6_timeout = 30;        // nf_conntrack_icmpv6_timeout
  uint32_t gre_timeout = 30;           // nf_conntrack_gre_timeout
  uint32_t gre_timeout_stream = 180;   // nf_conntrack_gre_timeout_stream
  uint32_t generic_timeout = 600;      // nf_conntrack_generic_timeout
  // nf_conntrack_max: flows the table holds (0: no limit). The kernel's
  // default is its hash size, 262144 on hosts with 4 GiB of memory or more.
  uint32_t max = 262144;
  // nf_conntrack_sctp_timeout_*, by SctpState: [0] is closed's (the
  // kernel's timeouts[0], no sysctl), HEARTBEAT_ACKED has none (0, unused).
  std::array<uint32_t, kSctpMax> sctp_timeouts = {10, 10, 3, 3, 210, 3, 3, 3, 30, 0};
};

// The two NAT manips (NF_NAT_MANIP_SRC / _DST).
enum class Manip : uint8_t { kSrc = 0, kDst = 1 };

class Conntrack {
 public:
  // A flow tuple. Public for hashing and for NAT (runtime/nat.h).
  struct Key {
    uint8_t family = 0;  // kNfProtoIpv4 / kNfProtoIpv6
    uint8_t proto = 0;
    uint16_t sport = 0;  // ICMP: the identifier in both ports
    uint16_t dport = 0;
    uint8_t icmp_type = 0;  // ICMP/ICMPv6 only
    uint8_t icmp_code = 0;
    std::array<uint8_t, 16> src{};
    std::array<uint8_t, 16> dst{};
    // The zone id of this direction's tuple (nf_ct_zone_id): the kernel
    // hashes and compares tuples with it, so equal tuples of different
    // zones are different flows.
    uint16_t zone = 0;

    // The tuple of the other direction (nf_ct_invert_tuple): addresses
    // and ports swapped, an ICMP type replaced by its reply's. Callers
    // invert only tuples that can be (ICMP: Invertible).
    Key Reversed() const;
    bool Invertible() const;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.family, k.proto, k.sport, k.dport, k.icmp_type,
                        k.icmp_code, k.src, k.dst, k.zone);
    }
  };

  struct Flow {
    Key tuple[2];  // [0] original direction, [1] reply direction
    CtZone zone;   // as the packet that created it was given (templates)
    bool seen_reply = false;
    bool assured = false;
    bool alive = true;   // false once killed or expired
    uint32_t mark = 0;
    uint32_t nat_status = 0;            // kIpsSrcNat | kIpsDstNat
    bool nat_done[2] = {false, false};  // indexed by Manip
    uint64_t expires_ns = 0;  // packet time it times out at
    // nf_conn_acct, by direction: the packets conntrack counted
    // (nf_ct_refresh_acct, nf_ct_kill_acct) and their IP lengths.
    uint64_t packets[2] = {0, 0};
    uint64_t bytes[2] = {0, 0};
    uint64_t udp_stream_ns = 0;  // UDP: replies after this make a stream
    TcpTrack tcp;
    SctpTrack sctp;

    // `ct status` as the kernel shows it (IPS_* bits of what is modelled).
    uint32_t Status(bool confirmed) const {
      return (confirmed ? kIpsConfirmed : 0u) | (seen_reply ? kIpsSeenReply : 0u) |
             (assured ? kIpsAssured : 0u) | nat_status | (nat_done[0] ? kIpsSrcNatDone : 0u) |
             (nat_done[1] ? kIpsDstNatDone : 0u);
    }
  };

  // What conntrack attached to one packet (nf_conntrack_in): the handle
  // kept from the conntrack step to confirmation.
  struct Entry {
    // kDropped: the table is full and nothing could be evicted: conntrack
    // drops the packet (nf_conntrack_in's NF_DROP on -ENOMEM).
    enum Kind { kInvalid, kNew, kKnown, kRelated, kUntracked, kDropped } kind = kInvalid;
    bool reply = false;  // the packet travels in the reply direction
    // kNew: the unconfirmed flow, owned by the packet until Confirm.
    std::optional<Flow> pending;
    // kKnown, kRelated: the confirmed flow's index.
    uint32_t flow = 0;
  };

  explicit Conntrack(const ConntrackOptions& options = {}) : options_(options) {}

  // The packet time (ns) of the packets that follow: flows expire by it.
  void set_now_ns(uint64_t now_ns) { now_ns_ = now_ns; }
  uint64_t now_ns() const { return now_ns_; }

  // nf_conntrack_in for `pkt`: finds or starts its flow and sets
  // meta.ct_valid, ct_state, ct_dir, ct_status and ct_mark as the chains
  // after the conntrack step see them. `arriving`: conntrack runs at
  // prerouting (checksums are verified there), not at output.
  Entry In(const PacketView& pkt, PacketMeta& meta, bool arriving);
  // Writes the flow's tuples and counters into meta (ct_tuple,
  // ct_packets, ct_bytes): In does, and a NAT step again once it has bound
  // the reply tuple.
  static void ShowFlow(const Flow& flow, PacketMeta& meta);
  // The flow an entry refers to (null for invalid and untracked).
  Flow* FlowOf(Entry& entry);
  // Whether the entry's reply tuple `candidate` is taken by another live
  // flow (nf_nat_used_tuple).
  bool ReplyTupleTaken(const Key& candidate) const;
  // Confirmation at the end of the path: an accepted new flow joins the
  // table (both tuples; the entry then refers to it, kKnown); every flow
  // keeps meta.ct_mark.
  void Confirm(Entry& entry, const PacketMeta& meta, bool accepted);

  // The table's slots: flows live or dead (check Live); a dead flow's slot
  // is reused by a later one.
  size_t flows() const { return flows_.size(); }
  const Flow& flow(size_t index) const { return flows_[index]; }
  bool Live(size_t index) const;
  // Flows not yet killed (some may have expired unseen).
  size_t live_flows() const;
  // The tuple In looks `pkt` up by, if it looks one up: the packet's own,
  // or for an ICMP error the flow tuple its quoted packet belongs to.
  // (The shared table picks a packet's stripe by it.)
  static bool LookupTuple(const PacketView& pkt, Key* key);
  // Whether a live flow has tuple `key` with either direction's zone id of
  // `zone` (FindInZone's candidates; nothing is reaped).
  bool Tracks(Key key, const CtZone& zone) const;
  // Called with each flow the table kills (expired, evicted, ended), once
  // its tuples have left the index; not by Flush.
  void set_on_kill(std::function<void(const Flow&)> on_kill) { on_kill_ = std::move(on_kill); }

  // Forgets every flow, NAT bindings with them (`conntrack -F`). No Entry
  // of an earlier packet may be used after it.
  void Flush() {
    flows_.clear();
    free_.clear();
    tuples_.clear();
    sweep_at_ = 0;
    evict_at_ = 0;
  }

 private:
  Entry Track(const PacketView& pkt, const PacketMeta& meta, bool arriving);
  Entry Related(const PacketView& pkt, uint32_t quoted_off, const CtZone& zone);
  // The protocol tracker's verdict on a packet of `flow`.
  enum class Tracked { kAccept, kIgnore, kInvalid, kRepeat, kKill };
  Tracked ProtocolPacket(Flow& flow, bool confirmed, bool reply, const PacketView& pkt,
                         bool verify_checksum);
  Tracked TcpPacketOf(Flow& flow, bool confirmed, bool reply, const PacketView& pkt,
                      bool verify_checksum);
  Tracked SctpPacketOf(Flow& flow, bool confirmed, bool reply, const PacketView& pkt,
                       bool verify_checksum);
  Tracked UdpPacketOf(Flow& flow, bool confirmed, const PacketView& pkt, bool verify_checksum);
  static void Count(Flow& flow, bool reply, const PacketView& pkt);
  void Refresh(Flow& flow, uint32_t timeout_s) { flow.expires_ns = now_ns_ + timeout_s * 1000000000ull; }
  // The flow and direction of a tuple, if a live flow has it.
  bool Find(const Key& key, uint32_t* flow, bool* reply);
  // Find for a packet looked up in zone `zone` (its template's): the
  // tuple as hashed with either direction's zone id, the flow's zone
  // equal to the template's in the direction found.
  bool FindInZone(Key key, const CtZone& zone, uint32_t* flow, bool* reply);
  // Room for one more flow under options_.max (__nf_conntrack_alloc's
  // early_drop): false when the table is full and nothing near the
  // eviction cursor may go.
  bool MakeRoom();
  uint32_t Insert(const Flow& flow);  // returns its slot
  void Kill(uint32_t index);
  void SweepSome();
  bool Expired(const Flow& flow) const {
    return static_cast<int64_t>(flow.expires_ns - now_ns_) <= 0;
  }
  bool TupleLive(const Key& key) const;

  ConntrackOptions options_;
  uint64_t now_ns_ = 0;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_;  // slots of killed flows
  uint32_t sweep_at_ = 0;
  uint32_t evict_at_ = 0;
  // tuple -> flow index << 1 | direction
  absl::flat_hash_map<Key, uint32_t> tuples_;
  std::function<void(const Flow&)> on_kill_;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_CONNTRACK_H_
