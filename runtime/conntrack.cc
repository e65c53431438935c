// The flow table and nf_conntrack_in's order of work; see conntrack.h for
// what is modelled. Rules from net/netfilter/nf_conntrack_core.c,
// nf_conntrack_proto_udp.c and nf_conntrack_proto_generic.c of Linux 6.18
// (function names cited); TCP, SCTP and ICMP have files of their own.
#include "runtime/conntrack.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "rulejit/types.h"
#include "runtime/conntrack_icmp.h"

namespace rulejit::runtime {
namespace {

using Key = Conntrack::Key;

constexpr uint8_t kIcmp = 1;
constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;
constexpr uint8_t kGre = 47;
constexpr uint8_t kIcmpv6 = 58;
constexpr uint8_t kSctp = 132;
constexpr uint8_t kUdpLite = 136;
constexpr uint64_t kUdpStreamDelayNs = 2000000000ull;  // 2 * HZ

// The protocols whose tuples hold ports. Linux 6.16 removed DCCP's
// tracker: DCCP is the generic protocol, its ports are not part of a flow.
bool HasPorts(uint8_t proto) {
  return proto == kTcp || proto == kUdp || proto == kUdpLite || proto == kSctp;
}
bool IsIcmp(uint8_t proto) { return proto == kIcmp || proto == kIcmpv6; }

// Bounds-checked reads from a view.
struct Reader {
  const uint8_t* data;
  uint32_t len;
  bool Has(uint64_t off, uint64_t n) const { return off + n <= len; }
  uint16_t U16(uint64_t off) const {
    return static_cast<uint16_t>(data[off] << 8 | data[off + 1]);
  }
};

// gre_pkt_to_tuple: an RFC 1701 header keys nothing (as the generic
// protocol); an enhanced (PPTP, version 1) header keys its call id, and
// must carry PPP. The source key would come from the PPTP helper's keymap:
// no helper is modelled, so it is 0, as the kernel has it without one.
bool ReadGreKey(const Reader& r, uint64_t l4, Key& key) {
  if (!r.Has(l4, 4) || (r.data[l4 + 1] & 0x07) != 1) return true;
  if (!r.Has(l4, 8)) return true;
  if (r.U16(l4 + 2) != 0x880b) return false;  // not PPP
  key.dport = r.U16(l4 + 6);
  return true;
}

// The transport part of a tuple from the header at `l4` (nf_ct_get_tuple):
// ports (4 bytes), or the ICMP identifier, type and code (8 bytes); other
// protocols have none. False when the header is cut short.
bool ReadL4(const Reader& r, uint64_t l4, Key& key) {
  if (HasPorts(key.proto)) {
    if (!r.Has(l4, 4)) return false;
    key.sport = r.U16(l4);
    key.dport = r.U16(l4 + 2);
  } else if (IsIcmp(key.proto)) {
    if (!r.Has(l4, 8)) return false;
    key.icmp_type = r.data[l4];
    key.icmp_code = r.data[l4 + 1];
    key.sport = key.dport = r.U16(l4 + 4);
  } else if (key.proto == kGre) {
    return ReadGreKey(r, l4, key);
  }
  return true;
}

// Addresses of the IP header at `off`.
bool ReadAddresses(const Reader& r, uint64_t off, bool v6, Key& key) {
  const uint64_t addr_off = off + (v6 ? 8 : 12);
  const uint32_t addr_len = v6 ? 16 : 4;
  if (!r.Has(addr_off, 2 * addr_len)) return false;
  key.family = v6 ? kNfProtoIpv6 : kNfProtoIpv4;
  std::memcpy(key.src.data(), r.data + addr_off, addr_len);
  std::memcpy(key.dst.data(), r.data + addr_off + addr_len, addr_len);
  return true;
}

// The key of the packet itself.
bool PacketKey(const PacketView& v, Key& key) {
  const bool v6 = v.nfproto == kNfProtoIpv6;
  if (v.transport_off == kAbsent && (HasPorts(v.l4proto) || IsIcmp(v.l4proto))) return false;
  Reader r{v.data, v.len};
  key.proto = v.l4proto;
  return ReadAddresses(r, v.network_off, v6, key) && ReadL4(r, v.transport_off, key);
}

// ipv6_skip_exthdr from `off` with next header `*proto`: on return `*off`
// is the upper-layer header and `*proto` its protocol. False on a
// non-first fragment, "no next header", or a header cut short.
bool SkipIpv6Extensions(const Reader& r, uint64_t* off, uint8_t* proto) {
  for (;;) {
    switch (*proto) {
      case 0: case 43: case 44: case 51: case 60: break;  // hop, routing, fragment, AH, dest
      case 59: return false;                              // no next header
      default: return true;
    }
    if (!r.Has(*off, 8)) return false;
    uint64_t len = (uint64_t{r.data[*off + 1]} + 1) * 8;
    if (*proto == 44) {
      if ((r.U16(*off + 2) & ~0x7) != 0) return false;  // not the first fragment
      len = 8;
    } else if (*proto == 51) {
      len = (uint64_t{r.data[*off + 1]} + 2) * 4;
    }
    *proto = r.data[*off];
    *off += len;
  }
}

// The tuple of the packet an ICMP error quotes at `off`
// (nf_ct_get_tuplepr: ipv4_get_l4proto / ipv6_get_l4proto, then the ports).
bool QuotedKey(const PacketView& v, uint64_t off, Key& key) {
  const bool v6 = v.nfproto == kNfProtoIpv6;
  Reader r{v.data, IpPacketEnd(v)};
  if (!r.Has(off, v6 ? 40 : 20)) return false;
  uint64_t l4;
  if (v6) {
    uint8_t proto = r.data[off + 6];
    l4 = off + 40;
    if (!SkipIpv6Extensions(r, &l4, &proto)) return false;
    key.proto = proto;
  } else {
    if ((r.U16(off + 6) & 0x1fff) != 0) return false;  // a non-first fragment
    key.proto = r.data[off + 9];
    l4 = off + (r.data[off] & 0x0f) * 4u;
    if (l4 > r.len) return false;
  }
  return ReadAddresses(r, off, v6, key) && ReadL4(r, l4, key);
}

}  // namespace

// ------------------------------------------------------------- tuples

bool Conntrack::Key::Invertible() const {
  uint8_t inverted;
  return !IsIcmp(proto) || InvertIcmpType(family == kNfProtoIpv6, icmp_type, &inverted);
}

Conntrack::Key Conntrack::Key::Reversed() const {
  Key r = *this;
  std::swap(r.src, r.dst);
  std::swap(r.sport, r.dport);
  if (IsIcmp(proto)) InvertIcmpType(family == kNfProtoIpv6, icmp_type, &r.icmp_type);
  return r;
}

// ------------------------------------------------------------- the table

bool Conntrack::Live(size_t index) const {
  return flows_[index].alive && !Expired(flows_[index]);
}

bool Conntrack::TupleLive(const Key& key) const {
  auto it = tuples_.find(key);
  return it != tuples_.end() && Live(it->second >> 1);
}

bool Conntrack::Find(const Key& key, uint32_t* flow, bool* reply) {
  auto it = tuples_.find(key);
  if (it == tuples_.end()) return false;
  const uint32_t index = it->second >> 1;
  if (Expired(flows_[index])) {  // nf_conntrack_find skips and reaps expired entries
    Kill(index);
    return false;
  }
  *flow = index;
  *reply = (it->second & 1) != 0;
  return true;
}

// resolve_normal_ct / nf_conntrack_find_get: the tuple hashed with the
// template zone's original-direction id, then with its reply-direction id
// if that differs; a hit counts only if the flow's zone id in the
// direction found equals the template's there (nf_ct_zone_equal).
bool Conntrack::FindInZone(Key key, const CtZone& zone, uint32_t* flow, bool* reply) {
  for (int pass = 0; pass < 2; ++pass) {
    key.zone = zone.IdOf(pass == 1);
    if (pass == 1 && key.zone == zone.IdOf(false)) break;
    if (Find(key, flow, reply) && flows_[*flow].zone.IdOf(*reply) == zone.IdOf(*reply)) {
      return true;
    }
  }
  return false;
}

bool Conntrack::ReplyTupleTaken(const Key& candidate) const { return TupleLive(candidate); }

bool Conntrack::Tracks(Key key, const CtZone& zone) const {
  for (bool reply : {false, true}) {
    key.zone = zone.IdOf(reply);
    if (TupleLive(key)) return true;
  }
  return false;
}

// Track's choice of tuple, without the table.
bool Conntrack::LookupTuple(const PacketView& pkt, Key* key) {
  const bool v6 = pkt.nfproto == kNfProtoIpv6;
  if ((pkt.nfproto != kNfProtoIpv4 && !v6) || pkt.data == nullptr ||
      pkt.network_off == kAbsent || !pkt.l4proto_valid || pkt.fragoff != 0) {
    return false;
  }
  if (IsIcmp(pkt.l4proto)) {
    const IcmpClass c = ClassifyIcmp(pkt, /*verify_checksum=*/false);
    if (c.kind == IcmpClass::kError) {
      if (!QuotedKey(pkt, c.quoted_off, *key) || !key->Invertible()) return false;
      *key = key->Reversed();
      return true;
    }
    if (c.kind != IcmpClass::kQuery) return false;
  }
  return PacketKey(pkt, *key);
}

// The kernel's gc worker, a few slots at a time: expired flows free their
// slots even when no packet of theirs comes again, so the table holds what
// lives (a long `rulejit run` does not grow without end).
void Conntrack::SweepSome() {
  constexpr int kPerInsert = 4;
  for (int i = 0; i < kPerInsert && !flows_.empty(); ++i) {
    sweep_at_ = sweep_at_ + 1 < flows_.size() ? sweep_at_ + 1 : 0;
    if (flows_[sweep_at_].alive && Expired(flows_[sweep_at_])) Kill(sweep_at_);
  }
}

// __nf_conntrack_alloc: past nf_conntrack_max, early_drop evicts flows
// that are not assured from 8 hash buckets at the new tuple's hash (where
// its random seed puts them), reaping expired ones on the way, and
// without one the packet is dropped. Here the 8 places are the slots after
// a rotating cursor: the same bound, a deterministic position.
bool Conntrack::MakeRoom() {
  if (options_.max == 0 || live_flows() < options_.max) return true;
  constexpr uint32_t kEvictionRange = 8;  // NF_CT_EVICTION_RANGE
  for (uint32_t i = 0; i < kEvictionRange && !flows_.empty(); ++i) {
    evict_at_ = evict_at_ + 1 < flows_.size() ? evict_at_ + 1 : 0;
    const Flow& candidate = flows_[evict_at_];
    if (candidate.alive && (Expired(candidate) || !candidate.assured)) {
      Kill(evict_at_);
      return true;
    }
  }
  return false;
}

uint32_t Conntrack::Insert(const Flow& flow) {
  SweepSome();
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
    flows_[index] = flow;
  } else {
    index = static_cast<uint32_t>(flows_.size());
    flows_.push_back(flow);
  }
  tuples_[flow.tuple[0]] = index << 1;
  tuples_[flow.tuple[1]] = index << 1 | 1;
  return index;
}

