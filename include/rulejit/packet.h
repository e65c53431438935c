// A packet as every tier reads it: the parsed view of its bytes
// (PacketView) and what is not in its bytes (PacketMeta). Public value
// types with no dependencies, so they sit below everything: packet/parse.h
// fills a PacketView from a raw frame, ir/ and the backends read it,
// embedders fill PacketMeta.
// Offsets are from `data`; a header that is absent
// has offset kAbsent and any load from it is "no match" (NFT_BREAK), as in
// the kernel. A load is allowed only when [off, off+len) lies within `len`.
#ifndef RULEJIT_PACKET_H_
#define RULEJIT_PACKET_H_

#include <cstdint>

namespace rulejit {

inline constexpr uint32_t kAbsent = 0xffffffffu;

// NFPROTO_* values as meta nfproto reports them.
inline constexpr uint8_t kNfProtoIpv4 = 2;
inline constexpr uint8_t kNfProtoIpv6 = 10;

// PACKET_* values for meta pkttype.
inline constexpr uint8_t kPktHost = 0;
inline constexpr uint8_t kPktBroadcast = 1;
inline constexpr uint8_t kPktMulticast = 2;
inline constexpr uint8_t kPktOtherHost = 3;

// A conntrack zone (struct nf_conntrack_zone): connections in different
// zones never meet, even with equal tuples. The id applies to the tuples
// of the directions in `dirs` (NF_CT_ZONE_DIR_ORIG/REPL); the other
// direction's tuples are in zone 0. The default zone is id 0.
inline constexpr uint8_t kCtZoneOriginal = 1;
inline constexpr uint8_t kCtZoneReply = 2;
struct CtZone {
  uint16_t id = 0;
  uint8_t dirs = kCtZoneOriginal | kCtZoneReply;
  // The zone id of one direction's tuples (nf_ct_zone_id); `reply` picks
  // the reply direction.
  uint16_t IdOf(bool reply) const {
    return (dirs & (reply ? kCtZoneReply : kCtZoneOriginal)) != 0 ? id : 0;
  }
  bool operator==(const CtZone&) const = default;
};

// One direction's tuple of a conntrack entry as `ct original|reply saddr,
// daddr, protocol, proto-src, proto-dst` read it (nf_conntrack_tuple):
// addresses (IPv4 in the first 4 bytes) and the L4 words as the kernel
// stores them, in network order: ports; for ICMP and ICMPv6 the echo
// identifier as proto_src and type then code as proto_dst; GRE keys.
struct CtTuple {
  uint8_t family = 0;  // kNfProtoIpv4 / kNfProtoIpv6
  uint8_t proto = 0;
  uint8_t src[16] = {};
  uint8_t dst[16] = {};
  uint8_t proto_src[2] = {};
  uint8_t proto_dst[2] = {};
};

struct PacketView {
  const uint8_t* data = nullptr;  // the frame (starts at the link header if any)
  uint32_t len = 0;               // bytes readable from data

  uint32_t link_off = kAbsent;       // Ethernet header (absent at output hooks)
  uint32_t network_off = kAbsent;    // IPv4/IPv6 header
  uint32_t transport_off = kAbsent;  // L4 header; absent for non-first fragments
  uint32_t inner_off = kAbsent;      // L4 payload (after the L4 header)
  // The kernel's pkt->thoff on non-first fragments, where the fast-path
  // payload loads still read (the IR's PayloadSlot): IPv4, the fragment's
  // data after the IP header; IPv6, 0 from skb->data, i.e. the network
  // header (ipv6_find_hdr leaves the offset untouched; skb->data, so the
  // link header at netdev egress: the IR's SlotOffset uses skb_off then). kAbsent
  // when meta l4proto is undefined. Unused for other packets (transport_off
  // rules).
  uint32_t l4_off = kAbsent;
  // Where the kernel's skb->data points, which `meta length` and the byte
  // counters count from (the IR's SkbLen). kAbsent: the network header, as at
  // every IP hook and at netdev ingress (eth_type_trans pulled the link
  // header). At netdev egress the link header is already built and skb->data
  // points at it: the caller sets link_off there (tools/eval.cc; verified on
  // Linux 6.18 by KernelDiff.MetaLengthAtNetdevHooks).
  uint32_t skb_off = kAbsent;
  // ip6tables-legacy's view of an IPv6 packet (ip6_packet_match:
  // ipv6_find_hdr(skb, &protoff, -1, &fragoff, NULL), which walks over AH
  // where nft's l4proto stops at it). ip6t_proto is the `-p` protocol,
  // ip6t_proto_valid false when the walk fails (the kernel then drops the
  // packet at the first rule with `-p`: hotdrop, not modelled, such a rule
  // just does not match). ip6t_off is protoff, the header its tcp, udp,
  // icmp6 and multiport matches read, kAbsent also on non-first fragments
  // (those matches refuse par->fragoff != 0). kAbsent / false for IPv4.
  uint32_t ip6t_off = kAbsent;
  uint8_t ip6t_proto = 0;
  bool ip6t_proto_valid = false;

