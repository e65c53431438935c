// Seeded random FORWARD rulesets for the kernel differential test, kept as an
// abstract list of rules and rendered in two syntaxes with the same meaning:
//
//   std::mt19937 rng(seed);
//   rulejit::testing::GenRuleset rs = rulejit::testing::GenerateRuleset(rng);
//   std::string dump = RenderIptablesSave(rs);  // *filter ... FORWARD ... COMMIT
//   std::string nft = RenderNft(rs);            // table ip filter { chain forward ...
//   std::string in = RenderNft(rs, NftPlacement::kNetdevIngress);  // table netdev
//
// A ruleset is IPv4 or IPv6 (RulesetGenOptions::family). IPv4 renders as an
// iptables-save dump (iptables-legacy-restore) and an nft `ip` or `inet`
// table; IPv6 as an ip6tables-save dump (ip6tables-legacy-restore; its first
// line names ip6tables-save so rulejit reads it as IPv6) and an nft `ip6` or
// `inet` table. The same rules also render into a `table netdev` base chain
// at ingress on fwin or egress on fwout (RenderNft's second argument).
// A mixed ruleset (RulesetGenOptions::mixed) holds rules of both families
// (GenRule::family) and renders as an nft `inet` table only: an IPv4 rule's
// address and icmp matches are `ip`/`icmp` ones, an IPv6 rule's `ip6`/
// `icmpv6`; a rule without address match may carry `meta protocol ip|ip6`
// (GenRule::family_guard), else it applies to packets of both families.
//
// Matches: source/destination prefixes (optionally negated), protocol
// (tcp/udp/icmp or icmpv6, optionally negated when nothing else needs it),
// ports (single, range, negated; multiport sets), input/output interface
// (fwin, fwout or another name, exact or with the `+` wildcard, optionally
// negated), tcp flags (--syn, --tcp-flags), icmp / icmpv6 type[/code], length
// ranges. Verdicts: ACCEPT, DROP, RETURN, jump, goto, or none (a counter-only
// rule). Chain 0 is FORWARD; user chains only jump to chains with a higher
// index, so there are no loops.
//
// The equivalences used by the renderers (each is checked by the kernel in
// kernel_diff_test, which compares iptables-legacy with nft):
//   -s A/n, ! -s A/n            ip saddr A/n, ip saddr != A/n   (ip6 saddr)
//   -p tcp, ! -p tcp            ip protocol tcp, ip protocol != tcp  (no L4 match;
//                               IPv6: meta l4proto, which skips extension
//                               headers as ip6tables' -p does)
//   -p tcp -m tcp --dport a:b   tcp dport a-b   (! --dport: tcp dport != a-b)
//   -m multiport --dports l     tcp dport { l }  (elements sorted, disjoint)
//   -i fw+, ! -o eth9           iifname "fw*", oifname != "eth9"
//   --syn                       tcp flags & (fin|syn|rst|ack) == syn
//   --tcp-flags M C             tcp flags & (M) == (C)   (! : !=)
//   --icmp-type t[/c]           icmp type t [icmp code c]  (! only without code)
//   --icmpv6-type t[/c]         icmpv6 type t [icmpv6 code c]
//   -m length --length a:b      meta length a-b  (IP total length at forward;
//                               ip6tables: payload length + 40, the same here)
//   -j RETURN / -g c / -j c     return / goto c / jump c
// nft 1.0.6 miscompiles two negated single ports in one rule (`tcp dport !=
// 22 tcp sport != 80` becomes one 4-byte `!=`: "not both"), so the generator
// never emits that pair (one becomes a range). Left out on purpose: `--ports` (either port; nft needs two rules),
// negated icmp type/code pairs (nft needs a concatenation), `--icmp-type any`
// (it never matches non-first fragments, `meta l4proto icmp` does).
#ifndef RULEJIT_TESTS_KERNEL_RULESET_GEN_H_
#define RULEJIT_TESTS_KERNEL_RULESET_GEN_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rulejit::testing {

enum class GenFamily { kIpv4, kIpv6 };

// An address as a number: IPv4 in the low 32 bits, IPv6 all 128.
using GenAddr = unsigned __int128;

enum class GenProto { kTcp, kUdp, kIcmp };  // kIcmp: ICMPv6 in IPv6 rulesets

