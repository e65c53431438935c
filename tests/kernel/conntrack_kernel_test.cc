// rulejit's connection tracker (runtime/conntrack.h, along the path of
// runtime/path.cc) against the kernel's nf_conntrack, packet by packet,
// over connections in both directions (kernel_oracle.h path mode: clients
// behind fwin, servers behind fwout answering from dst0).
//
// Two kinds of ruleset:
//  - a probe (policy accept) that writes what conntrack decided into each
//    forwarded packet's DSCP: state (invalid 1, new 2, established 3,
//    related 4, untracked 5) + 8 for the reply direction + 16 when the flow
//    is assured. A state rulejit gets wrong is a byte difference, and a
//    table (index, direction, packet, kernel's state, each tier's state)
//    says which;
//  - stateful filters (nft, iptables, ip6tables): drop invalid, accept
//    established/related and some new flows. A drop confirms no flow, so
//    the fates of later packets follow from earlier ones.
// The sequences: TCP handshakes, data, closes, RST in every state, packets
// out of the window, retransmits, reopens, loose pickup, bad flag
// combinations, window scaling; UDP, GRE and protocol 253 both ways and
// with a bad checksum; ICMP and ICMPv6 queries, replies and errors quoting
// known and unknown flows, ND and MLD; SCTP associations (handshake, data,
// heartbeats, shutdown, ABORT, wrong verification tags, chunks without an
// association, bad CRC32c, malformed chunk lists). First hand-written, then seeded
// interleavings of them (RULEJIT_CT_SEEDS=N runs N seeds, RULEJIT_CT_SEED=N
// replays one).
//
// fw forwards every frame of these sequences when the ruleset accepts all
// (ND, MLD and redirects too: they have global addresses); the probe test
// checks that.
//
// Needs root, `ip netns`, nft, iptables-legacy-restore,
// ip6tables-legacy-restore and the rulejit binary; skips otherwise. About
// 15 seconds.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

constexpr int kSeeds = 10;  // RULEJIT_CT_SEEDS=N runs N

constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;

// ---------------------------------------------------------------- flows

// The two ends of a flow: a client behind fwin, a server behind fwout.
struct Ends {
  std::string client, server;
  uint16_t cport = 0, sport = 0;
  uint16_t id = 0;  // ICMP echo identifier
  bool v6 = false;
};

// Fresh ends for every flow (addresses of their own: GRE and generic
// protocols have no ports), echo ids and initial sequence numbers; random
// ones with a generator, so cases can be mixed.
class Alloc {
 public:
  explicit Alloc(std::mt19937* rng = nullptr) : rng_(rng) {}
  Ends Next(bool v6) {
    ++n_;
    return Ends{.client = v6 ? absl::StrFormat("2001:db8:1::%x", n_)
                             : absl::StrFormat("10.1.%d.%d", n_ / 250, n_ % 250 + 1),
                .server = v6 ? absl::StrFormat("2001:db8:30::%x", n_)
                             : absl::StrFormat("10.30.%d.%d", n_ / 250, n_ % 250 + 1),
                .cport = static_cast<uint16_t>(40000 + n_),
                .sport = 80,
                .id = static_cast<uint16_t>(0x100 + n_),
                .v6 = v6};
  }
  // Hand-written: round numbers; seeded: anywhere, a quarter near the wrap.
  uint32_t Isn() {
    ++isn_;
    if (rng_ == nullptr) return 1000 * isn_;
    const uint32_t r = (*rng_)();
    return r % 4 == 0 ? 0xffffffffu - r % 2000 : r;
  }

 private:
  std::mt19937* rng_;
  int n_ = 0;
  uint32_t isn_ = 0;
};

// A router beyond fw on the server side, and a client that is no flow's.
std::string Router(const Ends& e) { return e.v6 ? "2001:db8:31::1" : "10.31.0.1"; }
std::string OtherClient(const Ends& e) { return e.v6 ? "2001:db8:1:ff::99" : "10.1.255.99"; }

// A packet of the flow with 4 payload bytes (the harness's index).
PathPacket Packet(const Ends& e, bool from_server, uint8_t proto) {
  FrameSpec s;
  s.src = from_server ? e.server : e.client;
  s.dst = from_server ? e.client : e.server;
  s.proto = proto;
  s.sport = from_server ? e.sport : e.cport;
  s.dport = from_server ? e.cport : e.sport;
  s.payload = {0, 0, 0, 0};
  return {from_server, s};
}

// A TCP connection. Every segment carries 4 payload bytes, which conntrack
// counts: Send moves its sender's next sequence number on by 4, +1 for SYN
// and for FIN.
class Tcp {
 public:
  Tcp(const Ends& ends, uint32_t client_isn, uint32_t server_isn)
      : ends_(ends), next_{client_isn, server_isn} {}
  // At the sender's next sequence number, acking all the other side sent.
  PathPacket Send(bool from_server, uint8_t flags, std::vector<uint8_t> options = {}) {
    PathPacket p =
        At(from_server, flags, next_[from_server], (flags & kAck) ? next_[!from_server] : 0);
    p.spec.tcp_options = std::move(options);
    next_[from_server] += 4 + ((flags & kSyn) ? 1 : 0) + ((flags & kFin) ? 1 : 0);
    return p;
  }
  // With the given numbers; moves nothing on.
  PathPacket At(bool from_server, uint8_t flags, uint32_t seq, uint32_t ack) const {
    PathPacket p = Packet(ends_, from_server, 6);
    p.spec.tcp_flags = flags;
    p.spec.tcp_seq = seq;
    p.spec.tcp_ack = ack;
    return p;
  }
  uint32_t Next(bool from_server) const { return next_[from_server]; }
  // The same ends, new initial sequence numbers (a new connection).
  void Restart(uint32_t client_isn, uint32_t server_isn) {
    next_[0] = client_isn;
    next_[1] = server_isn;
  }

 private:
  Ends ends_;
  uint32_t next_[2];
};

// A connection between fresh ends (one draw after the other: the order of
// a call's arguments is unspecified, and seeds must replay).
Tcp NewTcp(Alloc& a, bool v6) {
  const Ends ends = a.Next(v6);
  const uint32_t client_isn = a.Isn();
  return Tcp(ends, client_isn, a.Isn());
}

using Sequence = std::vector<PathPacket>;

void Append(Sequence& to, const Sequence& more) { to.insert(to.end(), more.begin(), more.end()); }

Sequence Handshake(Tcp& t) {
  return {t.Send(false, kSyn), t.Send(true, kSyn | kAck), t.Send(false, kAck)};
}
Sequence Data(Tcp& t) { return {t.Send(false, kPsh | kAck), t.Send(true, kPsh | kAck)}; }
Sequence Close(Tcp& t) {
  return {t.Send(false, kFin | kAck), t.Send(true, kAck), t.Send(true, kFin | kAck),
          t.Send(false, kAck)};
}

// An ICMP (v4 ends) or ICMPv6 (v6 ends) message of the flow's echo id.
PathPacket Icmp(const Ends& e, bool from_server, uint8_t type, uint8_t code = 0,
                size_t payload = 4) {
  PathPacket p = Packet(e, from_server, e.v6 ? 58 : 1);
  p.spec.icmp_type = type;
  p.spec.icmp_code = code;
  p.spec.icmp_id = e.id;
  p.spec.icmp_seq = 1;
  p.spec.payload.assign(payload, 0);
  return p;
}