size_t Conntrack::live_flows() const { return flows_.size() - free_.size(); }

void Conntrack::Kill(uint32_t index) {
  Flow& flow = flows_[index];
  if (!flow.alive) return;
  flow.alive = false;
  free_.push_back(index);
  for (int dir = 0; dir < 2; ++dir) {
    auto it = tuples_.find(flow.tuple[dir]);
    if (it != tuples_.end() && it->second >> 1 == index) tuples_.erase(it);
  }
  if (on_kill_) on_kill_(flow);
}

// ------------------------------------------------------------- protocols

Conntrack::Tracked Conntrack::TcpPacketOf(Flow& flow, bool confirmed, bool reply,
                                          const PacketView& pkt, bool verify_checksum) {
  TcpSegment seg;
  if (!ReadTcpSegment(pkt, &seg)) return Tracked::kInvalid;
  seg.checksum_ok = !verify_checksum || TransportChecksumValid(pkt);
  const TcpContext ctx{.confirmed = confirmed, .reply = reply, .seen_reply = flow.seen_reply,
                       .assured = flow.assured,
                       .remaining_ns = confirmed ? flow.expires_ns - now_ns_ : 0};
  const TcpOutcome out = TcpPacket(flow.tcp, ctx, seg, options_);
  switch (out.kind) {
    case TcpOutcome::kAccept:
      Refresh(flow, out.timeout_s);
      if (out.set_assured) flow.assured = true;
      return Tracked::kAccept;
    case TcpOutcome::kIgnore: return Tracked::kIgnore;
    case TcpOutcome::kRepeat: return Tracked::kRepeat;
    case TcpOutcome::kKill: return Tracked::kKill;
    case TcpOutcome::kInvalid:
      if (out.lowered_timeout_s != 0) Refresh(flow, out.lowered_timeout_s);
      return Tracked::kInvalid;
  }
  return Tracked::kInvalid;
}

