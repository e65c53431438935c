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

bool Conntrack::Find(const Key& key, uint32_t* flow, bool* reply) const {
  auto it = tuples_.find(key);
  if (it == tuples_.end()) return false;
  *flow = it->second >> 1;
  *reply = (it->second & 1) != 0;
  return true;
}

bool Conntrack::ReplyTupleTaken(const Key& candidate) const {
  return tuples_.contains(candidate);
}

void Conntrack::Insert(const Flow& flow) {
  const uint32_t index = static_cast<uint32_t>(flows_.size());
  flows_.push_back(flow);
  tuples_[flow.tuple[0]] = index << 1;
  tuples_[flow.tuple[1]] = index << 1 | 1;
}

Conntrack::Entry Conntrack::Attach(const PacketView& pkt) {
  Entry e;
  Key key;
  if (!PacketKey(pkt, key)) return e;
  bool v6 = pkt.nfproto == kNfProtoIpv6;
  if (IsIcmp(key.proto)) {
    uint8_t type = pkt.data[pkt.transport_off];  // PacketKey checked 8 bytes
    if (IsIcmpError(v6, type)) {
      Key quoted;
      bool quoted_reply = false;
      if (!QuotedKey(pkt, v6, quoted) || !Find(quoted, &e.flow, &quoted_reply)) return e;
      e.kind = Entry::kRelated;
      e.reply = !quoted_reply;  // the error travels against the quoted packet
      return e;
    }
    if (!IsEchoRequest(v6, type) && !IsEchoReply(v6, type)) return e;
  }
  if (Find(key, &e.flow, &e.reply)) {
    e.kind = Entry::kKnown;
    return e;
  }
  if (IsIcmp(key.proto) && !IsEchoRequest(v6, pkt.data[pkt.transport_off])) {
    return e;  // a reply without a request
  }
  if (key.proto == kTcp && !TcpMayStart(pkt)) return e;
  e.kind = Entry::kNew;
  e.pending = Flow{.tuple = {key, key.Reversed()}};
  return e;
}

Conntrack::Flow* Conntrack::FlowOf(Entry& entry) {
  switch (entry.kind) {
    case Entry::kNew: return &*entry.pending;
    case Entry::kKnown:
    case Entry::kRelated: return &flows_[entry.flow];
    case Entry::kInvalid:
    case Entry::kUntracked: return nullptr;
  }
  return nullptr;
}

Conntrack::Entry Conntrack::In(const PacketView& pkt, PacketMeta& meta) {
  Entry e = Attach(pkt);
  meta.ct_valid = e.kind != Entry::kInvalid;
  meta.ct_dir = e.reply ? 1 : 0;
  meta.ct_status = 0;
  meta.ct_mark = 0;
  switch (e.kind) {
    case Entry::kInvalid:
    case Entry::kUntracked:
      meta.ct_state = kCtStateInvalid;
      return e;
    case Entry::kNew:
      meta.ct_state = kCtStateNew;
      return e;
    case Entry::kKnown: {
      Flow& flow = flows_[e.flow];
      if (e.reply) flow.seen_reply = true;
      meta.ct_state = flow.seen_reply ? kCtStateEstablished : kCtStateNew;
      break;
    }
    case Entry::kRelated:
      meta.ct_state = kCtStateRelated;
      break;
  }
  const Flow& flow = flows_[e.flow];
  meta.ct_status = flow.Status(true);
  meta.ct_mark = flow.mark;
  return e;
}

void Conntrack::Confirm(Entry& entry, const PacketMeta& meta, bool accepted) {
  switch (entry.kind) {
    case Entry::kInvalid:
    case Entry::kUntracked:
      return;
    case Entry::kNew:
      entry.pending->mark = meta.ct_mark;
      // Unconfirmed entries of dropped packets die with the packet; one
      // whose tuples another flow took meanwhile is dropped (a clash).
      if (accepted && !tuples_.contains(entry.pending->tuple[0]) &&
          !tuples_.contains(entry.pending->tuple[1])) {
        entry.flow = static_cast<uint32_t>(flows_.size());
        Insert(*entry.pending);
        entry.kind = Entry::kKnown;  // what a looped-back packet carries on
      } else {
        entry.kind = Entry::kInvalid;
      }
      entry.pending.reset();
      return;
    case Entry::kKnown:
    case Entry::kRelated:
      flows_[entry.flow].mark = meta.ct_mark;  // `ct mark set` sticks even on drop
      return;
  }
}

void Conntrack::Lookup(const PacketView& pkt, PacketMeta& meta) { In(pkt, meta); }

void Conntrack::Commit(const PacketView& pkt, const PacketMeta& meta, bool accepted) {
  Entry e = Attach(pkt);
  Confirm(e, meta, accepted);
}

}  // namespace rulejit::runtime
