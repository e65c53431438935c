// Connection sequences for the conntrack kernel test
// (conntrack_kernel_test.cc): the flow ends and their allocator, TCP and
// SCTP connection builders, ICMP message builders, and the table of named
// cases. Shared here so that the cases of each protocol live in a file of
// their own (ct_tcp_sequences.cc, ct_udp_icmp_sequences.cc,
// ct_sctp_sequences.cc) and the test keeps only traffic, rulesets and runs.
// Every packet carries 4 payload bytes where the harness's index lands.
#ifndef RULEJIT_TESTS_KERNEL_CT_SEQUENCES_H_
#define RULEJIT_TESTS_KERNEL_CT_SEQUENCES_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing::ct {

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
std::string Router(const Ends& e);
std::string OtherClient(const Ends& e);

// A packet of the flow with 4 payload bytes (the harness's index).
PathPacket Packet(const Ends& e, bool from_server, uint8_t proto);

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
Tcp NewTcp(Alloc& a, bool v6);

using Sequence = std::vector<PathPacket>;

void Append(Sequence& to, const Sequence& more);

Sequence Handshake(Tcp& t);
Sequence Data(Tcp& t);
Sequence Close(Tcp& t);

// An ICMP (v4 ends) or ICMPv6 (v6 ends) message of the flow's echo id.
PathPacket Icmp(const Ends& e, bool from_server, uint8_t type, uint8_t code = 0,
                size_t payload = 4);

// An ICMP/ICMPv6 error from `src` to `dst` quoting `quoted` as it was sent.
PathPacket IcmpError(bool from_server, const std::string& src, const std::string& dst, uint8_t type,
                     uint8_t code, const PathPacket& quoted);

// ---------------------------------------------------------------- SCTP

// SCTP chunk types.
constexpr uint8_t kData = 0, kInit = 1, kInitAck = 2, kSack = 3, kHeartbeat = 4,
                  kHeartbeatAck = 5, kAbort = 6, kShutdown = 7, kShutdownAck = 8,
                  kCookieEcho = 10, kCookieAck = 11, kShutdownComplete = 14;
constexpr uint8_t kTBit = 0x01;  // ABORT / SHUTDOWN-COMPLETE: the receiver's tag

// A chunk whose value is `body` and 4 bytes nothing reads, where the
// harness's index lands when the chunk ends the packet.
std::vector<uint8_t> Chunk(uint8_t type, uint8_t flags = 0, std::vector<uint8_t> body = {});

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
Sctp NewSctp(Alloc& a, bool v6);

Sequence SctpHandshake(const Sctp& s);

// ---------------------------------------------------------------- cases

// A named case: a sequence builder and the families it runs in.
struct CaseDef {
  const char* name;
  Sequence (*make)(Alloc&, bool v6);
  enum Families { kBoth, kV4, kV6 } families = kBoth;
};

// Every case, in the order the hand-written run plays them.
const std::vector<CaseDef>& Cases();

// The builders, by protocol (ct_tcp_sequences.cc, ct_udp_icmp_sequences.cc,
// ct_sctp_sequences.cc); each allocates fresh ends from `a`.
Sequence TcpOpenDataClose(Alloc& a, bool v6);
Sequence TcpRstInSynSent(Alloc& a, bool v6);
Sequence TcpRstInSynRecv(Alloc& a, bool v6);
Sequence TcpRstInEstablished(Alloc& a, bool v6);
Sequence TcpRstInFinWait(Alloc& a, bool v6);
Sequence TcpRstAfterClose(Alloc& a, bool v6);
Sequence TcpRstWrongSeq(Alloc& a, bool v6);
Sequence TcpOutOfWindow(Alloc& a, bool v6);
Sequence TcpAckOfUnseenData(Alloc& a, bool v6);
Sequence TcpSynRetransmit(Alloc& a, bool v6);
Sequence TcpSynInEstablished(Alloc& a, bool v6);
Sequence TcpSynAckWithoutSyn(Alloc& a, bool v6);
Sequence TcpSimultaneousOpen(Alloc& a, bool v6);
Sequence TcpReopenAfterClose(Alloc& a, bool v6);
Sequence TcpReopenAfterRst(Alloc& a, bool v6);
Sequence TcpLoosePickup(Alloc& a, bool v6);
Sequence TcpBadFlags(Alloc& a, bool v6);
Sequence TcpWindowScale(Alloc& a, bool v6);
Sequence TcpWindowScaleOneSide(Alloc& a, bool v6);
Sequence UdpBothWays(Alloc& a, bool v6);
Sequence BadChecksums(Alloc& a, bool v6);
Sequence GenericBothWays(Alloc& a, bool v6);
Sequence PortedProtocols(Alloc& a, bool v6);
Sequence IcmpEcho(Alloc& a, bool v6);
Sequence IcmpQueries(Alloc& a, bool v6);
Sequence IcmpErrors(Alloc& a, bool v6);
Sequence IcmpV6Informational(Alloc& a, bool v6);
Sequence SctpAssociation(Alloc& a, bool v6);
Sequence SctpWrongVtag(Alloc& a, bool v6);
Sequence SctpWithoutAssociation(Alloc& a, bool v6);
Sequence SctpBadCrc(Alloc& a, bool v6);
Sequence SctpAbort(Alloc& a, bool v6);
Sequence SctpHeartbeatPath(Alloc& a, bool v6);
Sequence SctpChunkChecks(Alloc& a, bool v6);

}  // namespace rulejit::testing::ct

#endif  // RULEJIT_TESTS_KERNEL_CT_SEQUENCES_H_
