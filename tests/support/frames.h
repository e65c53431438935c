// Test frames: a small builder of valid Ethernet/IP frames.
//
//   #include "tests/support/frames.h"
//   using rulejit::testing::FrameSpec;
//   std::vector<uint8_t> syn = rulejit::testing::BuildFrame(FrameSpec{
//       .src = "10.0.0.1", .dst = "10.0.0.2", .proto = 6,
//       .sport = 1234, .dport = 22, .tcp_flags = 0x02});
//   std::vector<uint8_t> v6 = BuildFrame(FrameSpec{
//       .src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
//       .sport = 53, .dport = 5353, .payload = {1, 2, 3},
//       .ext_headers = {0, 60}, .vlans = {{0x8100, 100}}});
//
// Layout: Ethernet II (unless `ethernet` is false: the frame starts at the IP
// header), any 802.1Q/802.1ad tags in order, IPv4 (with `ip_options`) or
// IPv6 (chosen by a ':' in `src`; `ext_headers` lists extension header types
// in order: 0 hop-by-hop, 43 routing, 60 destination options, 44 fragment,
// 51 AH; each gets a minimal valid body), the L4 header of `proto` (6 TCP,
// 17 UDP, 136 UDP-Lite, 1 ICMP, 58 ICMPv6, 132 SCTP; other protocols get no
// L4 header), then `payload`. For ICMP errors, put the quoted packet (built
// with `.ethernet = false`) in `payload`.
//
// Fragments: `frag_offset` (8-byte units) and `more_fragments` go into the
// IPv4 header, or into the IPv6 fragment header (add 44 to `ext_headers`).
// A non-first fragment (frag_offset != 0) carries `payload` only, no L4
// header.
//
// Checksums are correct for the bytes built: IPv4 header, TCP/UDP/UDP-Lite/
// ICMPv6 with the pseudo-header, ICMP, SCTP CRC32c (unless `bad_l4_checksum`
// asks for a wrong one). (Fragments carry the
// checksum of the bytes in the fragment, not of a reassembled datagram.)
//
// SCTP: the common header carries `sctp_vtag`; its chunks are the payload,
// e.g. `.payload = SctpChunk(1, 0, SctpInitBody(0x1234))` for an INIT.
// Designated initializers must follow the field order below. Bad addresses
// are a test bug: they abort.
#ifndef RULEJIT_TESTS_SUPPORT_FRAMES_H_
#define RULEJIT_TESTS_SUPPORT_FRAMES_H_

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace rulejit::testing {

struct VlanTag {
  uint16_t tpid = 0x8100;  // 0x8100 802.1Q, 0x88a8 802.1ad
  uint16_t tci = 0;        // PCP/DEI/VID
};

struct FrameSpec {
  std::string src = "10.0.0.1";  // IPv4 or IPv6 (contains ':')
  std::string dst = "10.0.0.2";
  uint8_t proto = 6;
  uint16_t sport = 1234;
  uint16_t dport = 80;
  uint8_t tcp_flags = 0x02;  // SYN
  std::vector<uint8_t> payload = {};
  uint8_t icmp_type = 8;  // echo request (use 128 for ICMPv6)
  uint8_t icmp_code = 0;
  uint16_t icmp_id = 0;
  uint16_t icmp_seq = 0;
  uint8_t ttl = 64;  // IPv6: hop limit
  uint8_t tos = 0;   // IPv6: traffic class
  uint16_t ip_id = 0;  // IPv4 identification / IPv6 fragment id (low bits)
  std::vector<uint8_t> ip_options = {};  // IPv4 options, zero-padded to 4 bytes
  uint16_t frag_offset = 0;  // 8-byte units
  bool more_fragments = false;
  bool dont_fragment = false;
  std::vector<uint8_t> ext_headers = {};  // IPv6 extension header types, in order
  uint32_t ah_spi = 0x100;
  uint16_t ah_reserved = 0;   // AH's reserved field (ext_headers 51)
  uint8_t frag_reserved = 0;  // the fragment header's reserved byte (44)
  // Hop-by-hop / destination options (ext_headers 0, 60): the header's
  // length field (8 * (n + 1) bytes: one PadN option, or for n > 0 one
  // option of type 0x1e, which the kernel skips).
  uint8_t opts_hdrlen = 0;
  std::vector<VlanTag> vlans = {};
  bool ethernet = true;
  std::string src_mac = "02:00:00:00:00:01";
  std::string dst_mac = "02:00:00:00:00:02";
  uint32_t tcp_seq = 1;
  uint32_t tcp_ack = 0;
  uint16_t tcp_window = 65535;
  std::vector<uint8_t> tcp_options = {};  // raw TCP options, zero-padded to 4 bytes
  bool bad_l4_checksum = false;  // TCP/UDP/UDP-Lite/ICMP/ICMPv6/SCTP: a wrong checksum
  uint32_t sctp_vtag = 0x01020304;  // SCTP's verification tag
  // The IPv6 routing header (ext_headers 43): type, segments left, its
  // length in 8-byte units after the first 8 bytes, and the 4 bytes after
  // segments left (type 0's reserved field); zero bytes follow.
  struct Routing {
    uint8_t type = 4;
    uint8_t segments_left = 0;
    uint8_t hdrlen = 0;
    uint32_t reserved = 0;
  } routing = {};
};

namespace frames_internal {

using Buf = std::vector<uint8_t>;

inline void Put16(Buf& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
inline void Put32(Buf& b, uint32_t v) {
  Put16(b, static_cast<uint16_t>(v >> 16));
  Put16(b, static_cast<uint16_t>(v));
}
inline void Set16(Buf& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v >> 8);
  b[off + 1] = static_cast<uint8_t>(v);
}

[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "frames.h: bad %s\n", what.c_str());
  std::abort();
}

inline bool IsV6(const FrameSpec& s) { return s.src.find(':') != std::string::npos; }

inline Buf Address(const std::string& text, bool v6) {
  Buf out(v6 ? 16 : 4);
  if (inet_pton(v6 ? AF_INET6 : AF_INET, text.c_str(), out.data()) != 1) {
    Fail("address " + text);
  }
  return out;
}

inline Buf Mac(const std::string& text) {
  unsigned int m[6];
  if (std::sscanf(text.c_str(), "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
                  &m[4], &m[5]) != 6) {
    Fail("mac " + text);
  }
  return Buf(m, m + 6);
}

// One's-complement sum (RFC 1071), folded, not yet inverted.
inline uint32_t Sum(const uint8_t* p, size_t n, uint32_t acc = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) acc += (p[i] << 8) | p[i + 1];
  if (n % 2) acc += p[n - 1] << 8;
  return acc;
}
inline uint16_t Fold(uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return static_cast<uint16_t>(~acc);
}

