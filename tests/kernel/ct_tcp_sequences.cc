// TCP sequences for the conntrack kernel test: handshakes, data, closes,
// RST in every state, packets out of the window, retransmits, reopens,
// loose pickup, bad flag combinations and window scaling.
#include "tests/kernel/ct_sequences.h"

#include <vector>

namespace rulejit::testing::ct {

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

}  // namespace rulejit::testing::ct