  uint16_t protocol = 0;   // ethertype of the network header, host order
  uint8_t nfproto = 0;     // kNfProtoIpv4 / kNfProtoIpv6 / 0
  uint8_t l4proto = 0;     // IPPROTO_* of the transport header
  bool l4proto_valid = false;  // meta l4proto is defined (IPv4 always, IPv6 after walk)
  uint16_t fragoff = 0;    // fragment offset in 8-byte units (0 = first)
  bool is_fragment = false;
};

// Where an IP packet ends in its frame as its header declares it (skb->len
// at the IP hooks: ip_rcv trims a link layer's padding): the IPv4 total
// length, or 40 plus the IPv6 payload length, from `network_off`. It may
// lie past `len` when the frame is cut short; `len` when the header's
// length field can't be read. `data`: the frame bytes `len` long.
inline uint64_t IpDeclaredEnd(const uint8_t* data, uint64_t len, uint32_t network_off,
                              uint8_t nfproto) {
  if (network_off == kAbsent || uint64_t{network_off} + 6 > len) return len;
  const uint8_t* ip = data + network_off;
  const uint32_t declared = nfproto == kNfProtoIpv4 ? (ip[2] << 8 | ip[3])
                                                     : 40u + (ip[4] << 8 | ip[5]);
  return uint64_t{network_off} + declared;
}
inline uint64_t IpDeclaredEnd(const PacketView& v) {
  return IpDeclaredEnd(v.data, v.len, v.network_off, v.nfproto);
}

// The end of the IP packet within the frame: IpDeclaredEnd, never past len.
inline uint32_t IpPacketEnd(const PacketView& v) {
  const uint64_t end = IpDeclaredEnd(v);
  return end < v.len ? static_cast<uint32_t>(end) : v.len;
}

// Everything about a packet that is not in its bytes: interfaces, marks,
// conntrack. Filled by the caller (eval command, runtime, tests).
struct PacketMeta {
  char iifname[16] = {};  // NUL-padded, as the kernel's IFNAMSIZ buffers
  char oifname[16] = {};
  uint32_t iif = 0;        // ifindex, 0 = none
  uint32_t oif = 0;
  uint16_t iiftype = 1;    // ARPHRD_ETHER
  uint16_t oiftype = 1;
  // The devices' groups (`ip link set DEV group N`; 0, "default", unless
  // set): meta iifgroup/oifgroup and iptables' devgroup match.
  uint32_t iifgroup = 0;
  uint32_t oifgroup = 0;
  uint32_t mark = 0;
  uint32_t priority = 0;
  uint8_t pkttype = kPktHost;
  // Whether the hook has an input/output device. Without one, as in the
  // kernel, meta iif/oif load 0, iifname/oifname load "", and only
  // iiftype/oiftype fail to match.
  bool has_iif = false;
  bool has_oif = false;
  // The local socket of a locally generated packet (output, postrouting),
  // with the file credentials meta skuid / skgid and iptables' owner match
  // read. Without one (forwarded and incoming packets), those loads fail.
  bool has_socket = false;
  uint32_t sk_uid = 0;
  uint32_t sk_gid = 0;
  // The transport checksum is left for the NIC to finish (the kernel's
  // CHECKSUM_PARTIAL: the field holds only the pseudo-header sum), as in
  // packets a local socket sends with checksum offload. iptables'
  // CHECKSUM --checksum-fill completes such checksums; captured frames
  // have complete ones (false).
  bool csum_partial = false;

  // Conntrack (the IR's kCtState* bits). ct_state = 0 means untracked-unknown:
  // ct loads then fail as in the kernel for packets without a conntrack entry.
  uint32_t ct_state = 0;   // one of kCtState* bits
  uint32_t ct_status = 0;
  uint32_t ct_mark = 0;
  uint8_t ct_dir = 0;      // 0 original, 1 reply
  bool ct_valid = false;   // a conntrack entry exists
  // The entry's zone (`ct zone`); before the conntrack step, the zone a
  // `ct zone set` / `CT --zone` of an earlier chain chose for it (the
  // kernel's template), which conntrack then looks the packet up in.
  CtZone ct_zone;
  // Milliseconds until the entry times out (`ct expiration`, and
  // iptables' --ctexpire in whole seconds).
  uint32_t ct_expiration_ms = 0;
  // The entry's tuples, [0] the original direction's, [1] the reply's
  // (after NAT bound it), and its counters (nf_conn_acct: packets and IP
  // bytes per direction, this packet's included when conntrack counted it).
  // A ruleset that reads the counters turns accounting on in the kernel
  // (nft's ct packets/bytes/avgpkt, iptables' connbytes), so every entry
  // has them.
  CtTuple ct_tuple[2];
  uint64_t ct_packets[2] = {};
  uint64_t ct_bytes[2] = {};

