// ICMP and ICMPv6 as nf_conntrack classifies them (Linux 6.18,
// nf_conntrack_proto_icmp.c and nf_conntrack_proto_icmpv6.c): which
// messages are errors about another flow, which are never tracked, which
// may start a flow, and how a tuple's type inverts (a request's reply).
#ifndef RULEJIT_RUNTIME_CONNTRACK_ICMP_H_
#define RULEJIT_RUNTIME_CONNTRACK_ICMP_H_

#include <cstdint>

#include "rulejit/packet.h"

namespace rulejit::runtime {

// The type a reply tuple holds for `type` (invmap): echo <-> echo reply,
// timestamp, information and address-mask pairs (IPv4), node information
// query <-> reply (IPv6). False when the type has no reply.
bool InvertIcmpType(bool v6, uint8_t type, uint8_t* inverted);

// Whether a message of `type` may create a flow (valid_new): the requests.
bool IcmpMayStart(bool v6, uint8_t type);

// What the error step (nf_conntrack_icmpv4_error, _icmpv6_error) makes of
// a message before the ordinary lookup.
struct IcmpClass {
  enum Kind {
    kInvalid,    // short, bad checksum, unknown type: no conntrack entry
    kUntracked,  // ICMPv6 neighbour/router discovery and MLD
    kError,      // an error about the packet quoted at `quoted_off`
    kQuery,      // neither: tracked by its own tuple (id, type, code)
  } kind = kInvalid;
  uint32_t quoted_off = 0;  // kError: the quoted IP header, from pkt.data
};
// `verify_checksum`: conntrack runs at prerouting with nf_conntrack_checksum
// on, and the checksum is not left to offload.
IcmpClass ClassifyIcmp(const PacketView& pkt, bool verify_checksum);

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_CONNTRACK_ICMP_H_
