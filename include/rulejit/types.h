// The public value types of rulejit's C++ API: hooks, verdicts, backends,
// input formats, rule references, counters, and what a verdict carries
// (queue choice, NAT change). Plain types with no dependencies beyond the
// standard library. Where the IR has the very same type it is an alias of
// the one here (`ir::Hook` is `rulejit::Hook`), so nothing converts on the
// hot path.
//
//   rulejit::Hook hook = *rulejit::HookFromName("input");
//   rulejit::RuleRef ref{.table = 0, .chain = 1, .rule = 4};
//   rulejit::Counter c = state.CounterOf(ref);   // rulejit/rulejit.h
#ifndef RULEJIT_TYPES_H_
#define RULEJIT_TYPES_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rulejit {

// The netfilter hooks, in the IR's order.
enum class Hook : uint8_t {
  kPrerouting, kInput, kForward, kOutput, kPostrouting, kIngress, kEgress,
};
// "prerouting", "input", ... "egress"; nullopt for anything else.
const char* HookName(Hook hook);
std::optional<Hook> HookFromName(std::string_view name);
// Whether packets at `hook` have an input (output) device: prerouting,
// input, forward, ingress (forward, output, postrouting, egress).
bool HookHasInputDevice(Hook hook);
bool HookHasOutputDevice(Hook hook);

// kQueue: an nft `queue` statement handed the packet to a userspace queue
// (Result::queue says which). It is final for the ruleset, like drop; the
// kernel then drops the packet when no program listens on the queue, or
// accepts it with the `bypass` flag.
enum class Verdict : uint8_t { kAccept, kDrop, kQueue };

enum class Backend : uint8_t {
  kAuto,    // jit at once; llvm compiled in the background and swapped in
            // when asked (Program::TierUp) or hot, where it measurably wins
  kInterp,  // the reference interpreter
  kJit,     // asmjit native code
  kLlvm,    // LLVM (ORC LLJIT) native code: slower to build, optimized
};

// kIptables: an iptables-save dump as iptables-legacy-restore loads it;
// kIptablesNft: as iptables-nft-restore loads it (they differ on non-first
// fragments). Detection picks kIptables.
enum class InputFormat { kIptables, kNft, kClassbench, kIptablesNft };

// Which rule decided, for explaining verdicts and counters: `rule == -1`
// is the policy of (table, chain); table == -1 (chain == -1) means no base
// chain saw the packet (the kernel's default: accept). Indexes count
// tables, chains and rules in the order Ruleset lists them.
struct RuleRef {
  int table = -1;
  int chain = -1;
  int rule = -1;
  bool operator==(const RuleRef&) const = default;
};

// A base chain as a packet's whole path orders it (Program::BaseChains):
// the kernel runs a hook's chains by priority, but chains of type nat all
// run inside its NAT step (at -100 in prerouting and output, 100 in input
// and postrouting), in their own priority order.
struct BaseChainInfo {
  RuleRef chain;  // rule is -1
  int32_t priority = 0;
  bool nat = false;
};

// Packets and bytes (a rule's counter, a policy's count).
struct Counter {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  bool operator==(const Counter&) const = default;
};

// The userspace queue a queue statement chose.
struct QueueChoice {
  uint32_t num = 0;    // first queue (or the register's value)
  uint16_t total = 1;  // fanout over num .. num + total - 1
  uint16_t flags = 0;  // kQueueBypass | kQueueFanout
};
inline constexpr uint16_t kQueueBypass = 0x1;
inline constexpr uint16_t kQueueFanout = 0x2;

// What a NAT statement (snat, dnat, masquerade, redirect) bound the
// connection to. Values are bytes as nf_tables holds them (addresses and
// ports in network order); an empty vector means the statement left it
// unspecified.
enum class NatKind : uint8_t { kSnat, kDnat, kMasq, kRedir };
struct NatChange {
  NatKind kind = NatKind::kSnat;
  std::vector<uint8_t> addr_min, addr_max, proto_min, proto_max;
  uint32_t flags = 0;  // NF_NAT_RANGE_* bits
};

// Which reply a reject statement asked for (nft `reject with ...`,
// iptables REJECT --reject-with): the kernel's NFT_REJECT_* types.
// kIcmpUnreach's code is an ICMP code for IPv4 packets and an ICMPv6 code
// for IPv6 ones; kIcmpxUnreach's is an NFT_REJECT_ICMPX_* code (0 no route,
// 1 port, 2 host unreachable, 3 admin prohibited), mapped to the packet's
// family as nft_reject_icmp_code / nft_reject_icmpv6_code do.
enum class RejectType : uint8_t { kIcmpUnreach = 0, kTcpReset = 1, kIcmpxUnreach = 2 };

// Options of a log statement (LogEvent::flags), the kernel's NF_LOG_* bits:
// --log-tcp-sequence, --log-tcp-options, --log-ip-options, --log-uid,
// --log-macdecode (nft `log flags tcp sequence,options ip options skuid
// ether`).
inline constexpr uint32_t kLogTcpSeq = 0x01;
inline constexpr uint32_t kLogTcpOpt = 0x02;
inline constexpr uint32_t kLogIpOpt = 0x04;
inline constexpr uint32_t kLogUid = 0x08;
inline constexpr uint32_t kLogMacDecode = 0x20;

// Conntrack state bits as the kernel exposes them to `ct state`
// (PacketMeta::ct_state).
inline constexpr uint32_t kCtStateInvalid = 1u << 0;
inline constexpr uint32_t kCtStateEstablished = 1u << 1;
inline constexpr uint32_t kCtStateRelated = 1u << 2;
inline constexpr uint32_t kCtStateNew = 1u << 3;
inline constexpr uint32_t kCtStateUntracked = 1u << 6;

}  // namespace rulejit

#endif  // RULEJIT_TYPES_H_
