// Internal pieces of the iptables-save frontend (not a public header).
//
// Pipeline of one `-A CHAIN ...` line:
//
//   line ──lexer.cc──▶ Tokens (text, column)
//        ──options.cc──▶ RuleSpec (base options, matches with their options,
//                                  target with its options; nothing lowered)
//        ──base.cc, matches.cc, targets.cc──▶ ir::Rule (exprs in iptables-nft's
//                                  order: interfaces, protocol, addresses,
//                                  fragment, matches, counter, target)
//
// parser.cc drives it and owns tables and chains. values.cc parses numbers,
// ports, addresses and masks. Every lowering function reports its own located
// errors and returns false; the caller then drops the rule (and, at the end,
// the whole ruleset).
#ifndef RULEJIT_FRONTENDS_IPTABLES_INTERNAL_H_
#define RULEJIT_FRONTENDS_IPTABLES_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "frontends/iptables/iptables.h"
#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends {
class Ipsets;  // ipset.h
struct Ipset;
}

namespace rulejit::frontends::iptables_internal {

// ---------------------------------------------------------------------------
// Tokens (lexer.cc)

struct Token {
  std::string text;  // unquoted, unescaped
  uint32_t col = 0;  // 1-based column of the token's first character
  bool quoted = false;
};

// Splits one line into whitespace-separated tokens; "double" and 'single'
// quotes group words, backslash escapes the next character inside double
// quotes. Reports an unterminated quote and returns false.
bool TokenizeLine(std::string_view line, ir::SourceLoc line_loc,
                  ir::Diagnostics& diags, std::vector<Token>* out);

// ---------------------------------------------------------------------------
// Rule specification (options.cc)

struct Option {
  std::string name;          // as given, without "=value" ("--dport", "-s")
  bool invert = false;       // preceded by `!`
  std::vector<Token> args;   // its arguments (0, 1 or 2)
  ir::SourceLoc loc;         // of the option (not of the `!`)
  ir::SourceLoc ArgLoc(size_t i = 0) const;
};

struct MatchUse {
  std::string name;
  ir::SourceLoc loc;     // of the module name after -m (or of the option that
                         // loaded it implicitly)
  bool implicit = false;  // loaded by `-p tcp --dport ...` without -m tcp
  std::vector<Option> options;
};

struct TargetUse {
  std::string name;
  ir::SourceLoc loc;    // of the target name
  bool is_goto = false;  // -g instead of -j
  std::vector<Option> options;
};

// The base (non-extension) options of a rule.
struct RuleSpec {
  std::optional<Option> protocol, source, destination, in_iface, out_iface,
      fragment, counters;
  std::vector<MatchUse> matches;
  std::optional<TargetUse> target;
};

// Builds the spec from the tokens after `-A CHAIN`. Reports and returns
// false on unknown/duplicate options, missing arguments, misplaced `!`.
bool ParseRuleOptions(absl::Span<const Token> tokens, ir::SourceLoc line_loc,
                      ir::Diagnostics& diags, RuleSpec* spec);

// What an extension accepts: option names with their argument counts.
struct OptionSpec {
  std::string_view name;
  int nargs = 1;
  bool invertible = true;
};

// A port (or length) range, inclusive.
struct PortRange {
  uint16_t from = 0, to = 0xffff;
};

// ---------------------------------------------------------------------------
// String helpers. Debian's Abseil has its own absl::string_view (not
// std::string_view), so std::string_view values go through Sv() into
// absl::StrCat and friends, and splitting/case folding use these.

inline absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }
std::vector<std::string_view> Split(std::string_view text, char sep);
std::string Lower(std::string_view text);
std::string Upper(std::string_view text);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// ---------------------------------------------------------------------------
// Lowering (base.cc, matches.cc, targets.cc)

struct IpsetUse;  // below

