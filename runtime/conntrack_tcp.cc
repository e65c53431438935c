// TCP tracking; see conntrack_tcp.h. Every rule follows
// net/netfilter/nf_conntrack_proto_tcp.c of Linux 6.18 (function names
// cited), read for its behaviour, written anew.
#include "runtime/conntrack_tcp.h"

#include <algorithm>

#include "runtime/conntrack.h"

namespace rulejit::runtime {
namespace {

constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10, kUrg = 0x20,
                  kEce = 0x40, kCwr = 0x80;

// IP_CT_TCP_FLAG_* (per direction) and the IP_CT_* bits of last_flags.
constexpr uint8_t kFlagWindowScale = 0x01, kFlagSackPerm = 0x02, kFlagCloseInit = 0x04,
                  kFlagBeLiberal = 0x08, kFlagDataUnacknowledged = 0x10, kFlagMaxackSet = 0x20,
                  kExpChallengeAck = 0x40, kSimultaneousOpen = 0x80;

// enum tcp_bit_set: the row of the state table.
enum Index : uint8_t { kSynSet, kSynAckSet, kFinSet, kAckSet, kRstSet, kNoneSet };

constexpr uint8_t kMaxWscale = 14;
constexpr uint32_t kMaxAckWinConst = 66000;

// tcp_conntracks[dir][index][state], the kernel's table.
constexpr uint8_t sNO = kTcpNone, sSS = kTcpSynSent, sSR = kTcpSynRecv, sES = kTcpEstablished,
                  sFW = kTcpFinWait, sCW = kTcpCloseWait, sLA = kTcpLastAck, sTW = kTcpTimeWait,
                  sCL = kTcpClose, sS2 = kTcpSynSent2, sIV = kTcpMax, sIG = kTcpIgnore;
constexpr uint8_t kStateTable[2][6][10] = {
    {
        // original:  sNO  sSS  sSR  sES  sFW  sCW  sLA  sTW  sCL  sS2
        /* syn */ {sSS, sSS, sIG, sIG, sIG, sIG, sIG, sSS, sSS, sS2},
        /* synack */ {sIV, sIV, sSR, sIV, sIV, sIV, sIV, sIV, sIV, sSR},
        /* fin */ {sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV},
        /* ack */ {sES, sIV, sES, sES, sCW, sCW, sTW, sTW, sCL, sIV},
        /* rst */ {sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL},
        /* none */ {sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV},
    },
    {
        // reply:     sNO  sSS  sSR  sES  sFW  sCW  sLA  sTW  sCL  sS2
        /* syn */ {sIV, sS2, sIV, sIV, sIV, sIV, sIV, sSS, sIV, sS2},
        /* synack */ {sIV, sSR, sIG, sIG, sIG, sIG, sIG, sIG, sIG, sSR},
        /* fin */ {sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV},
        /* ack */ {sIV, sIG, sSR, sES, sCW, sCW, sTW, sTW, sCL, sIG},
        /* rst */ {sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL},
        /* none */ {sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV},
    },
};

bool Before(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
bool After(uint32_t a, uint32_t b) { return Before(b, a); }

// get_conntrack_index
Index IndexOf(uint8_t flags) {
  if (flags & kRst) return kRstSet;
  if (flags & kSyn) return (flags & kAck) ? kSynAckSet : kSynSet;
  if (flags & kFin) return kFinSet;
  if (flags & kAck) return kAckSet;
  return kNoneSet;
}

// segment_seq_plus_len
uint32_t SeqPlusLen(const TcpSegment& seg) {
  return seg.seq + seg.payload_len + ((seg.flags & kSyn) ? 1 : 0) + ((seg.flags & kFin) ? 1 : 0);
}

uint32_t MaxAckWindow(const TcpSide& sender) {
  return std::max(sender.td_maxwin, kMaxAckWinConst);
}

uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// tcp_options: window scale and SACK-permitted of a SYN.
void ReadOptions(const TcpSegment& seg, TcpSide& side) {
  int length = seg.header_len - 20;
  if (length <= 0) return;
  side.td_scale = 0;
  side.flags &= kFlagBeLiberal;
  const uint8_t* p = seg.options;
  while (length > 0) {
    const uint8_t opcode = *p++;
    if (opcode == 0) return;  // EOL
    if (opcode == 1) {        // NOP
      --length;
      continue;
    }
    if (length < 2) return;
    const int opsize = *p++;
    if (opsize < 2 || opsize > length) return;  // silly or partial options
    if (opcode == 4 && opsize == 2) {
      side.flags |= kFlagSackPerm;
    } else if (opcode == 3 && opsize == 3) {
      side.td_scale = std::min<uint8_t>(*p, kMaxWscale);
      side.flags |= kFlagWindowScale;
    }
    p += opsize - 2;
    length -= opsize;
  }
}

// tcp_sack: the highest right edge of the SACK blocks, if above `sack`.
void ReadSack(const TcpSegment& seg, uint32_t* sack) {
  int length = seg.header_len - 20;
  if (length <= 0) return;
  const uint8_t* p = seg.options;
  // NOP NOP TIMESTAMP(10): the common timestamp-only header.
  if (length == 12 && p[0] == 1 && p[1] == 1 && p[2] == 8 && p[3] == 10) return;
  while (length > 0) {
    const uint8_t opcode = *p++;
    if (opcode == 0) return;
    if (opcode == 1) {
      --length;
      continue;
    }
    if (length < 2) return;
    const int opsize = *p++;
    if (opsize < 2 || opsize > length) return;
    if (opcode == 5 && opsize >= 10 && (opsize - 2) % 8 == 0) {
      for (int i = 0; i < opsize - 2; i += 8) {
        const uint32_t edge = Be32(p + i + 4);
        if (After(edge, *sack)) *sack = edge;
      }
      return;
    }
    p += opsize - 2;
    length -= opsize;
  }
}

// tcp_init_sender: a SYN-ACK in reply to a SYN, or a SYN from the reply
// direction in a simultaneous open.
void InitSender(TcpSide& sender, TcpSide& receiver, const TcpSegment& seg, uint32_t end,
                uint32_t win, bool reply) {
  sender.td_end = sender.td_maxend = end;
  sender.td_maxwin = win == 0 ? 1 : win;
  ReadOptions(seg, sender);
  // RFC 1323: scaling only when both sides sent the option.
  if (reply && !((sender.flags & kFlagWindowScale) && (receiver.flags & kFlagWindowScale))) {
    sender.td_scale = 0;
    receiver.td_scale = 0;
  }
}

enum class Window { kAccept, kIgnore, kInvalid };

// nf_tcp_log_invalid: a liberal sender's problems are forgiven.
Window Forgive(const TcpSide& sender, const ConntrackOptions& o, Window w) {
  return ((sender.flags & kFlagBeLiberal) || o.tcp_be_liberal) ? Window::kAccept : w;
}

// tcp_in_window
Window InWindow(TcpTrack& t, bool reply, Index index, const TcpSegment& seg,
                const ConntrackOptions& o) {
  const int dir = reply ? 1 : 0;
  TcpSide& sender = t.seen[dir];
  TcpSide& receiver = t.seen[!dir];
  uint32_t seq = seg.seq, ack = seg.ack, sack = seg.ack, win = seg.window;
  uint32_t end = SeqPlusLen(seg);
  const bool syn = seg.flags & kSyn, has_ack = seg.flags & kAck, rst = seg.flags & kRst;
  if (receiver.flags & kFlagSackPerm) ReadSack(seg, &sack);

  if (sender.td_maxwin == 0) {
    if (syn) {
      InitSender(sender, receiver, seg, end, win, reply);
      if (!has_ack) return Window::kAccept;  // simultaneous open
    } else {
      // Mid-connection: its history is lost to us; take the packet's data.
      sender.td_end = end;
      const uint32_t swin = win << sender.td_scale;
      sender.td_maxwin = swin == 0 ? 1 : swin;
      sender.td_maxend = end + sender.td_maxwin;
      if (receiver.td_maxwin == 0) {
        receiver.td_end = receiver.td_maxend = sack;
      } else if (sack == receiver.td_end + 1) {
        ++receiver.td_end;  // likely the answer to a keepalive
      }
    }
  } else if (syn && After(end, sender.td_end) &&
             (t.state == kTcpSynSent || t.state == kTcpSynRecv)) {
    // A re-initialised sender (RFC 793): start this direction afresh.
    InitSender(sender, receiver, seg, end, win, reply);
    if (reply && !has_ack) return Window::kAccept;
  }

  if (!has_ack) {
    ack = sack = receiver.td_end;  // pretend it was set and fine
  } else if (rst && ack == 0) {
    ack = sack = receiver.td_end;  // broken stacks: RST|ACK with ack 0
  }
  if (rst && seq == 0 && t.state == kTcpSynSent) seq = end = sender.td_end;  // RST to a SYN

  if (!Before(seq, sender.td_maxend + 1)) {
    const uint32_t overshot = end - sender.td_maxend + 1;
    const bool ack_ok = After(sack, receiver.td_end - MaxAckWindow(sender) - 1);
    const bool in_recv_win =
        receiver.td_maxwin != 0 && After(end, sender.td_end - receiver.td_maxwin - 1);
    if (in_recv_win && ack_ok && overshot <= receiver.td_maxwin &&
        Before(sack, receiver.td_end + 1)) {
      // A sender overshooting the window: keep its end so the peer's ACK
      // of that data stays valid.
      sender.td_end = end;
      sender.flags |= kFlagDataUnacknowledged;
      return Forgive(sender, o, Window::kIgnore);
    }
    return Forgive(sender, o, Window::kInvalid);  // SEQ over the upper bound
  }
  if (!Before(sack, receiver.td_end + 1)) {
    return Forgive(sender, o, Window::kInvalid);  // ACK of data not seen yet
  }
  const bool in_recv_win =
      receiver.td_maxwin == 0 || After(end, sender.td_end - receiver.td_maxwin - 1);
  if (!in_recv_win) return Forgive(sender, o, Window::kIgnore);  // retransmitted old data
  if (!After(sack, receiver.td_end - MaxAckWindow(sender) - 1)) {
    return Forgive(sender, o, Window::kIgnore);  // ACK under the lower bound
  }

  if (!syn) win <<= sender.td_scale;
  const uint32_t swin = win + (sack - ack);
  sender.td_maxwin = std::max(sender.td_maxwin, swin);
  if (After(end, sender.td_end)) {
    sender.td_end = end;
    sender.flags |= kFlagDataUnacknowledged;
  }
  if (has_ack) {
    if (!(sender.flags & kFlagMaxackSet)) {
      sender.td_maxack = ack;
      sender.flags |= kFlagMaxackSet;
    } else if (After(ack, sender.td_maxack)) {
      sender.td_maxack = ack;
    }
  }
  if (receiver.td_maxwin != 0 && After(end, sender.td_maxend)) {
    receiver.td_maxwin += end - sender.td_maxend;
  }
  if (After(sack + win, receiver.td_maxend - 1)) {
    receiver.td_maxend = sack + win;
    if (win == 0) ++receiver.td_maxend;
  }
  if (ack == receiver.td_end) receiver.flags &= ~kFlagDataUnacknowledged;

  if (index == kAckSet) {  // retransmissions
    if (t.last_dir == dir && t.last_seq == seq && t.last_ack == ack && t.last_end == end &&
        t.last_win == seg.window) {
      ++t.retrans;
    } else {
      t.last_dir = static_cast<uint8_t>(dir);
      t.last_seq = seq;
      t.last_ack = ack;
      t.last_end = end;
      t.last_win = seg.window;
      t.retrans = 0;
    }
  }
  return Window::kAccept;
}

// tcp_valid_flags: the combinations of FIN, SYN, RST, ACK and URG that are
// not errors (PSH, ECE and CWR are always fine).
bool ValidFlags(uint8_t flags) {
  switch (flags & ~(kEce | kCwr | kPsh)) {
    case kSyn: case kSyn | kUrg: case kSyn | kAck: case kRst: case kRst | kAck:
    case kFin | kAck: case kFin | kAck | kUrg: case kAck: case kAck | kUrg:
      return true;
    default:
      return false;
  }
}

// tcp_new: the first segment of a flow. False: it cannot start one.
bool StartFlow(TcpTrack& t, const TcpSegment& seg, const ConntrackOptions& o) {
  const uint8_t first = kStateTable[0][IndexOf(seg.flags)][kTcpNone];
  if (first >= kTcpMax) return false;
  if (first != kTcpSynSent && !o.tcp_loose) return false;  // no pickup
  t = TcpTrack{};
  TcpSide& s = t.seen[0];
  s.td_end = SeqPlusLen(seg);
  s.td_maxwin = seg.window == 0 ? 1 : seg.window;
  if (first == kTcpSynSent) {
    s.td_maxend = s.td_end;
    ReadOptions(seg, s);
  } else {
    // Picked up mid-stream: assume SACK and be liberal (window scaling unknown).
    s.td_maxend = s.td_end + s.td_maxwin;
    t.seen[0].flags = t.seen[1].flags = kFlagSackPerm | kFlagBeLiberal;
  }
  t.last_index = kNoneSet;
  return true;
}

// The "ignored" path: remember the segment so a later answer can resync.
TcpOutcome Ignore(TcpTrack& t, uint8_t old_state, Index index, bool reply,
                  const TcpSegment& seg) {
  t.last_index = index;
  t.last_dir = reply ? 1 : 0;
  t.last_seq = seg.seq;
  t.last_end = SeqPlusLen(seg);
  t.last_win = seg.window;
  if (index == kSynSet && !reply) {
    // An original SYN the server may answer: note its options.
    TcpSide seen;
    ReadOptions(seg, seen);
    t.last_flags = t.last_wscale = 0;
    if (seen.flags & kFlagWindowScale) {
      t.last_flags |= kFlagWindowScale;
      t.last_wscale = seen.td_scale;
    }
    if (seen.flags & kFlagSackPerm) t.last_flags |= kFlagSackPerm;
    if (old_state == kTcpLastAck) t.last_flags |= kExpChallengeAck;  // RFC 5961
  }
  if (old_state == kTcpSynSent && index == kAckSet && reply) t.last_ack = seg.ack;
  return {.kind = TcpOutcome::kIgnore};
}

// nf_conntrack_tcp_established
bool Established(const TcpTrack& t, bool assured) { return t.state == kTcpEstablished && assured; }

// tcp_can_early_drop
bool Closing(uint8_t state) {
  return state == kTcpFinWait || state == kTcpLastAck || state == kTcpTimeWait ||
         state == kTcpClose || state == kTcpCloseWait;
}

// The RST rules of the CLOSE case. Returns true to skip the window check
// (goto in_window), false to check it; `invalid` when the RST is invalid.
bool RstSkipsWindow(TcpTrack& t, const TcpContext& ctx, const TcpSegment& seg,
                    const ConntrackOptions& o, uint8_t old_state, uint8_t* new_state,
                    bool* invalid) {
  const int dir = ctx.reply ? 1 : 0;
  if (Closing(t.state)) return true;  // the tuple may already be reused
  if ((t.seen[!dir].flags & kFlagMaxackSet) && t.last_index != kSynSet) {
    const uint32_t seq = seg.seq;
    if (seq == 0 && !Established(t, ctx.assured)) return false;  // answers a SYN we let pass
    if (Before(seq, t.seen[!dir].td_maxack) && !o.tcp_ignore_invalid_rst) {
      *invalid = true;
      return false;
    }
    if (!Established(t, ctx.assured) || seq == t.seen[!dir].td_maxack) return false;
    // Part of a train (data, then RST at its end)?
    if (t.last_index == kAckSet && t.last_dir == dir && seq == t.last_end) return false;
    *new_state = old_state;  // not exact: keep the state for a challenge ACK
  }
  if (((ctx.seen_reply && t.last_index == kSynSet) ||
       (!ctx.assured && t.last_index == kAckSet)) &&
      seg.ack == t.last_end) {
    return true;  // RST to a SYN or ACK we let through
  }
  // RST answering a challenge ACK we let through.
  return old_state == kTcpSynSent && t.last_index == kAckSet && t.last_dir == 1 &&
         seg.seq == t.last_ack;
}

// The timeout after an accepted segment (the end of nf_conntrack_tcp_packet).
uint32_t TimeoutAfter(const TcpTrack& t, uint8_t new_state, Index index,
                      const ConntrackOptions& o) {
  const auto& tm = o.tcp_timeouts;
  if (t.retrans >= o.tcp_max_retrans && tm[new_state] > o.tcp_timeout_retrans) {
    return o.tcp_timeout_retrans;
  }
  if (index == kRstSet) return tm[kTcpClose];
  if (((t.seen[0].flags | t.seen[1].flags) & kFlagDataUnacknowledged) &&
      tm[new_state] > o.tcp_timeout_unacknowledged) {
    return o.tcp_timeout_unacknowledged;
  }
  if (t.last_win == 0 && tm[new_state] > o.tcp_timeout_retrans) return o.tcp_timeout_retrans;
  return tm[new_state];
}

// nf_tcp_handle_invalid: an out-of-window FIN or RST answering the other
// side's FIN or RST shortens an assured flow's life.
uint32_t HandleInvalid(TcpTrack& t, const TcpContext& ctx, Index index,
                       const ConntrackOptions& o) {
  if (!ctx.assured || (index != kRstSet && index != kFinSet)) return 0;
  const uint8_t dir = ctx.reply ? 1 : 0;
  if (t.last_dir != dir && (t.last_index == kFinSet || t.last_index == kRstSet)) {
    const uint64_t remaining_s = ctx.remaining_ns / 1000000000u;
    if (remaining_s < 120 || remaining_s <= o.tcp_timeout_unacknowledged) return 0;
    return o.tcp_timeout_unacknowledged;
  }
  t.last_index = index;
  t.last_dir = dir;
  return 0;
}

}  // namespace

bool ReadTcpSegment(const PacketView& pkt, TcpSegment* seg) {
  if (pkt.transport_off == kAbsent || pkt.network_off == kAbsent) return false;
  const uint64_t th = pkt.transport_off;
  if (th + 20 > pkt.len) return false;
  const uint8_t* h = pkt.data + th;
  // skb->len at the hooks: the IP packet as its header declares it.
  const uint64_t ip_end = IpPacketEnd(pkt);
  seg->seq = Be32(h + 4);
  seg->ack = Be32(h + 8);
  seg->header_len = static_cast<uint8_t>((h[12] >> 4) * 4);
  seg->flags = h[13];
  seg->window = static_cast<uint16_t>(h[14] << 8 | h[15]);
  if (seg->header_len < 20 || th + seg->header_len > ip_end) return false;
  seg->payload_len = static_cast<uint32_t>(ip_end - th - seg->header_len);
  seg->options = h + 20;
  return true;
}

TcpOutcome TcpPacket(TcpTrack& t, const TcpContext& ctx, const TcpSegment& seg,
                     const ConntrackOptions& o) {
  const TcpOutcome invalid{.kind = TcpOutcome::kInvalid};
  // tcp_error: bad checksum at prerouting, impossible flag combinations.
  if (!seg.checksum_ok || !ValidFlags(seg.flags)) return invalid;
  if (!ctx.confirmed && !StartFlow(t, seg, o)) return invalid;

  const int dir = ctx.reply ? 1 : 0;
  uint8_t old_state = t.state;
  const Index index = IndexOf(seg.flags);
  uint8_t new_state = kStateTable[dir][index][old_state];

  switch (new_state) {
    case kTcpSynSent:
      if (old_state >= kTcpTimeWait &&
          (((t.seen[dir].flags | t.seen[!dir].flags) & kFlagCloseInit) ||
           (t.last_dir == dir && t.last_index == kRstSet))) {
        return {.kind = TcpOutcome::kRepeat};  // reopening a closed or aborted flow
      }
      if (old_state >= kTcpTimeWait) return Ignore(t, old_state, index, ctx.reply, seg);
      break;
    case kTcpIgnore:
      if (index == kSynAckSet && t.last_index == kSynSet && t.last_dir != dir &&
          seg.ack == t.last_end) {
        // Answers a SYN we ignored: client and server are in sync, we are not.
        old_state = kTcpSynSent;
        new_state = kTcpSynRecv;
        TcpSide& s = t.seen[t.last_dir];
        s.td_end = s.td_maxend = t.last_end;
        s.td_maxwin = t.last_win == 0 ? 1 : t.last_win;
        s.td_scale = t.last_wscale;
        t.last_flags &= ~kExpChallengeAck;
        s.flags = t.last_flags;
        TcpSide& other = t.seen[dir];
        other.td_end = other.td_maxend = other.td_maxwin = other.td_maxack = 0;
        other.td_scale = 0;
        other.flags &= kFlagBeLiberal;
        break;
      }
      return Ignore(t, old_state, index, ctx.reply, seg);
    case kTcpMax:
      return invalid;  // (the SYN proxy's keepalive exception: no synproxy here)
    case kTcpTimeWait:
      if (old_state == kTcpLastAck && index == kAckSet && t.last_dir != dir &&
          t.last_index == kSynSet && (t.last_flags & kExpChallengeAck)) {
        t.last_flags &= ~kExpChallengeAck;  // an RFC 5961 challenge ACK
        return {.kind = TcpOutcome::kIgnore};
      }
      break;
    case kTcpSynSent2:
      t.last_flags |= kSimultaneousOpen;
      break;
    case kTcpSynRecv:
      if (ctx.reply && index == kAckSet && (t.last_flags & kSimultaneousOpen)) {
        new_state = kTcpEstablished;
      }
      break;
    case kTcpClose:
      if (index == kRstSet) {
        bool rst_invalid = false;
        if (RstSkipsWindow(t, ctx, seg, o, old_state, &new_state, &rst_invalid)) {
          goto in_window;
        }
        if (rst_invalid) return invalid;
      }
      break;
    default:
      break;
  }

  switch (InWindow(t, ctx.reply, index, seg, o)) {
    case Window::kIgnore:
      return {.kind = TcpOutcome::kIgnore};
    case Window::kInvalid:
      return {.kind = TcpOutcome::kInvalid, .lowered_timeout_s = HandleInvalid(t, ctx, index, o)};
    case Window::kAccept:
      break;
  }

in_window:
  t.last_index = index;
  t.last_dir = static_cast<uint8_t>(dir);
  t.state = new_state;
  if (old_state != new_state && new_state == kTcpFinWait) t.seen[dir].flags |= kFlagCloseInit;

  TcpOutcome out{.kind = TcpOutcome::kAccept, .timeout_s = TimeoutAfter(t, new_state, index, o)};
  if (!ctx.seen_reply) {
    // Only an RST came back, or none yet: a common failure, forget the flow.
    if (seg.flags & kRst) return {.kind = TcpOutcome::kKill};
    // A retransmitted SYN does not renew the flow's life.
    if (index == kSynSet && old_state == kTcpSynSent) return {.kind = TcpOutcome::kIgnore};
    // Picked up mid-stream: no long ESTABLISHED timeout yet.
    if (new_state == kTcpEstablished) {
      out.timeout_s = std::min(out.timeout_s, o.tcp_timeout_unacknowledged);
    }
  } else if (!ctx.assured && (old_state == kTcpSynRecv || old_state == kTcpEstablished) &&
             new_state == kTcpEstablished) {
    out.set_assured = true;
  }
  return out;
}

}  // namespace rulejit::runtime
