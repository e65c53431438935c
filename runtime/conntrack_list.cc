// `conntrack -L`-like lines and JSON for the flow table (see conntrack_list.h).
#include "runtime/conntrack_list.h"

#include <arpa/inet.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rulejit::runtime {
namespace {

constexpr uint8_t kIcmp = 1, kTcp = 6, kUdp = 17, kGre = 47, kIcmpv6 = 58, kSctp = 132,
                  kUdpLite = 136;

// libnetfilter_conntrack's names; others are "unknown".
const char* ProtoName(uint8_t proto) {
  switch (proto) {
    case kTcp: return "tcp";
    case kUdp: return "udp";
    case kUdpLite: return "udplite";
    case kIcmp: return "icmp";
    case kIcmpv6: return "icmpv6";
    case kSctp: return "sctp";
    case kGre: return "gre";
    case 33: return "dccp";
    default: return "unknown";
  }
}

// The protocol's state word, if it has one (TCP, SCTP).
std::string StateName(const Conntrack::Flow& flow) {
  static constexpr const char* kTcpStates[] = {
      "NONE",     "SYN_SENT",   "SYN_RECV", "ESTABLISHED", "FIN_WAIT",
      "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE",      "SYN_SENT2"};
  static constexpr const char* kSctpStates[] = {
      "NONE",          "CLOSED",        "COOKIE_WAIT",       "COOKIE_ECHOED",
      "ESTABLISHED",   "SHUTDOWN_SENT", "SHUTDOWN_RECD",     "SHUTDOWN_ACK_SENT",
      "HEARTBEAT_SENT", "HEARTBEAT_ACKED"};
  const uint8_t proto = flow.tuple[0].proto;
  if (proto == kTcp && flow.tcp.state < std::size(kTcpStates)) return kTcpStates[flow.tcp.state];
  if (proto == kSctp && flow.sctp.state < std::size(kSctpStates)) {
    return kSctpStates[flow.sctp.state];
  }
  return "";
}

std::string Address(const Conntrack::Key& k, const std::array<uint8_t, 16>& a) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(k.family == kNfProtoIpv6 ? AF_INET6 : AF_INET, a.data(), text, sizeof text);
  return text;
}

// DCCP has none since Linux 6.16 removed its tracker.
bool HasPorts(uint8_t proto) {
  return proto == kTcp || proto == kUdp || proto == kUdpLite || proto == kSctp;
}
bool IsIcmp(uint8_t proto) { return proto == kIcmp || proto == kIcmpv6; }

// "src=A dst=B sport=P dport=Q " (or ICMP's type/code/id, GRE's keys).
std::string TupleText(const Conntrack::Key& k) {
  std::string s = absl::StrCat("src=", Address(k, k.src), " dst=", Address(k, k.dst), " ");
  if (HasPorts(k.proto)) {
    absl::StrAppend(&s, "sport=", k.sport, " dport=", k.dport, " ");
  } else if (IsIcmp(k.proto)) {
    absl::StrAppend(&s, "type=", k.icmp_type, " code=", k.icmp_code, " id=", k.sport, " ");
  } else if (k.proto == kGre) {
    absl::StrAppend(&s, absl::StrFormat("srckey=0x%x dstkey=0x%x ", k.sport, k.dport));
  }
  return s;
}

std::string TupleJson(const Conntrack::Key& k) {
  std::string s =
      absl::StrCat("{\"src\":\"", Address(k, k.src), "\",\"dst\":\"", Address(k, k.dst), "\"");
  if (HasPorts(k.proto)) {
    absl::StrAppend(&s, ",\"sport\":", k.sport, ",\"dport\":", k.dport);
  } else if (IsIcmp(k.proto)) {
    absl::StrAppend(&s, ",\"type\":", k.icmp_type, ",\"code\":", k.icmp_code, ",\"id\":", k.sport);
  }
  return s + "}";
}

// ctnetlink_dump_timeout: whole seconds left, 0 once due.
uint64_t SecondsLeft(const Conntrack::Flow& flow, uint64_t now_ns) {
  const int64_t left = static_cast<int64_t>(flow.expires_ns - now_ns);
  return left > 0 ? static_cast<uint64_t>(left) / 1000000000u : 0;
}

}  // namespace

std::string ConntrackLine(const Conntrack::Flow& flow, uint64_t now_ns) {
  const Conntrack::Key& orig = flow.tuple[0];
  std::string line = absl::StrFormat("%-8s %u %u ", ProtoName(orig.proto), orig.proto,
                                     SecondsLeft(flow, now_ns));
  if (std::string state = StateName(flow); !state.empty()) absl::StrAppend(&line, state, " ");
  // A zone of one direction shows in its tuple (CTA_TUPLE_ZONE), a zone
  // of both after the mark (CTA_ZONE); zone 0 not at all.
  const CtZone& zone = flow.zone;
  const bool both = zone.dirs == (kCtZoneOriginal | kCtZoneReply);
  absl::StrAppend(&line, TupleText(orig));
  if (!both && zone.IdOf(false) != 0) absl::StrAppend(&line, "zone-orig=", zone.id, " ");
  if (!flow.seen_reply) line += "[UNREPLIED] ";
  absl::StrAppend(&line, TupleText(flow.tuple[1]));
  if (!both && zone.IdOf(true) != 0) absl::StrAppend(&line, "zone-reply=", zone.id, " ");
  if (flow.assured) line += "[ASSURED] ";
  absl::StrAppend(&line, "mark=", flow.mark);
  if (both && zone.id != 0) absl::StrAppend(&line, " zone=", zone.id);
  line += " use=1";
  return line;
}

std::string ConntrackJson(const Conntrack::Flow& flow, uint64_t now_ns) {
  const Conntrack::Key& orig = flow.tuple[0];
  std::string s = absl::StrCat("{\"family\":\"", orig.family == kNfProtoIpv6 ? "ipv6" : "ipv4",
                               "\",\"proto\":\"", ProtoName(orig.proto),
                               "\",\"protonum\":", orig.proto,
                               ",\"timeout\":", SecondsLeft(flow, now_ns));
  if (std::string state = StateName(flow); !state.empty()) {
    absl::StrAppend(&s, ",\"state\":\"", state, "\"");
  }
  absl::StrAppend(&s, ",\"orig\":", TupleJson(orig), ",\"reply\":", TupleJson(flow.tuple[1]),
                  ",\"unreplied\":", flow.seen_reply ? "false" : "true",
                  ",\"assured\":", flow.assured ? "true" : "false", ",\"mark\":", flow.mark);
  if (flow.zone.id != 0) {
    absl::StrAppend(&s, ",\"zone\":", flow.zone.id, ",\"zone_dirs\":\"",
                    flow.zone.dirs == kCtZoneOriginal ? "original"
                    : flow.zone.dirs == kCtZoneReply  ? "reply"
                                                      : "both",
                    "\"");
  }
  s += "}";
  return s;
}

}  // namespace rulejit::runtime