// An ICMP/ICMPv6 error from `src` to `dst` quoting `quoted` as it was sent.
PathPacket IcmpError(bool from_server, const std::string& src, const std::string& dst, uint8_t type,
                     uint8_t code, const PathPacket& quoted) {
  FrameSpec inner = quoted.spec;
  inner.ethernet = false;
  FrameSpec s;
  s.src = src;
  s.dst = dst;
  s.proto = src.find(':') != std::string::npos ? 58 : 1;
  s.icmp_type = type;
  s.icmp_code = code;
  s.payload = BuildFrame(inner);
  return {from_server, s};
}

// ---------------------------------------------------------------- cases

Sequence TcpOpenDataClose(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  Append(s, Data(t));
  Append(s, Close(t));
  s.push_back(t.Send(false, kAck));  // in TIME_WAIT
  return s;
}

// A RST acking something else first, then the right one.
Sequence TcpRstInSynSent(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = {t.Send(false, kSyn), t.At(true, kRst | kAck, 0, t.Next(false) + 1000),
                t.At(true, kRst | kAck, 0, t.Next(false))};
  // The ports again after the RST: a new connection.
  t.Restart(t.Next(false) + 100000, t.Next(true));
  Append(s, Handshake(t));
  return s;
}

Sequence TcpRstInSynRecv(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = {t.Send(false, kSyn), t.Send(true, kSyn | kAck),
                t.At(false, kRst, t.Next(false), 0)};
  Append(s, Data(t));
  return s;
}

Sequence TcpRstInEstablished(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  Append(s, Data(t));
  s.push_back(t.At(true, kRst | kAck, t.Next(true), t.Next(false)));
  Append(s, Data(t));
  return s;
}

Sequence TcpRstInFinWait(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  s.push_back(t.Send(false, kFin | kAck));
  s.push_back(t.At(true, kRst, t.Next(true), 0));
  s.push_back(t.Send(true, kAck));
  return s;
}

Sequence TcpRstAfterClose(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  Append(s, Close(t));
  s.push_back(t.At(false, kRst, t.Next(false), 0));
  s.push_back(t.Send(false, kSyn));  // reopen after RST in TIME_WAIT
  return s;
}

// One RST in the window but not at the expected number (kept as a possible
// challenge ACK), one far outside it; the connection goes on.
Sequence TcpRstWrongSeq(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  s.push_back(t.At(false, kRst, t.Next(false) + 1000, 0));
  s.push_back(t.At(false, kRst, t.Next(false) + 0x40000000, 0));
  Append(s, Data(t));
  return s;
}

Sequence TcpOutOfWindow(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  s.push_back(t.At(false, kPsh | kAck, t.Next(false) + 0x40000000, t.Next(true)));
  s.push_back(t.At(true, kPsh | kAck, t.Next(true) - 0x40000000, t.Next(false)));
  Append(s, Data(t));
  return s;
}

Sequence TcpAckOfUnseenData(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  s.push_back(t.At(false, kAck, t.Next(false), t.Next(true) + 0x200000));
  Append(s, Data(t));
  return s;
}

Sequence TcpSynRetransmit(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  const uint32_t isn = t.Next(false);
  Sequence s = {t.Send(false, kSyn), t.At(false, kSyn, isn, 0)};
  s.push_back(t.Send(true, kSyn | kAck));
  s.push_back(t.Send(false, kAck));
  return s;
}

Sequence TcpSynInEstablished(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  Append(s, Data(t));
  s.push_back(t.At(false, kSyn, t.Next(false) + 5000, 0));
  Append(s, Data(t));
  return s;
}

Sequence TcpSynAckWithoutSyn(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  return {t.Send(true, kSyn | kAck), t.Send(false, kAck), t.Send(true, kAck)};
}

Sequence TcpSimultaneousOpen(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  const uint32_t c = t.Next(false), s = t.Next(true);
  Sequence out = {t.Send(false, kSyn), t.Send(true, kSyn)};
  out.push_back(t.At(false, kSyn | kAck, c, t.Next(true)));
  out.push_back(t.At(true, kSyn | kAck, s, t.Next(false)));
  Append(out, Data(t));
  return out;
}

// FIN both ways, then the same ports again (TIME_WAIT reopen).
Sequence TcpReopenAfterClose(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  Append(s, Close(t));
  t.Restart(t.Next(false) + 100000, t.Next(true) + 100000);
  Append(s, Handshake(t));
  Append(s, Data(t));
  return s;
}

Sequence TcpReopenAfterRst(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = Handshake(t);
  s.push_back(t.At(false, kRst | kAck, t.Next(false), t.Next(true)));
  t.Restart(t.Next(false) + 100000, t.Next(true) + 100000);
  Append(s, Handshake(t));
  return s;
}

// The first packet a bare ACK with data (nf_conntrack_tcp_loose), from
// either side.
Sequence TcpLoosePickup(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = {t.Send(false, kPsh | kAck), t.Send(true, kAck), t.Send(false, kAck)};
  Tcp u = NewTcp(a, v6);
  Append(s, {u.Send(true, kPsh | kAck), u.Send(false, kAck), u.Send(true, kAck)});
  return s;
}

Sequence TcpBadFlags(Alloc& a, bool v6) {
  const uint8_t first_packets[] = {kSyn | kFin, 0, kFin, kSyn | kRst};
  const uint8_t in_flow[] = {kSyn | kFin, 0, kFin, kSyn | kRst | kAck};
  Sequence s;
  for (uint8_t flags : first_packets) {
    Tcp first = NewTcp(a, v6);
    s.push_back(first.Send(false, flags));
  }
  Tcp t = NewTcp(a, v6);
  Append(s, Handshake(t));
  for (uint8_t flags : in_flow) {
    s.push_back(t.At(false, flags, t.Next(false), (flags & kAck) ? t.Next(true) : 0));
  }
  Append(s, Data(t));
  return s;
}

// MSS, SACK-permitted and window scale 7 on both SYNs: windows count x128,
// so data 1 MB ahead is inside the window.
Sequence TcpWindowScale(Alloc& a, bool v6) {
  const std::vector<uint8_t> options = {2, 4, 0x05, 0xb4, 4, 2, 1, 3, 3, 7};
  Tcp t = NewTcp(a, v6);
  Sequence s = {t.Send(false, kSyn, options), t.Send(true, kSyn | kAck, options),
                t.Send(false, kAck)};
  s.push_back(t.At(true, kPsh | kAck, t.Next(true) + 1000000, t.Next(false)));
  s.push_back(t.At(true, kPsh | kAck, t.Next(true) + 100000000, t.Next(false)));
  Append(s, Data(t));
  return s;
}

// Window scale on the client's SYN only: no scaling either way, so data
// 1 MB ahead is outside the window.
Sequence TcpWindowScaleOneSide(Alloc& a, bool v6) {
  Tcp t = NewTcp(a, v6);
  Sequence s = {t.Send(false, kSyn, {1, 3, 3, 7}), t.Send(true, kSyn | kAck), t.Send(false, kAck)};
  s.push_back(t.At(true, kPsh | kAck, t.Next(true) + 1000000, t.Next(false)));
  Append(s, Data(t));
  return s;
}

Sequence UdpBothWays(Alloc& a, bool v6) {
  Ends e = a.Next(v6);
  e.sport = 53;
  Sequence s = {Packet(e, false, 17), Packet(e, true, 17), Packet(e, false, 17),
                Packet(e, true, 17)};
  Ends f = a.Next(v6);  // a server speaks first
  Append(s, {Packet(f, true, 17), Packet(f, false, 17)});
  return s;
}

PathPacket WithBadChecksum(PathPacket p) {
  p.spec.bad_l4_checksum = true;
  return p;
}

