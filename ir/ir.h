// The rulejit IR: the nf_tables VM vocabulary.
//
// Glossary
//   ruleset   all tables loaded together (what `nft list ruleset` shows).
//   table     a namespace of chains and sets, bound to one family.
//   chain     an ordered list of rules; a base chain is attached to a hook
//             with a priority and a policy, a regular chain is only reached
//             by jump/goto.
//   rule      a sequence of expressions run left to right; an expression
//             that does not match ends the rule (NFT_BREAK) and evaluation
//             goes on with the next rule.
//   register  the VM's scratch space: 16 words of 32 bits. Expressions name
//             registers the way the kernel does (see `Reg`): 1..4 are the
//             128-bit registers, 8..23 the 32-bit ones, 0 the verdict.
//   data      bytes as they sit in registers: payload bytes keep network
//             order, meta/ct values are host order (little-endian) as in
//             the kernel.
//   verdict   what a rule or chain decides: accept, drop, continue, return,
//             jump, goto.
//
// Every node carries the SourceLoc of the text it came from, so analyses and
// backends can point back at `FILE:LINE:COL`.
#ifndef RULEJIT_IR_IR_H_
#define RULEJIT_IR_IR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "rulejit/types.h"
#include "ir/boxed.h"

namespace rulejit::ir {

// Where a node came from. `file` indexes Ruleset::files; -1 when synthetic.
struct SourceLoc {
  int file = -1;
  uint32_t line = 0;  // 1-based; 0 when unknown
  uint32_t col = 0;   // 1-based; 0 when unknown
};

// ---------------------------------------------------------------------------
// Registers and data

// Register numbers exactly as netlink carries them (and `nft --debug=netlink`
// prints them): 0 = verdict, 1..4 = 128-bit registers, 8..23 = 32-bit
// registers 0..15. Register 1 overlaps 32-bit registers 8..11, and so on.
using Reg = uint8_t;
inline constexpr Reg kVerdictReg = 0;
inline constexpr int kRegWords = 16;  // 16 x 32-bit data words
inline constexpr int kRegBytes = kRegWords * 4;

// Word index (0..15) of a data register's first 32-bit word, -1 if invalid.
constexpr int RegWord(Reg r) {
  if (r >= 1 && r <= 4) return (r - 1) * 4;
  if (r >= 8 && r <= 23) return r - 8;
  return -1;
}
// The register number nft prints for a data word: 128-bit name when aligned.
constexpr Reg RegForWord(int word) {
  return word % 4 == 0 ? static_cast<Reg>(word / 4 + 1)
                       : static_cast<Reg>(word + 8);
}

// Raw bytes as they sit in registers (at most 64: the whole register file).
using Bytes = absl::InlinedVector<uint8_t, 16>;

enum class Family : uint8_t { kIp, kIp6, kInet, kNetdev, kBridge, kArp };
const char* FamilyName(Family family);

// ---------------------------------------------------------------------------
// Verdicts

enum class VerdictCode : uint8_t {
  kContinue,  // NFT_CONTINUE: go on with the next expression/rule
  kBreak,     // NFT_BREAK: this rule does not match (internal)
  kAccept,
  kDrop,
  kReturn,
  kJump,
  kGoto,
  kQueue,  // NF_QUEUE: to a userspace queue (ir::Queue); final like drop
};

struct Verdict {
  VerdictCode code = VerdictCode::kContinue;
  std::string chain;  // target for jump/goto
  bool operator==(const Verdict&) const = default;
};

// ---------------------------------------------------------------------------
// Expressions (one struct per nf_tables expression type)
//
// Each compares field by field (`==`; a lookup by its set's name);
// ir/equal.h compares and hashes them with sets resolved.

// kIp6tTransport is no nf_tables base: it is ip6tables-legacy's transport
// header (ip6_packet_match's protoff), which only the ip6tables frontend
// emits, for loads only. It differs from kTransport in two ways: it walks
// over AH headers (nft stops at them), and it is absent on non-first
// fragments, where ip6tables' tcp, udp, icmp6 and multiport matches see
// par->fragoff != 0 and refuse the packet (PacketView::ip6t_off).
// Printed `@ ip6t-transport header + OFF`.
enum class PayloadBase : uint8_t { kLink, kNetwork, kTransport, kInner, kIp6tTransport };

// [ payload load LENb @ BASE header + OFF => reg R ]
struct PayloadLoad {
  PayloadBase base = PayloadBase::kNetwork;
  uint32_t offset = 0;  // bytes from the start of the header
  uint32_t len = 0;     // bytes, 1..64
  Reg dreg = 1;
  bool operator==(const PayloadLoad&) const = default;
};

// [ payload write reg R => LENb @ BASE header + OFF csum_type T csum_off C
//   csum_flags 0xF ]  Stores `len` register bytes into the packet. With
// csum_type 1 (inet) the 16-bit ones'-complement checksum at `csum_offset`
// from the same header is updated incrementally; csum_flags 1 updates the
// transport checksum too (fields of the pseudo-header).
struct PayloadWrite {
  PayloadBase base = PayloadBase::kNetwork;
  uint32_t offset = 0;
  uint32_t len = 0;
  Reg sreg = 1;
  uint32_t csum_type = 0;    // 0 none, 1 inet
  uint32_t csum_offset = 0;
  uint32_t csum_flags = 0;   // 1: NFT_PAYLOAD_L4CSUM_PSEUDOHDR
  bool operator==(const PayloadWrite&) const = default;
};
inline constexpr uint32_t kCsumInet = 1;
inline constexpr uint32_t kCsumL4PseudoHdr = 1;

// Meta keys with the names libnftnl prints.
enum class MetaKey : uint8_t {
  kLen, kProtocol, kPriority, kMark, kIif, kOif, kIifName, kOifName,
  kIifType, kOifType, kSkUid, kSkGid, kNfTrace, kRtClassId, kSecMark,
  kNfProto, kL4Proto, kBriIifName, kBriOifName, kPktType, kCpu, kIifGroup,
  kOifGroup, kCgroup, kPRandom, kSecPath, kIifKind, kOifKind,
  kBriIifPvid, kBriIifVproto, kTimeNs, kTimeDay, kTimeHour, kSdif, kSdifName,
  kBriBroute,
  // No nf_tables key: ip6tables-legacy's `-p` protocol (ipv6_find_hdr
  // walking over AH, unlike l4proto), emitted by the ip6tables frontend
  // only; printed `meta load ip6t_l4proto`. Load only (PacketView::ip6t_proto).
  kIp6tL4Proto,
};
inline constexpr MetaKey kLastMetaKey = MetaKey::kIp6tL4Proto;
const char* MetaKeyName(MetaKey key);
std::optional<MetaKey> MetaKeyFromName(std::string_view name);
// Size in bytes of the value a meta load writes (e.g. iifname 16, mark 4).
uint32_t MetaKeyLen(MetaKey key);

// Which header chain an exthdr expression walks (NFT_EXTHDR_OP_*).
enum class ExthdrOp : uint8_t { kIpv6, kTcpopt, kSctp };

// [ exthdr load (ipv6 |tcpopt )LENb @ TYPE + OFF (present )=> reg R ]
// Finds the IPv6 extension header, TCP option or SCTP chunk of `type` and
// loads `len` bytes at `offset` into it; with `present`, loads 1 (found) or
// 0 into the register instead and always matches. The sctp form prints no
// op name (as libnftnl), so the reader takes an unnamed op as sctp.
struct Exthdr {
  ExthdrOp op = ExthdrOp::kIpv6;
  uint8_t type = 0;
  uint32_t offset = 0;
  uint32_t len = 1;
  bool present = false;
  Reg dreg = 1;
  bool operator==(const Exthdr&) const = default;
};

// [ exthdr write tcpopt reg R => LENb @ TYPE + OFF ]  (nft_exthdr_tcp_set_eval)
// Finds the first TCP option of `type` and stores `len` (2 or 4) register
// bytes at `offset` (at least 2) into it, updating the TCP checksum
// incrementally. The MSS option (type 2) is only ever lowered: a value not
// below the option's is left alone. No such option: nothing happens, the
// rule goes on; no TCP header (or a fragment), a TCP header shorter than 20
// bytes, or an option that overruns the header or is too short for the
// write: NFT_BREAK. Writes the packet (interpreter tier).
struct ExthdrWrite {
  ExthdrOp op = ExthdrOp::kTcpopt;
  uint8_t type = 0;
  uint32_t offset = 0;
  uint32_t len = 2;
  Reg sreg = 1;
  bool operator==(const ExthdrWrite&) const = default;
};

// [ rt load tcpmss => reg R ]  (nft_rt, NFT_RT_TCPMSS): a 16-bit host-order
// MSS for the packet's route: the smaller of its route's MTU (the route to
// its destination, skb_dst) and the route back to its source, less the IP
// and TCP headers (40 for IPv4, 60 for IPv6); 536 (TCP_MSS_DEFAULT) when
// that MTU is not above the headers or above 65535; no route: NFT_BREAK.
// Routes and MTUs come from the host model. The kernel allows it at the
// forward, output and postrouting hooks only. The other NFT_RT_* keys
// (classid, nexthop, ipsec) are not modelled.
enum class RtKey : uint8_t { kTcpMss = 3 };  // NFT_RT_TCPMSS
struct Rt {
  RtKey key = RtKey::kTcpMss;
  Reg dreg = 1;
  bool operator==(const Rt&) const = default;
};

// [ meta load KEY => reg R ]
struct MetaLoad {
  MetaKey key = MetaKey::kMark;
  Reg dreg = 1;
  bool operator==(const MetaLoad&) const = default;
};
// [ meta set KEY with reg R ]
struct MetaSet {
  MetaKey key = MetaKey::kMark;
  Reg sreg = 1;
  bool operator==(const MetaSet&) const = default;
};

// Conntrack keys with the names libnftnl prints.
enum class CtKey : uint8_t {
  kState, kDirection, kStatus, kMark, kSecMark, kExpiration, kHelper,
  kL3Protocol, kSrc, kDst, kProtocol, kProtoSrc, kProtoDst, kLabels,
  kPkts, kBytes, kAvgPkt, kZone, kEventMask, kSrcIp, kDstIp, kSrcIp6,
  kDstIp6, kId,
};
const char* CtKeyName(CtKey key);
std::optional<CtKey> CtKeyFromName(std::string_view name);
uint32_t CtKeyLen(CtKey key);

enum class CtDir : uint8_t { kNone, kOriginal, kReply };

// Conntrack state bits as the kernel exposes them to `ct state` (public:
// rulejit/types.h).
using rulejit::kCtStateEstablished;
using rulejit::kCtStateInvalid;
using rulejit::kCtStateNew;
using rulejit::kCtStateRelated;
using rulejit::kCtStateUntracked;

// [ ct load KEY => reg R (, dir original|reply) ]
struct CtLoad {
  CtKey key = CtKey::kState;
  Reg dreg = 1;
  CtDir dir = CtDir::kNone;
  bool operator==(const CtLoad&) const = default;
};
// [ ct set KEY with reg R (, dir original|reply) ]
struct CtSet {
  CtKey key = CtKey::kMark;
  Reg sreg = 1;
  CtDir dir = CtDir::kNone;  // e.g. `ct original zone set 1`
  bool operator==(const CtSet&) const = default;
};

enum class BitwiseOp : uint8_t { kMaskXor, kLshift, kRshift, kAndReg, kOrReg, kXorReg };

// [ bitwise reg D = ( reg S & MASK ) ^ XOR ]  (len bytes)
// [ bitwise reg D = ( reg S << N ) ] / ( reg S >> N )
// [ bitwise reg D = ( reg S | reg S2 ) ] (also & and ^: NFT_BITWISE_AND/
// OR/XOR with a register operand, `meta mark set meta mark | ct mark`)
// Shifts work on host-order 32-bit words, as in the kernel.
struct Bitwise {
  BitwiseOp op = BitwiseOp::kMaskXor;
  Reg sreg = 1;
  Reg dreg = 1;
  uint32_t len = 4;
  Bytes mask;      // kMaskXor: len bytes
  Bytes xor_;      // kMaskXor: len bytes
  uint32_t shift = 0;  // kLshift / kRshift
  Reg sreg2 = 2;       // kAndReg / kOrReg / kXorReg
  bool operator==(const Bitwise&) const = default;
};
// True for the ops with a register operand (sreg2).
inline bool IsRegisterBitwise(BitwiseOp op) {
  return op == BitwiseOp::kAndReg || op == BitwiseOp::kOrReg || op == BitwiseOp::kXorReg;
}

enum class ByteorderOp : uint8_t { kNtoh, kHton };

// [ byteorder reg D = hton(reg S, SIZE, LEN) ]
struct Byteorder {
  ByteorderOp op = ByteorderOp::kNtoh;
  Reg sreg = 1;
  Reg dreg = 1;
  uint32_t len = 4;   // total bytes
  uint32_t size = 4;  // element size: 2, 4 or 8
  bool operator==(const Byteorder&) const = default;
};

enum class CmpOp : uint8_t { kEq, kNeq, kLt, kLte, kGt, kGte };

// [ cmp OP reg R DATA ]  compares data.size() bytes; ordering compares are
// big-endian (memcmp) as in the kernel.
struct Cmp {
  CmpOp op = CmpOp::kEq;
  Reg sreg = 1;
  Bytes data;
  bool operator==(const Cmp&) const = default;
};

// [ range eq|neq reg R FROM TO ]  memcmp order, inclusive.
struct Range {
  bool negate = false;  // range neq
  Reg sreg = 1;
  Bytes from;
  Bytes to;
  bool operator==(const Range&) const = default;
};

// [ lookup reg R set NAME (dreg D) (0x1) ]
struct Lookup {
  Reg sreg = 1;
  std::string set;               // name in the rule's table
  std::optional<Reg> dreg;       // maps: where the value goes (0 = verdict)
  bool invert = false;           // `!=` lookups (NFT_LOOKUP_F_INV)
  bool operator==(const Lookup&) const = default;
};

// [ immediate reg R DATA ] or [ immediate reg 0 VERDICT ]
struct Immediate {
  Reg dreg = kVerdictReg;
  Bytes data;        // when dreg != 0
  Verdict verdict;   // when dreg == 0
  bool operator==(const Immediate&) const = default;
};

// [ counter pkts P bytes B ]  The initial values come from the ruleset;
// running counts live outside the IR (per-rule slots). The public
// rulejit::Counter, packets and bytes.
using Counter = rulejit::Counter;

// [ limit rate R/UNIT burst B type packets|bytes flags F ]
// flags & 1 = `over` (matches when the rate is exceeded).
struct Limit {
  uint64_t rate = 0;
  uint64_t unit_seconds = 1;  // 1 second, 60 minute, 3600 hour, ...
  uint32_t burst = 0;
  bool bytes = false;
  bool over = false;
  bool operator==(const Limit&) const = default;
};

// [ log (prefix P) (level L) ... ]  Recorded, no effect on the verdict.
// The NF_LOG_* bits by the names libnftnl prints, in its order: the
// printer writes them so and the reader reads them back.
inline constexpr std::pair<uint32_t, const char*> kLogFlagNames[] = {
    {kLogTcpSeq, "tcpseq"}, {kLogTcpOpt, "tcpopt"}, {kLogIpOpt, "ipopt"},
    {kLogUid, "uid"},       {kLogMacDecode, "macdecode"}};

struct Log {
  std::optional<std::string> prefix;
  std::optional<uint32_t> level;
  std::optional<uint32_t> group;
  uint32_t flags = 0;       // NF_LOG_* bits: kLogTcpSeq ... kLogMacDecode (rulejit/types.h)
  uint32_t snaplen = 0;     // nflog group only
  uint32_t qthreshold = 0;  // nflog group only
  bool operator==(const Log&) const = default;
};

// [ reject type T code C ]  Ends evaluation as drop (the kernel sends the
// ICMP/TCP reset and drops the packet).
struct Reject {
  RejectType type = RejectType::kIcmpUnreach;  // NFT_REJECT_* (rulejit/types.h)
  uint32_t code = 0;
  bool operator==(const Reject&) const = default;
};

// [ notrack ]
struct Notrack {
  bool operator==(const Notrack&) const = default;
};

// [ queue num N(-M) (bypass )(fanout ) ] / [ queue sreg_qnum R ... ]
// Hands the packet to userspace queue N (NF_QUEUE): a final verdict for
// the ruleset, like drop; what happens next is the listener's decision.
// The kernel drops the packet when no program listens on the queue, or,
// with `bypass`, accepts it (goes on with the next hook). `fanout` spreads
// packets over queues N..N+total-1 by CPU.
struct Queue {
  uint16_t num = 0;
  uint16_t total = 1;        // queues num .. num + total - 1
  uint16_t flags = 0;        // kQueueBypass | kQueueFanout
  std::optional<Reg> sreg_qnum;  // queue number from a register (no num)
  bool operator==(const Queue&) const = default;
};
using rulejit::kQueueBypass;  // rulejit/types.h
using rulejit::kQueueFanout;

// [ quota bytes B consumed C flags F ]  flags & 1 = `over`. Stateful like
// limit: each packet adds its length to the consumed bytes; without `over`
// the rule goes on while consumed < bytes, with `over` once consumed >=
// bytes (nft_quota: the check is made after adding).
struct Quota {
  uint64_t bytes = 0;
  uint64_t consumed = 0;  // initial value from the ruleset (`used N`)
  bool over = false;
  bool operator==(const Quota&) const = default;
};

// The NAT statements of nat chains:
//   [ nat snat|dnat ip|ip6 (addr_min reg R) (addr_max reg R) (proto_min reg R)
//     (proto_max reg R) (flags 0xF) ]
//   [ masq (proto_min reg R) (proto_max reg R) (flags 0xF) ]
//   [ redir (proto_min reg R) (proto_max reg R) (flags 0xF) ]
// Each binds the connection to the new addresses/ports (a state change
// the interpreter records) and ends the rule with NF_ACCEPT, as the
// kernel's nft_nat_eval / nft_masq_eval / nft_redir_eval do.
using NatKind = rulejit::NatKind;  // kSnat, kDnat, kMasq, kRedir
struct Nat {
  NatKind kind = NatKind::kSnat;
  Family family = Family::kIp;  // snat/dnat: ip or ip6 addresses (inet: ports only)
  std::optional<Reg> addr_min, addr_max, proto_min, proto_max;
  uint32_t flags = 0;  // NF_NAT_RANGE_* bits
  bool operator==(const Nat&) const = default;
};
inline constexpr uint32_t kNatMapIps = 0x1;
inline constexpr uint32_t kNatProtoSpecified = 0x2;
inline constexpr uint32_t kNatRandom = 0x4;
inline constexpr uint32_t kNatPersistent = 0x8;
inline constexpr uint32_t kNatRandomFully = 0x10;
inline constexpr uint32_t kNatNetmap = 0x40;

// [ flow_offload flowtable NAME ]  `flow add @NAME` (nft_flow_offload_eval):
// adds the packet's connection to flowtable NAME of the rule's table, after
// which the kernel forwards its packets from the flowtable's ingress hook
// and they skip the IP hooks. It offloads only a tracked, confirmed
// connection that is not offloaded yet, has no helper, no sequence
// adjustment and no NAT clash, and is UDP or established TCP (ct assured;
// not on a FIN or RST packet); otherwise (and on an IPv4 packet with
// options, or under IPsec) the rule ends there, as NFT_BREAK. Once offloaded
// the rule goes on (NFT_CONTINUE). The kernel takes it in forward chains of
// ip, ip6 and inet tables only.
struct FlowOffload {
  std::string flowtable;
  bool operator==(const FlowOffload&) const = default;
};

// [ numgen reg D = random|inc mod M (offset O) ]  (nft_numgen): a 32-bit
// number, host order. inc counts 0, 1, ..., M-1, 0, ... per expression
// (the kernel starts its counter at M-1 and increments before it reads),
// state kept across packets; random is reciprocal_scale(get_random_u32(),
// M), the draw being an input: PacketMeta::random. Plus O.
struct Numgen {
  Reg dreg = 1;
  bool random = false;
  uint32_t mod = 1;
  uint32_t offset = 0;
  bool operator==(const Numgen&) const = default;
};

// [ hash reg D = jhash(reg S, LEN, SEED) % mod M offset O ] and
// [ hash reg D = symhash() % mod M offset O ] (nft_hash): a 32-bit number,
// host order, reciprocal_scale(h, M) + O, where h is the kernel's jhash
// (Jenkins' lookup3, as include/linux/jhash.h) of the LEN register bytes
// from S under SEED, or for symhash the packet's symmetric flow hash. nft
// sends no seed when the rule names none, and the kernel then draws one
// when it loads the rule: that seed is an input (PacketMeta::jhash_seed),
// as is the symmetric flow hash, which the kernel keys with a secret drawn
// at boot (PacketMeta::symhash).
struct Hash {
  Reg dreg = 1;
  bool symmetric = false;  // symhash; else jhash of sreg/len
  Reg sreg = 1;
  uint8_t len = 0;         // 1..255 bytes (jhash)
  std::optional<uint32_t> seed;  // jhash; nullopt: the kernel's random one
  uint32_t mod = 1;
  uint32_t offset = 0;
  bool operator==(const Hash&) const = default;
};

// Named stateful objects (NFT_OBJECT_*), declared in a table.
inline constexpr uint32_t kObjCounter = 1;
inline constexpr uint32_t kObjQuota = 2;
inline constexpr uint32_t kObjCtHelper = 3;
inline constexpr uint32_t kObjLimit = 4;
inline constexpr uint32_t kObjCtTimeout = 7;
inline constexpr uint32_t kObjSecmark = 8;
inline constexpr uint32_t kObjCtExpect = 9;
inline constexpr uint32_t kObjSynproxy = 10;

// [ synproxy mss M wscale W ]  (nft_synproxy; also a synproxy object run
// by objref): the kernel answers a TCP SYN itself with a SYN-ACK carrying
// a SYN cookie and consumes the SYN (NF_STOLEN: it goes no further on its
// path; rulejit reports it as dropped); an ACK without SYN must carry a
// cookie the kernel issued (a hash of a per-boot secret, which rulejit
// never issues), else it is dropped: rulejit drops every such ACK, as the
// kernel does for ACKs that do not answer one of its SYN-ACKs. Other TCP
// packets go on with the rule; a bad TCP checksum (not left partial) or
// unreadable TCP options drop the packet; no TCP header: NFT_BREAK.
// `mss` and `wscale` (as libnftnl prints them) and the timestamp and
// sack-perm flags (not kept) only shape the SYN-ACK.
struct Synproxy {
  uint16_t mss = 0;
  uint8_t wscale = 0;
  bool operator==(const Synproxy&) const = default;
};

// [ objref type T name NAME ]  (nft_objref_eval) runs the named object of
// the rule's table: a quota or limit object ends the rule (NFT_BREAK) as
// its expression would, with the state shared by every rule naming it; a
// counter counts; ct helper, ct timeout and ct expectation objects attach
// to the packet's (new) connection and secmark labels the packet: state the
// kernel holds, no effect on this verdict.
// [ objref sreg R set MAP ]  (nft_objref_map_eval) looks the key up in an
// object map and runs the element's object; no element ends the rule.
struct Objref {
  uint32_t type = 0;  // kObj*, with name
  std::string name;
  std::optional<Reg> sreg;  // map form, with set
  std::string set;
  bool operator==(const Objref&) const = default;
};

// Not an nf_tables expression: what compiler/passes/fold_masked_compare
// makes of `payload load` + optional `bitwise & MASK ^ 0` + `cmp` when no
// later expression of the rule reads the register. It writes no register.
//   [ fused payload 4b @ network header + 12 & 0x0000c0ff neq 0x0000000a ]
// Meaning: the load's bytes (zero-padded to whole words as a load leaves
// them), ANDed word by word with `mask` when present, compared over
// data.size() bytes in memcmp order.
struct FusedCmp {
  PayloadLoad load;
  Bytes mask;  // empty, or (load.len + 3) / 4 * 4 bytes
  CmpOp op = CmpOp::kEq;
  Bytes data;  // at most (load.len + 3) / 4 * 4 bytes
  bool operator==(const FusedCmp&) const = default;
};

// [ fib saddr|daddr(. mark)(. iif|oif) oif|oifname|type (present )=> reg R ]
// A route lookup on the host model (rulejit/host.h), as nft_fib: `type`
// loads the address's RTN_* type (4 bytes), `oif` the output interface's
// index (4 bytes, 0 for none), `oifname` its name (16 bytes), and with
// `present` 1 or 0 instead. Flags numerically as NFTA_FIB_F_*.
//
// `addrclass6` (kXtAddrClass6) is no nft result: ip6tables' addrtype
// (xt_addrtype's match_type6), whose IPv6 meaning differs from fib type.
// It loads, for an IPv6 packet, a 4-byte host-order mask of the
// XT_ADDRTYPE_* classes (1 << RTN_*) the address is in: UNSPEC, UNICAST
// and MULTICAST from ipv6_addr_type, LOCAL, ANYCAST and UNREACHABLE from
// the output route (match_lookup_rt6; with iif/oif, bound to that device).
// A match then tests the mask. Not an IPv6 packet: NFT_BREAK.
enum class FibResult : uint8_t { kOif = 1, kOifName = 2, kAddrType = 3, kXtAddrClass6 = 4 };
inline constexpr uint32_t kFibSaddr = 0x1;
inline constexpr uint32_t kFibDaddr = 0x2;
inline constexpr uint32_t kFibMark = 0x4;
inline constexpr uint32_t kFibIif = 0x8;
inline constexpr uint32_t kFibOif = 0x10;
inline constexpr uint32_t kFibPresent = 0x20;
struct Fib {
  uint32_t flags = kFibDaddr;
  FibResult result = FibResult::kAddrType;
  Reg dreg = 1;
  bool operator==(const Fib&) const = default;
};
// Bytes a fib expression writes to its register.
inline uint32_t FibResultLen(const Fib& e) {
  return e.result == FibResult::kOifName && !(e.flags & kFibPresent) ? 16 : 4;
}

// [ socket load transparent|mark|wildcard => reg R ]  (nft_socket): the
// packet's socket, found on the host model (HostModel::sockets, looked
// up as nf_sk_lookup_slow_v4/v6 do: established first, then listener;
// host/socket_lookup.h), or the one a tproxy earlier on the packet's
// path assigned. `transparent`: 1 when the socket has IP_TRANSPARENT (a
// byte in a zeroed word); `mark`: its SO_MARK (4 bytes, host order);
// `wildcard`: 1 when it is bound to the any address of the packet's
// family. No socket: NFT_BREAK. `cgroupv2 level N` is refused (no cgroup
// tree in the host model). The kernel takes it at prerouting, input and
// output only; rulejit refuses output (the sending socket is not modelled).
enum class SocketKey : uint8_t { kTransparent = 0, kMark = 1, kWildcard = 2, kCgroupv2 = 3 };
struct Socket {
  SocketKey key = SocketKey::kTransparent;
  uint32_t level = 0;  // cgroupv2 only
  Reg dreg = 1;
  bool operator==(const Socket&) const = default;
};

// [ tproxy (ip|ip6 )(addr reg A )(port reg P )]  (nft_tproxy, prerouting
// only): for a TCP or UDP packet, the established socket of its own
// addresses, else the listener on (A, P) (A absent or zero: the input
// device's first address, else the packet's destination; P absent or
// zero: the packet's destination port); when that socket is transparent
// it is assigned to the packet and the rule goes on, else NFT_BREAK.
// `family` kInet: none given (the packet's own; ports only).
// `else_drop` is iptables' TPROXY target (xt_TPROXY), which drops the
// packet where nft_tproxy breaks: printed ` else drop` (no nft syntax).
struct Tproxy {
  Family family = Family::kInet;
  std::optional<Reg> addr, port;
  bool else_drop = false;
  bool operator==(const Tproxy&) const = default;
};

// [ tcpmss set N ] / [ tcpmss clamp ]: iptables' TCPMSS target (xt_TCPMSS;
// no nf_tables expression means the same: it adds an MSS option where
// there is none). Lowers the MSS option of a TCP packet to N, or to the
// path MTU less the IP and TCP headers (the smaller of the packet's route
// and the reverse route to its source, on the host model), never raising
// it; a SYN without the option and without data gets one. Drops the
// packet where the kernel does: a TCP header shorter than 20 bytes or
// than its data offset, an unusable path MTU. Writes the packet (so the
// ruleset runs in the interpreter, as payload writes do).
struct TcpMss {
  uint16_t mss = 0;
  bool clamp = false;  // --clamp-mss-to-pmtu (mss unused)
  bool operator==(const TcpMss&) const = default;
};

// [ recent OP name NAME ... ]: iptables' recent match (xt_recent; no
// nf_tables expression). A per-name table of addresses (the source, or
// with `rdest` the destination, under `mask`) with the times each was
// seen: `set` adds the packet's address and matches; `rcheck` matches
// when the address is there (seen `hitcount` times within `seconds`, when
// given), `update` does the same and records this packet's time when it
// matches; `remove` drops the address and matches when it was there.
// State across packets (ir::InterpState), on the caller's clock.
enum class RecentOp : uint8_t { kSet, kCheck, kUpdate, kRemove };
struct Recent {
  RecentOp op = RecentOp::kCheck;
  std::string name = "DEFAULT";
  bool invert = false;
  bool rdest = false;
  bool reap = false;
  bool rttl = false;
  uint32_t seconds = 0;
  uint32_t hitcount = 0;
  Bytes mask = Bytes(16, 0xff);  // 16 bytes; IPv4 uses the first 4
  bool operator==(const Recent&) const = default;
};

// [ hashlimit name N mode M avg A burst B ... ]: iptables' hashlimit match
// (xt_hashlimit revision 3, the one iptables 1.8.9 loads; no nf_tables
// expression keeps the kernel's units). A per-name table of token buckets
// keyed by the packet's fields in `mode` (addresses under srcmask/dstmask,
// ports); `avg` and `burst` in the match's own units (avg: 1/1000000 s
// per packet, or the byte cost with `bytes`). Matches when the key's
// bucket holds the packet's cost (`invert`: when it does not); with
// `rate_match`, when the key's rate over `interval` seconds stays within
// the burst. A new key in a full table (`max`) drops the packet, as the
// kernel's hotdrop does. State across packets (ir::InterpState), on the
// caller's clock (ir/hashlimit_eval.cc).
inline constexpr uint32_t kHashlimitDstIp = 0x01;   // XT_HASHLIMIT_HASH_DIP
inline constexpr uint32_t kHashlimitDstPort = 0x02; // XT_HASHLIMIT_HASH_DPT
inline constexpr uint32_t kHashlimitSrcIp = 0x04;   // XT_HASHLIMIT_HASH_SIP
inline constexpr uint32_t kHashlimitSrcPort = 0x08; // XT_HASHLIMIT_HASH_SPT
struct Hashlimit {
  std::string name;
  uint32_t mode = 0;  // kHashlimit* bits
  bool invert = false;      // --hashlimit-above (or ! --hashlimit-upto)
  bool bytes = false;       // a byte rate ("1kb/s")
  bool rate_match = false;  // --hashlimit-rate-match
  uint64_t avg = 0;
  uint64_t burst = 0;
  uint32_t interval = 0;     // seconds (rate_match)
  uint32_t size = 0;         // 0: the kernel's default
  uint32_t max = 0;          // 0: 8 x size
  uint32_t gc_interval = 1000;  // ms
  uint32_t expire = 0;          // ms
  uint8_t srcmask = 32, dstmask = 32;
  bool operator==(const Hashlimit&) const = default;
};

// [ string algo bm from F to T pattern 0x.. (icase )(invert )]: iptables'
// string match (xt_string; no nf_tables expression). Matches when
// `pattern` occurs within the bytes [from, to) counted from where the
// kernel's skb->data points (the network header at the IP hooks), the
// search ending at the packet's end; `icase` compares as the kernel's
// toupper does (ASCII and Latin-1 letters); `invert` turns the answer.
// `algo` (bm or kmp) names the kernel's search; both find the same.
struct StringMatch {
  std::string algo = "bm";
  uint16_t from = 0;
  uint16_t to = 65535;
  Bytes pattern;
  bool icase = false;
  bool invert = false;
  bool operator==(const StringMatch&) const = default;
};

// [ ipv6header flags 0x98 (invert )(soft )]: ip6tables' ipv6header match
// (ip6t_ipv6header; no nf_tables expression). The kernel walks the IPv6
// extension headers from the fixed header (hop-by-hop, routing, fragment,
// AH, destination options; ESP and no-next-header end the walk, as does
// the end of the packet) and collects one bit per kind it meets, plus
// kIpv6HdrProto when the chain ends in another protocol. Exact mode
// matches when the bits equal `flags` (differ, with `invert`); `soft`
// when every bit of `flags` is present (absent, with `invert`). A chain
// of an unknown shape (an extension header cut short) does not match.
inline constexpr uint8_t kIpv6HdrHopOpts = 0x80, kIpv6HdrDstOpts = 0x40,
                         kIpv6HdrRouting = 0x20, kIpv6HdrFragment = 0x10, kIpv6HdrAh = 0x08,
                         kIpv6HdrEsp = 0x04, kIpv6HdrNone = 0x02, kIpv6HdrProto = 0x01;
struct Ipv6HeaderMatch {
  uint8_t flags = 0;
  bool invert = false;
  bool soft = false;
  bool operator==(const Ipv6HeaderMatch&) const = default;
};

// [ checksum fill ]: iptables' CHECKSUM --checksum-fill (xt_CHECKSUM; no
// nf_tables expression). Completes the TCP or UDP checksum of a packet
// whose checksum was left partial (PacketMeta::csum_partial), as
// skb_checksum_help does; other packets are left alone. A packet write.
struct ChecksumFill {
  bool operator==(const ChecksumFill&) const = default;
};

// [ dynset add|update|delete reg_key R set NAME (sreg_data R) (timeout Tms)
//   (expr [ ... ])* ]: nft's `add @s { KEY }`, `update @s { KEY timeout T
// : DATA }`, `delete @s { KEY }` and meters (nft_dynset). Add and update
// find or insert the element whose key is in the registers from
// `sreg_key` (an insert fails when the set is full, and then the rule
// stops); update also restarts an existing element's timeout; each
// element runs its own copies of `exprs` (counter, limit, quota) and a
// limit or quota that does not pass stops the rule. Delete removes the
// element and always goes on. The set's contents are state across packets
// (ir::InterpState), timed by the caller's clock.
enum class DynsetOp : uint8_t { kAdd, kUpdate, kDelete };
using DynsetElemExpr = std::variant<Counter, Limit, Quota>;
struct Dynset {
  DynsetOp op = DynsetOp::kAdd;
  Reg sreg_key = 1;
  std::string set;
  std::optional<Reg> sreg_data;  // maps: the element's data
  uint64_t timeout_ms = 0;       // 0: the set's own timeout
  std::vector<DynsetElemExpr> exprs;
  bool operator==(const Dynset&) const = default;
};

// [ time date D0-D1 daytime T0-T1 weekdays W monthdays M (kerneltz )(contiguous )]
// iptables' time match (xt_time's time_mt; no nf_tables expression means
// the same: nft's `meta day` always applies the kernel timezone, xt_time
// only with --kerneltz, and nft has no month days). On the clock
// (PacketMeta::clock_ns) in whole seconds, less the kernel timezone with
// `kerneltz`, it matches when: the second lies in [date_start, date_stop];
// its time of day in [daytime_start, daytime_stop], or when start >= stop
// outside (daytime_stop, daytime_start) (with `contiguous` a time before
// daytime_stop counts as the day before); its weekday's bit (1 Monday ..
// 7 Sunday) is set in `weekdays`; its day of the month's bit (1..31) in
// `monthdays`. Fails to match without a clock, or without the kernel
// timezone when `kerneltz`.
struct TimeMatch {
  uint32_t date_start = 0;
  uint32_t date_stop = 0x7fffffff;   // INT_MAX: no end
  uint32_t daytime_start = 0;
  uint32_t daytime_stop = 86399;     // 23:59:59
  uint32_t weekdays = 0xfe;          // XT_TIME_ALL_WEEKDAYS
  uint32_t monthdays = 0xfffffffe;   // XT_TIME_ALL_MONTHDAYS
  bool kerneltz = false;
  bool contiguous = false;
  bool operator==(const TimeMatch&) const = default;
};

using Expr = std::variant<PayloadLoad, MetaLoad, MetaSet, CtLoad, CtSet,
                          Bitwise, Byteorder, Cmp, Range, Lookup, Immediate,
                          Counter, Limit, Log, Reject, Notrack, FusedCmp,
                          Exthdr, PayloadWrite, Queue, Quota, Nat, Fib, TcpMss,
                          ChecksumFill, Recent, FlowOffload, Objref, Numgen,
                          ExthdrWrite, Rt, Synproxy, Dynset,
                          TimeMatch, Hashlimit, StringMatch, Socket, Tproxy, Hash,
                          Ipv6HeaderMatch>;


// An expression with the location it came from.
struct Node {
  Expr expr;
  SourceLoc loc;
};

// ---------------------------------------------------------------------------
// Sets and maps

// Set flags, numerically as NFT_SET_* (printed in hex by the payload form).
inline constexpr uint32_t kSetAnonymous = 0x1;
inline constexpr uint32_t kSetConstant = 0x2;
inline constexpr uint32_t kSetInterval = 0x4;
inline constexpr uint32_t kSetMap = 0x8;
inline constexpr uint32_t kSetTimeout = 0x10;
inline constexpr uint32_t kSetEval = 0x20;    // `dynamic`: updated from the packet path
inline constexpr uint32_t kSetObject = 0x40;  // an object map (obj_type)
inline constexpr uint32_t kSetConcat = 0x80;

// Kept small: a 1,000,000-element set holds a million of these. What most
// elements lack is Boxed (8 bytes when absent): 88 bytes instead of 176.
struct SetElement {
  Bytes key;               // key_len bytes
  Boxed<Bytes> key_end;    // interval end (inclusive) when set
  Bytes data;              // maps with data values
  Boxed<Verdict> verdict;  // verdict maps
  Boxed<std::string> object;  // object maps: the name of the object
  SourceLoc loc;
};

struct Set {
  std::string name;     // anonymous sets: "__set<N>" / "__map<N>"
  uint32_t flags = 0;   // kSet* bits
  uint32_t key_len = 0;   // bytes, padded per concatenated field to 4
  uint32_t data_len = 0;  // bytes of map values (0 for plain sets)
  bool verdict_map = false;
  uint32_t obj_type = 0;  // kObj* of an object map (kSetObject)
  // Byte lengths of the concatenated fields (each padded to 4 in the key).
  std::vector<uint32_t> field_lens;
  std::vector<SetElement> elements;
  uint64_t timeout_ms = 0;  // default element timeout (`timeout 1m`), with kSetTimeout
  uint32_t size = 0;        // `size N`: most elements (0: none declared)
  SourceLoc loc;
  bool anonymous() const { return flags & kSetAnonymous; }
  bool interval() const { return flags & kSetInterval; }
};

// ---------------------------------------------------------------------------
// Tables, chains, rules


// The public rulejit::Hook (rulejit/types.h), its names too.
using Hook = rulejit::Hook;
using rulejit::HookFromName;
using rulejit::HookName;

struct Rule {
  std::vector<Node> exprs;
  SourceLoc loc;
  uint64_t handle = 0;   // unique within the ruleset, from 1; 0 = unassigned
  std::string comment;
};

// Which rule decided. `rule == -1` means the chain's policy decided (or the
// packet fell through every base chain: kernel default accept, chain = -1).
// The public rulejit::RuleRef.
using RuleRef = rulejit::RuleRef;

struct BaseChain {
  std::string type = "filter";
  Hook hook = Hook::kInput;
  int32_t priority = 0;
  // The devices an ingress or egress chain hooks (`device D`, `devices =
  // { D, ... }`); a packet on any of them passes the chain.
  std::vector<std::string> devices;
  VerdictCode policy = VerdictCode::kAccept;  // accept or drop
};

struct Chain {
  std::string name;
  std::optional<BaseChain> base;
  std::vector<Rule> rules;
  SourceLoc loc;
};

// `flowtable NAME { hook ingress priority P; devices = { ... } }`: where
// offloaded connections' packets are forwarded from (the ingress hook of
// its devices). Recorded: `flow add @NAME` refers to it.
struct Flowtable {
  std::string name;
  int32_t priority = 0;
  std::vector<std::string> devices;
  uint32_t flags = 0;  // NFT_FLOWTABLE_HW_OFFLOAD 0x1, NFT_FLOWTABLE_COUNTER 0x2
  SourceLoc loc;
};

// A named object (`counter c { }`, `quota q { over 2 mbytes }`, `ct helper
// h { type "ftp" protocol tcp; }`, ...): what its type needs, recorded.
struct Object {
  uint32_t type = 0;  // kObj*
  std::string name;
  Counter counter;  // kObjCounter: the initial packets and bytes
  Quota quota;      // kObjQuota
  Limit limit;      // kObjLimit
  Synproxy synproxy;  // kObjSynproxy
  // ct helper: the kernel helper ("ftp"); secmark: the security context;
  // ct timeout: the policy as written ("established 100 close 4").
  std::string text;
  uint8_t l4proto = 0;  // ct helper, timeout, expectation
  uint8_t l3proto = 0;  // NFPROTO_* (0: the table's)
  uint16_t dport = 0;        // ct expectation
  uint32_t timeout_ms = 0;   // ct expectation
  uint32_t size = 0;         // ct expectation
  SourceLoc loc;
};

struct Table {
  Family family = Family::kIp;
  std::string name;
  std::vector<Chain> chains;
  std::vector<Set> sets;
  std::vector<Flowtable> flowtables;
  std::vector<Object> objects;
  SourceLoc loc;

  const Chain* FindChain(std::string_view chain_name) const;
  const Set* FindSet(std::string_view set_name) const;
  const Object* FindObject(uint32_t type, std::string_view object_name) const;
};

struct Ruleset {
  std::vector<Table> tables;
  std::vector<std::string> files;  // SourceLoc::file indexes this

  // "FILE:LINE" for a location, or "" when synthetic.
  std::string Where(const SourceLoc& loc) const;
};

// True when some rule writes packet bytes (the compiled tiers read the
// packet as immutable and leave such rulesets to the interpreter).
bool HasPacketWrites(const Ruleset& ruleset);
// Whether the ruleset reads or changes conntrack state: ct expressions,
// NAT (statements or nat chains), notrack, flow offload.
bool UsesConntrack(const Ruleset& ruleset);

}  // namespace rulejit::ir

#endif  // RULEJIT_IR_IR_H_
