// ClassBench rule sets and traces (../shared/classbench/README.md).
//
// A rule file becomes one ip table "classbench" with one base chain
// "classbench" at the forward hook (priority 0, policy drop). Line N is rule
// N-1 of that chain and ends in `accept`, so the deciding rule of a packet is
// its first matching line, exactly ClassBench's first-match semantics:
//
//   @10.0.0.0/8 192.168.1.0/24 0 : 65535 80 : 80 0x06/0xFF
//   ⇒ ip saddr 10.0.0.0/8 ip daddr 192.168.1.0/24 @th,16,16 80
//     meta l4proto 6 accept
//
// Ports are matched on the first four bytes of the transport header for any
// protocol (ClassBench fields carry no protocol dependency).
#ifndef RULEJIT_FRONTENDS_CLASSBENCH_CLASSBENCH_H_
#define RULEJIT_FRONTENDS_CLASSBENCH_CLASSBENCH_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends {

[[nodiscard]] absl::StatusOr<ir::Ruleset> ParseClassBench(std::string_view text,
                                                          int file,
                                                          ir::Diagnostics& diags);

// One rule line as plain fields, for consumers that want the 5-tuple rather
// than the IR (the DPDK peer benchmark). Host order; a field matching
// anything is 0/0 (addresses, protocol) or 0..65535 (ports). Addresses are
// already masked to their prefix.
struct ClassBenchRule {
  uint32_t line = 0;  // 1-based line in the file: the rule's ClassBench number
  uint32_t src = 0, dst = 0;
  uint8_t src_len = 0, dst_len = 0;
  uint16_t sport_lo = 0, sport_hi = 65535, dport_lo = 0, dport_hi = 65535;
  uint8_t proto = 0, proto_mask = 0;     // mask 0xff exact, 0 any
  uint16_t flags = 0, flags_mask = 0;    // TCP flags; mask 0 when absent
};

// The rules of a ClassBench file in order, with the same checks (and
// located errors) as ParseClassBench.
[[nodiscard]] absl::StatusOr<std::vector<ClassBenchRule>> ParseClassBenchRules(
    std::string_view text, int file, ir::Diagnostics& diags);

// One trace line: `src dst sport dport proto [rule]`, addresses as host-order
// 32-bit integers, rule = 1-based line of the first matching rule (0 if the
// trace line has none).
struct TracePacket {
  uint32_t src = 0, dst = 0;
  uint16_t sport = 0, dport = 0;
  uint8_t proto = 0;
  uint32_t expected_rule = 0;
};

[[nodiscard]] absl::StatusOr<std::vector<TracePacket>> ParseClassBenchTrace(
    std::string_view text, int file, ir::Diagnostics& diags);

// The Ethernet frame a trace packet stands for, as every benchmark replays
// it (`rulejit bench`, bench/): Ethernet + IPv4 (no options) + transport
// bytes carrying the ports first, then zeros; TCP gets a 20-byte header so
// its data offset is valid, other protocols 8 bytes.
std::vector<uint8_t> TraceFrame(const TracePacket& p);

// True when the text looks like a ClassBench rule file (first rule line
// starts with '@' and a dotted quad).
bool LooksLikeClassBench(std::string_view text);

}  // namespace rulejit::frontends

#endif  // RULEJIT_FRONTENDS_CLASSBENCH_CLASSBENCH_H_
