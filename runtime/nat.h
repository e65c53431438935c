// NAT on the offline conntrack: how a flow is bound (nf_nat_setup_info
// and get_unique_tuple) and how its packets are rewritten (nf_nat_packet).
//
//   if (!flow.nat_done[kDst]) BindNat(ct, flow, Manip::kDst, result.nat.get(), site);
//   TranslatePacket(flow, entry.reply, Manip::kDst, bytes, view);
//
// Binding follows Linux 6.18's get_unique_tuple: a source manip keeps the
// original tuple when it is in the range and unused, or reuses the mapping
// of another flow from the same source; the address comes from
// find_best_ips_proto (one choice, or the jhash2 spread over the range, so
// the same client maps to the same address); the port (ICMP: the echo
// identifier) is kept when in range and unused, else searched from an
// offset the kernel draws at random: here `NatSite::random`, an explicit
// input. MASQUERADE takes the output device's address, REDIRECT the input
// device's first address (loopback at output). A prefix mapping (NETMAP,
// nft's `snat ip prefix to`) keeps the host part of the address and takes
// the range's network part; SCTP's CRC32c is
// computed anew when a port changes, as sctp_manip_pkt does.
//
// An ICMP error RELATED to a NATed flow (nf_nat_icmp_reply_translation,
// nf_nat_icmpv6_reply_translation) is not bound or rewritten as its own
// flow: the packet it quotes travelled the other way, so that packet gets
// the other manip with the other direction's tuple (addresses, ports or
// echo id, its IP checksum, its L4 checksum where the quote holds it), the
// ICMP checksum is computed anew, and the outer address is rewritten as the
// flow's own packets are (TranslateIcmpError). GRE keys inside a quote are
// not rewritten.
#ifndef RULEJIT_RUNTIME_NAT_H_
#define RULEJIT_RUNTIME_NAT_H_

#include <cstdint>
#include <vector>

#include "rulejit/host.h"
#include "rulejit/packet.h"
#include "rulejit/types.h"
#include "runtime/conntrack.h"
#include "runtime/flow_table.h"

namespace rulejit::runtime {

// NF_NAT_RANGE_* flags (NatChange::flags).
inline constexpr uint32_t kNatMapIps = 1u << 0;
inline constexpr uint32_t kNatProtoSpecified = 1u << 1;
inline constexpr uint32_t kNatProtoRandom = 1u << 2;
inline constexpr uint32_t kNatPersistent = 1u << 3;
inline constexpr uint32_t kNatProtoRandomFully = 1u << 4;
inline constexpr uint32_t kNatProtoOffset = 1u << 5;
inline constexpr uint32_t kNatNetmap = 1u << 6;

// Where a NAT step runs: what masquerade and redirect take addresses from.
struct NatSite {
  const HostModel* host = nullptr;  // never null
  uint32_t iif = 0;                 // prerouting: redirect's device
  uint32_t oif = 0;                 // postrouting: masquerade's device
  bool local_out = false;           // output hook: redirect to loopback
  uint32_t random = 0;              // the kernel's get_random_u16() draws
};

// kBoundRandomPort: bound, with a port (or echo id) found from the random
// draw: the kernel draws its own, so its port differs.
enum class NatOutcome { kBound, kBoundRandomPort, kDrop };

// Binds `manip` of the unconfirmed `flow` by `change` (null: the null
// binding), marking it done and setting its NAT status bit when the tuple
// changed. kDrop where the kernel drops (masquerade or redirect without
// an address).
NatOutcome BindNat(const FlowTable& ct, Conntrack::Flow& flow, Manip manip,
                   const NatChange* change, const NatSite& site);

// Rewrites a packet of `flow` travelling in direction `reply` at a NAT step
// of `manip` (addresses, ports or echo identifier, and the checksums,
// updated incrementally as the kernel does), when the flow's binding
// changes that part. Returns whether bytes changed.
bool TranslatePacket(const Conntrack::Flow& flow, bool reply, Manip manip,
                     std::vector<uint8_t>& frame, const PacketView& view);

// Rewrites an ICMP or ICMPv6 error RELATED to `flow`, arriving in direction
// `reply`, at a NAT step of `manip` (see the header comment), when the
// flow's binding changes that side. `verify_checksum`: check the ICMP
// checksum first (at prerouting, unless offloaded). False where the kernel
// drops the error: a bad checksum, a message too short to hold the quoted
// IP header, a redirect about a NATed flow or one not yet bound both ways.
bool TranslateIcmpError(const Conntrack::Flow& flow, bool reply, Manip manip,
                        std::vector<uint8_t>& frame, const PacketView& view, bool verify_checksum);

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_NAT_H_