// Wrong checksums (conntrack checks them at prerouting): UDP before and
// within a flow, TCP and ICMP within one.
Sequence BadChecksums(Alloc& a, bool v6) {
  Ends e = a.Next(v6);
  e.sport = 53;
  const PathPacket query = Packet(e, false, 17), answer = Packet(e, true, 17);
  Sequence s = {WithBadChecksum(query), query, WithBadChecksum(answer), answer,
                WithBadChecksum(query)};
  Tcp t = NewTcp(a, v6);
  Append(s, Handshake(t));
  s.push_back(WithBadChecksum(t.At(false, kPsh | kAck, t.Next(false), t.Next(true))));
  s.push_back(WithBadChecksum(t.At(true, kRst, t.Next(true), 0)));
  Append(s, Data(t));
  Ends ping = a.Next(v6);
  const PathPacket request = Icmp(ping, false, v6 ? 128 : 8);
  Append(s, {WithBadChecksum(request), request, WithBadChecksum(Icmp(ping, true, v6 ? 129 : 0))});
  return s;
}

Sequence GenericBothWays(Alloc& a, bool v6) {
  Sequence s;
  for (uint8_t proto : {47, 253}) {
    Ends e = a.Next(v6);
    Append(s, {Packet(e, false, proto), Packet(e, true, proto), Packet(e, false, proto)});
  }
  return s;
}

// UDP-Lite and DCCP, each with a second port pair: in Linux 6.18 conntrack
// verifies UDP-Lite checksums as UDP (so these are INVALID), and DCCP has
// no tracker since 6.16 (the generic one: its ports are no part of a flow).
Sequence PortedProtocols(Alloc& a, bool v6) {
  Sequence s;
  for (uint8_t proto : {136, 33}) {
    Ends e = a.Next(v6);
    Ends other_ports = e;
    other_ports.cport += 1000;
    Append(s, {Packet(e, false, proto), Packet(e, true, proto), Packet(other_ports, false, proto),
               Packet(other_ports, true, proto)});
  }
  return s;
}

Sequence IcmpEcho(Alloc& a, bool v6) {
  Ends e = a.Next(v6);
  const uint8_t request = v6 ? 128 : 8, reply = v6 ? 129 : 0;
  Sequence s = {Icmp(e, false, request), Icmp(e, true, reply), Icmp(e, false, request),
                Icmp(e, true, reply)};
  Ends f = a.Next(v6);  // a reply whose code is not the request's
  Append(s, {Icmp(f, false, request), Icmp(f, true, reply, 1), Icmp(f, true, reply)});
  Ends g = a.Next(v6);  // a reply without a request
  s.push_back(Icmp(g, true, reply));
  return s;
}

// Timestamp, information and address mask requests and replies, and a
// reply without a request.
Sequence IcmpQueries(Alloc& a, bool) {
  struct Query {
    uint8_t request, reply;
    size_t size;
  };
  const Query queries[] = {{13, 14, 12}, {15, 16, 4}, {17, 18, 4}};
  Sequence s;
  for (auto [request, reply, size] : queries) {
    Ends e = a.Next(false);
    Append(s, {Icmp(e, false, request, 0, size), Icmp(e, true, reply, 0, size),
               Icmp(e, false, request, 0, size)});
    Ends f = a.Next(false);
    s.push_back(Icmp(f, true, reply, 0, size));
  }
  return s;
}

// Errors quoting a UDP, a TCP and an echo flow's packets: to the quoted
// packet's sender, to another host, and quoting a flow nobody saw.
Sequence IcmpErrors(Alloc& a, bool v6) {
  const uint8_t unreach = v6 ? 1 : 3, port_unreach = v6 ? 4 : 3, time_exceeded = v6 ? 3 : 11;
  Ends e = a.Next(v6);
  e.sport = 53;
  const PathPacket query = Packet(e, false, 17), answer = Packet(e, true, 17);
  Sequence s = {query, answer};
  s.push_back(IcmpError(true, Router(e), e.client, unreach, port_unreach, query));
  s.push_back(IcmpError(true, Router(e), e.client, time_exceeded, 0, query));
  s.push_back(IcmpError(false, e.client, e.server, unreach, port_unreach, answer));
  s.push_back(IcmpError(true, Router(e), OtherClient(e), unreach, port_unreach, query));
  s.push_back(
      IcmpError(true, e.server, e.client, unreach, port_unreach, Packet(a.Next(v6), false, 17)));
  Tcp t = NewTcp(a, v6);
  const PathPacket syn = t.Send(false, kSyn);
  s.push_back(syn);
  s.push_back(IcmpError(true, Router(e), syn.spec.src, unreach, v6 ? 0 : 1, syn));
  Ends ping = a.Next(v6);
  const PathPacket request = Icmp(ping, false, v6 ? 128 : 8);
  s.push_back(request);
  s.push_back(IcmpError(true, Router(e), ping.client, time_exceeded, 0, request));
  return s;
}

// Node information query and reply; MLD (130-132, 143), router and
// neighbour discovery (133-136) and multicast router discovery (151, 152),
// which conntrack leaves untracked; a redirect (137), which it does not.
Sequence IcmpV6Informational(Alloc& a, bool) {
  Ends e = a.Next(true);
  Sequence s = {Icmp(e, false, 139), Icmp(e, true, 140), Icmp(e, false, 139)};
  Ends f = a.Next(true);
  s.push_back(Icmp(f, true, 140));  // a reply without a query
  for (uint8_t type : {130, 131, 132, 133, 134, 135, 136, 137, 143, 151, 152}) {
    Ends g = a.Next(true);
    s.push_back(Icmp(g, false, type, 0, 20));
    s.push_back(Icmp(g, true, type, 0, 20));
  }
  return s;
}

// ---------------------------------------------------------------- SCTP

// SCTP chunk types.
constexpr uint8_t kData = 0, kInit = 1, kInitAck = 2, kSack = 3, kHeartbeat = 4,
                  kHeartbeatAck = 5, kAbort = 6, kShutdown = 7, kShutdownAck = 8,
                  kCookieEcho = 10, kCookieAck = 11, kShutdownComplete = 14;
constexpr uint8_t kTBit = 0x01;  // ABORT / SHUTDOWN-COMPLETE: the receiver's tag

// A chunk whose value is `body` and 4 bytes nothing reads, where the
// harness's index lands when the chunk ends the packet.
std::vector<uint8_t> Chunk(uint8_t type, uint8_t flags = 0, std::vector<uint8_t> body = {}) {
  body.insert(body.end(), 4, 0);
  return SctpChunk(type, flags, body);
}

// An SCTP association. Each side chose a tag, which the other side's
// packets carry.
class Sctp {
 public:
  Sctp(const Ends& ends, uint32_t client_tag, uint32_t server_tag)
      : ends_(ends), tag_{client_tag, server_tag} {}
  // Chunks with the tag the receiver chose.
  PathPacket Send(bool from_server, const std::vector<std::vector<uint8_t>>& chunks) const {
    return Tagged(from_server, tag_[!from_server], chunks);
  }
  PathPacket Tagged(bool from_server, uint32_t vtag,
                    const std::vector<std::vector<uint8_t>>& chunks) const {
    PathPacket p = Packet(ends_, from_server, 132);
    p.spec.sctp_vtag = vtag;
    p.spec.payload.clear();
    for (const std::vector<uint8_t>& c : chunks) Append(p.spec.payload, c);
    return p;
  }
  // INIT (tag 0) or INIT-ACK announcing the sender's tag.
  PathPacket Init(bool from_server) const {
    return Tagged(from_server, 0, {Chunk(kInit, 0, SctpInitBody(tag_[from_server]))});
  }
  PathPacket InitAck(bool from_server) const {
    return Send(from_server, {Chunk(kInitAck, 0, SctpInitBody(tag_[from_server]))});
  }
  uint32_t Tag(bool side) const { return tag_[side]; }

