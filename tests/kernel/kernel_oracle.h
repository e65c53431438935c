// The kernel as oracle: runs a ruleset in the real kernel and reports, for
// each frame, whether the kernel forwarded it (accept) or not (drop).
//
//   rulejit::testing::OracleRuleset rs{
//       .syntax = rulejit::testing::OracleSyntax::kIptablesSave,
//       .text = "*filter\n:FORWARD DROP [0:0]\n-A FORWARD -p udp -j ACCEPT\nCOMMIT\n"};
//   absl::StatusOr<std::vector<bool>> arrived =
//       rulejit::testing::KernelVerdicts(rs, frames);   // true = accepted
//
// Topology (fresh for every run; <t> = CLOCK_MONOTONIC ns, so names are
// unique per process and run):
//
//   ns rjk-<pid>-<t>-src        ns rjk-<pid>-<t>-fw            ns rjk-<pid>-<t>-dst
//   src0  <──── veth ────>  fwin  [ruleset]  fwout  <──── veth ────>  dst0
//   (AF_PACKET send)        198.18.0.1/30    198.18.0.5/30             (AF_PACKET capture)
//                           2001:2:0:1::1/64 2001:2:0:2::1/64
//
// fw forwards IPv4 and IPv6 (rp_filter off, no DAD), and routes every
// destination (default routes, v4 and v6) to a next hop on fwout whose
// neighbour entry is static (dst0's MAC), so no ARP/ND is ever needed. The
// ruleset is loaded into fw with the real tools (iptables-legacy-restore,
// ip6tables-legacy-restore, `nft -f`). Inside the rulesets the interfaces are
// `fwin` (input, -i / iifname) and `fwout` (output, -o / oifname): the kernel
// sees FORWARD packets after routing, so the output interface is known.
//
// Frame contract (what the caller's generator must respect):
//  - Ethernet II carrying IPv4 or IPv6 (no VLAN tags), at most 1514 bytes
//    (veth MTU 1500). The harness rewrites the MAC addresses (src0 -> fwin)
//    so fw accepts the frame as PACKET_HOST; everything else is kept.
//  - Each frame needs at least 4 bytes of L4 payload: the harness writes the
//    frame's index (big-endian uint32) into the first 4 payload bytes, i.e.
//    right after the TCP header (data offset), the 8-byte UDP/UDPLite/ICMP/
//    ICMPv6 header, or at the start of the IP payload for other protocols and
//    for non-first fragments; an ICMP/ICMPv6 error whose payload quotes an IP
//    header of its own version gets it after the quoted packet's L4 header
//    instead (conntrack reads the quote, so it stays intact; the quote needs
//    4 bytes of payload). SCTP gets it in the last 4 bytes of the packet
//    (the chunks after the 12-byte common header are conntrack's to read):
//    give the last chunk 4 bytes of value nothing reads (DATA's user data,
//    a heartbeat's info, or 4 bytes added to a chunk that has none). The L4
//    checksum is updated incrementally (RFC 1624), SCTP's CRC32c recomputed,
//    so a correct checksum stays correct and a deliberately wrong one stays
//    wrong (IPv4 UDP checksum 0 stays 0; a wrong CRC32c stays off by the
//    same bits). Rules that match those 4 payload bytes see the index. PrepareOracleFrames() returns the frames exactly as injected:
//    use them when comparing with another evaluator (e.g. write them to a pcap).
//  - A frame arrived when dst0 sees an IPv4/IPv6 packet equal to the injected
//    one except for the TTL / hop limit (fw decrements it) and the IPv4 header
//    checksum. So rulesets that mangle packets are out of scope.
//  - The kernel drops before (or regardless of) the filter hook, so the
//    generator must avoid, unless a test is about exactly that:
//      * IPv4 TTL <= 1 or IPv6 hop limit <= 1 (forwarding needs >= 2);
//      * a bad IPv4 header checksum, IHL < 5, total/payload length larger than
//        the frame, IPv4 options the kernel rejects;
//      * martian addresses (measured with an accept-all ruleset on Linux
//        6.18; older kernels drop more, e.g. 0.0.0.0/8 and 240.0.0.0/4):
//        source or destination in 127.0.0.0/8 or 224.0.0.0/4, destination
//        255.255.255.255; IPv6 source ::, source or destination ::1,
//        fe80::/10, destination ff00::/8. Safest: stay in ordinary unicast
//        space (10/8, 172.16/12, 192.168/16, the documentation ranges,
//        2001:db8::/32, fc00::/7);
//      * the harness's own ranges 198.18.0.0/24 and 2001:2::/48 (fw's
//        addresses and connected routes: a packet to them is local or goes back
//        out fwin, never to dst);
//      * frames larger than the MTU (fw answers with ICMP "too big").
//  - Conntrack: every run uses fresh namespaces, so conntrack starts empty; a
//    ruleset that uses ct sees each frame in send order. Keep frames of one
//    flow intentional (distinct ports per frame for stateless tests).
//  - Frames are sent one by one, in order, paced, each drained on dst0 right
//    after it is sent (veth delivery runs in the sender's softirq, so an
//    accepted frame has normally arrived when sendto returns); the run ends
//    once settle_ms pass without an arrival. veth GRO is off by default, so
//    frames are never merged.
//  - REJECT / reject count as "not arrived" (drop), as do queue verdicts.
//    In iptables mode only the given family's tables are loaded: frames of the
//    other family pass (its chains keep policy ACCEPT).
#ifndef RULEJIT_TESTS_KERNEL_KERNEL_ORACLE_H_
#define RULEJIT_TESTS_KERNEL_KERNEL_ORACLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rulejit::testing {

