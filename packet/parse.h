// Frame parsing: raw bytes -> PacketView (rulejit/packet.h). The bottom
// layer: ir/, the compiler, the analyses and the runtime all parse frames
// through it.
//
// Ethernet II with any number of 802.1Q / 802.1ad tags (the network header
// starts after the last tag), IPv4 (IHL; fragments: the transport header is
// set only for the first fragment, as the kernel does), IPv6 with the
// extension-header walk (hop-by-hop, routing, fragment, destination options,
// AH) to the transport header, TCP/UDP/UDPLITE/ICMP/ICMPv6/SCTP. Truncated or
// malformed headers leave the later offsets kAbsent; parsing never reads past
// `len`.
#ifndef RULEJIT_PACKET_PARSE_H_
#define RULEJIT_PACKET_PARSE_H_

#include <cstdint>

#include "rulejit/packet.h"

namespace rulejit::packet {

// Parses an Ethernet frame.
PacketView ParseEthernet(const uint8_t* data, uint32_t len);
// Parses a frame that starts at the IP header (no link header), e.g. the
// output hook or a raw-IP pcap.
PacketView ParseIp(const uint8_t* data, uint32_t len);

}  // namespace rulejit::packet

#endif  // RULEJIT_PACKET_PARSE_H_