 private:
  static void Append(std::vector<uint8_t>& to, const std::vector<uint8_t>& more) {
    to.insert(to.end(), more.begin(), more.end());
  }
  Ends ends_;
  uint32_t tag_[2];
};

// Fresh ends and tags (never 0: tag 0 is INIT's).
Sctp NewSctp(Alloc& a, bool v6) {
  const Ends ends = a.Next(v6);
  const uint32_t client_tag = a.Isn() | 1;
  return Sctp(ends, client_tag, a.Isn() | 1);
}

Sequence SctpHandshake(const Sctp& s) {
  return {s.Init(false), s.InitAck(true), s.Send(false, {Chunk(kCookieEcho)}),
          s.Send(true, {Chunk(kCookieAck)})};
}

// The four-way handshake, data both ways (with a SACK bundled), a
// heartbeat, the three-way shutdown, and DATA once CLOSED.
Sequence SctpAssociation(Alloc& a, bool v6) {
  const Sctp s = NewSctp(a, v6);
  Sequence out = SctpHandshake(s);
  Append(out, {s.Send(false, {Chunk(kData, 0x03, std::vector<uint8_t>(12, 0))}),
               s.Send(true, {Chunk(kSack, 0, std::vector<uint8_t>(12, 0)), Chunk(kData, 0x03)}),
               s.Send(false, {Chunk(kHeartbeat)}), s.Send(true, {Chunk(kHeartbeatAck)}),
               s.Send(false, {Chunk(kShutdown)}), s.Send(true, {Chunk(kShutdownAck)}),
               s.Send(false, {Chunk(kShutdownComplete)}), s.Send(false, {Chunk(kData)})});
  return out;
}

// Tags that are not the direction's: DATA with a stranger's and with the
// sender's own, a COOKIE-ECHO, an INIT with a tag; ABORT with the T bit
// but its own tag. The association goes on.
Sequence SctpWrongVtag(Alloc& a, bool v6) {
  const Sctp s = NewSctp(a, v6);
  Sequence out = {s.Init(false), s.InitAck(true), s.Tagged(false, 0x5eed, {Chunk(kCookieEcho)}),
                  s.Send(false, {Chunk(kCookieEcho)}), s.Send(true, {Chunk(kCookieAck)})};
  Append(out, {s.Tagged(false, 0x5eed, {Chunk(kData)}), s.Tagged(false, s.Tag(false), {Chunk(kData)}),
               s.Tagged(true, s.Tag(true), {Chunk(kData)}),
               s.Tagged(false, s.Tag(false), {Chunk(kInit, 0, SctpInitBody(7))}),
               s.Send(false, {Chunk(kAbort, kTBit)}), s.Send(false, {Chunk(kData)}),
               s.Send(true, {Chunk(kData)})});
  return out;
}

// DATA, SACK and SHUTDOWN with no association; the chunks that never
// start one (ABORT, COOKIE-ACK, SHUTDOWN-COMPLETE); an INIT with a tag.
Sequence SctpWithoutAssociation(Alloc& a, bool v6) {
  Sequence out;
  for (uint8_t type : {kData, kSack, kAbort, kCookieAck, kShutdownComplete}) {
    const Sctp s = NewSctp(a, v6);
    out.push_back(s.Send(false, {Chunk(type)}));
    out.push_back(s.Send(true, {Chunk(type)}));
  }
  const Sctp s = NewSctp(a, v6);
  Append(out, {s.Tagged(false, 99, {Chunk(kInit, 0, SctpInitBody(s.Tag(false)))}),
               s.Send(false, {Chunk(kShutdown)}), s.Tagged(false, 0, {Chunk(kShutdown)}),
               s.Send(true, {Chunk(kShutdownComplete)})});
  return out;
}

PathPacket WithBadCrc(PathPacket p) {
  p.spec.bad_l4_checksum = true;
  return p;
}

// Wrong CRC32c (verified at prerouting): an INIT, then within the
// association.
Sequence SctpBadCrc(Alloc& a, bool v6) {
  const Sctp s = NewSctp(a, v6);
  Sequence out = {WithBadCrc(s.Init(false)), s.Init(false), WithBadCrc(s.InitAck(true)),
                  s.InitAck(true), s.Send(false, {Chunk(kCookieEcho)}),
                  WithBadCrc(s.Send(true, {Chunk(kCookieAck)})), s.Send(true, {Chunk(kCookieAck)}),
                  WithBadCrc(s.Send(false, {Chunk(kData)})), WithBadCrc(s.Send(true, {Chunk(kAbort)})),
                  s.Send(true, {Chunk(kData)})};
  return out;
}

// ABORT with the sender's tag, and with the T bit and the receiver's; a
// retransmitted INIT; an INIT-ACK with another tag.
Sequence SctpAbort(Alloc& a, bool v6) {
  const Sctp s = NewSctp(a, v6);
  Sequence out = SctpHandshake(s);
  Append(out, {s.Send(false, {Chunk(kData)}), s.Send(true, {Chunk(kAbort)}),
               s.Send(false, {Chunk(kData)}), s.Send(true, {Chunk(kData)})});
  const Sctp t = NewSctp(a, v6);
  Append(out, {t.Init(false), t.Init(false), t.InitAck(true),
               t.Tagged(false, t.Tag(false), {Chunk(kAbort, kTBit)}), t.Send(false, {Chunk(kData)})});
  const Sctp u = NewSctp(a, v6);
  Append(out, {u.Init(false), u.Send(true, {Chunk(kInitAck, 0, SctpInitBody(u.Tag(true)))}),
               u.Send(true, {Chunk(kInitAck, 0, SctpInitBody(u.Tag(true) + 2))}),
               u.Send(false, {Chunk(kCookieEcho)})});
  return out;
}

// A HEARTBEAT on a path no INIT was seen on starts a flow; its ACK
// establishes it. Then a HEARTBEAT with another tag, and the ACK of the
// restarted peer.
Sequence SctpHeartbeatPath(Alloc& a, bool v6) {
  const Sctp s = NewSctp(a, v6);
  Sequence out = {s.Send(false, {Chunk(kHeartbeat)}), s.Send(true, {Chunk(kHeartbeatAck)}),
                  s.Send(false, {Chunk(kData)}), s.Send(true, {Chunk(kData)}),
                  s.Tagged(false, 0x7777, {Chunk(kHeartbeat)}),
                  s.Tagged(true, 0x8888, {Chunk(kHeartbeatAck)}), s.Send(false, {Chunk(kData)}),
                  s.Tagged(true, 0x8888, {Chunk(kData)})};
  return out;
}

// do_basic_checks: a chunk after an INIT, a zero chunk length, COOKIE-ECHO
// not first; a chunk may follow COOKIE-ACK, and a length past the packet's
// end is no error. (A packet without any chunk has no room for the index.)
Sequence SctpChunkChecks(Alloc& a, bool v6) {
  const Sctp s = NewSctp(a, v6);
  std::vector<uint8_t> zero_length = Chunk(kData), too_long = Chunk(kData);
  zero_length[2] = zero_length[3] = 0;
  too_long[3] = 200;
  Sequence out = {s.Tagged(false, 0, {Chunk(kInit, 0, SctpInitBody(s.Tag(false))), Chunk(kData)})};
  Append(out, SctpHandshake(s));
  Append(out, {s.Send(false, {zero_length}), s.Send(false, {Chunk(kData), Chunk(kCookieEcho)}),
               s.Send(true, {Chunk(kCookieAck), Chunk(kData)}), s.Send(false, {too_long}),
               s.Send(false, {Chunk(kData)})});
  return out;
}

