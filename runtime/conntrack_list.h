// The flow table as `conntrack -L` (conntrack-tools 1.4, its default
// output) prints the kernel's, for `rulejit ctl conntrack list`:
//
//   tcp      6 431999 ESTABLISHED src=10.0.0.1 dst=10.0.0.2 sport=40000 dport=8080 src=10.0.0.2 dst=10.0.0.1 sport=8080 dport=40000 [ASSURED] mark=0 use=1
//   udp      17 29 src=10.0.0.1 dst=10.0.0.2 sport=5000 dport=7000 [UNREPLIED] src=10.0.0.2 dst=10.0.0.1 sport=7000 dport=5000 mark=0 use=1
//   icmp     1 29 src=10.0.0.1 dst=10.0.0.2 type=8 code=0 id=1 src=10.0.0.2 dst=10.0.0.1 type=0 code=0 id=1 mark=0 use=1
//
// Fields as libnetfilter_conntrack's default format has them: protocol name
// padded to 8 and number, seconds left (from the flow's expiry and the
// packet clock `now_ns`, rounded down as ctnetlink does), the TCP or SCTP
// state, the original tuple, [UNREPLIED] before a reply was seen, the reply
// tuple (after NAT), [ASSURED], the ct mark and a use count of 1. The same
// as one JSON object per flow for `--json`. Flows listed are the live ones
// (not killed, not expired).
#ifndef RULEJIT_RUNTIME_CONNTRACK_LIST_H_
#define RULEJIT_RUNTIME_CONNTRACK_LIST_H_

#include <cstdint>
#include <string>

#include "runtime/conntrack.h"

namespace rulejit::runtime {

// One flow's `conntrack -L` line, without a newline.
std::string ConntrackLine(const Conntrack::Flow& flow, uint64_t now_ns);
// The same as a JSON object: {"proto":"tcp","protonum":6,"timeout":431999,
// "state":"ESTABLISHED","orig":{"src":..,"dst":..,"sport":..,"dport":..},
// "reply":{..},"unreplied":false,"assured":true,"mark":0}; ICMP tuples have
// "type", "code" and "id" instead of ports, others neither.
std::string ConntrackJson(const Conntrack::Flow& flow, uint64_t now_ns);

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_CONNTRACK_LIST_H_
