// SCTP tracking; see conntrack_sctp.h. Every rule follows
// net/netfilter/nf_conntrack_proto_sctp.c of Linux 6.18 (function names
// cited), read for its behaviour, written anew.
#include "runtime/conntrack_sctp.h"

#include <bitset>
#include <vector>

#include "runtime/conntrack.h"

namespace rulejit::runtime {
namespace {

// Chunk types (SCTP_CID_*) and the T bit of ABORT and SHUTDOWN-COMPLETE.
enum Chunk : uint8_t {
  kData = 0, kInit = 1, kInitAck = 2, kHeartbeat = 4, kHeartbeatAck = 5, kAbort = 6,
  kShutdown = 7, kShutdownAck = 8, kError = 9, kCookieEcho = 10, kCookieAck = 11,
  kShutdownComplete = 14,
};
constexpr uint8_t kFlagT = 0x01;

constexpr uint32_t kCommonHeader = 12;  // ports, verification tag, checksum
constexpr uint32_t kChunkHeader = 4;    // type, flags, length
constexpr uint32_t kInitHeader = 16;    // struct sctp_inithdr: init_tag first

// sctp_conntracks[dir][row][state], the kernel's table. The rows are the
// chunk types that move the state; the HEARTBEAT_ACKED column, no longer
// reachable, is 0 (NONE) as the kernel's array leaves it.
constexpr uint8_t sNO = kSctpNone, sCL = kSctpClosed, sCW = kSctpCookieWait,
                  sCE = kSctpCookieEchoed, sES = kSctpEstablished, sSS = kSctpShutdownSent,
                  sSR = kSctpShutdownRecd, sSA = kSctpShutdownAckSent,
                  sHS = kSctpHeartbeatSent, sIV = kSctpMax;
constexpr int kRows = 11;
constexpr uint8_t kRowChunk[kRows] = {kInit,      kInitAck,   kAbort,    kShutdown,
                                      kShutdownAck, kError,   kCookieEcho, kCookieAck,
                                      kShutdownComplete, kHeartbeat, kHeartbeatAck};
constexpr uint8_t kStateTable[2][kRows][kSctpMax] = {
    {
        // original:        sNO  sCL  sCW  sCE  sES  sSS  sSR  sSA  sHS  (HA)
        /* init */         {sCL, sCL, sCW, sCE, sES, sCL, sCL, sSA, sCW, sNO},
        /* init_ack */     {sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sCL, sNO},
        /* abort */        {sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sNO},
        /* shutdown */     {sCL, sCL, sCW, sCE, sSS, sSS, sSR, sSA, sCL, sNO},
        /* shutdown_ack */ {sSA, sCL, sCW, sCE, sES, sSA, sSA, sSA, sSA, sNO},
        /* error */        {sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sCL, sNO},
        /* cookie_echo */  {sCL, sCL, sCE, sCE, sES, sSS, sSR, sSA, sCL, sNO},
        /* cookie_ack */   {sCL, sCL, sCW, sES, sES, sSS, sSR, sSA, sCL, sNO},
        /* shutdown_comp */{sCL, sCL, sCW, sCE, sES, sSS, sSR, sCL, sCL, sNO},
        /* heartbeat */    {sHS, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS, sNO},
        /* heartbeat_ack */{sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS, sNO},
    },
    {
        // reply:           sNO  sCL  sCW  sCE  sES  sSS  sSR  sSA  sHS  (HA)
        /* init */         {sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sIV, sNO},
        /* init_ack */     {sIV, sCW, sCW, sCE, sES, sSS, sSR, sSA, sIV, sNO},
        /* abort */        {sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sIV, sNO},
        /* shutdown */     {sIV, sCL, sCW, sCE, sSR, sSS, sSR, sSA, sIV, sNO},
        /* shutdown_ack */ {sIV, sCL, sCW, sCE, sES, sSA, sSA, sSA, sIV, sNO},
        /* error */        {sIV, sCL, sCW, sCL, sES, sSS, sSR, sSA, sIV, sNO},
        /* cookie_echo */  {sIV, sCL, sCE, sCE, sES, sSS, sSR, sSA, sIV, sNO},
        /* cookie_ack */   {sIV, sCL, sCW, sES, sES, sSS, sSR, sSA, sIV, sNO},
        /* shutdown_comp */{sIV, sCL, sCW, sCE, sES, sSS, sSR, sCL, sIV, sNO},
        /* heartbeat */    {sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS, sNO},
        /* heartbeat_ack */{sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sES, sNO},
    },
};

// sctp_new_state: other chunks (DATA, SACK, ...) keep the state.
uint8_t NextState(int dir, uint8_t state, uint8_t type) {
  for (int row = 0; row < kRows; ++row) {
    if (kRowChunk[row] == type) return kStateTable[dir][row][state];
  }
  return state;
}

uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

struct ChunkRef {
  uint8_t type = 0;
  uint8_t flags = 0;
  uint32_t off = 0;  // of its header, from the common header
};

// A packet's chunks, as for_each_sctp_chunk walks them: from after the
// common header while a whole chunk header fits, each chunk's length
// rounded up to 4; and the set of their types.
struct Chunks {
  std::vector<ChunkRef> list;
  std::bitset<256> types;
  bool Has(uint8_t type) const { return types.test(type); }
};

// do_basic_checks: false for no chunk at all, a zero length, a COOKIE-ECHO
// or COOKIE-ACK that is not the first chunk, or any chunk after an INIT,
// INIT-ACK or SHUTDOWN-COMPLETE (those must be alone; one that is not
// first has another before it).
bool ReadChunks(const uint8_t* sctp, uint32_t len, Chunks* out) {
  bool must_be_alone = false;
  for (uint64_t off = kCommonHeader; off + kChunkHeader <= len;) {
    const uint8_t type = sctp[off];
    const uint16_t length = static_cast<uint16_t>(sctp[off + 2] << 8 | sctp[off + 3]);
    const bool first = out->list.empty();
    must_be_alone |= type == kInit || type == kInitAck || type == kShutdownComplete;
    if (length == 0 || (!first && (must_be_alone || type == kCookieAck || type == kCookieEcho))) {
      return false;
    }
    out->list.push_back({type, sctp[off + 1], static_cast<uint32_t>(off)});
    out->types.set(type);
    off += (uint64_t{length} + 3) & ~uint64_t{3};
  }
  return !out->list.empty();
}

// The initiate tag of the INIT or INIT-ACK chunk at `off`; false when its
// fixed part is cut short.
bool InitTag(const uint8_t* sctp, uint32_t len, uint32_t off, uint32_t* tag) {
  if (uint64_t{off} + kChunkHeader + kInitHeader > len) return false;
  *tag = Be32(sctp + off + kChunkHeader);
  return true;
}

// sctp_new: every chunk must be one that may start a flow in the original
// direction (not DATA, SACK or another type the table has no row for); an
// INIT carries tag 0 and gives the reply direction's tag, a HEARTBEAT
// gives its own direction's (a secondary path), an out-of-the-blue
// SHUTDOWN-ACK the reply's (which its SHUTDOWN-COMPLETE carries).
bool NewFlow(SctpTrack& track, const Chunks& chunks, uint32_t vtag, const uint8_t* sctp,
             uint32_t len) {
  track = SctpTrack{};
  for (const ChunkRef& c : chunks.list) {
    const uint8_t state = NextState(0, kSctpNone, c.type);
    if (state == kSctpNone || state == kSctpMax) return false;
    if (c.type == kInit) {
      if (vtag != 0 || !InitTag(sctp, len, c.off, &track.vtag[1])) return false;
    } else if (c.type == kHeartbeat) {
      track.vtag[0] = vtag;
    } else if (c.type == kShutdownAck) {
      track.vtag[1] = vtag;
    }
  }
  return true;
}

// The chunk types that carry a tag other than their direction's (RFC 9260
// 8.5.1), checked chunk by chunk instead of for the whole packet.
bool TagCheckedPerChunk(const Chunks& chunks) {
  for (uint8_t type : {kInit, kShutdownComplete, kCookieEcho, kAbort, kShutdownAck, kHeartbeat,
                       kHeartbeatAck}) {
    if (chunks.Has(type)) return true;
  }
  return false;
}

enum class TagCheck { kPass, kInvalid, kSkipChunk };

// A HEARTBEAT or HEARTBEAT-ACK's tag (the heartbeat part of
// nf_conntrack_sctp_packet's loop): the first one of a direction teaches
// its tag. A HEARTBEAT with another tag (a peer that restarted) is let
// through once without changing the state; a HEARTBEAT-ACK with another
// tag from the other side then replaces the tags.
TagCheck HeartbeatTag(SctpTrack& track, int dir, uint8_t type, uint32_t vtag,
                      const Chunks& chunks, bool ignore) {
  if (track.vtag[dir] == 0) {
    track.vtag[dir] = vtag;
    return TagCheck::kPass;
  }
  if (vtag == track.vtag[dir]) {
    track.heartbeat_vtag_failed = false;
    return TagCheck::kPass;
  }
  if (chunks.Has(kData) || ignore) return TagCheck::kInvalid;
  if (type == kHeartbeat) {
    track.heartbeat_vtag_failed = true;
    track.last_dir = static_cast<uint8_t>(dir);
    return TagCheck::kSkipChunk;
  }
  if (!track.heartbeat_vtag_failed || track.last_dir == dir) return TagCheck::kInvalid;
  track.heartbeat_vtag_failed = false;
  track.vtag[dir] = vtag;
  track.vtag[!dir] = 0;
  return TagCheck::kPass;
}

// The per-chunk tag rules (RFC 9260 8.5.1 (A) to (D), and the heartbeats).
TagCheck ChunkTag(SctpTrack& track, int dir, const ChunkRef& c, uint32_t vtag,
                  const Chunks& chunks, bool ignore) {
  switch (c.type) {
    case kInit:  // (A): tag 0
      return vtag == 0 ? TagCheck::kPass : TagCheck::kInvalid;
    case kAbort:  // (B), (C): the own tag, or with the T bit the peer's
    case kShutdownComplete: {
      const uint32_t want = (c.flags & kFlagT) ? track.vtag[!dir] : track.vtag[dir];
      return vtag == want ? TagCheck::kPass : TagCheck::kInvalid;
    }
    case kCookieEcho:  // (D): the tag the INIT-ACK gave
      return vtag == track.vtag[dir] ? TagCheck::kPass : TagCheck::kInvalid;
    case kCookieAck:
      track.init[0] = track.init[1] = false;
      return TagCheck::kPass;
    case kHeartbeat:
    case kHeartbeatAck:
      return HeartbeatTag(track, dir, c.type, vtag, chunks, ignore);
    default:
      return TagCheck::kPass;
  }
}

// After the state moved on an INIT: it gives the other direction's tag.
// A retransmitted INIT of a closed flow does not renew its timeout (so a
// reused port cannot keep the flow, and its NAT, alive): `*ignore`.
void LearnFromInit(SctpTrack& track, int dir, uint32_t tag, uint8_t old_state,
                   uint8_t new_state, bool confirmed, bool* ignore) {
  if (track.init[dir] && track.init[!dir]) track.init[!dir] = false;
  track.init[dir] = true;
  track.vtag[!dir] = tag;
  if (new_state == kSctpClosed && old_state == kSctpClosed && confirmed) *ignore = true;
}

// After the state moved on an INIT-ACK: it too gives the other direction's
// tag, which must be the one already known (if any) unless the other side
// sent an INIT; in a collision (INITs both ways) it must be in any case.
bool LearnFromInitAck(SctpTrack& track, int dir, uint32_t tag) {
  const uint32_t known = track.vtag[!dir];
  if (!track.init[!dir] && known != 0 && known != tag) return false;
  if (track.init[dir] && track.init[!dir] && known != tag) return false;
  track.vtag[!dir] = tag;
  return true;
}

}  // namespace

SctpOutcome SctpPacket(SctpTrack& track, const SctpContext& ctx, const uint8_t* sctp,
                       uint32_t len, const ConntrackOptions& options) {
  SctpOutcome out;  // kInvalid
  // sctp_error: a short packet, a wrong CRC32c.
  if (len < kCommonHeader || !ctx.checksum_ok) return out;
  Chunks chunks;
  if (!ReadChunks(sctp, len, &chunks)) return out;
  const uint32_t vtag = Be32(sctp + 4);
  if (!ctx.confirmed) {
    // Out of the blue: these never start a flow (RFC 9260 8.4).
    if (chunks.Has(kAbort) || chunks.Has(kShutdownComplete) || chunks.Has(kCookieAck)) return out;
    if (!NewFlow(track, chunks, vtag, sctp, len)) return out;
  }
  const int dir = ctx.reply ? 1 : 0;
  if (!TagCheckedPerChunk(chunks) && vtag != track.vtag[dir]) return out;

  bool ignore = false;
  uint8_t new_state = kSctpNone;
  for (const ChunkRef& c : chunks.list) {
    const TagCheck tag_check = ChunkTag(track, dir, c, vtag, chunks, ignore);
    if (tag_check == TagCheck::kInvalid) return out;
    if (tag_check == TagCheck::kSkipChunk) {
      ignore = true;
      continue;
    }
    const uint8_t old_state = track.state;
    new_state = NextState(dir, old_state, c.type);
    if (new_state == kSctpMax) return out;
    uint32_t init_tag = 0;
    if (c.type == kInit || c.type == kInitAck) {
      if (!InitTag(sctp, len, c.off, &init_tag)) return out;
    }
    if (c.type == kInit) {
      LearnFromInit(track, dir, init_tag, old_state, new_state, ctx.confirmed, &ignore);
    } else if (c.type == kInitAck && !LearnFromInitAck(track, dir, init_tag)) {
      return out;
    }
    track.state = new_state;
    if (old_state != new_state && new_state == kSctpEstablished) out.set_assured = true;
  }
  if (ignore) {
    out.kind = SctpOutcome::kIgnore;  // allowed, the timeout not renewed
    return out;
  }
  out.kind = SctpOutcome::kAccept;
  out.timeout_s = options.sctp_timeouts[new_state];
  return out;
}

}  // namespace rulejit::runtime