// Names of fw's interfaces, as rulesets refer to them.
inline constexpr char kFwInputIf[] = "fwin";
inline constexpr char kFwOutputIf[] = "fwout";
// Every namespace the harness creates starts with this prefix, followed by
// the creating process's pid.
inline constexpr char kNetnsPrefix[] = "rjk-";

enum class OracleSyntax {
  kIptablesSave,   // loaded with iptables-legacy-restore
  kIp6tablesSave,  // loaded with ip6tables-legacy-restore
  kNft,            // loaded with nft -f
};

// Where the ruleset filters. It does not change how the harness runs (the
// ruleset text declares its own hooks); it selects the accept-all ruleset of
// the control run and tells callers which hook to give other evaluators.
enum class OracleHook {
  kForward,        // FORWARD / hook forward
  kNetdevIngress,  // nft only: table netdev, hook ingress device "fwin"
  kNetdevEgress,   // nft only: table netdev, hook egress device "fwout"
};

struct OracleRuleset {
  OracleSyntax syntax = OracleSyntax::kIptablesSave;
  std::string text;
  OracleHook hook = OracleHook::kForward;
};

struct OracleOptions {
  // Before the real run, run the same frames through an accept-all ruleset in
  // the same syntax (fresh namespaces); anything short of 100% arrival makes
  // the whole result an error, since a drop would then not be the ruleset's.
  bool control_run = true;
  // Pause after each injected frame, so no queue on the path overflows.
  int pace_us = 200;
  // After the last frame, wait until this long passes without an arrival.
  int settle_ms = 250;
  // When set, receives fw's host model as rulejit's --host reads it
  // ({"addr": ip -j addr show, "route4"/"route6": ip -j route show table
  // all}), taken in the run that applied the ruleset.
  std::string* fw_host_json = nullptr;
  // Path mode: fw's sysctls set after the ruleset is loaded, as
  // {"netfilter/nf_conntrack_udp_timeout", "2"} (paths under
  // /proc/sys/net/; conntrack's are per namespace).
  std::vector<std::pair<std::string, std::string>> fw_sysctls;
  // Path mode: milliseconds to wait before sending each frame (none when
  // shorter than the frames), so conntrack's timeouts can pass.
  std::vector<int> wait_ms_before;
  // Path mode, the output path: fw itself sends each frame's IP packet
  // from a raw socket (IPPROTO_RAW: the header as given, but the kernel
  // fills an IPv4 id of 0 and sets the IPv4 total length and header
  // checksum), routed by its destination; the client prefixes are routed
  // out of fwin. `forwarded`: it left fw (captured on dst0 or src0);
  // `delivered`: a local destination's packet came back through lo to
  // fw's input hook. The frames' link headers are ignored.
  bool send_from_fw = false;
  // With send_from_fw: the file credentials (fsuid, fsgid) of fw's raw
  // sockets, which meta skuid / skgid and iptables' owner match read.
  uint32_t fw_socket_uid = 0;
  uint32_t fw_socket_gid = 0;
  // `ipset save` output restored in fw (`ipset restore`) before the
  // ruleset is loaded, for rulesets with -m set ("": none).
  std::string ipset_restore;
  // Called with fw's namespace name once the ruleset is loaded, before
  // fw's host model is read and frames are sent (forward and path mode),
  // e.g. to open sockets in fw or put its devices in groups; an error ends
  // the run.
  std::function<absl::Status(const std::string& fw_netns)> fw_ready;
};