struct LowerCtx {
  ir::Family family = ir::Family::kIp;
  std::string table_name;
  std::string chain_name;
  std::optional<ir::Hook> hook;   // when the rule's chain is a base chain
  ir::Table* table = nullptr;     // for anonymous sets
  ir::Diagnostics* diags = nullptr;
  const RuleSpec* spec = nullptr;
  ir::Rule* rule = nullptr;       // exprs are appended here
  int* next_set_id = nullptr;     // per-table "__setN" counter
  // ip6tables-legacy (IptablesFlavor::kLegacy, family ip6): `-p` loads
  // meta ip6t_l4proto and transport loads read the ip6t-transport header,
  // ip6_tables' own view of the packet (ir::PayloadBase::kIp6tTransport).
  bool ip6t_legacy = false;
  // The ipsets -m set may name (`--ipset FILE`), or null when none was given.
  const Ipsets* ipsets = nullptr;
  // Where -m set and the SET target use ipsets (target_set.cc), or null.
  std::vector<IpsetUse>* ipset_uses = nullptr;
  // Where -m helper is used (match_helper.cc), or null.
  std::vector<ir::SourceLoc>* helper_matches = nullptr;

  bool ipv6() const { return family == ir::Family::kIp6; }
  // The rule's `-p` protocol number when given and not inverted.
  std::optional<uint8_t> l4proto() const;

  // Reports an error and returns false (so `return ctx.Error(...)` reads well).
  bool Error(ir::SourceLoc loc, std::string message, std::string hint = "");

  // Emitters: each appends one expression at `loc`, using register 1.
  void Payload(ir::PayloadBase base, uint32_t offset, uint32_t len,
               ir::SourceLoc loc, ir::Reg dreg = 1);
  void Meta(ir::MetaKey key, ir::SourceLoc loc);
  void Ct(ir::CtKey key, ir::SourceLoc loc, ir::CtDir dir = ir::CtDir::kNone);
  void Mask(ir::Bytes mask, ir::SourceLoc loc);  // & mask ^ 0
  void Cmp(ir::CmpOp op, ir::Bytes data, ir::SourceLoc loc);
  void Range(bool negate, ir::Bytes from, ir::Bytes to, ir::SourceLoc loc);
  void Hton(uint32_t len, uint32_t size, ir::SourceLoc loc);
  void Add(ir::Expr expr, ir::SourceLoc loc);
  // Adds an anonymous set to the table and returns its name.
  std::string AddSet(ir::Set set);
};

// -p, -s, -d, -i, -o, -f in iptables-nft's order.
bool LowerBase(LowerCtx& ctx);

// iptables-legacy's fragment check of the tcp, udp, icmp and multiport
// matches (they never match a non-first IPv4 fragment): the expressions of
// `! -f` at `loc`. See IptablesFlavor.
bool RefusesFragments(std::string_view module, bool ipv6);
void LowerNotFragment(LowerCtx& ctx, ir::SourceLoc loc);
// ip6tables-legacy's form of the same refusal: the match's loads read the
// ip6t-transport header, absent on non-first fragments; a match that loads
// nothing gets a test that the header is there, unless the rule already
// reads it.
void LowerIp6tHeaderPresent(LowerCtx& ctx, ir::SourceLoc loc);

// An extension match. Unknown modules were rejected by ParseRuleOptions.
bool LowerMatch(LowerCtx& ctx, const MatchUse& match);

// The target: verdict, REJECT, LOG, MARK, ... Jumps are checked against the
// table's chains later by the parser (they may be declared after the rule).
bool LowerTarget(LowerCtx& ctx, const TargetUse& target);

// The target's option `name` (full name), or nullptr.
const Option* FindTargetOption(const TargetUse& t, std::string_view name);

// The nat table's targets (targets_nat.cc): SNAT, DNAT, MASQUERADE,
// REDIRECT, NETMAP.
bool IsNatTarget(std::string_view target);
bool LowerNatTarget(LowerCtx& ctx, const TargetUse& target);
// Extensions the kernel registers at some hooks only (hook_limits.cc):
// whether `name` (a nat target, "owner") may run at `hook`, and a hint
// naming the hooks it may run at.
bool RegisteredAt(std::string_view name, ir::Hook hook);
const char* RegisteredHooksHint(std::string_view name);

// Such an extension in a user chain, checked at COMMIT against the hooks
// that reach the chain.
struct HookLimitedUse {
  std::string chain, name;  // the target's or match's name
  ir::SourceLoc loc;
  std::string kind = "target";  // or "match"
};
void CheckHookLimitedUses(const ir::Table& table, const std::vector<HookLimitedUse>& uses,
                          ir::Diagnostics& diags);