inline uint32_t Crc32c(const uint8_t* p, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
  }
  return ~crc;
}

// L4 header + payload, checksum field left zero.
inline Buf TransportBytes(const FrameSpec& s, bool first_fragment) {
  Buf b;
  if (first_fragment) {
    switch (s.proto) {
      case 6: {
        Buf opts = s.tcp_options;
        while (opts.size() % 4) opts.push_back(0);
        Put16(b, s.sport); Put16(b, s.dport);
        Put32(b, s.tcp_seq); Put32(b, s.tcp_ack);
        b.push_back(static_cast<uint8_t>((5 + opts.size() / 4) << 4)); b.push_back(s.tcp_flags);
        Put16(b, s.tcp_window); Put16(b, 0); Put16(b, 0);
        b.insert(b.end(), opts.begin(), opts.end());
        break;
      }
      case 17:
      case 136:
        Put16(b, s.sport); Put16(b, s.dport);
        // UDP: length; UDP-Lite: checksum coverage (0 = everything).
        Put16(b, s.proto == 17 ? static_cast<uint16_t>(8 + s.payload.size()) : 0);
        Put16(b, 0);
        break;
      case 1:
      case 58:
        b.push_back(s.icmp_type); b.push_back(s.icmp_code); Put16(b, 0);
        Put16(b, s.icmp_id); Put16(b, s.icmp_seq);
        break;
      case 132:
        Put16(b, s.sport); Put16(b, s.dport);
        Put32(b, s.sctp_vtag);
        Put32(b, 0);           // CRC32c
        break;
      default:
        break;
    }
  }
  b.insert(b.end(), s.payload.begin(), s.payload.end());
  return b;
}