struct CaseDef {
  const char* name;
  Sequence (*make)(Alloc&, bool v6);
  enum Families { kBoth, kV4, kV6 } families = kBoth;
};

const std::vector<CaseDef>& Cases() {
  static const std::vector<CaseDef> cases = {
      {"tcp_open_data_close", TcpOpenDataClose},
      {"tcp_rst_in_syn_sent", TcpRstInSynSent},
      {"tcp_rst_in_syn_recv", TcpRstInSynRecv},
      {"tcp_rst_in_established", TcpRstInEstablished},
      {"tcp_rst_in_fin_wait", TcpRstInFinWait},
      {"tcp_rst_after_close", TcpRstAfterClose},
      {"tcp_rst_wrong_seq", TcpRstWrongSeq},
      {"tcp_out_of_window", TcpOutOfWindow},
      {"tcp_ack_of_unseen_data", TcpAckOfUnseenData},
      {"tcp_syn_retransmit", TcpSynRetransmit},
      {"tcp_syn_in_established", TcpSynInEstablished},
      {"tcp_synack_without_syn", TcpSynAckWithoutSyn},
      {"tcp_simultaneous_open", TcpSimultaneousOpen},
      {"tcp_reopen_after_close", TcpReopenAfterClose},
      {"tcp_reopen_after_rst", TcpReopenAfterRst},
      {"tcp_loose_pickup", TcpLoosePickup},
      {"tcp_bad_flags", TcpBadFlags},
      {"tcp_window_scale", TcpWindowScale},
      {"tcp_window_scale_one_side", TcpWindowScaleOneSide},
      {"udp_both_ways", UdpBothWays},
      {"bad_checksums", BadChecksums},
      {"generic_both_ways", GenericBothWays},
      {"ported_protocols", PortedProtocols},
      {"icmp_echo", IcmpEcho},
      {"icmp_queries", IcmpQueries, CaseDef::kV4},
      {"icmp_errors", IcmpErrors},
      {"icmpv6_informational", IcmpV6Informational, CaseDef::kV6},
      {"sctp_association", SctpAssociation},
      {"sctp_wrong_vtag", SctpWrongVtag},
      {"sctp_without_association", SctpWithoutAssociation},
      {"sctp_bad_crc", SctpBadCrc},
      {"sctp_abort", SctpAbort},
      {"sctp_heartbeat_path", SctpHeartbeatPath},
      {"sctp_chunk_checks", SctpChunkChecks},
  };
  return cases;
}

// ---------------------------------------------------------------- traffic

// Packets and, per packet, the case it belongs to.
struct Labelled {
  std::vector<PathPacket> packets;
  std::vector<std::string> labels;
  void Add(const std::string& label, const Sequence& s) {
    for (const PathPacket& p : s) {
      packets.push_back(p);
      labels.push_back(label);
    }
  }
};

// Every case, one after the other: IPv4, then IPv6.
Labelled HandWritten() {
  Alloc a;
  Labelled out;
  for (bool v6 : {false, true}) {
    for (const CaseDef& c : Cases()) {
      if (c.families == (v6 ? CaseDef::kV4 : CaseDef::kV6)) continue;
      out.Add(absl::StrCat(c.name, v6 ? "/6" : "/4"), c.make(a, v6));
    }
  }
  return out;
}

// A seed's mix: some cases of random families, their packets interleaved
// (each case's in order).
Labelled Mixed(uint32_t seed) {
  std::mt19937 rng(seed);
  Alloc a(&rng);
  std::vector<std::string> names;
  std::vector<Sequence> seqs;
  for (int i = 0; i < 8; ++i) {
    const CaseDef& c = Cases()[rng() % Cases().size()];
    const bool v6 = c.families == CaseDef::kV6 || (c.families == CaseDef::kBoth && rng() % 2);
    names.push_back(absl::StrCat(c.name, v6 ? "/6" : "/4", "#", i));
    seqs.push_back(c.make(a, v6));
  }
  Labelled out;
  std::vector<size_t> at(seqs.size(), 0);
  const auto left = [&](size_t i) { return seqs[i].size() - at[i]; };
  size_t total = 0;
  for (size_t i = 0; i < seqs.size(); ++i) total += left(i);
  for (; total > 0; --total) {
    size_t pick = rng() % total;  // weighted by what is left of each
    size_t i = 0;
    while (pick >= left(i)) pick -= left(i++);
    out.Add(names[i], {seqs[i][at[i]++]});
  }
  return out;
}

// ---------------------------------------------------------------- rulesets

std::string ProbeRuleset() {
  const std::pair<const char*, int> states[] = {
      {"invalid", 1}, {"new", 2}, {"established", 3}, {"related", 4}, {"untracked", 5}};
  const std::pair<const char*, const char*> families[] = {{"ipv4", "ip"}, {"ipv6", "ip6"}};
  std::string text =
      "table inet probe {\n"
      "  chain forwarding { type filter hook forward priority 0; policy accept;\n";
  for (auto [family, ip] : families) {
    for (auto [state, code] : states) {
      for (int bits : {24, 8, 16, 0}) {  // reply + assured first
        absl::StrAppend(&text, "    meta nfproto ", family, " ct state ", state,
                        (bits & 8) ? " ct direction reply" : "",
                        (bits & 16) ? " ct status assured" : "", " ", ip, " dscp set ", code + bits,
                        " accept\n");
      }
    }
  }
  return text + "  }\n}\n";
}

struct Stateful {
  std::string name;
  OracleSyntax syntax;
  std::string text;
};

// The iptables-save twin of the nft ruleset, for either family: `icmp`
// holds the family's ICMP rules.
std::string IptablesStateful(const std::string& icmp) {
  return absl::StrCat(R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -m conntrack --ctstate INVALID -j DROP
-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -p tcp --tcp-flags SYN,ACK,RST,FIN SYN -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p udp -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p gre -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p 253 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p sctp -m conntrack --ctstate NEW -j ACCEPT)",
                      icmp, "-A FORWARD -m conntrack --ctstate UNTRACKED -j ACCEPT\nCOMMIT\n");
}

std::vector<Stateful> StatefulRulesets() {
  return {
      {"nft", OracleSyntax::kNft, R"(table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state invalid drop
    ct state established,related accept
    ct state new tcp flags & (syn | ack | rst | fin) == syn accept
    ct state new meta l4proto { udp, gre, 253, sctp } accept
    ct state new icmp type { echo-request, timestamp-request, info-request, address-mask-request } accept
    ct state new icmpv6 type { echo-request, 139 } accept
    ct state untracked accept
  }
}
)"},
      {"iptables", OracleSyntax::kIptablesSave, IptablesStateful(R"(
-A FORWARD -p icmp --icmp-type echo-request -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p icmp --icmp-type timestamp-request -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p icmp --icmp-type 15 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p icmp --icmp-type address-mask-request -m conntrack --ctstate NEW -j ACCEPT
)")},
      {"ip6tables", OracleSyntax::kIp6tablesSave, IptablesStateful(R"(
-A FORWARD -p ipv6-icmp --icmpv6-type echo-request -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p ipv6-icmp --icmpv6-type 139 -m conntrack --ctstate NEW -j ACCEPT
)")},
  };
}

// ---------------------------------------------------------------- the table