// Rules sharing a --hashlimit-name take the table settings of the rule the
// kernel checks first (hashlimit_tables.cc); mixed byte/rate-match modes
// are refused, located.
void ShareHashlimitTables(ir::Ruleset& ruleset, IptablesFlavor flavor, ir::Diagnostics& diags);

// One use of an ipset by -m set or the SET target, for the checks of
// CheckIpsetWrites (target_set.cc).
struct IpsetUse {
  enum Kind : uint8_t { kRead, kReadInList, kReadMap, kWrite };  // kReadMap: SET --map-set
  Kind kind = kRead;
  std::string ipset, table;
  ir::SourceLoc rule_loc, loc;  // the rule's start; the set's name
  // kRead of a set of another type than hash:ip with enough flags: the IR
  // set -m set looked up (its content does not depend on the flags).
  std::string ir_set;
};

// hash:ip sets, read by -m set and changed by the SET target, as one exact
// IR set of masked addresses per ipset (target_set.cc): its name, created
// in the table when missing, and the masked address loaded into reg 1.
std::string HashIpSet(LowerCtx& ctx, const Ipset& set);
// "ipset_" and the ipset's name, other characters than letters and digits
// as _N_ (N its code): the start of every IR set name -m set makes.
std::string IpsetIrBase(std::string_view ipset);
void LoadHashIpKey(LowerCtx& ctx, const Ipset& set, bool src, ir::SourceLoc loc);
// A hash:ip,port or hash:ip,port,ip ipset that the SET target changes, as
// one IR set for every flag order (match_set.cc): its name
// ("ipset_NAME_ipport", "_ipportip"), created when missing, with -m set's
// key (`addr . l4proto . port` [. addr2] . frag-off on IPv4);
// LoadIpsetPortKey loads that key for the flags `src` from reg 1.
std::string IpsetPortSet(LowerCtx& ctx, const Ipset& set);
void LoadIpsetPortKey(LowerCtx& ctx, const Ipset& set, const std::vector<bool>& src,
                      ir::SourceLoc loc);

// -j SET --add-set/--del-set as a dynamic set statement on HashIpSet or
// IpsetPortSet.
bool LowerSetTarget(LowerCtx& ctx, const TargetUse& target);

// After the dump: the IR sets the SET target changes become dynamic
// (ipset's timeout and maxelem); a changed ipset read through a list:set
// or used in another table is refused, located. Uses of rules no longer in
// the ruleset (-D, -R, -F) do not count.
void CheckIpsetWrites(ir::Ruleset& ruleset, const Ipsets* ipsets,
                      const std::vector<IpsetUse>& uses, ir::Diagnostics& diags);

// Per-module lowering functions (match_ports.cc, match_ct.cc,
// match_icmp.cc, matches.cc); the registry in matches.cc maps names to them.
bool LowerTcp(LowerCtx& ctx, const MatchUse& m);
bool LowerAddrtype(LowerCtx& ctx, const MatchUse& m);
bool LowerRecent(LowerCtx& ctx, const MatchUse& m);
bool LowerHashlimit(LowerCtx& ctx, const MatchUse& m);
bool LowerString(LowerCtx& ctx, const MatchUse& m);
bool LowerIpv6Header(LowerCtx& ctx, const MatchUse& m);  // match_ipv6header.cc
bool LowerSet(LowerCtx& ctx, const MatchUse& m);  // match_set.cc
// "FIN,SYN,RST,ACK" → flag bits (ALL, NONE too); nullopt on an unknown flag.
std::optional<uint8_t> ParseTcpFlags(std::string_view text);
bool LowerTcpMss(LowerCtx& ctx, const TargetUse& t);
bool LowerChecksum(LowerCtx& ctx, const TargetUse& t);
bool LowerSocket(LowerCtx& ctx, const MatchUse& m);            // match_socket.cc
bool LowerTproxyTarget(LowerCtx& ctx, const TargetUse& t);     // match_socket.cc
// Loads `load`, then new = (old & ~mask) ^ value, stored with `store`
// (targets.cc).
void EmitMarkUpdate(LowerCtx& ctx, ir::Expr load, ir::Expr store, uint32_t value, uint32_t mask,
                    ir::SourceLoc loc);