// OK when the harness can run here: root, `ip netns`, and the tool for the
// syntax (iptables-legacy-restore / ip6tables-legacy-restore / nft). Otherwise
// an Unavailable status whose message says what is missing.
absl::Status OracleAvailable(OracleSyntax syntax);

// The frames as the harness injects them: MACs rewritten, index written into
// the payload, L4 checksum updated. InvalidArgument (naming the frame) when
// a frame breaks the contract above.
absl::StatusOr<std::vector<std::vector<uint8_t>>> PrepareOracleFrames(
    const std::vector<std::vector<uint8_t>>& frames);

// The kernel's verdict per frame: true = forwarded to dst (accept). Errors:
// contract violations, a ruleset the tool rejects (message has its output),
// setup failures, or a failed control run.
absl::StatusOr<std::vector<bool>> KernelVerdicts(
    const OracleRuleset& ruleset,
    const std::vector<std::vector<uint8_t>>& frames,
    const OracleOptions& options = {});

// Path mode: what became of each frame on fw's whole path. Frames may be
// addressed to fw's own addresses (198.18.0.1, 198.18.0.5, 2001:2:0:1::1,
// 2001:2:0:2::1): an nft table of fw counts every frame that passed the
// input hook after all of the ruleset's chains (priority 2147483000) as
// delivered. A frame that arrived on the other side is recognised by its
// index alone (and its protocol), so rulesets may NAT and mangle it;
// `arrived` is the frame as it was captured. No control run.
//
// Connections both ways: with `from_dst` (one flag per frame), the flagged
// frames are sent from dst0 to fwout (answers of the servers behind fw),
// fw routes the client prefixes 10.1.0.0/16 and 2001:db8:1::/48 back out
// of fwin, and src0 captures too. PreparePathFrames gives the frames as
// injected (MACs of their side).
inline constexpr char kClientPrefix4[] = "10.1.0.0/16";
inline constexpr char kClientPrefix6[] = "2001:db8:1::/48";
struct PathOutcome {
  bool forwarded = false;
  bool delivered = false;
  std::vector<uint8_t> arrived;
};
absl::StatusOr<std::vector<PathOutcome>> KernelPathOutcomes(
    const OracleRuleset& ruleset, const std::vector<std::vector<uint8_t>>& frames,
    const OracleOptions& options = {}, const std::vector<bool>& from_dst = {});
absl::StatusOr<std::vector<std::vector<uint8_t>>> PreparePathFrames(
    const std::vector<std::vector<uint8_t>>& frames, const std::vector<bool>& from_dst);

// Deletes namespaces named kNetnsPrefix<pid>-... whose process is gone
// (left behind by a crashed run). KernelVerdicts calls it first.
void CleanupStaleOracleNamespaces();

// Names of existing namespaces created by this process (for leak checks).
std::vector<std::string> OwnOracleNamespaces();

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_KERNEL_ORACLE_H_
