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
// Not modelled: IP options echoed in the ICMP reply (ip_options_echo; the
// reply carries none), the kernel's ICMP rate limits (icmp_ratelimit,
// icmp_msgs_per_sec), the id the kernel picks for ICMP (ip_select_ident:
// 0 here) and the IPv6 flow label it hashes (auto_flowlabels: 0 here).
#ifndef RULEJIT_RUNTIME_REJECT_H_
#define RULEJIT_RUNTIME_REJECT_H_

#include <cstdint>
#include <vector>

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

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_REJECT_H_