// DSCP, TOS, TTL, HL, CLASSIFY, NFQUEUE (targets_header.cc).
bool IsHeaderTarget(std::string_view name);
bool LowerHeaderTarget(LowerCtx& ctx, const TargetUse& t);
std::string AddrtypeHookLimit(const MatchUse& m);
bool LowerUdp(LowerCtx& ctx, const MatchUse& m);
bool LowerSctp(LowerCtx& ctx, const MatchUse& m);  // match_ports.cc
bool LowerDccp(LowerCtx& ctx, const MatchUse& m);
bool LowerMultiport(LowerCtx& ctx, const MatchUse& m);
bool LowerConntrack(LowerCtx& ctx, const MatchUse& m);
bool LowerState(LowerCtx& ctx, const MatchUse& m);
bool LowerConnmark(LowerCtx& ctx, const MatchUse& m);
bool LowerConnbytes(LowerCtx& ctx, const MatchUse& m);  // match_connbytes.cc
bool LowerHelper(LowerCtx& ctx, const MatchUse& m);     // match_helper.cc
// Refuses -m helper (at `uses`) in a ruleset that assigns conntrack helpers.
void CheckHelperMatches(const ir::Ruleset& ruleset, const std::vector<ir::SourceLoc>& uses,
                        ir::Diagnostics& diags);
bool LowerIcmp(LowerCtx& ctx, const MatchUse& m);
bool LowerIcmp6(LowerCtx& ctx, const MatchUse& m);
bool LowerOwner(LowerCtx& ctx, const MatchUse& m);
bool LowerRt(LowerCtx& ctx, const MatchUse& m);      // match_rt.cc
bool LowerRpfilter(LowerCtx& ctx, const MatchUse& m);  // match_rpfilter.cc
// IPsec headers (match_ipsec.cc) and IPv6 extension headers
// (match_ip6ext.cc), TCP's ECN bits and MSS option (match_tcpext.cc).
bool LowerEsp(LowerCtx& ctx, const MatchUse& m);
bool LowerAh(LowerCtx& ctx, const MatchUse& m);
bool LowerFrag(LowerCtx& ctx, const MatchUse& m);
bool LowerHbh(LowerCtx& ctx, const MatchUse& m);
bool LowerDst(LowerCtx& ctx, const MatchUse& m);
bool LowerMh(LowerCtx& ctx, const MatchUse& m);
bool LowerEcn(LowerCtx& ctx, const MatchUse& m);
bool LowerTcpmssMatch(LowerCtx& ctx, const MatchUse& m);
bool LowerStatistic(LowerCtx& ctx, const MatchUse& m);  // match_statistic.cc
bool LowerTime(LowerCtx& ctx, const MatchUse& m);       // match_time.cc
bool LowerU32(LowerCtx& ctx, const MatchUse& m);        // match_u32.cc
// IPv6 extension headers found as ipv6_find_hdr finds them (match_ip6ext.cc):
// `len` bytes at `offset` into the header of `type` (exthdr load), and
// `exthdr TYPE exists` (with `present` false, a test no packet passes:
// the flag loads 0 or 1, never 2).
void Ip6HeaderField(LowerCtx& ctx, uint8_t type, uint32_t offset, uint32_t len,
                    ir::SourceLoc loc);
void Ip6HeaderPresent(LowerCtx& ctx, uint8_t type, ir::SourceLoc loc, bool present = true);
// After a load of `len` big-endian bytes into register 1: the value is
// in lo..hi (not, when `invert`): cmp for one value, else range.
void EmitValueRange(LowerCtx& ctx, uint64_t lo, uint64_t hi, int len, bool invert,
                    ir::SourceLoc loc);
// After a load into register 1: it holds one of `keys` (none of them, when
// `invert`; all of one length, at least one): a cmp for one key, else a
// lookup in an anonymous constant set.
void EmitOneOf(LowerCtx& ctx, const std::vector<ir::Bytes>& keys, bool invert,
               ir::SourceLoc loc);
bool LowerPolicy(LowerCtx& ctx, const MatchUse& m);  // match_policy.cc
// The hook-limited name of a policy use ("policy --dir in|out").
std::string PolicyHookLimit(const MatchUse& m);