// The checksum to send: `c`, or a wrong one (never 0: for UDP that means
// "none") when the spec asks for it.
inline uint16_t SentChecksum(const FrameSpec& s, uint16_t c) {
  if (!s.bad_l4_checksum) return c;
  return c == 0x1111 ? 0x2222 : 0x1111;
}

// Fills the L4 checksum; `pseudo` is the pseudo-header sum.
inline void FinishTransport(const FrameSpec& s, Buf& l4, uint32_t pseudo) {
  size_t at = 0;
  switch (s.proto) {
    case 6: at = 16; break;
    case 17: case 136: at = 6; break;
    case 1: Set16(l4, 2, SentChecksum(s, Fold(Sum(l4.data(), l4.size())))); return;
    case 58: at = 2; break;
    case 132: {
      uint32_t crc = Crc32c(l4.data(), l4.size());
      if (s.bad_l4_checksum) crc ^= 1;
      // SCTP stores the CRC32c little-endian on the wire.
      for (int i = 0; i < 4; i++) l4[8 + i] = static_cast<uint8_t>(crc >> (8 * i));
      return;
    }
    default: return;
  }
  uint16_t c = Fold(Sum(l4.data(), l4.size(), pseudo));
  if (s.proto == 17 && c == 0) c = 0xffff;
  Set16(l4, at, SentChecksum(s, c));
}

inline uint32_t PseudoSum(const Buf& src, const Buf& dst, uint8_t proto, size_t len) {
  uint32_t acc = Sum(src.data(), src.size());
  acc = Sum(dst.data(), dst.size(), acc);
  acc += proto;
  acc += static_cast<uint32_t>(len >> 16) + static_cast<uint32_t>(len & 0xffff);
  return acc;
}

inline Buf Ipv4Packet(const FrameSpec& s) {
  Buf src = Address(s.src, false), dst = Address(s.dst, false);
  bool first = s.frag_offset == 0;
  Buf l4 = TransportBytes(s, first);
  if (first) FinishTransport(s, l4, PseudoSum(src, dst, s.proto, l4.size()));
  Buf opts = s.ip_options;
  while (opts.size() % 4) opts.push_back(0);
  size_t hlen = 20 + opts.size();
  Buf ip;
  ip.push_back(static_cast<uint8_t>(0x40 | (hlen / 4)));
  ip.push_back(s.tos);
  Put16(ip, static_cast<uint16_t>(hlen + l4.size()));
  Put16(ip, s.ip_id);
  Put16(ip, static_cast<uint16_t>((s.dont_fragment ? 0x4000 : 0) |
                                  (s.more_fragments ? 0x2000 : 0) |
                                  (s.frag_offset & 0x1fff)));
  ip.push_back(s.ttl);
  ip.push_back(s.proto);
  Put16(ip, 0);
  ip.insert(ip.end(), src.begin(), src.end());
  ip.insert(ip.end(), dst.begin(), dst.end());
  ip.insert(ip.end(), opts.begin(), opts.end());
  Set16(ip, 10, Fold(Sum(ip.data(), ip.size())));
  ip.insert(ip.end(), l4.begin(), l4.end());
  return ip;
}

// A minimal extension header of `type` followed by `next`.
inline Buf ExtHeader(const FrameSpec& s, uint8_t type, uint8_t next) {
  Buf h{next};
  switch (type) {
    case 44:  // fragment
      h.push_back(s.frag_reserved);
      Put16(h, static_cast<uint16_t>((s.frag_offset << 3) | (s.more_fragments ? 1 : 0)));
      Put32(h, s.ip_id);
      break;
    case 51:  // AH: length in 4-byte units minus 2; SPI, sequence, 4-byte ICV
      h.push_back(2);
      Put16(h, s.ah_reserved);
      Put32(h, s.ah_spi);
      Put32(h, 1);
      Put32(h, 0);
      break;
    case 43:  // routing: as s.routing says (default type 4, 0 left, 8 bytes)
      h.insert(h.end(), {s.routing.hdrlen, s.routing.type, s.routing.segments_left});
      Put32(h, s.routing.reserved);
      h.insert(h.end(), size_t{s.routing.hdrlen} * 8, 0);
      break;
    default:  // hop-by-hop / destination options: one PadN option, or
              // (longer) one experimental option the kernel skips (0x1e,
              // RFC 4727): it drops runs of padding longer than 7 bytes
      h.insert(h.end(), {s.opts_hdrlen, static_cast<uint8_t>(s.opts_hdrlen == 0 ? 1 : 0x1e),
                         static_cast<uint8_t>(8 * s.opts_hdrlen + 4)});
      h.insert(h.end(), size_t{8} * s.opts_hdrlen + 4, 0);
      break;
  }
  return h;
}

