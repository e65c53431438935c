// The shared builders of ct_sequences.h: packets of a flow, TCP handshake,
// data and close, ICMP messages and errors, SCTP chunks and handshakes, and
// the table of named cases the conntrack kernel test plays.
#include "tests/kernel/ct_sequences.h"

#include <string>
#include <vector>

namespace rulejit::testing::ct {

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

// A connection between fresh ends (one draw after the other: the order of
// a call's arguments is unspecified, and seeds must replay).
Tcp NewTcp(Alloc& a, bool v6) {
  const Ends ends = a.Next(v6);
  const uint32_t client_isn = a.Isn();
  return Tcp(ends, client_isn, a.Isn());
}

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
PathPacket Icmp(const Ends& e, bool from_server, uint8_t type, uint8_t code, size_t payload) {
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

// A chunk whose value is `body` and 4 bytes nothing reads, where the
// harness's index lands when the chunk ends the packet.
std::vector<uint8_t> Chunk(uint8_t type, uint8_t flags, std::vector<uint8_t> body) {
  body.insert(body.end(), 4, 0);
  return SctpChunk(type, flags, body);
}

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

}  // namespace rulejit::testing::ct