struct GenAddrMatch {
  GenAddr network = 0;  // host bits zero
  int prefix = 32;      // IPv4 8..32, IPv6 16..128
  bool negate = false;
};

struct GenPortRange {
  uint16_t lo = 0;
  uint16_t hi = 0;  // lo == hi: a single port
};

struct GenPortMatch {
  bool destination = true;
  bool negate = false;
  bool multiport = false;  // a set (-m multiport / { ... }), else one range
  std::vector<GenPortRange> ranges;  // sorted, disjoint, not adjacent
};

struct GenIfaceMatch {
  std::string name;       // without the wildcard character
  bool wildcard = false;  // iptables `name+`, nft "name*"
  bool negate = false;
};

struct GenTcpFlagsMatch {
  uint8_t mask = 0;     // subset of FIN SYN RST PSH ACK URG (0x3f)
  uint8_t compare = 0;  // subset of mask
  bool negate = false;
  bool syn_shorthand = false;  // render as --syn (mask FIN,SYN,RST,ACK compare SYN)
};

struct GenIcmpMatch {
  uint8_t type = 8;
  std::optional<uint8_t> code;  // never with negate
  bool negate = false;
};

struct GenLengthMatch {
  uint16_t lo = 0;
  uint16_t hi = 0;
  bool negate = false;
};

enum class GenVerdict { kAccept, kDrop, kReturn, kJump, kGoto, kNone };

struct GenRule {
  std::optional<GenAddrMatch> src, dst;
  std::optional<GenProto> proto;
  bool proto_negate = false;  // only when no port/flags/icmp match
  std::vector<GenPortMatch> ports;  // at most one per direction
  std::optional<GenIfaceMatch> iif, oif;
  std::optional<GenTcpFlagsMatch> tcp_flags;  // proto tcp only
  std::optional<GenIcmpMatch> icmp;           // proto icmp only
  std::optional<GenLengthMatch> length;
  GenVerdict verdict = GenVerdict::kAccept;
  int target = 0;  // chain index for kJump / kGoto
  // Mixed rulesets only: the family of the rule's matches, and whether it
  // renders `meta protocol ip|ip6` (only without address matches).
  std::optional<GenFamily> family;
  bool family_guard = false;
};

struct GenChain {
  std::string name;  // "FORWARD" for chain 0, "user<i>" otherwise
  std::vector<GenRule> rules;
};

struct GenRuleset {
  GenFamily family = GenFamily::kIpv4;
  bool nft_inet = false;  // RenderNft's forward table: inet, else ip / ip6
  bool mixed = false;     // rules of both families (then nft_inet; no iptables)
  bool policy_accept = false;
  std::vector<GenChain> chains;  // chains[0] is FORWARD
};

struct RulesetGenOptions {
  GenFamily family = GenFamily::kIpv4;
  int max_forward_rules = 14;
  int max_user_chains = 3;
  int max_user_rules = 6;
  bool mixed = false;  // rules of both families, each picks its own (family unused)
};

GenRuleset GenerateRuleset(std::mt19937& rng, const RulesetGenOptions& options = {});

// `*filter` with INPUT/FORWARD/OUTPUT and the user chains, for
// iptables-legacy-restore (ip6tables-legacy-restore for IPv6); "" for a
// mixed ruleset.
std::string RenderIptablesSave(const GenRuleset& rs);

// Where RenderNft puts chain 0.
enum class NftPlacement {
  kForward,        // table ip/ip6/inet filter, hook forward
  kNetdevIngress,  // table netdev filter, hook ingress device "fwin"
  kNetdevEgress,   // table netdev filter, hook egress device "fwout"
};

// The nft table with chain 0 as a base chain at `placement` and the user chains.
std::string RenderNft(const GenRuleset& rs, NftPlacement placement = NftPlacement::kForward);

// Dotted quad of a host-order address.
std::string Ipv4Text(uint32_t addr);
// Dotted quad or RFC 5952 text of an address of the family.
std::string AddrText(GenAddr addr, GenFamily family);
// Address width: 32 or 128.
int AddrBits(GenFamily family);
// The network mask of a prefix length, as a number of the family's width.
GenAddr PrefixMask(int prefix, GenFamily family);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_RULESET_GEN_H_