inline Buf Ipv6Packet(const FrameSpec& s) {
  Buf src = Address(s.src, true), dst = Address(s.dst, true);
  bool first = s.frag_offset == 0;
  Buf l4 = TransportBytes(s, first);
  if (first) FinishTransport(s, l4, PseudoSum(src, dst, s.proto, l4.size()));
  Buf ext;
  for (size_t i = 0; i < s.ext_headers.size(); i++) {
    uint8_t next = i + 1 < s.ext_headers.size() ? s.ext_headers[i + 1] : s.proto;
    Buf h = ExtHeader(s, s.ext_headers[i], next);
    ext.insert(ext.end(), h.begin(), h.end());
  }
  Buf ip;
  Put32(ip, 0x60000000u | (static_cast<uint32_t>(s.tos) << 20));
  Put16(ip, static_cast<uint16_t>(ext.size() + l4.size()));
  ip.push_back(s.ext_headers.empty() ? s.proto : s.ext_headers[0]);
  ip.push_back(s.ttl);
  ip.insert(ip.end(), src.begin(), src.end());
  ip.insert(ip.end(), dst.begin(), dst.end());
  ip.insert(ip.end(), ext.begin(), ext.end());
  ip.insert(ip.end(), l4.begin(), l4.end());
  return ip;
}

}  // namespace frames_internal

// An SCTP chunk: type, flags, length (4 + the value's), the value, and
// zeros up to a multiple of 4 bytes (not counted in the length).
inline std::vector<uint8_t> SctpChunk(uint8_t type, uint8_t flags,
                                      const std::vector<uint8_t>& value = {}) {
  using namespace frames_internal;
  Buf b = {type, flags};
  Put16(b, static_cast<uint16_t>(4 + value.size()));
  b.insert(b.end(), value.begin(), value.end());
  while (b.size() % 4) b.push_back(0);
  return b;
}

// The fixed part of an INIT or INIT-ACK: the initiate tag, a_rwnd 65536,
// 10 streams each way, initial TSN 1.
inline std::vector<uint8_t> SctpInitBody(uint32_t init_tag) {
  using namespace frames_internal;
  Buf b;
  Put32(b, init_tag);
  Put32(b, 65536);
  Put16(b, 10);
  Put16(b, 10);
  Put32(b, 1);
  return b;
}

// Builds the frame described by `spec`.
inline std::vector<uint8_t> BuildFrame(const FrameSpec& spec) {
  using namespace frames_internal;
  bool v6 = IsV6(spec);
  Buf ip = v6 ? Ipv6Packet(spec) : Ipv4Packet(spec);
  if (!spec.ethernet) return ip;
  Buf frame = Mac(spec.dst_mac);
  Buf src_mac = Mac(spec.src_mac);
  frame.insert(frame.end(), src_mac.begin(), src_mac.end());
  for (const VlanTag& tag : spec.vlans) {
    Put16(frame, tag.tpid);
    Put16(frame, tag.tci);
  }
  Put16(frame, v6 ? 0x86dd : 0x0800);
  frame.insert(frame.end(), ip.begin(), ip.end());
  return frame;
}

// Offsets of the headers in a frame BuildFrame made (for tests that poke
// bytes): network header start, and L4 header start (first fragment).
inline size_t NetworkOffset(const FrameSpec& spec) {
  return spec.ethernet ? 14 + 4 * spec.vlans.size() : 0;
}
inline size_t TransportOffset(const FrameSpec& spec) {
  size_t off = NetworkOffset(spec);
  if (!frames_internal::IsV6(spec)) {
    return off + 20 + (spec.ip_options.size() + 3) / 4 * 4;
  }
  off += 40;
  for (uint8_t type : spec.ext_headers) {
    off += type == 51 ? 16 : type == 0 || type == 60 ? 8 + 8 * spec.opts_hdrlen : 8;
  }
  return off;
}

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_FRAMES_H_
