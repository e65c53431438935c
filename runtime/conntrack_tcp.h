// TCP connection tracking as nf_conntrack_proto_tcp.c does it (Linux
// 6.18): the state table, the window checks of tcp_in_window, the
// timeouts, and what makes a segment INVALID or merely IGNORED.
//
//   TcpSegment seg;
//   if (!ReadTcpSegment(view, &seg)) ...;               // truncated: invalid
//   TcpOutcome o = TcpPacket(flow.tcp, ctx, seg, options);
//
// The tracker sits in the middle and guesses each side's state from what
// it sees: per direction the highest sequence sent (td_end), the highest
// the receiver allowed (td_maxend), the largest window (td_maxwin) and
// the window scale. A segment outside those bounds is INVALID (or, where
// the kernel is unsure, IGNORED: it passes with its flow but changes
// nothing). Sequence-number NAT offsets (helpers' seqadj) are zero: no
// helper is modelled.
#ifndef RULEJIT_RUNTIME_CONNTRACK_TCP_H_
#define RULEJIT_RUNTIME_CONNTRACK_TCP_H_

#include <cstdint>

#include "rulejit/packet.h"

namespace rulejit::runtime {

struct ConntrackOptions;

// TCP_CONNTRACK_* states; kTcpMax is "invalid" in the state table.
enum TcpState : uint8_t {
  kTcpNone, kTcpSynSent, kTcpSynRecv, kTcpEstablished, kTcpFinWait, kTcpCloseWait,
  kTcpLastAck, kTcpTimeWait, kTcpClose, kTcpSynSent2, kTcpMax, kTcpIgnore,
};

// One direction's window data (struct ip_ct_tcp_state).
struct TcpSide {
  uint32_t td_end = 0;
  uint32_t td_maxend = 0;
  uint32_t td_maxwin = 0;
  uint32_t td_maxack = 0;
  uint8_t td_scale = 0;
  uint8_t flags = 0;  // kTcpFlag*
};

// A flow's TCP data (struct ip_ct_tcp).
struct TcpTrack {
  TcpSide seen[2];
  uint8_t state = kTcpNone;
  uint8_t last_dir = 0;
  uint8_t last_index = 0;
  uint8_t last_wscale = 0;
  uint8_t last_flags = 0;
  uint8_t retrans = 0;
  uint16_t last_win = 0;
  uint32_t last_seq = 0;
  uint32_t last_ack = 0;
  uint32_t last_end = 0;
};

// The header fields the tracker reads.
struct TcpSegment {
  uint32_t seq = 0, ack = 0;
  uint16_t window = 0;
  uint8_t flags = 0;         // FIN 0x01 SYN 0x02 RST 0x04 PSH 0x08 ACK 0x10 URG 0x20 ...
  uint8_t header_len = 0;    // doff * 4
  uint32_t payload_len = 0;  // the segment after the header, as the IP length says
  const uint8_t* options = nullptr;  // header_len - 20 bytes
  bool checksum_ok = true;  // or not verified (tcp_error checks it at prerouting)
};

// Reads the segment of `pkt`; false when the header is cut short or its
// data offset is impossible (tcp_error's "truncated packet").
bool ReadTcpSegment(const PacketView& pkt, TcpSegment* seg);

// What the flow is when the segment arrives.
struct TcpContext {
  bool confirmed = false;   // the flow is in the table (else tcp_new runs)
  bool reply = false;       // the segment travels in the reply direction
  bool seen_reply = false;  // IPS_SEEN_REPLY before this segment
  bool assured = false;     // IPS_ASSURED before this segment
  uint64_t remaining_ns = 0;  // until the flow expires (confirmed flows)
};

struct TcpOutcome {
  enum Kind {
    kAccept,   // valid: the flow advanced; refresh it to `timeout_s`
    kIgnore,   // passes with its flow, nothing changed (no refresh)
    kInvalid,  // -NF_ACCEPT: the packet gets no conntrack entry
    kRepeat,   // reopening a closed flow: kill it and track the packet anew
    kKill,     // valid, but the flow dies now (an RST before any reply)
  } kind = kInvalid;
  uint32_t timeout_s = 0;      // kAccept: the flow's new timeout
  bool set_assured = false;    // kAccept: the flow becomes IPS_ASSURED
  // kInvalid on an assured flow: nf_tcp_handle_invalid lowered the
  // timeout to this (0: unchanged).
  uint32_t lowered_timeout_s = 0;
};

// nf_conntrack_tcp_packet for one segment on `track` (all zero for a
// flow not yet confirmed).
TcpOutcome TcpPacket(TcpTrack& track, const TcpContext& ctx, const TcpSegment& seg,
                     const ConntrackOptions& options);

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_CONNTRACK_TCP_H_
