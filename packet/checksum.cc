// Transport checksums computed in full: the kernel's nf_checksum
// verification (conntrack marks a packet with a wrong checksum INVALID at
// prerouting), SCTP's CRC32c (sctp_compute_cksum, which sctp_error checks
// there), and skb_checksum_help's completion of a partial checksum
// (CHECKSUM --checksum-fill, and forwarding frames a local socket sent
// with offload). Declared in rulejit/packet.h.
#include <algorithm>
#include <array>
#include <cstdint>

#include "packet/checksum.h"

#include "rulejit/packet.h"

namespace rulejit {

uint32_t packet::OnesSum(const uint8_t* p, uint32_t len) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint32_t>(sum);
}

namespace {

using packet::OnesSum;

constexpr uint8_t kIcmp = 1, kTcp = 6, kUdp = 17, kIcmpv6 = 58, kSctp = 132, kUdpLite = 136;

// CRC32c (Castagnoli, RFC 3309): the reflected polynomial, and the table of
// every byte's remainder, made once at compile time.
constexpr uint32_t kCrc32cPoly = 0x82f63b78u;
constexpr std::array<uint32_t, 256> Crc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kCrc32cPoly : crc >> 1;
    table[byte] = crc;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32c = Crc32cTable();

uint32_t Crc32cUpdate(uint32_t crc, const uint8_t* p, uint32_t len) {
  for (uint32_t i = 0; i < len; ++i) crc = kCrc32c[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t Fold(uint64_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint32_t>(sum);
}

// The transport segment of a whole (unfragmented) IP packet: from the
// transport header to where the IP header says the packet ends. False when
// there is none or it is cut short.
struct Segment {
  uint32_t start = 0;
  uint32_t len = 0;
};
bool SegmentOf(const PacketView& pkt, Segment* seg) {
  if (pkt.data == nullptr || pkt.network_off == kAbsent || pkt.transport_off == kAbsent ||
      !pkt.l4proto_valid || pkt.fragoff != 0 || pkt.is_fragment) {
    return false;
  }
  const bool v4 = pkt.nfproto == kNfProtoIpv4;
  if (uint64_t{pkt.network_off} + (v4 ? 20 : 40) > pkt.len) return false;
  const uint64_t end = IpDeclaredEnd(pkt);
  if (end > pkt.len || end < pkt.transport_off) return false;
  seg->start = pkt.transport_off;
  seg->len = static_cast<uint32_t>(end - pkt.transport_off);
  return true;
}

// The pseudo-header's sum: addresses, protocol, transport length.
uint64_t PseudoSum(const PacketView& pkt, const uint8_t* data, uint32_t l4len,
                   uint8_t protocol) {
  const uint8_t* ip = data + pkt.network_off;
  const bool v4 = pkt.nfproto == kNfProtoIpv4;
  uint64_t sum = v4 ? OnesSum(ip + 12, 8) : OnesSum(ip + 8, 32);
  return sum + protocol + (l4len >> 16) + (l4len & 0xffff);
}

// An SCTP packet's checksum is valid when its CRC32c matches (sctp_error).
bool SctpChecksumValid(const uint8_t* sctp, uint32_t len) {
  if (len < 12) return false;
  const uint32_t stored = uint32_t{sctp[8]} | uint32_t{sctp[9]} << 8 |
                          uint32_t{sctp[10]} << 16 | uint32_t{sctp[11]} << 24;
  return SctpChecksum(sctp, len) == stored;
}

}  // namespace

uint32_t SctpChecksum(const uint8_t* sctp, uint32_t len) {
  static constexpr uint8_t kZeros[4] = {};
  if (len < 12) return 0;
  uint32_t crc = Crc32cUpdate(0xffffffffu, sctp, 8);  // ports and verification tag
  crc = Crc32cUpdate(crc, kZeros, 4);                  // the checksum field as zero
  return ~Crc32cUpdate(crc, sctp + 12, len - 12);
}

bool TransportChecksumValid(const PacketView& pkt, uint8_t pseudo_protocol) {
  Segment seg;
  if (!SegmentOf(pkt, &seg)) return true;
  const uint8_t* l4 = pkt.data + seg.start;
  uint32_t covered = seg.len;
  bool pseudo = true;
  switch (pkt.l4proto) {
    case kTcp: break;
    case kUdp:
      if (seg.len >= 8 && l4[6] == 0 && l4[7] == 0) return true;  // no checksum
      break;
    case kUdpLite: {
      if (seg.len < 8) return false;
      const uint32_t coverage = l4[4] << 8 | l4[5];
      if (coverage != 0) covered = std::min(coverage, seg.len);
      break;
    }
    case kIcmp: pseudo = false; break;
    case kIcmpv6: break;
    case kSctp: return SctpChecksumValid(l4, seg.len);
    default: return true;
  }
  uint64_t sum = OnesSum(l4, covered);
  if (pseudo) {
    sum += PseudoSum(pkt, pkt.data, seg.len, pseudo_protocol != 0 ? pseudo_protocol : pkt.l4proto);
  }
  return Fold(sum) == 0xffff;
}

bool ChecksumIsPartial(const PacketView& pkt) {
  Segment seg;
  if ((pkt.l4proto != kTcp && pkt.l4proto != kUdp) || !SegmentOf(pkt, &seg)) return false;
  const uint32_t check = seg.start + (pkt.l4proto == kTcp ? 16 : 6);
  if (check + 2 > seg.start + seg.len) return false;
  // The cheap test first (the pseudo-header only): most frames fail it, and
  // only those that pass need the sum over the whole segment.
  const uint32_t field = pkt.data[check] << 8 | pkt.data[check + 1];
  return field == Fold(PseudoSum(pkt, pkt.data, seg.len, pkt.l4proto)) &&
         !TransportChecksumValid(pkt);
}

void CompletePartialChecksum(const PacketView& pkt, uint8_t* data) {
  Segment seg;
  if (data == nullptr || (pkt.l4proto != kTcp && pkt.l4proto != kUdp) || !SegmentOf(pkt, &seg)) {
    return;
  }
  const uint32_t check = seg.start + (pkt.l4proto == kTcp ? 16 : 6);
  if (check + 2 > seg.start + seg.len) return;
  data[check] = data[check + 1] = 0;
  uint64_t sum = PseudoSum(pkt, data, seg.len, pkt.l4proto) + OnesSum(data + seg.start, seg.len);
  uint16_t out = static_cast<uint16_t>(~Fold(sum) & 0xffff);
  if (out == 0) out = 0xffff;
  data[check] = static_cast<uint8_t>(out >> 8);
  data[check + 1] = static_cast<uint8_t>(out);
}

}  // namespace rulejit