// nf_conntrack_sctp_packet (sctp_error's CRC32c check at prerouting).
Conntrack::Tracked Conntrack::SctpPacketOf(Flow& flow, bool confirmed, bool reply,
                                           const PacketView& pkt, bool verify_checksum) {
  const uint64_t l4 = pkt.transport_off;
  const uint64_t ip_end = IpPacketEnd(pkt);
  const SctpContext ctx{.confirmed = confirmed, .reply = reply,
                        .checksum_ok = !verify_checksum || TransportChecksumValid(pkt)};
  const uint32_t len = ip_end > l4 ? static_cast<uint32_t>(ip_end - l4) : 0;
  const SctpOutcome out = SctpPacket(flow.sctp, ctx, pkt.data + l4, len, options_);
  if (out.set_assured) flow.assured = true;
  switch (out.kind) {
    case SctpOutcome::kAccept: Refresh(flow, out.timeout_s); return Tracked::kAccept;
    case SctpOutcome::kIgnore: return Tracked::kIgnore;
    case SctpOutcome::kInvalid: return Tracked::kInvalid;
  }
  return Tracked::kInvalid;
}

// udp_error, then nf_conntrack_udp_packet (UDP-Lite: udplite_error and
// its packet function, which has no 2-second stream rule).
Conntrack::Tracked Conntrack::UdpPacketOf(Flow& flow, bool confirmed, const PacketView& pkt,
                                          bool verify_checksum) {
  const bool lite = pkt.l4proto == kUdpLite;
  const uint64_t l4 = pkt.transport_off;
  const uint64_t ip_end = IpPacketEnd(pkt);
  if (l4 + 8 > ip_end) return Tracked::kInvalid;  // short packet
  const uint64_t udplen = ip_end - l4;
  const uint32_t hdr_len = pkt.data[l4 + 4] << 8 | pkt.data[l4 + 5];
  const bool no_checksum = pkt.data[l4 + 6] == 0 && pkt.data[l4 + 7] == 0;
  if (lite) {
    if (hdr_len != 0 && (hdr_len < 8 || hdr_len > udplen)) return Tracked::kInvalid;
    if (no_checksum) return Tracked::kInvalid;  // UDP-Lite mandates checksums
  } else if (hdr_len > udplen || hdr_len < 8) {
    return Tracked::kInvalid;  // truncated or malformed
  }
  // (udplite_error verifies with IPPROTO_UDP in the pseudo-header.)
  if (!no_checksum && verify_checksum && !TransportChecksumValid(pkt, lite ? kUdp : 0)) {
    return Tracked::kInvalid;
  }

  if (!confirmed) flow.udp_stream_ns = now_ns_ + kUdpStreamDelayNs;
  if (!flow.seen_reply) {
    Refresh(flow, options_.udp_timeout);
    return Tracked::kAccept;
  }
  // Traffic both ways: a stream once it lasts beyond two seconds.
  const bool stream = lite || static_cast<int64_t>(now_ns_ - flow.udp_stream_ns) > 0;
  Refresh(flow, stream ? options_.udp_timeout_stream : options_.udp_timeout);
  if (stream) flow.assured = true;
  return Tracked::kAccept;
}

