// SCTP connection tracking as nf_conntrack_proto_sctp.c does it (Linux
// 6.18): the chunk checks of do_basic_checks, which packets may start a
// flow (sctp_new), the per-chunk state table, the verification-tag checks
// and the timeouts.
//
//   SctpOutcome o = SctpPacket(flow.sctp, ctx, sctp_bytes, sctp_len, options);
//
// The tracker walks a packet's chunks in order and moves the flow's state
// by each chunk's type and direction (DATA, SACK and other chunks leave it
// as it is). It learns each direction's verification tag from INIT and
// INIT-ACK (the tag the other side must carry), HEARTBEAT and SHUTDOWN-ACK,
// and calls a packet whose tag is not its direction's INVALID, with the
// exceptions RFC 9260 section 8.5.1 makes (INIT, ABORT, SHUTDOWN-COMPLETE,
// COOKIE-ECHO, SHUTDOWN-ACK, HEARTBEAT and its ACK). Multihoming (a
// HEARTBEAT on a new path starts a flow of its own, whose tags are learnt
// from the heartbeats) is as the kernel has it.
#ifndef RULEJIT_RUNTIME_CONNTRACK_SCTP_H_
#define RULEJIT_RUNTIME_CONNTRACK_SCTP_H_

#include <cstdint>

namespace rulejit::runtime {

struct ConntrackOptions;

// SCTP_CONNTRACK_* states; kSctpMax is "invalid" in the state table.
// HEARTBEAT_ACKED is no longer used by the kernel (it keeps the number).
enum SctpState : uint8_t {
  kSctpNone, kSctpClosed, kSctpCookieWait, kSctpCookieEchoed, kSctpEstablished,
  kSctpShutdownSent, kSctpShutdownRecd, kSctpShutdownAckSent, kSctpHeartbeatSent,
  kSctpHeartbeatAcked, kSctpMax,
};

// A flow's SCTP data (struct ip_ct_sctp). Tags as they are on the wire
// (big-endian values read as numbers: only compared).
struct SctpTrack {
  uint8_t state = kSctpNone;
  uint32_t vtag[2] = {0, 0};  // the tag each direction's packets carry
  bool init[2] = {false, false};  // an INIT was seen from that direction
  uint8_t last_dir = 0;       // of the HEARTBEAT whose tag failed
  bool heartbeat_vtag_failed = false;  // SCTP_FLAG_HEARTBEAT_VTAG_FAILED
};

// What the flow is when the packet arrives.
struct SctpContext {
  bool confirmed = false;    // the flow is in the table (else sctp_new runs)
  bool reply = false;        // the packet travels in the reply direction
  bool checksum_ok = true;   // CRC32c right, or not verified (sctp_error)
};

struct SctpOutcome {
  enum Kind {
    kAccept,   // valid: refresh the flow to `timeout_s`
    kIgnore,   // valid, but the timeout is not renewed
    kInvalid,  // -NF_ACCEPT: the packet gets no conntrack entry
  } kind = kInvalid;
  uint32_t timeout_s = 0;
  // The flow became ESTABLISHED: IPS_ASSURED. The kernel sets the bit as
  // the chunk is processed, so it stays even when a later chunk makes the
  // packet INVALID.
  bool set_assured = false;
};

// nf_conntrack_sctp_packet for the SCTP packet `sctp` (common header and
// chunks up to where the IP header says the packet ends, `len` bytes) on
// `track` (all zero for a flow not yet confirmed). The track keeps what
// the chunks before an invalid one changed, as the kernel's does.
SctpOutcome SctpPacket(SctpTrack& track, const SctpContext& ctx, const uint8_t* sctp,
                       uint32_t len, const ConntrackOptions& options);

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_CONNTRACK_SCTP_H_
