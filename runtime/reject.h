// The reply a reject statement sends (nft `reject`, iptables REJECT), built
// as Linux 6.18's nf_reject does, as an Ethernet frame for `rulejit run` to
// send back out of the interface the offending frame came in on.
//
//   std::vector<uint8_t> reply;
//   if (r.rejected && BuildRejectReply(frame, len, r.reject_type, r.reject_code,
//                                      RejectFlavor::kIpStack, {}, &reply)) {
//     port_in.Send(reply.data(), reply.size());
//   }
//
// The reply swaps the frame's MACs, as nf_send_reset does for bridged
// traffic (br_netfilter: the RST leaves by the physical input device with
// the original destination's MAC as its source). Its addresses are the
// offending packet's, swapped: for a bump in the wire that is what the
// destination host itself would answer (the kernel's reply from a local
// INPUT-chain REJECT).
//
// Two flavors, as the kernel has two builders:
//   kIpStack (ip, ip6, inet tables: nf_send_reset[6], nf_send_unreach[6] ->
//     icmp_send / icmp6_send): TCP RST with TTL 64, id 0, DF, TOS 0; ICMP
//     with TOS (tos & 0x1e) | 0xc0, no DF, TTL 64, the original packet
//     quoted up to 576 bytes in all (548 quoted); ICMPv6 with traffic
//     class 0, hop limit 64, quoted up to the 1280-byte minimum MTU (1232).
//   kNetdev (netdev tables: nf_reject_skb_v4_unreach and friends): ICMP with
//     TOS 0, id 0, DF, TTL 64, 536 bytes quoted; ICMPv6 1220; counted from
//     the frame's end (Ethernet padding included, as skb->len is there).
// Replies the kernel does not send are not built: to a non-first fragment,
// to a bad checksum (a partial one, PacketMeta::csum_partial, counts as
// good: CHECKSUM_PARTIAL), to an RST, an ICMP to an ICMP error (or an
// unknown type), ICMPv6 to an ICMPv6 error, to a broadcast or multicast
// destination (and, for ICMP, an Ethernet broadcast/multicast frame:
// pkt_type other than host), to a multicast or unspecified source.
// The kernel's ICMP rate limits (icmp_send, icmp6_send; not the RST, not
// the netdev flavor) are IcmpRateLimit's, which the caller asks.
// The reply's link header is plain Ethernet: a VLAN-tagged frame gets an
// untagged reply. Not modelled: IP options echoed in the ICMP reply (ip_options_echo; the
// reply carries none), the id the kernel picks for ICMP (ip_select_ident:
// 0 here) and the IPv6 flow label it hashes (auto_flowlabels: 0 here).
#ifndef RULEJIT_RUNTIME_REJECT_H_
#define RULEJIT_RUNTIME_REJECT_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "rulejit/types.h"

namespace rulejit::runtime {

enum class RejectFlavor : uint8_t {
  kIpStack,  // a reject in an ip, ip6 or inet table (and iptables REJECT)
  kNetdev,   // a reject in a netdev table
};

struct RejectOptions {
  uint8_t ttl = 64;        // net.ipv4.ip_default_ttl
  uint8_t hop_limit = 64;  // net.ipv6.conf.all.hop_limit
  bool csum_partial = false;  // the frame's L4 checksum is partial (offload)
};

// The ICMP (ICMPv6 for an IPv6 packet) destination-unreachable code a
// reject of `type`/`code` sends: `code` itself for kIcmpUnreach, the
// icmpx mapping (nft_reject_icmp_code, nft_reject_icmpv6_code) for
// kIcmpxUnreach. Meaningless for kTcpReset.
uint8_t RejectIcmpCode(RejectType type, uint8_t code, bool ipv6);

// Builds into `reply` the frame the kernel sends for a reject of
// `type`/`code` of the Ethernet frame `frame`; false (and `reply` empty)
// when the kernel sends none.
bool BuildRejectReply(const uint8_t* frame, uint32_t len, RejectType type, uint8_t code,
                      RejectFlavor flavor, const RejectOptions& options,
                      std::vector<uint8_t>* reply);

// Whether the kernel lets an ICMP error of a reject (kIpStack flavor, not
// a TCP reset) leave: its per-destination limit (inet_peer_xrlim_allow:
// tokens of one interval each, at most 6 saved, a new destination starting
// full; the interval net.ipv4.icmp_ratelimit, 1 s, and for ICMPv6
// net.ipv6.icmp.ratelimit, 1 s, shifted right by (128 - prefix) / 32 for
// the route to the destination: 250 ms for a /64), then the host-wide
// budget (icmp_global_allow: net.ipv4.icmp_msgs_per_sec 1000, burst 50;
// the kernel takes 0 to 2 credits at random per message, here 1). One per
// worker: with several queues each has its own budget. Remembers at most
// kMaxPeers destinations (then starts afresh, as if they had expired).
class IcmpRateLimit {
 public:
  static constexpr size_t kMaxPeers = 4096;
  struct Options {
    uint64_t v4_interval_ns = 1'000'000'000;
    uint64_t v6_interval_ns = 250'000'000;  // a /64 route
    uint32_t per_sec = 1000;
    uint32_t burst = 50;
  };
  IcmpRateLimit() : IcmpRateLimit(Options{}) {}
  explicit IcmpRateLimit(const Options& options) : options_(options) {}

  // For an ICMP error to `reply`'s destination (an Ethernet frame as
  // BuildRejectReply builds it) at `now_ns`; takes its tokens when true.
  bool Allow(const std::vector<uint8_t>& reply, uint64_t now_ns);

 private:
  struct Peer {
    uint64_t tokens_ns;
    uint64_t last_ns;
  };
  Options options_;
  absl::flat_hash_map<std::array<uint8_t, 16>, Peer> peers_;
  int64_t credit_ = -1;  // global credit; -1: not started (full)
  uint64_t stamp_ns_ = 0;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_REJECT_H_