Conntrack::Tracked Conntrack::ProtocolPacket(Flow& flow, bool confirmed, bool reply,
                                             const PacketView& pkt, bool verify_checksum) {
  const Key& orig = flow.tuple[0];
  switch (orig.proto) {
    case kTcp: return TcpPacketOf(flow, confirmed, reply, pkt, verify_checksum);
    case kSctp: return SctpPacketOf(flow, confirmed, reply, pkt, verify_checksum);
    case kUdp:
    case kUdpLite: return UdpPacketOf(flow, confirmed, pkt, verify_checksum);
    case kIcmp:
    case kIcmpv6: {
      // nf_conntrack_icmp{,v6}_packet: only a request starts a flow.
      const bool v6 = orig.proto == kIcmpv6;
      if (!IcmpMayStart(v6, orig.icmp_type)) return Tracked::kInvalid;
      Refresh(flow, v6 ? options_.icmpv6_timeout : options_.icmp_timeout);
      return Tracked::kAccept;
    }
    case kGre: {
      // nf_conntrack_gre_packet: traffic both ways makes it a stream.
      const bool stream = flow.seen_reply;
      Refresh(flow, stream ? options_.gre_timeout_stream : options_.gre_timeout);
      if (stream) flow.assured = true;
      return Tracked::kAccept;
    }
    default:  // generic_packet
      Refresh(flow, options_.generic_timeout);
      return Tracked::kAccept;
  }
}

