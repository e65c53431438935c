// The ones'-complement sum the Internet checksums are made of, for the
// layers that rewrite checksums incrementally (ir/ payload writes). Whole
// checksums are verified and completed by rulejit/packet.h's
// TransportChecksumValid and CompletePartialChecksum (checksum.cc).
#ifndef RULEJIT_PACKET_CHECKSUM_H_
#define RULEJIT_PACKET_CHECKSUM_H_

#include <cstdint>

namespace rulejit::packet {

// csum_partial folded to 16 bits: the buffer read as big-endian 16-bit
// words from its first byte (an odd tail is the high byte of a last word).
uint32_t OnesSum(const uint8_t* p, uint32_t len);

}  // namespace rulejit::packet

#endif  // RULEJIT_PACKET_CHECKSUM_H_
