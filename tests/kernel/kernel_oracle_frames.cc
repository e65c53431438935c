// The kernel oracle's frame tagging: where the harness's 4-byte index goes
// in a frame (after the L4 header, inside an ICMP error's quoted packet, at
// the end of an SCTP packet), writing it with checksums and CRC32c kept as
// right or as wrong as they were, and finding it again in what arrives.
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/kernel_oracle_internal.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace oracle_internal {
namespace {

// Length of the L4 header before the payload; 0 for unknown protocols.
struct L4Header {
  size_t len = 0;
  std::optional<size_t> checksum_at;  // offset inside the header
  bool udp_style = false;
};

absl::StatusOr<L4Header> L4HeaderOf(const Frame& f, size_t l4, size_t end,
                                    uint8_t proto, bool v6) {
  auto need = [&](size_t n) -> absl::Status {
    if (l4 + n > end) return absl::InvalidArgumentError("truncated L4 header");
    return absl::OkStatus();
  };
  switch (proto) {
    case 6: {  // TCP
      if (absl::Status s = need(20); !s.ok()) return s;
      size_t doff = static_cast<size_t>(f[l4 + 12] >> 4) * 4;
      if (doff < 20) return absl::InvalidArgumentError("TCP data offset < 5");
      return L4Header{doff, 16, false};
    }
    case 17:    // UDP
    case 136:   // UDPLite
      if (absl::Status s = need(8); !s.ok()) return s;
      if (!v6 && proto == 17 && Load16(f, l4 + 6) == 0) return L4Header{8, {}, false};
      return L4Header{8, 6, true};
    case 1:   // ICMP
    case 58:  // ICMPv6
      if (absl::Status s = need(8); !s.ok()) return s;
      return L4Header{8, 2, false};
    case 132:  // SCTP: the index goes at the end instead (FindTagPlace)
      return L4Header{12, {}, false};
    default:
      return L4Header{0, {}, false};
  }
}

// IPv6 extension headers the kernel walks before the transport header.
bool IsIpv6ExtHeader(uint8_t next) {
  return next == 0 || next == 43 || next == 44 || next == 60 || next == 51;
}

bool IsIcmpError(uint8_t proto, uint8_t type) {
  if (proto == 58) return type >= 1 && type <= 4;
  return proto == 1 && (type == 3 || type == 4 || type == 5 || type == 11 || type == 12);
}

// An ICMP/ICMPv6 error at `l4` that quotes a whole IP header of its own
// version (no IPv6 extension headers), then an L4 header with room for the
// index after it: where the index goes, so that the quoted headers stay
// intact for conntrack to find the quoted flow.
std::optional<size_t> QuotedPayload(const Frame& f, size_t l4, size_t end, uint8_t proto,
                                    bool v6) {
  const size_t ip = l4 + 8;
  if (!IsIcmpError(proto, f[l4]) || ip + (v6 ? 40 : 20) > end) return std::nullopt;
  if ((f[ip] >> 4) != (v6 ? 6 : 4) || (!v6 && (f[ip] & 0x0f) < 5)) return std::nullopt;
  const size_t inner_l4 = ip + (v6 ? 40 : (f[ip] & 0x0f) * 4u);
  const uint8_t inner_proto = f[ip + (v6 ? 6 : 9)];
  absl::StatusOr<L4Header> h = L4HeaderOf(f, inner_l4, end, inner_proto, v6);
  if (!h.ok() || h->len == 0 || inner_l4 + h->len + 4 > end) return std::nullopt;
  return inner_l4 + h->len;
}
}  // namespace

absl::StatusOr<TagPlace> FindTagPlace(const Frame& f) {
  if (f.size() < kEthLen + 20) return absl::InvalidArgumentError("frame too short");
  if (f.size() > kMaxFrame) return absl::InvalidArgumentError("frame above 1514 bytes");
  const uint16_t ethertype = Load16(f, 12);
  const size_t l3 = kEthLen;
  size_t l4 = 0, end = 0;
  uint8_t proto = 0;
  bool has_l4_header = true;
  bool v6 = false;
  if (ethertype == 0x0800) {
    if ((f[l3] >> 4) != 4) return absl::InvalidArgumentError("IP version is not 4");
    const size_t ihl = static_cast<size_t>(f[l3] & 0x0f) * 4;
    end = l3 + Load16(f, l3 + 2);
    if (ihl < 20 || end > f.size() || end < l3 + ihl) {
      return absl::InvalidArgumentError("bad IPv4 header/total length");
    }
    proto = f[l3 + 9];
    l4 = l3 + ihl;
    has_l4_header = (Load16(f, l3 + 6) & 0x1fff) == 0;
  } else if (ethertype == 0x86dd) {
    v6 = true;
    if (f.size() < l3 + 40 || (f[l3] >> 4) != 6) {
      return absl::InvalidArgumentError("bad IPv6 header");
    }
    end = l3 + 40 + Load16(f, l3 + 4);
    if (end > f.size()) return absl::InvalidArgumentError("IPv6 payload length past the frame");
    proto = f[l3 + 6];
    l4 = l3 + 40;
    while (IsIpv6ExtHeader(proto)) {
      if (l4 + 8 > end) return absl::InvalidArgumentError("truncated IPv6 extension header");
      size_t len = proto == 44 ? 8
                   : proto == 51 ? (static_cast<size_t>(f[l4 + 1]) + 2) * 4
                                 : (static_cast<size_t>(f[l4 + 1]) + 1) * 8;
      if (proto == 44 && (Load16(f, l4 + 2) >> 3) != 0) has_l4_header = false;
      proto = f[l4];
      l4 += len;
      if (!has_l4_header) break;
    }
  } else {
    return absl::InvalidArgumentError("not an IPv4/IPv6 Ethernet II frame");
  }
  TagPlace place;
  place.l3_end = end;
  place.l4 = l4;
  place.payload = l4;
  if (has_l4_header) {
    absl::StatusOr<L4Header> h = L4HeaderOf(f, l4, end, proto, v6);
    if (!h.ok()) return h.status();
    place.payload = l4 + h->len;
    if (h->checksum_at) place.checksum = l4 + *h->checksum_at;
    place.udp_style = h->udp_style;
    if (std::optional<size_t> quoted = QuotedPayload(f, l4, end, proto, v6)) {
      place.payload = *quoted;
    }
    // SCTP: the first 4 bytes after the common header are the first
    // chunk's header, which conntrack reads; the packet's last 4 bytes lie
    // in its last chunk's value.
    if (proto == 132 && end >= place.payload + 4) {
      place.payload = end - 4;
      place.sctp = true;
    }
  }
  if (place.payload + 4 > end) {
    return absl::InvalidArgumentError("no 4 payload bytes for the index");
  }
  return place;
}

namespace {

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') for each changed 16-bit word.
// Valid because the payload starts at an even offset from the L4 header.
void UpdateChecksum(Frame& f, const TagPlace& place, const Frame& before) {
  if (!place.checksum) return;
  uint32_t sum = static_cast<uint16_t>(~Load16(f, *place.checksum));
  for (size_t i = 0; i < 4; i += 2) {
    sum += static_cast<uint16_t>(~Load16(before, place.payload + i));
    sum += Load16(f, place.payload + i);
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  uint16_t result = static_cast<uint16_t>(~sum);
  if (result == 0 && place.udp_style) result = 0xffff;
  Store16(f, *place.checksum, result);
}

// SCTP's CRC32c over the packet from `l4` to `end`, stored low byte first
// (frames.h's Crc32c, the checksum field taken as zero).
uint32_t SctpCrc(const Frame& f, size_t l4, size_t end) {
  Frame sctp(f.begin() + l4, f.begin() + end);
  std::fill(sctp.begin() + 8, sctp.begin() + 12, 0);
  return frames_internal::Crc32c(sctp.data(), sctp.size());
}
uint32_t StoredSctpCrc(const Frame& f, size_t l4) {
  return uint32_t{f[l4 + 8]} | uint32_t{f[l4 + 9]} << 8 | uint32_t{f[l4 + 10]} << 16 |
         uint32_t{f[l4 + 11]} << 24;
}

// The CRC32c of the packet with the index in it, off by what the sent one
// was off: a right one stays right, a deliberately wrong one stays wrong.
void UpdateSctpCrc(Frame& f, const TagPlace& place, const Frame& before) {
  if (!place.sctp) return;
  const uint32_t error = StoredSctpCrc(before, place.l4) ^ SctpCrc(before, place.l4, place.l3_end);
  const uint32_t crc = SctpCrc(f, place.l4, place.l3_end) ^ error;
  for (int i = 0; i < 4; ++i) f[place.l4 + 8 + i] = static_cast<uint8_t>(crc >> (8 * i));
}
}  // namespace

absl::StatusOr<Frame> PrepareFrame(const Frame& frame, uint32_t index) {
  absl::StatusOr<TagPlace> place = FindTagPlace(frame);
  if (!place.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame ", index, ": ", place.status().message()));
  }
  Frame out = frame;
  std::copy(kFwInMac.begin(), kFwInMac.end(), out.begin());
  std::copy(kSrcMac.begin(), kSrcMac.end(), out.begin() + 6);
  Store16(out, place->payload, static_cast<uint16_t>(index >> 16));
  Store16(out, place->payload + 2, static_cast<uint16_t>(index));
  UpdateChecksum(out, *place, frame);
  UpdateSctpCrc(out, *place, frame);
  return out;
}

namespace {

// Where a received frame's index is, and the index, if it names one of
// `count` sent frames.
struct Tagged {
  TagPlace place;
  uint32_t index = 0;
};
std::optional<Tagged> TaggedIn(const Frame& rx, size_t count) {
  absl::StatusOr<TagPlace> place = FindTagPlace(rx);
  if (!place.ok()) return std::nullopt;
  const uint32_t index = static_cast<uint32_t>(Load16(rx, place->payload)) << 16 |
                         Load16(rx, place->payload + 2);
  if (index >= count) return std::nullopt;
  return Tagged{*place, index};
}

}  // namespace

// Identifies a frame seen on dst0: its index, if it is one of ours exactly
// (same IP packet but for TTL/hop limit and the IPv4 header checksum).
std::optional<uint32_t> IdentifyArrival(const Frame& rx,
                                        const std::vector<Frame>& sent) {
  std::optional<Tagged> tagged = TaggedIn(rx, sent.size());
  if (!tagged) return std::nullopt;
  const TagPlace* place = &tagged->place;
  const uint32_t index = tagged->index;
  const Frame& tx = sent[index];
  if (Load16(rx, 12) != Load16(tx, 12) || rx.size() < place->l3_end ||
      tx.size() < place->l3_end) {
    return std::nullopt;
  }
  const bool v4 = Load16(tx, 12) == 0x0800;
  for (size_t i = kEthLen; i < place->l3_end; ++i) {
    const size_t rel = i - kEthLen;
    const bool mutable_byte = v4 ? (rel == 8 || rel == 10 || rel == 11) : rel == 7;
    if (!mutable_byte && rx[i] != tx[i]) return std::nullopt;
  }
  return index;
}

// Path mode: a frame seen on dst0 is ours when it carries an index we sent
// with the same IP version, protocol and (ICMP) type; NAT and the rules may
// have changed its headers. An echo reply of the firewall's own stack
// carries the request's index but another type.
std::optional<uint32_t> IdentifyByIndex(const Frame& rx, const std::vector<Frame>& sent) {
  std::optional<Tagged> tagged = TaggedIn(rx, sent.size());
  if (!tagged) return std::nullopt;
  const TagPlace* place = &tagged->place;
  const uint32_t index = tagged->index;
  const Frame& tx = sent[index];
  absl::StatusOr<TagPlace> tx_place = FindTagPlace(tx);
  if (!tx_place.ok() || Load16(rx, 12) != Load16(tx, 12)) return std::nullopt;
  const size_t proto_at = kEthLen + (Load16(tx, 12) == 0x0800 ? 9 : 6);
  if (rx[proto_at] != tx[proto_at]) return std::nullopt;
  const uint8_t proto = tx[proto_at];
  if ((proto == 1 || proto == 58) && place->payload >= place->l4 + 8 &&
      tx_place->payload >= tx_place->l4 + 8 && rx[place->l4] != tx[tx_place->l4]) {
    return std::nullopt;
  }
  return index;
}

}  // namespace oracle_internal

using namespace oracle_internal;  // NOLINT: the oracle's own internals

absl::StatusOr<std::vector<Frame>> PrepareOracleFrames(const std::vector<Frame>& frames) {
  std::vector<Frame> out;
  out.reserve(frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    absl::StatusOr<Frame> f = PrepareFrame(frames[i], static_cast<uint32_t>(i));
    if (!f.ok()) return f.status();
    out.push_back(*std::move(f));
  }
  return out;
}

absl::StatusOr<std::vector<Frame>> PreparePathFrames(const std::vector<Frame>& frames,
                                                     const std::vector<bool>& from_dst) {
  absl::StatusOr<std::vector<Frame>> prepared = PrepareOracleFrames(frames);
  if (!prepared.ok()) return prepared.status();
  for (size_t i = 0; i < from_dst.size() && i < prepared->size(); ++i) {
    if (!from_dst[i]) continue;
    std::copy(kFwOutMac.begin(), kFwOutMac.end(), (*prepared)[i].begin());
    std::copy(kDstMac.begin(), kDstMac.end(), (*prepared)[i].begin() + 6);
  }
  return prepared;
}

}  // namespace rulejit::testing