// ------------------------------------------------------------- nf_conntrack_in

// nf_conntrack_inet_error: the quoted packet's flow, if the error goes to
// that flow's endpoint in the direction it quotes.
Conntrack::Entry Conntrack::Related(const PacketView& pkt, uint32_t quoted_off,
                                    const CtZone& zone) {
  Entry invalid;
  Key quoted;
  if (!QuotedKey(pkt, quoted_off, quoted) || !quoted.Invertible()) return invalid;
  uint32_t index = 0;
  bool reply = false;
  if (!FindInZone(quoted.Reversed(), zone, &index, &reply)) return invalid;
  const bool v6 = pkt.nfproto == kNfProtoIpv6;
  const uint8_t* outer_daddr = pkt.data + pkt.network_off + (v6 ? 24 : 16);
  if (std::memcmp(outer_daddr, flows_[index].tuple[reply ? 1 : 0].dst.data(), v6 ? 16 : 4) != 0) {
    return invalid;  // "outer daddr != inner"
  }
  Entry e;
  e.kind = Entry::kRelated;
  e.reply = reply;
  e.flow = index;
  return e;
}

Conntrack::Entry Conntrack::Track(const PacketView& pkt, const PacketMeta& meta, bool arriving) {
  Entry invalid;
  const bool v6 = pkt.nfproto == kNfProtoIpv6;
  if ((pkt.nfproto != kNfProtoIpv4 && !v6) || pkt.data == nullptr ||
      pkt.network_off == kAbsent || !pkt.l4proto_valid || pkt.fragoff != 0) {
    return invalid;  // get_l4proto: no protocol, or a non-first fragment
  }
  const bool verify = arriving && options_.checksum && !meta.csum_partial;
  if (IsIcmp(pkt.l4proto)) {
    const IcmpClass c = ClassifyIcmp(pkt, verify);
    switch (c.kind) {
      case IcmpClass::kInvalid: return invalid;
      case IcmpClass::kUntracked: {
        Entry e;
        e.kind = Entry::kUntracked;
        return e;
      }
      case IcmpClass::kError: return Related(pkt, c.quoted_off, meta.ct_zone);
      case IcmpClass::kQuery: break;
    }
  }
  Key key;
  if (!PacketKey(pkt, key)) return invalid;
  // resolve_normal_ct; a second round when TCP reopens a closed flow.
  for (int round = 0; round < 2; ++round) {
    Entry e;
    Flow* flow = nullptr;
    if (FindInZone(key, meta.ct_zone, &e.flow, &e.reply)) {
      e.kind = Entry::kKnown;
      flow = &flows_[e.flow];
    } else {
      if (!key.Invertible()) return invalid;  // init_conntrack: no reply tuple
      if (!MakeRoom()) {
        e.kind = Entry::kDropped;
        return e;
      }
      e.kind = Entry::kNew;
      e.pending = Flow{.tuple = {key, key.Reversed()}, .zone = meta.ct_zone};
      e.pending->tuple[0].zone = meta.ct_zone.IdOf(false);
      e.pending->tuple[1].zone = meta.ct_zone.IdOf(true);
      flow = &*e.pending;
    }
    switch (ProtocolPacket(*flow, e.kind == Entry::kKnown, e.reply, pkt, verify)) {
      case Tracked::kInvalid: return invalid;
      case Tracked::kRepeat: Kill(e.flow); continue;
      case Tracked::kKill:
        if (e.reply) flow->seen_reply = true;
        Count(*flow, e.reply, pkt);  // nf_ct_kill_acct
        Kill(e.flow);
        return e;
      case Tracked::kAccept:
        Count(*flow, e.reply, pkt);  // nf_ct_refresh_acct
        [[fallthrough]];
      case Tracked::kIgnore:
        if (e.reply) flow->seen_reply = true;
        return e;
    }
  }
  return invalid;
}

// nf_ct_acct_update: one packet more in `reply`'s direction, and its
// length (skb->len at the conntrack step: the IP packet).
void Conntrack::Count(Flow& flow, bool reply, const PacketView& pkt) {
  const uint32_t end = IpPacketEnd(pkt);
  flow.packets[reply] += 1;
  flow.bytes[reply] += end > pkt.network_off ? end - pkt.network_off : 0;
}