// The probe's code in a forwarded frame (its DSCP), 0 for none.
int ProbeCode(const std::vector<uint8_t>& frame) {
  const std::vector<uint8_t> ip = IpPacket(frame);
  if (ip.size() < 2) return 0;
  return (ip[0] >> 4) == 6 ? ((ip[0] & 0x0f) << 2 | ip[1] >> 6) : ip[1] >> 2;
}

// "fwd est reply assured", "drop", ... for a fate and a forwarded frame.
std::string View(const std::string& fate, const std::vector<uint8_t>& frame) {
  if (fate != "forwarded") return fate;
  const int code = ProbeCode(frame);
  if (code == 0) return "fwd";
  static const char* const names[] = {"?", "inv", "new", "est", "rel", "untr", "?", "?"};
  return absl::StrCat("fwd ", names[code & 7], (code & 8) ? " reply" : "",
                      (code & 16) ? " assured" : "");
}

std::string TcpFlags(uint8_t flags) {
  std::string out;
  const char letters[] = "FSRPAU";
  for (int b = 0; b < 6; ++b) {
    if (flags & (1 << b)) out += letters[b];
  }
  return out.empty() ? "none" : out;
}

// The chunk types of an SCTP payload, e.g. "1" or "3,0".
std::string SctpChunkTypes(const std::vector<uint8_t>& chunks) {
  std::vector<int> types;
  for (size_t off = 0; off + 4 <= chunks.size();) {
    types.push_back(chunks[off]);
    const size_t length = chunks[off + 2] << 8 | chunks[off + 3];
    if (length == 0) break;
    off += (length + 3) & ~size_t{3};
  }
  return absl::StrJoin(types, ",");
}

// The packet in a few words: protocol, ends, flags and numbers.
std::string Summary(const FrameSpec& s) {
  std::string out = absl::StrCat(s.src, " > ", s.dst, " ");
  switch (s.proto) {
    case 6:
      absl::StrAppend(&out, "tcp ", s.sport, ">", s.dport, " [", TcpFlags(s.tcp_flags), "] seq ",
                      s.tcp_seq, " ack ", s.tcp_ack, s.tcp_options.empty() ? "" : " opts");
      break;
    case 17:
      absl::StrAppend(&out, "udp ", s.sport, ">", s.dport);
      break;
    case 132:
      absl::StrAppend(&out, "sctp ", s.sport, ">", s.dport, " vtag ", absl::Hex(s.sctp_vtag), " [",
                      SctpChunkTypes(s.payload), "]");
      break;
    case 1:
    case 58:
      absl::StrAppend(&out, s.proto == 1 ? "icmp " : "icmp6 ", s.icmp_type, "/", s.icmp_code);
      if (s.proto == 58 ? s.icmp_type < 128
                        : std::set<int>{3, 4, 5, 11, 12}.contains(s.icmp_type)) {
        // an error: the quoted packet's protocol
        absl::StrAppend(&out, " quoting proto ", s.payload[s.proto == 1 ? 9 : 6]);
      } else {
        absl::StrAppend(&out, " id ", s.icmp_id);
      }
      break;
    default:
      absl::StrAppend(&out, "proto ", s.proto);
  }
  return s.bad_l4_checksum ? out + " bad csum" : out;
}

// Prints one row per packet (case, index, direction, packet, the kernel's
// view, each tier's) when any tier's view differs from the kernel's;
// differing rows are marked '*'. Returns how many rows differ.
int PrintTable(const std::string& what, const Labelled& traffic,
               const std::vector<PathOutcome>& kernel, const std::vector<PathRun>& runs) {
  std::string table =
      absl::StrFormat("%-4s %-3s %-3s %-92s %-22s", "", "#", "dir", "packet", "kernel");
  for (const PathRun& run : runs) absl::StrAppend(&table, absl::StrFormat(" %-22s", run.tier));
  table += "\n";
  int differing = 0;
  for (size_t i = 0; i < kernel.size(); ++i) {
    const std::string want = View(KernelFate(kernel[i]), kernel[i].arrived);
    std::string row;
    bool differs = false;
    for (const PathRun& run : runs) {
      const std::string got = View(run.fates[i], run.written[i]);
      differs |= got != want;
      absl::StrAppend(&row, absl::StrFormat(" %-22s", got));
    }
    differing += differs;
    if (i == 0 || traffic.labels[i] != traffic.labels[i - 1]) {
      absl::StrAppend(&table, traffic.labels[i], "\n");
    }
    absl::StrAppend(&table,
                    absl::StrFormat("%-4s %-3d %-3s %-92s %-22s", differs ? "*" : "", i,
                                    traffic.packets[i].from_server ? "s>c" : "c>s",
                                    Summary(traffic.packets[i].spec), want),
                    row, "\n");
  }
  if (differing > 0) {
    std::printf("%s: %d packets where rulejit's conntrack differs from the kernel's\n%s\n",
                what.c_str(), differing, table.c_str());
  }
  return differing;
}

// ---------------------------------------------------------------- runs

struct Env {
  ScratchDir dir{"rulejit-ct"};
  std::vector<std::string> tiers = SupportedTiers(dir.path);
};

// Runs `traffic` through `ruleset` in the kernel and in rulejit on every
// tier; expects the same fates and forwarded bytes, and prints the table
// of differences. The kernel's outcomes, or none when it failed.
// Time between frames, for timeouts: waits before frames (the kernel's
// run sleeps them; the pcap's timestamps say them to rulejit) and the
// conntrack sysctls both sides are given.
struct Timing {
  std::vector<int> wait_ms_before;
  std::vector<std::pair<std::string, std::string>> sysctls;  // nf_conntrack_NAME, value
};

// Frame i's capture time: 1 s, 1 ms per frame, and the waits so far.
std::vector<uint64_t> FrameTimes(size_t count, const Timing& timing) {
  std::vector<uint64_t> times;
  uint64_t ms = 1000;
  for (size_t i = 0; i < count; ++i) {
    ms += 1 + (i < timing.wait_ms_before.size() ? timing.wait_ms_before[i] : 0);
    times.push_back(ms * 1000000ull);
  }
  return times;
}

