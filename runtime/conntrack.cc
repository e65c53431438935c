// Flow table for offline ct state; see conntrack.h for what is modelled.
#include "runtime/conntrack.h"

#include <cstring>
#include <utility>

#include "rulejit/types.h"

namespace rulejit::runtime {
namespace {

constexpr uint8_t kIcmp = 1;
constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;
constexpr uint8_t kDccp = 33;
constexpr uint8_t kIcmpv6 = 58;
constexpr uint8_t kSctp = 132;
constexpr uint8_t kUdpLite = 136;

constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04,
                  kTcpAck = 0x10;

bool HasPorts(uint8_t proto) {
  return proto == kTcp || proto == kUdp || proto == kUdpLite ||
         proto == kSctp || proto == kDccp;
}
bool IsIcmp(uint8_t proto) { return proto == kIcmp || proto == kIcmpv6; }

// ICMP message classes, per IP version.
bool IsIcmpError(bool v6, uint8_t type) {
  if (v6) return type >= 1 && type <= 4;  // unreach, too big, time, param
  return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}
bool IsEchoRequest(bool v6, uint8_t type) { return type == (v6 ? 128 : 8); }
bool IsEchoReply(bool v6, uint8_t type) { return type == (v6 ? 129 : 0); }

// Bounds-checked reads from a view.
struct Reader {
  const uint8_t* data;
  uint32_t len;
  bool Has(uint64_t off, uint64_t n) const { return off + n <= len; }
  uint16_t U16(uint32_t off) const {
    return static_cast<uint16_t>(data[off] << 8 | data[off + 1]);
  }
};

// Fills the ports of `key` from an L4 header at `l4` (ICMP: echo id).
bool ReadPorts(const Reader& r, uint32_t l4, Conntrack::Key& key) {
  if (HasPorts(key.proto)) {
    if (l4 == kAbsent || !r.Has(l4, 4)) return false;
    key.sport = r.U16(l4);
    key.dport = r.U16(l4 + 2);
  } else if (IsIcmp(key.proto)) {
    if (l4 == kAbsent || !r.Has(l4, 8)) return false;
    key.sport = key.dport = r.U16(l4 + 4);
  }
  return true;
}

// Addresses and protocol of the IP header at `off` (v6: fixed header only).
bool ReadAddresses(const Reader& r, uint32_t off, bool v6, Conntrack::Key& key) {
  uint32_t addr_off = v6 ? off + 8 : off + 12;
  uint32_t addr_len = v6 ? 16 : 4;
  if (!r.Has(addr_off, 2 * addr_len)) return false;
  key.family = v6 ? kNfProtoIpv6 : kNfProtoIpv4;
  std::memcpy(key.src.data(), r.data + addr_off, addr_len);
  std::memcpy(key.dst.data(), r.data + addr_off + addr_len, addr_len);
  return true;
}

// The key of the packet itself.
bool PacketKey(const PacketView& v, Conntrack::Key& key) {
  bool v6 = v.nfproto == kNfProtoIpv6;
  if ((v.nfproto != kNfProtoIpv4 && !v6) || !v.l4proto_valid ||
      v.network_off == kAbsent || v.data == nullptr) {
    return false;
  }
  Reader r{v.data, v.len};
  key.proto = v.l4proto;
  return ReadAddresses(r, v.network_off, v6, key) &&
         ReadPorts(r, v.transport_off, key);
}

// The key of the packet an ICMP error quotes (after the 8-byte ICMP header).
bool QuotedKey(const PacketView& v, bool v6, Conntrack::Key& key) {
  Reader r{v.data, v.len};
  uint64_t ip = static_cast<uint64_t>(v.transport_off) + 8;
  if (!r.Has(ip, v6 ? 40 : 20)) return false;
  uint32_t off = static_cast<uint32_t>(ip);
  uint32_t hlen = v6 ? 40 : (r.data[off] & 0x0f) * 4u;
  if ((r.data[off] >> 4) != (v6 ? 6 : 4) || hlen < 20) return false;
  key.proto = r.data[off + (v6 ? 6 : 9)];
  return ReadAddresses(r, off, v6, key) && ReadPorts(r, off + hlen, key);
}

// May this TCP packet create a flow? (loose pickup: SYN or a bare ACK)
bool TcpMayStart(const PacketView& v) {
  uint64_t flags_off = static_cast<uint64_t>(v.transport_off) + 13;
  if (v.transport_off == kAbsent || flags_off >= v.len) return false;
  uint8_t flags = v.data[flags_off];
  if (flags & (kTcpRst | kTcpFin)) return false;
  if (flags & kTcpSyn) return !(flags & kTcpAck);
  return (flags & kTcpAck) != 0;
}

}  // namespace

Conntrack::Key Conntrack::Key::Reversed() const {
  Key r = *this;
  std::swap(r.src, r.dst);
  std::swap(r.sport, r.dport);
  return r;
}

Conntrack::Flow* Conntrack::Find(const Key& key, bool* reply) {
  if (auto it = flows_.find(key); it != flows_.end()) {
    *reply = false;
    return &it->second;
  }
  if (auto it = flows_.find(key.Reversed()); it != flows_.end()) {
    *reply = true;
    return &it->second;
  }
  return nullptr;
}

Conntrack::Match Conntrack::Classify(const PacketView& pkt) {
  Match m;
  if (!PacketKey(pkt, m.key)) return m;
  bool v6 = pkt.nfproto == kNfProtoIpv6;
  if (IsIcmp(m.key.proto)) {
    uint8_t type = pkt.data[pkt.transport_off];  // PacketKey checked 8 bytes
    if (IsIcmpError(v6, type)) {
      Key quoted;
      bool quoted_reply = false;
      if (!QuotedKey(pkt, v6, quoted)) return m;
      m.flow = Find(quoted, &quoted_reply);
      if (m.flow == nullptr) return m;
      m.kind = Match::kRelated;
      m.reply = !quoted_reply;  // the error travels against the quoted packet
      return m;
    }
    if (!IsEchoRequest(v6, type) && !IsEchoReply(v6, type)) return m;
  }
  m.flow = Find(m.key, &m.reply);
  if (m.flow != nullptr) {
    if (m.reply) m.key = m.key.Reversed();
    m.kind = Match::kKnown;
    return m;
  }
  if (IsIcmp(m.key.proto) && !IsEchoRequest(v6, pkt.data[pkt.transport_off])) {
    return m;  // a reply without a request
  }
  if (m.key.proto == kTcp && !TcpMayStart(pkt)) return m;
  m.kind = Match::kNew;
  return m;
}

void Conntrack::Lookup(const PacketView& pkt, PacketMeta& meta) {
  Match m = Classify(pkt);
  meta.ct_valid = m.kind != Match::kInvalid;
  meta.ct_dir = m.reply ? 1 : 0;
  meta.ct_status = 0;
  meta.ct_mark = 0;
  switch (m.kind) {
    case Match::kInvalid:
      meta.ct_state = kCtStateInvalid;
      return;
    case Match::kNew:
      meta.ct_state = kCtStateNew;
      return;
    case Match::kKnown:
      if (m.reply) m.flow->seen_reply = true;
      meta.ct_state = m.flow->seen_reply ? kCtStateEstablished
                                         : kCtStateNew;
      break;
    case Match::kRelated:
      meta.ct_state = kCtStateRelated;
      break;
  }
  meta.ct_status =
      kIpsConfirmed | (m.flow->seen_reply ? kIpsSeenReply : 0u);
  meta.ct_mark = m.flow->mark;
}

void Conntrack::Commit(const PacketView& pkt, const PacketMeta& meta,
                       bool accepted) {
  Match m = Classify(pkt);
  switch (m.kind) {
    case Match::kInvalid:
      return;
    case Match::kNew:
      // Unconfirmed entries of dropped packets die with the packet.
      if (accepted) flows_[m.key] = Flow{false, meta.ct_mark};
      return;
    case Match::kKnown:
    case Match::kRelated:
      m.flow->mark = meta.ct_mark;  // `ct mark set` sticks even on drop
      return;
  }
}

}  // namespace rulejit::runtime