  // The kernel's get_random_u32() for this packet, which `numgen random`
  // scales to its modulus: an input, so that a run is reproducible (vary it
  // to see every choice).
  uint32_t random = 0;
  // What nft's hash expression reads besides registers (ir::Hash): the
  // packet's symmetric flow hash (`symhash`: the kernel's
  // __skb_get_hash_symmetric, keyed with a secret it draws at boot), and
  // the seed of a `jhash` written without one (the kernel draws it when it
  // loads the rule). Inputs like `random`; `rulejit run` draws them.
  uint32_t symhash = 0;
  uint32_t jhash_seed = 0;
  // The CPU the kernel processes the packet on (smp_processor_id): what
  // `meta cpu` and iptables' cpu match read. An input like `random`;
  // without one (has_cpu false) those fail to match, and callers refuse a
  // ruleset that reads it when they have none to give. `run` gives each
  // worker's own CPU.
  bool has_cpu = false;
  uint32_t cpu = 0;

  // The wall clock (CLOCK_REALTIME, ns since the epoch) when the packet is
  // evaluated: what `meta time`, `meta day`, `meta hour` and iptables' time
  // match read (the kernel's ktime_get_real_ns). An input like `random`, so
  // that a run is reproducible. Without one (has_clock false) those loads
  // fail to match: callers refuse a ruleset that reads the clock when they
  // have none to give (tools/clock_option.h), never guess one.
  bool has_clock = false;
  uint64_t clock_ns = 0;
  // The kernel's timezone (sys_tz.tz_minuteswest: minutes WEST of UTC, as
  // settimeofday(2) sets it), which `meta day` and iptables'
  // `-m time --kerneltz` apply to the clock. has_kernel_tz false: not
  // given, and those fail to match as above.
  bool has_kernel_tz = false;
  int32_t kernel_tz_minuteswest = 0;
};

// Which of PacketMeta's random draws a program reads
// (Program::random_inputs): a caller drawing them per packet, as `rulejit
// run` does, need draw only these.
struct RandomInputs {
  bool random = false;      // numgen random, meta random, NAT's port choice
  bool symhash = false;     // symhash
  bool jhash_seed = false;  // a jhash without a seed

  bool any() const { return random || symhash || jhash_seed; }
};

// Parses a frame that starts at its Ethernet header (VLAN tags, IPv4,
// IPv6 with its extension headers, the transport header): the view every
// tier reads. Headers that are absent or cut short are kAbsent.
PacketView ParseFrame(const uint8_t* data, uint32_t len);

// The transport checksum of `pkt` verified as the kernel's nf_checksum
// does at prerouting: TCP, UDP (a zero IPv4 or IPv6 UDP checksum means
// none), UDP-Lite (its coverage), ICMP and ICMPv6; and SCTP's CRC32c as
// conntrack's sctp_error checks it (SctpChecksum). True for other
// protocols, fragments and packets without a transport header; false when
// the segment the IP header declares is cut short. `pseudo_protocol`, when
// not 0, replaces the protocol in the pseudo-header: conntrack verifies
// UDP-Lite as if it were UDP (nf_checksum_partial is called with
// IPPROTO_UDP), so it calls correct UDP-Lite checksums wrong.
bool TransportChecksumValid(const PacketView& pkt, uint8_t pseudo_protocol = 0);

// Whether a TCP or UDP packet's checksum field holds only the folded
// pseudo-header sum, as a sender with checksum offload leaves it
// (CHECKSUM_PARTIAL: the NIC, or the kernel on forwarding, completes it).
// Frames taken off a veth or virtio device by AF_XDP carry no ip_summed,
// so this is how `rulejit run` tells them from corrupt ones: a partial
// checksum does not verify, and its field is exactly that sum.
bool ChecksumIsPartial(const PacketView& pkt);

// The CRC32c of the SCTP packet `sctp` (common header and chunks, `len`
// bytes) with its checksum field taken as zero (RFC 4960 appendix B,
// sctp_compute_cksum), as the packet stores it: the low byte first, at
// offset 8. 0 when `len` is below the 12-byte common header.
uint32_t SctpChecksum(const uint8_t* sctp, uint32_t len);

// Completes a partial TCP or UDP checksum (the field holds only the
// pseudo-header sum, PacketMeta::csum_partial) in `data`, a writable copy
// of pkt.data with the same offsets: the sum over the pseudo-header and
// the whole segment, 0 stored as 0xffff (skb_checksum_help). Other
// protocols and fragments: nothing.
void CompletePartialChecksum(const PacketView& pkt, uint8_t* data);

}  // namespace rulejit

#endif  // RULEJIT_PACKET_H_