std::optional<std::vector<PathOutcome>> Compare(Env& env, const std::string& what,
                                                const OracleRuleset& ruleset,
                                                const Labelled& traffic,
                                                const Timing& timing = {}) {
  const std::string pcap = env.dir.path + "/frames.pcap";
  absl::StatusOr<PathTraffic> built =
      WritePathTraffic(traffic.packets, pcap, FrameTimes(traffic.packets.size(), timing));
  EXPECT_TRUE(built.ok()) << what << ": " << built.status();
  if (!built.ok()) return std::nullopt;
  std::string host;
  OracleOptions options{.fw_host_json = &host, .wait_ms_before = timing.wait_ms_before};
  std::vector<std::string> flags;
  for (const auto& [name, value] : timing.sysctls) {
    options.fw_sysctls.push_back({"netfilter/" + name, value});
    flags.push_back(absl::StrCat(name, "=", value));
  }
  absl::StatusOr<std::vector<PathOutcome>> kernel =
      KernelPathOutcomes(ruleset, built->frames, options, built->from_server);
  EXPECT_TRUE(kernel.ok()) << what << ": " << kernel.status();
  if (!kernel.ok()) return std::nullopt;
  const std::string file = absl::StrCat(env.dir.path, "/ruleset",
                                        ruleset.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
  std::ofstream(file) << ruleset.text;
  std::ofstream(env.dir.path + "/host.json") << host;
  std::vector<PathRun> runs;
  std::string args = absl::StrCat("--host ", env.dir.path, "/host.json");
  if (!flags.empty()) absl::StrAppend(&args, " --sysctl ", absl::StrJoin(flags, ","));
  ExpectKernelPath(what, file, pcap, args, *kernel, env.tiers, env.dir.path, &runs);
  PrintTable(what, traffic, *kernel, runs);
  return *kernel;
}

bool Available() {
  for (OracleSyntax s :
       {OracleSyntax::kNft, OracleSyntax::kIptablesSave, OracleSyntax::kIp6tablesSave}) {
    if (!OracleAvailable(s).ok()) return false;
  }
  return true;
}

TEST(ConntrackKernel, ProbeStatesOfHandWrittenSequences) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const Labelled traffic = HandWritten();
  std::optional<std::vector<PathOutcome>> kernel =
      Compare(env, "probe", {.syntax = OracleSyntax::kNft, .text = ProbeRuleset()}, traffic);
  ASSERT_TRUE(kernel.has_value());
  // The probe accepts all: the kernel forwards every frame, and the
  // sequences show every state, both directions and assured flows.
  std::set<int> codes;
  for (size_t i = 0; i < kernel->size(); ++i) {
    EXPECT_TRUE((*kernel)[i].forwarded) << "frame " << i << " " << traffic.labels[i];
    codes.insert(ProbeCode((*kernel)[i].arrived));
  }
  std::set<int> states, bits;
  for (int code : codes) {
    states.insert(code & 7);
    bits.insert(code & 24);
  }
  EXPECT_EQ(states, (std::set<int>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(bits.contains(8) && bits.contains(16)) << "no reply or no assured packet";
}

TEST(ConntrackKernel, StatefulRulesetsOnHandWrittenSequences) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const Labelled traffic = HandWritten();
  for (const Stateful& s : StatefulRulesets()) {
    std::optional<std::vector<PathOutcome>> kernel =
        Compare(env, s.name, {.syntax = s.syntax, .text = s.text}, traffic);
    ASSERT_TRUE(kernel.has_value()) << s.name;
    std::set<std::string> fates;
    for (const PathOutcome& o : *kernel) fates.insert(KernelFate(o));
    EXPECT_EQ(fates, (std::set<std::string>{"drop", "forwarded"})) << s.name;
  }
}

// Timeouts, with the kernel's clock: short sysctl timeouts on both sides,
// real waits in the kernel's run and the same gaps in the capture's
// timestamps. Flows that outlive their timeout are gone (their next
// packet is NEW, or INVALID when it cannot start a flow); a UDP flow with
// traffic both ways for over 2 s becomes a stream (assured, the longer
// timeout) and outlives the short one. SCTP flows expire by the timeout
// of their state (nf_conntrack_sctp_timeout_*).
TEST(ConntrackKernel, TimeoutsPassInPacketTime) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  Alloc a;
  Labelled traffic;
  Timing timing{.sysctls = {{"nf_conntrack_udp_timeout", "2"},
                            {"nf_conntrack_udp_timeout_stream", "5"},
                            {"nf_conntrack_tcp_timeout_syn_sent", "2"},
                            {"nf_conntrack_tcp_timeout_established", "2"},
                            {"nf_conntrack_icmp_timeout", "2"},
                            {"nf_conntrack_icmpv6_timeout", "2"},
                            {"nf_conntrack_sctp_timeout_closed", "2"},
                            {"nf_conntrack_sctp_timeout_established", "2"}}};
  // The flows of one family, and what each sends when.
  struct Flows {
    std::string f;
    Ends expires, alive, stream, ping;
    Tcp syn_only, idle;
    Sctp sctp_init, sctp_assoc;
  };
  std::vector<Flows> families;
  for (bool v6 : {false, true}) {
    Ends e1 = a.Next(v6), e2 = a.Next(v6), e3 = a.Next(v6), e4 = a.Next(v6);
    families.push_back({v6 ? "/6" : "/4", e1, e2, e3, e4, NewTcp(a, v6), NewTcp(a, v6),
                        NewSctp(a, v6), NewSctp(a, v6)});
  }
  // Each phase starts after its wait; the packets of a phase follow at once.
  auto phase = [&](int wait_ms, auto&& packets_of) {
    bool first = true;
    for (Flows& fl : families) {
      for (auto& [label, p] : packets_of(fl)) {
        timing.wait_ms_before.push_back(first ? wait_ms : 0);
        first = false;
        traffic.Add(label + fl.f, {p});
      }
    }
  };
  using Step = std::vector<std::pair<std::string, PathPacket>>;
  phase(0, [](Flows& fl) {  // t = 0: every flow starts
    Step s = {{"udp_expires", Packet(fl.expires, false, 17)},
              {"udp_alive", Packet(fl.alive, false, 17)},
              {"udp_stream", Packet(fl.stream, false, 17)},
              {"udp_stream", Packet(fl.stream, true, 17)},
              {"tcp_syn_expires", fl.syn_only.Send(false, kSyn)},
              {"icmp_expires", Icmp(fl.ping, false, fl.ping.v6 ? 128 : 8)}};
    for (const PathPacket& p : Handshake(fl.idle)) s.push_back({"tcp_established_expires", p});
    s.push_back({"sctp_init_expires", fl.sctp_init.Init(false)});
    for (const PathPacket& p : SctpHandshake(fl.sctp_assoc)) {
      s.push_back({"sctp_established_expires", p});
    }
    return s;
  });
  phase(1000, [](Flows& fl) {  // t = 1 s: within the 2 s
    return Step{{"udp_alive", Packet(fl.alive, true, 17)}};
  });
  phase(500, [](Flows& fl) {  // t = 1.5 s: replied, not yet a stream
    return Step{{"udp_stream", Packet(fl.stream, false, 17)},
                {"sctp_established_expires", fl.sctp_assoc.Send(false, {Chunk(kData)})}};
  });
  phase(1500, [](Flows& fl) {  // t = 3 s: the 2 s flows are gone; the stream is one
    return Step{{"udp_expires", Packet(fl.expires, true, 17)},
                {"tcp_syn_expires", fl.syn_only.Send(true, kSyn | kAck)},
                {"tcp_established_expires", fl.idle.Send(false, kPsh | kAck)},
                {"icmp_expires", Icmp(fl.ping, true, fl.ping.v6 ? 129 : 0)},
                {"udp_stream", Packet(fl.stream, true, 17)},
                {"sctp_init_expires", fl.sctp_init.InitAck(true)},
                {"sctp_established_expires", fl.sctp_assoc.Send(true, {Chunk(kData)})}};
  });
  phase(3000, [](Flows& fl) {  // t = 6 s: only the stream (5 s) lives
    return Step{{"udp_stream", Packet(fl.stream, false, 17)},
                {"udp_alive", Packet(fl.alive, false, 17)},
                {"sctp_established_expires", fl.sctp_assoc.Send(false, {Chunk(kData)})}};
  });
  std::optional<std::vector<PathOutcome>> kernel = Compare(
      env, "timeouts", {.syntax = OracleSyntax::kNft, .text = ProbeRuleset()}, traffic, timing);
  ASSERT_TRUE(kernel.has_value());
  // The kernel saw the timeouts: the late UDP answer starts a new flow, the
  // late SYN-ACK is invalid, the stream's last packet is assured.
  const auto code_of = [&](const std::string& label, int nth) {
    for (size_t i = 0; i < traffic.labels.size(); ++i) {
      if (traffic.labels[i] == label && nth-- == 0) return ProbeCode((*kernel)[i].arrived);
    }
    return -1;
  };
  EXPECT_EQ(code_of("udp_expires/4", 1), 2);        // new, original direction
  EXPECT_EQ(code_of("tcp_syn_expires/4", 1), 1);    // invalid
  EXPECT_EQ(code_of("udp_stream/4", 4), 3 + 16);    // established, assured
  EXPECT_EQ(code_of("udp_alive/4", 1), 3 + 8);      // established reply
  // SCTP: CLOSED after the INIT lasts 2 s, so its INIT-ACK is invalid;
  // the association lives 2 s past its last packet, then DATA is invalid.
  EXPECT_EQ(code_of("sctp_init_expires/4", 1), 1);
  EXPECT_EQ(code_of("sctp_established_expires/4", 5), 3 + 8 + 16);
  EXPECT_EQ(code_of("sctp_established_expires/4", 6), 1);
}

