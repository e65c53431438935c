// SCTP sequences for the conntrack kernel test: associations (handshake,
// data, heartbeats, shutdown, ABORT), wrong verification tags, chunks
// without an association, bad CRC32c and malformed chunk lists.
#include "tests/kernel/ct_sequences.h"

#include <vector>

namespace rulejit::testing::ct {

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

}  // namespace rulejit::testing::ct