namespace {

// A tuple as the kernel stores it (nf_conntrack_tuple): the L4 words in
// network order, ICMP's identifier in the source and type, code in the
// destination.
CtTuple ShownTuple(const Conntrack::Key& key) {
  CtTuple t;
  t.family = key.family;
  t.proto = key.proto;
  std::memcpy(t.src, key.src.data(), sizeof t.src);
  std::memcpy(t.dst, key.dst.data(), sizeof t.dst);
  const auto store_be16 = [](uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
  };
  store_be16(t.proto_src, key.sport);
  if (IsIcmp(key.proto)) {
    t.proto_dst[0] = key.icmp_type;
    t.proto_dst[1] = key.icmp_code;
  } else {
    store_be16(t.proto_dst, key.dport);
  }
  return t;
}

}  // namespace

void Conntrack::ShowFlow(const Flow& flow, PacketMeta& meta) {
  for (int dir = 0; dir < 2; ++dir) {
    meta.ct_tuple[dir] = ShownTuple(flow.tuple[dir]);
    meta.ct_packets[dir] = flow.packets[dir];
    meta.ct_bytes[dir] = flow.bytes[dir];
  }
}

Conntrack::Flow* Conntrack::FlowOf(Entry& entry) {
  switch (entry.kind) {
    case Entry::kNew: return &*entry.pending;
    case Entry::kKnown:
    case Entry::kRelated: return &flows_[entry.flow];
    case Entry::kInvalid:
    case Entry::kUntracked:
    case Entry::kDropped: return nullptr;
  }
  return nullptr;
}

Conntrack::Entry Conntrack::In(const PacketView& pkt, PacketMeta& meta, bool arriving) {
  Entry e = Track(pkt, meta, arriving);
  meta.ct_valid = e.kind == Entry::kNew || e.kind == Entry::kKnown || e.kind == Entry::kRelated;
  meta.ct_dir = e.reply ? 1 : 0;
  meta.ct_status = 0;
  meta.ct_mark = 0;
  meta.ct_expiration_ms = 0;
  switch (e.kind) {
    case Entry::kInvalid:
    case Entry::kDropped: meta.ct_state = kCtStateInvalid; return e;
    case Entry::kUntracked: meta.ct_state = kCtStateUntracked; return e;
    case Entry::kNew:
      // An unconfirmed entry's timeout is relative (__nf_ct_refresh_acct):
      // nf_ct_expires subtracts the 32-bit jiffies from it, 0 unless that
      // counter is in its upper half (at HZ=250, from ~99 days of uptime
      // in each ~199).
      meta.ct_state = kCtStateNew;
      meta.ct_status = e.pending->Status(false);
      ShowFlow(*e.pending, meta);
      return e;
    case Entry::kKnown: {
      const Flow& flow = flows_[e.flow];
      meta.ct_state = e.reply || flow.seen_reply ? kCtStateEstablished : kCtStateNew;
      break;
    }
    case Entry::kRelated: meta.ct_state = kCtStateRelated; break;
  }
  const Flow& flow = flows_[e.flow];
  meta.ct_status = flow.Status(true);
  meta.ct_mark = flow.mark;
  meta.ct_zone = flow.zone;
  ShowFlow(flow, meta);
  // nf_ct_expires, in ms: what the tracker left after this packet.
  const int64_t left_ns = static_cast<int64_t>(flow.expires_ns - now_ns_);
  meta.ct_expiration_ms = left_ns > 0 ? static_cast<uint32_t>(left_ns / 1000000) : 0;
  return e;
}

void Conntrack::Confirm(Entry& entry, const PacketMeta& meta, bool accepted) {
  switch (entry.kind) {
    case Entry::kInvalid:
    case Entry::kUntracked:
    case Entry::kDropped:
      return;
    case Entry::kNew:
      entry.pending->mark = meta.ct_mark;
      // Unconfirmed entries of dropped packets die with the packet; one
      // whose tuples another flow took meanwhile is dropped (a clash).
      if (accepted && !TupleLive(entry.pending->tuple[0]) &&
          !TupleLive(entry.pending->tuple[1])) {
        entry.flow = Insert(*entry.pending);
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

}  // namespace rulejit::runtime