// Zones and `ct expiration`: a raw prerouting chain puts packets from the
// client side in zone 1 (IPv4: both directions, `ct zone set 1`; IPv6: the
// original direction only, `ct original zone set 1`), so an IPv4 reply,
// looked up in zone 0, misses its flow, and an IPv6 one finds it. The probe
// writes state, zone and expiration into the DSCP: 1 invalid, 5 untracked,
// else 8 + 9 * (new, established, related) + 3 * (zone 0, zone 1 both
// ways, zone 1 original only) + (expiration < 1 s, 1-31 s, > 31 s).
std::string ZoneProbeRuleset() {
  const char* states[] = {"new", "established", "related"};
  const char* zones[] = {"ct zone 0", "ct zone 1 ct reply zone 1", "ct zone 1 ct reply zone 0"};
  const char* expirations[] = {"ct expiration < 1s", "ct expiration 1s-31s",
                               "ct expiration > 31s"};
  std::string text = R"(table inet zones {
  chain raw { type filter hook prerouting priority raw; policy accept;
    ip saddr 10.1.0.0/16 ct zone set 1
    ip6 saddr 2001:db8:1::/48 ct original zone set 1
  }
  chain forwarding { type filter hook forward priority 0; policy accept;
)";
  for (const char* ip : {"ip", "ip6"}) {
    absl::StrAppend(&text, "    meta nfproto ", ip == std::string("ip") ? "ipv4" : "ipv6",
                    " ct state invalid ", ip, " dscp set 1 accept\n");
    absl::StrAppend(&text, "    meta nfproto ", ip == std::string("ip") ? "ipv4" : "ipv6",
                    " ct state untracked ", ip, " dscp set 5 accept\n");
    for (int st = 0; st < 3; ++st) {
      for (int z = 0; z < 3; ++z) {
        for (int x = 0; x < 3; ++x) {
          absl::StrAppend(&text, "    meta nfproto ", ip == std::string("ip") ? "ipv4" : "ipv6",
                          " ct state ", states[st], " ", zones[z], " ", expirations[x], " ", ip,
                          " dscp set ", 8 + 9 * st + 3 * z + x, " accept\n");
        }
      }
    }
  }
  return text + "  }\n}\n";
}

// The same zones for iptables (CT --zone: both directions) with a filter
// that reads --ctexpire: established flows with over 31 s left pass, new
// flows from the client side pass, ICMP errors that are related pass.
constexpr const char* kIptablesZones = R"(*raw
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A PREROUTING -s 10.1.0.0/16 -j CT --zone 1
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -m conntrack --ctstate ESTABLISHED --ctexpire 31:4294967 -j ACCEPT
-A FORWARD -s 10.1.0.0/16 -m conntrack --ctstate NEW -j ACCEPT
-A FORWARD -p udp -m conntrack --ctstate NEW --ctexpire 0:0 -j ACCEPT
-A FORWARD -p icmp -m conntrack --ctstate RELATED -j ACCEPT
COMMIT
)";

// Per family: a UDP exchange, an echo, a TCP handshake with data, and ICMP
// errors about the UDP flow from a router on the server side.
Labelled ZoneTraffic() {
  Alloc a;
  Labelled traffic;
  for (bool v6 : {false, true}) {
    const std::string f = v6 ? "/6" : "/4";
    const Ends udp = a.Next(v6), ping = a.Next(v6);
    Tcp tcp = NewTcp(a, v6);
    const PathPacket query = Packet(udp, false, 17);
    traffic.Add("udp" + f, {query, Packet(udp, true, 17), query, Packet(udp, true, 17)});
    traffic.Add("icmp_echo" + f, {Icmp(ping, false, v6 ? 128 : 8), Icmp(ping, true, v6 ? 129 : 0),
                                  Icmp(ping, false, v6 ? 128 : 8)});
    Sequence t = Handshake(tcp);
    Append(t, Data(tcp));
    traffic.Add("tcp" + f, t);
    traffic.Add("icmp_error" + f,
                {IcmpError(true, Router(udp), udp.client, v6 ? 1 : 3, v6 ? 4 : 3, query)});
  }
  return traffic;
}

TEST(ConntrackKernel, ZonesAndExpiration) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const Labelled traffic = ZoneTraffic();
  std::optional<std::vector<PathOutcome>> kernel = Compare(
      env, "zones probe", {.syntax = OracleSyntax::kNft, .text = ZoneProbeRuleset()}, traffic);
  ASSERT_TRUE(kernel.has_value());
  // The kernel saw what the test is about: an IPv4 reply NEW in zone 0 and
  // an IPv6 reply established in the original-only zone, unconfirmed
  // flows with expiration 0 and long-lived TCP ones.
  std::set<int> codes;
  for (const PathOutcome& o : *kernel) codes.insert(ProbeCode(o.arrived));
  EXPECT_TRUE(codes.contains(8 + 0 + 3 * 0 + 0)) << "no reply new in zone 0";
  EXPECT_TRUE(codes.contains(8 + 9 + 3 * 2 + 1)) << "no reply established, original-only zone";
  EXPECT_TRUE(codes.contains(8 + 9 + 3 * 2 + 2)) << "no established TCP, original-only zone";
  EXPECT_TRUE(codes.contains(8 + 0 + 3 * 1 + 1)) << "no confirmed new flow in zone 1";
  EXPECT_TRUE(codes.contains(1)) << "no invalid packet (the IPv4 SYN-ACK in zone 0)";
  EXPECT_TRUE(codes.contains(8 + 18 + 3 * 2 + 1)) << "no related error, original-only zone";

  std::optional<std::vector<PathOutcome>> ipt = Compare(
      env, "zones iptables", {.syntax = OracleSyntax::kIptablesSave, .text = kIptablesZones},
      traffic);
  ASSERT_TRUE(ipt.has_value());
  std::set<std::string> fates;
  for (const PathOutcome& o : *ipt) fates.insert(KernelFate(o));
  EXPECT_EQ(fates, (std::set<std::string>{"drop", "forwarded"}));
}

TEST(ConntrackKernel, SeededMixes) {
  if (!Available()) GTEST_SKIP() << "needs root, ip netns, nft and iptables-legacy";
  Env env;
  const char* only = std::getenv("RULEJIT_CT_SEED");
  const char* many = std::getenv("RULEJIT_CT_SEEDS");
  const int seeds = many != nullptr ? std::atoi(many) : kSeeds;
  for (int seed = 1; seed <= seeds; ++seed) {
    if (only != nullptr && std::atoi(only) != seed) continue;
    const Labelled traffic = Mixed(seed);
    const std::string what = absl::StrCat("seed ", seed, " (RULEJIT_CT_SEED=", seed, ")");
    Compare(env, what + " probe", {.syntax = OracleSyntax::kNft, .text = ProbeRuleset()}, traffic);
    const Stateful nft = StatefulRulesets()[0];
    Compare(env, what + " nft", {.syntax = nft.syntax, .text = nft.text}, traffic);
  }
}

}  // namespace
}  // namespace rulejit::testing