// Shared helpers for match lowering (matches.cc).
const Option* FindOption(const MatchUse& m, std::string_view name);
// Reports "match 'NAME' requires -p PROTO" unless -p is one of `protos`.
bool RequireProtocol(LowerCtx& ctx, const MatchUse& m,
                     std::initializer_list<uint8_t> protos,
                     std::string_view proto_names);
// Reports "match 'NAME' needs an option" when none was given.
bool RequireOptions(LowerCtx& ctx, const MatchUse& m);
// load 2b @ transport + offset; cmp / range for a port range (nothing for
// a non-inverted 0:65535).
void EmitPortRange(LowerCtx& ctx, uint32_t offset, PortRange r, bool invert,
                   ir::SourceLoc loc);
// Parses `A[/M]` as 32-bit mark value and mask (mask defaults to all ones).
bool ParseMarkMask(LowerCtx& ctx, const Option& opt, uint32_t* value,
                   uint32_t* mask);

// Match modules: whether one exists, its options (nullptr if unknown).
const std::vector<OptionSpec>* MatchOptions(std::string_view module);
std::vector<std::string_view> SupportedMatchNames();
// Why a match the kernel has is not supported, or "".
std::string_view UnsupportedMatchReason(std::string_view module);
// Targets with options (nullptr if the target takes none or is unknown).
const std::vector<OptionSpec>* TargetOptions(std::string_view target);
bool IsStandardVerdict(std::string_view target);  // ACCEPT DROP RETURN
bool IsSupportedTarget(std::string_view target);  // REJECT LOG MARK ...
bool IsKnownUnsupportedTarget(std::string_view target);  // DNAT, SNAT, ...
// The protocol match `-p NAME` loads implicitly ("tcp" → tcp), or "".
std::string_view ImplicitMatchFor(std::string_view protocol);

// ---------------------------------------------------------------------------
// Values (values.cc)

// Unsigned number, decimal or 0x-hex (iptables' strtoul base 0 without the
// octal surprise), at most `max`.
std::optional<uint64_t> ParseNumber(std::string_view text, uint64_t max);
// Protocol name or number 0..255 ("all" = 0).
std::optional<uint8_t> ParseProtocol(std::string_view text);
// A port number; with `service_proto` also a service name from the
// services database for that protocol ("" any), as xtables_parse_port.
std::optional<uint16_t> ParsePort(std::string_view text, const char* service_proto = nullptr);

// "N", "A:B", "A:", ":B", ":" of numbers up to `max` (xtables'
// XTTYPE_UINT8RC / UINT32RC: SPIs, fragment ids, mh types, MSS values);
// a start above the end is refused. `what` names the value in messages.
bool ParseValueRange(const Option& opt, uint64_t max, std::string_view what,
                     ir::Diagnostics& diags, uint64_t* lo, uint64_t* hi);

// "N", "A:B", "A:", ":B", ":" (also "A-B" when allow_dash). Ports may be
// service names when `service_proto` is given. Reports errors.
bool ParsePortRange(std::string_view text, ir::SourceLoc loc,
                    ir::Diagnostics& diags, PortRange* out,
                    bool allow_dash = false, const char* service_proto = nullptr);
// The services-database protocol of the rule's `-p` ("tcp", "udp",
// "sctp", "dccp"), or "" (any).
const char* ServiceProto(const LowerCtx& ctx);

// Address (4 or 16 bytes, network order) with an optional /prefix or
// /dotted-mask; the address is masked. Reports errors.
struct AddrMask {
  ir::Bytes addr, mask;
};
bool ParseAddrMask(std::string_view text, bool ipv6, ir::SourceLoc loc,
                   ir::Diagnostics& diags, AddrMask* out);
std::optional<ir::Bytes> ParseAddr(std::string_view text, bool ipv6);

// Byte helpers: host-order (little-endian) u32 as the kernel keeps meta/ct
// values, and big-endian (network order) integers for payload fields.
ir::Bytes HostU32(uint32_t v);
ir::Bytes BigEndian(uint64_t v, int len);

}  // namespace rulejit::frontends::iptables_internal

#endif  // RULEJIT_FRONTENDS_IPTABLES_INTERNAL_H_
