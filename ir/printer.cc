// The IR text printer: `nft --debug=netlink` lines, byte for byte.
//
// Each expression prints as libnftnl does: "[ NAME " + body + "]", where
// every piece of the body ends with one space (so `[ log ]` and
// `[ notrack ]` fall out naturally). One small function per expression kind,
// dispatched by std::visit. Data is the register bytes read as little-endian
// u32 words ("0x%08x "), a trailing partial word zero-padded.
//
// PrintRuleset's form (netlink debug output has no chain headers, so these
// comment lines are rulejit's own):
//
//   # table ip filter
//   # object type 2 name q              (named objects: counter, quota, ...)
//   # flowtable ft hook ingress priority 0 devices lan,wan (flags 0x1)
//   <named set blocks, as PrintSet>
//   # chain input type filter hook input priority 0 policy accept
//   <anonymous set blocks of the next rule, as PrintSet>
//   ip filter input
//     [ ... ]
//   <blank line after each rule block>
//   # chain helper                      (a regular chain)
#include "ir/printer.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/set_name_index.h"

namespace rulejit::ir {
namespace {

// Little-endian u32 word `index` of `bytes`, zero-padded past the end.
uint32_t WordAt(const Bytes& bytes, size_t index) {
  uint32_t word = 0;
  for (size_t i = 0; i < 4; ++i) {
    size_t at = index * 4 + i;
    if (at < bytes.size()) word |= static_cast<uint32_t>(bytes[at]) << (8 * i);
  }
  return word;
}

size_t WordCount(size_t len) { return (len + 3) / 4; }

// "0x%08x " per word: the data_reg form used inside expressions.
std::string DataPieces(const Bytes& bytes) {
  std::string out;
  for (size_t i = 0; i < WordCount(bytes.size()); ++i) {
    absl::StrAppendFormat(&out, "0x%08x ", WordAt(bytes, i));
  }
  return out;
}

// "%08x " per word: the form set elements use (no 0x).
std::string ElementWords(const Bytes& bytes) {
  std::string out;
  for (size_t i = 0; i < WordCount(bytes.size()); ++i) {
    absl::StrAppendFormat(&out, "%08x ", WordAt(bytes, i));
  }
  return out;
}

const char* BaseName(PayloadBase base) {
  switch (base) {
    case PayloadBase::kLink: return "link";
    case PayloadBase::kNetwork: return "network";
    case PayloadBase::kTransport: return "transport";
    case PayloadBase::kInner: return "inner";
    case PayloadBase::kIp6tTransport: return "ip6t-transport";
  }
  return "?";
}

const char* DirName(CtDir dir) {
  switch (dir) {
    case CtDir::kNone: return "";
    case CtDir::kOriginal: return "original";
    case CtDir::kReply: return "reply";
  }
  return "?";
}

const char* CmpName(CmpOp op) {
  switch (op) {
    case CmpOp::kEq: return "eq";
    case CmpOp::kNeq: return "neq";
    case CmpOp::kLt: return "lt";
    case CmpOp::kLte: return "lte";
    case CmpOp::kGt: return "gt";
    case CmpOp::kGte: return "gte";
  }
  return "?";
}

// "accept " / "jump -> CHAIN " as libnftnl prints a verdict.
std::string VerdictPieces(const Verdict& v) {
  switch (v.code) {
    case VerdictCode::kContinue: return "continue ";
    case VerdictCode::kBreak: return "break ";
    case VerdictCode::kAccept: return "accept ";
    case VerdictCode::kDrop: return "drop ";
    case VerdictCode::kReturn: return "return ";
    case VerdictCode::kJump: return absl::StrCat("jump -> ", v.chain, " ");
    case VerdictCode::kGoto: return absl::StrCat("goto -> ", v.chain, " ");
    case VerdictCode::kQueue: return "queue ";
  }
  return "? ";
}

// The prefix of an anonymous set's name ("__set" of "__set12"), or "".
std::string_view AnonymousSetPrefix(std::string_view name) {
  for (std::string_view prefix : {"__set", "__map", "__objmap"}) {
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix)
      continue;
    std::string_view rest = name.substr(prefix.size());
    if (std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit)) return prefix;
  }
  return {};
}

// Anonymous sets are numbered per batch by the kernel, so netlink debug
// output shows the template name: "__set12" prints as "__set%d".
std::string SetDisplayName(std::string_view name) {
  std::string_view prefix = AnonymousSetPrefix(name);
  return prefix.empty() ? std::string(name) : std::string(prefix) + "%d";
}

// Key names, guarded: the printer may see IR no verifier has checked.
const char* MetaName(MetaKey key) {
  return key <= kLastMetaKey ? MetaKeyName(key) : "unknown";
}
const char* CtName(CtKey key) {
  return key <= CtKey::kId ? CtKeyName(key) : "unknown";
}

// --- one body generator per expression kind --------------------------------

std::string Body(const PayloadLoad& e) {
  return absl::StrFormat("load %ub @ %s header + %u => reg %u ", e.len,
                         BaseName(e.base), e.offset, e.dreg);
}

std::string Body(const PayloadWrite& e) {
  return absl::StrFormat(
      "write reg %u => %ub @ %s header + %u csum_type %u csum_off %u csum_flags 0x%x ",
      e.sreg, e.len, BaseName(e.base), e.offset, e.csum_type, e.csum_offset, e.csum_flags);
}

std::string Body(const MetaLoad& e) {
  return absl::StrFormat("load %s => reg %u ", MetaName(e.key), e.dreg);
}

std::string Body(const MetaSet& e) {
  return absl::StrFormat("set %s with reg %u ", MetaName(e.key), e.sreg);
}

std::string Body(const CtLoad& e) {
  std::string out =
      absl::StrFormat("load %s => reg %u ", CtName(e.key), e.dreg);
  if (e.dir != CtDir::kNone) absl::StrAppend(&out, ", dir ", DirName(e.dir), " ");
  return out;
}

std::string Body(const CtSet& e) {
  std::string out =
      absl::StrFormat("set %s with reg %u ", CtName(e.key), e.sreg);
  if (e.dir != CtDir::kNone) absl::StrAppend(&out, ", dir ", DirName(e.dir), " ");
  return out;
}

std::string Body(const Bitwise& e) {
  std::string head = absl::StrFormat("reg %u = ( reg %u ", e.dreg, e.sreg);
  switch (e.op) {
    case BitwiseOp::kMaskXor:
      return absl::StrCat(head, "& ", DataPieces(e.mask), ") ^ ",
                          DataPieces(e.xor_));
    case BitwiseOp::kLshift:
    case BitwiseOp::kRshift: {
      // The shift amount is a 4-byte host-order datum in netlink.
      Bytes amount = {static_cast<uint8_t>(e.shift),
                      static_cast<uint8_t>(e.shift >> 8),
                      static_cast<uint8_t>(e.shift >> 16),
                      static_cast<uint8_t>(e.shift >> 24)};
      return absl::StrCat(head, e.op == BitwiseOp::kLshift ? "<< " : ">> ",
                          DataPieces(amount), ") ");
    }
    case BitwiseOp::kAndReg:
    case BitwiseOp::kOrReg:
    case BitwiseOp::kXorReg: {
      const char* op = e.op == BitwiseOp::kAndReg ? "&" : e.op == BitwiseOp::kOrReg ? "|" : "^";
      return absl::StrFormat("%s%s reg %u ) ", head, op, e.sreg2);
    }
  }
  return head;
}

std::string Body(const Byteorder& e) {
  return absl::StrFormat("reg %u = %s(reg %u, %u, %u) ", e.dreg,
                         e.op == ByteorderOp::kHton ? "hton" : "ntoh", e.sreg,
                         e.size, e.len);
}

std::string Body(const Cmp& e) {
  return absl::StrFormat("%s reg %u %s", CmpName(e.op), e.sreg,
                         DataPieces(e.data));
}

std::string Body(const Range& e) {
  return absl::StrFormat("%s reg %u %s%s", e.negate ? "neq" : "eq", e.sreg,
                         DataPieces(e.from), DataPieces(e.to));
}

std::string Body(const Lookup& e) {
  std::string out =
      absl::StrFormat("reg %u set %s ", e.sreg, SetDisplayName(e.set));
  if (e.dreg) absl::StrAppendFormat(&out, "dreg %u ", *e.dreg);
  if (e.invert) absl::StrAppend(&out, "0x1 ");
  return out;
}

std::string Body(const Immediate& e) {
  std::string out = absl::StrFormat("reg %u ", e.dreg);
  if (e.dreg == kVerdictReg) return absl::StrCat(out, VerdictPieces(e.verdict));
  return absl::StrCat(out, DataPieces(e.data));
}

std::string Body(const Counter& e) {
  return absl::StrFormat("pkts %u bytes %u ", e.packets, e.bytes);
}

std::string Body(const Limit& e) {
  const char* unit = LimitUnitName(e.unit_seconds);
  // nft only emits the five named units; any other period prints as its
  // number of seconds so the line still reads back.
  std::string unit_text = unit ? unit : absl::StrCat(e.unit_seconds);
  return absl::StrFormat("rate %u/%s burst %u type %s flags 0x%x ", e.rate,
                         unit_text, e.burst, e.bytes ? "bytes" : "packets",
                         e.over ? 1u : 0u);
}

std::string Body(const Log& e) {
  std::string out;
  if (e.prefix) absl::StrAppend(&out, "prefix ", *e.prefix, " ");
  // An nflog group replaces level and flags in the printed form.
  if (e.group) {
    absl::StrAppendFormat(&out, "group %u snaplen %u qthreshold %u ", *e.group,
                          e.snaplen, e.qthreshold);
    return out;
  }
  if (e.level) absl::StrAppendFormat(&out, "level %u ", *e.level);
  for (const auto& [bit, name] : kLogFlagNames) {
    if (e.flags & bit) absl::StrAppend(&out, name, " ");
  }
  return out;
}

std::string Body(const Reject& e) {
  return absl::StrFormat("type %u code %u ", static_cast<uint32_t>(e.type), e.code);
}

std::string Body(const Notrack&) { return ""; }

std::string Body(const FusedCmp& e) {
  std::string out = absl::StrFormat("payload %ub @ %s header + %u ", e.load.len,
                                    BaseName(e.load.base), e.load.offset);
  if (!e.mask.empty()) absl::StrAppend(&out, "& ", DataPieces(e.mask));
  absl::StrAppend(&out, CmpName(e.op), " ", DataPieces(e.data));
  return out;
}

std::string Body(const Exthdr& e) {
  const char* op = e.op == ExthdrOp::kIpv6     ? "ipv6 "
                   : e.op == ExthdrOp::kTcpopt ? "tcpopt "
                                               : "";
  return absl::StrFormat("load %s%ub @ %u + %u%s => reg %u ", op, e.len, e.type,
                         e.offset, e.present ? " present" : "", e.dreg);
}

// exthdr write: "write tcpopt reg 1 => 2b @ 2 + 2 " (libnftnl's form).
std::string Body(const ExthdrWrite& e) {
  return absl::StrFormat("write tcpopt reg %u => %ub @ %u + %u ", e.sreg, e.len, e.type,
                         e.offset);
}

std::string Body(const Rt& e) { return absl::StrFormat("load tcpmss => reg %u ", e.dreg); }

std::string Body(const Synproxy& e) {
  return absl::StrFormat("mss %u wscale %u ", e.mss, e.wscale);
}

// libnftnl's fib: the flags joined by " . ", the result, " present".
std::string Body(const Fib& e) {
  static constexpr std::pair<uint32_t, const char*> kFlags[] = {
      {kFibSaddr, "saddr"}, {kFibDaddr, "daddr"}, {kFibMark, "mark"},
      {kFibIif, "iif"},     {kFibOif, "oif"}};
  std::vector<std::string> names;
  for (const auto& [bit, name] : kFlags) {
    if (e.flags & bit) names.push_back(name);
  }
  const char* result = e.result == FibResult::kOif            ? "oif"
                       : e.result == FibResult::kOifName      ? "oifname"
                       : e.result == FibResult::kXtAddrClass6 ? "addrclass6"
                                                              : "type";
  return absl::StrFormat("%s %s%s => reg %u ", absl::StrJoin(names, " . "), result,
                         e.flags & kFibPresent ? " present" : "", e.dreg);
}

std::string Body(const ChecksumFill&) { return "fill "; }

const char* ElemExprName(const Counter&) { return "counter"; }
const char* ElemExprName(const Limit&) { return "limit"; }
const char* ElemExprName(const Quota&) { return "quota"; }

// "date 0-2147483647 daytime 0-86399 weekdays 254 monthdays 4294967294 "
std::string Body(const TimeMatch& e) {
  return absl::StrFormat("date %u-%u daytime %u-%u weekdays %u monthdays %u %s%s",
                         e.date_start, e.date_stop, e.daytime_start, e.daytime_stop,
                         e.weekdays, e.monthdays, e.kerneltz ? "kerneltz " : "",
                         e.contiguous ? "contiguous " : "");
}

// "flags 0x91 invert soft "
std::string Body(const Ipv6HeaderMatch& e) {
  std::string out = absl::StrFormat("flags 0x%x ", e.flags);
  if (e.invert) absl::StrAppend(&out, "invert ");
  if (e.soft) absl::StrAppend(&out, "soft ");
  return out;
}

// "algo bm from 0 to 65535 len 3 pattern 0x00636261 icase invert "
std::string Body(const StringMatch& e) {
  std::string out = absl::StrFormat("algo %s from %u to %u len %u pattern %s", e.algo, e.from,
                                    e.to, e.pattern.size(), DataPieces(e.pattern));
  if (e.icase) absl::StrAppend(&out, "icase ");
  if (e.invert) absl::StrAppend(&out, "invert ");
  return out;
}

// "name ssh mode srcip,dstport avg 1000000 burst 5 invert bytes rate-match
// interval 1 srcmask 32 dstmask 32 size 0 max 0 gcinterval 1000 expire 10000 "
std::string Body(const Hashlimit& e) {
  static constexpr std::pair<uint32_t, const char*> kModes[] = {
      {kHashlimitSrcIp, "srcip"}, {kHashlimitSrcPort, "srcport"},
      {kHashlimitDstIp, "dstip"}, {kHashlimitDstPort, "dstport"}};
  std::string modes;
  for (const auto& [bit, word] : kModes) {
    if (e.mode & bit) absl::StrAppend(&modes, modes.empty() ? "" : ",", word);
  }
  std::string out = absl::StrFormat("name %s mode %s avg %u burst %u ", e.name,
                                    modes.empty() ? "none" : modes, e.avg, e.burst);
  if (e.invert) absl::StrAppend(&out, "invert ");
  if (e.bytes) absl::StrAppend(&out, "bytes ");
  if (e.rate_match) absl::StrAppendFormat(&out, "rate-match interval %u ", e.interval);
  absl::StrAppendFormat(&out, "srcmask %u dstmask %u size %u max %u gcinterval %u expire %u ",
                        e.srcmask, e.dstmask, e.size, e.max, e.gc_interval, e.expire);
  return out;
}

// "update name ssh seconds 60 hitcount 4 rsource mask 0xffffffff ... "
std::string Body(const Recent& e) {
  static constexpr const char* kOps[] = {"set", "rcheck", "update", "remove"};
  std::string out = absl::StrFormat("%s name %s ", kOps[static_cast<int>(e.op)], e.name);
  if (e.invert) absl::StrAppend(&out, "invert ");
  if (e.seconds) absl::StrAppendFormat(&out, "seconds %u ", e.seconds);
  if (e.hitcount) absl::StrAppendFormat(&out, "hitcount %u ", e.hitcount);
  if (e.reap) absl::StrAppend(&out, "reap ");
  if (e.rttl) absl::StrAppend(&out, "rttl ");
  absl::StrAppend(&out, e.rdest ? "rdest " : "rsource ", "mask ", DataPieces(e.mask));
  return out;
}

std::string Body(const TcpMss& e) {
  return e.clamp ? "clamp " : absl::StrFormat("set %u ", e.mss);
}

// libnftnl's queue: "num N(-LAST) " or "sreg_qnum R ", then the flags.
std::string Body(const Queue& e) {
  std::string out;
  if (e.sreg_qnum) {
    absl::StrAppendFormat(&out, "sreg_qnum %u ", *e.sreg_qnum);
  } else {
    absl::StrAppendFormat(&out, "num %u", e.num);
    if (e.total > 1) absl::StrAppendFormat(&out, "-%u", e.num + e.total - 1);
    absl::StrAppend(&out, " ");
  }
  if (e.flags & kQueueBypass) absl::StrAppend(&out, "bypass ");
  if (e.flags & kQueueFanout) absl::StrAppend(&out, "fanout ");
  return out;
}

std::string Body(const Quota& e) {
  return absl::StrFormat("bytes %u consumed %u flags %u ", e.bytes, e.consumed,
                         e.over ? 1u : 0u);
}

void AppendReg(std::string* out, const char* name, const std::optional<Reg>& r) {
  if (r) absl::StrAppendFormat(out, "%s reg %u ", name, *r);
}

// nat: "snat ip addr_min reg 1 ... flags 0x2 "; masq and redir print the
// port registers and flags only (their NameOf is the expression name).
std::string Body(const Nat& e) {
  std::string out;
  if (e.kind == NatKind::kSnat || e.kind == NatKind::kDnat) {
    absl::StrAppend(&out, e.kind == NatKind::kSnat ? "snat " : "dnat ",
                    FamilyName(e.family), " ");
    AppendReg(&out, "addr_min", e.addr_min);
    AppendReg(&out, "addr_max", e.addr_max);
  }
  AppendReg(&out, "proto_min", e.proto_min);
  AppendReg(&out, "proto_max", e.proto_max);
  if (e.flags != 0) absl::StrAppendFormat(&out, "flags 0x%x ", e.flags);
  return out;
}

// socket: "load transparent => reg 1 " (libnftnl; cgroupv2 adds its level).
std::string Body(const Socket& e) {
  static constexpr const char* kKeys[] = {"transparent", "mark", "wildcard", "cgroupv2"};
  const auto key = static_cast<size_t>(e.key);
  const char* name = key < std::size(kKeys) ? kKeys[key] : "unknown";
  if (e.key == SocketKey::kCgroupv2) {
    return absl::StrFormat("load %s level %u => reg %u ", name, e.level, e.dreg);
  }
  return absl::StrFormat("load %s => reg %u ", name, e.dreg);
}

// tproxy: "ip addr reg 1 port reg 2 " (no family word when unspecified);
// iptables' TPROXY adds "else drop ".
std::string Body(const Tproxy& e) {
  std::string out;
  if (e.family == Family::kIp || e.family == Family::kIp6) {
    absl::StrAppend(&out, FamilyName(e.family), " ");
  }
  AppendReg(&out, "addr", e.addr);
  AppendReg(&out, "port", e.port);
  if (e.else_drop) absl::StrAppend(&out, "else drop ");
  return out;
}

std::string Body(const FlowOffload& e) { return absl::StrCat("flowtable ", e.flowtable, " "); }

// objref: "type 2 name q " or "sreg 1 set __objmap%d ".
std::string Body(const Objref& e) {
  if (e.sreg) return absl::StrFormat("sreg %u set %s ", *e.sreg, SetDisplayName(e.set));
  return absl::StrFormat("type %u name %s ", e.type, e.name);
}

// numgen: "reg 1 = inc mod 10 offset 100 ".
std::string Body(const Numgen& e) {
  std::string out = absl::StrFormat("reg %u = %s mod %u ", e.dreg, e.random ? "random" : "inc",
                                    e.mod);
  if (e.offset != 0) absl::StrAppendFormat(&out, "offset %u ", e.offset);
  return out;
}

// libnftnl's hash: "reg 1 = jhash(reg 2, 8, 0xdeadbeef) % mod 2 offset 100 ",
// "reg 1 = symhash() % mod 2 "; a jhash without a seed of its own (the
// kernel draws one) prints none: "jhash(reg 2, 8)".
std::string Body(const Hash& e) {
  std::string out = absl::StrFormat("reg %u = ", e.dreg);
  if (e.symmetric) {
    absl::StrAppend(&out, "symhash()");
  } else {
    absl::StrAppendFormat(&out, "jhash(reg %u, %u", e.sreg, e.len);
    if (e.seed) absl::StrAppendFormat(&out, ", 0x%x", *e.seed);
    absl::StrAppend(&out, ")");
  }
  absl::StrAppendFormat(&out, " %% mod %u ", e.mod);
  if (e.offset != 0) absl::StrAppendFormat(&out, "offset %u ", e.offset);
  return out;
}

// libnftnl's dynset: "update reg_key 1 set s sreg_data 2 timeout 60000ms
// expr [ counter pkts 0 bytes 0 ] ".
std::string Body(const Dynset& e) {
  static constexpr const char* kOps[] = {"add", "update", "delete"};
  std::string out = absl::StrFormat("%s reg_key %u set %s ", kOps[static_cast<int>(e.op)],
                                    e.sreg_key, SetDisplayName(e.set));
  if (e.sreg_data) absl::StrAppendFormat(&out, "sreg_data %u ", *e.sreg_data);
  if (e.timeout_ms != 0) absl::StrAppendFormat(&out, "timeout %ums ", e.timeout_ms);
  for (const DynsetElemExpr& x : e.exprs) {
    std::visit(
        [&](const auto& inner) {
          absl::StrAppend(&out, "expr [ ", ElemExprName(inner), " ", Body(inner), "] ");
        },
        x);
  }
  return out;
}

// The libnftnl expression name.
struct NameOf {
  const char* operator()(const PayloadLoad&) const { return "payload"; }
  const char* operator()(const MetaLoad&) const { return "meta"; }
  const char* operator()(const MetaSet&) const { return "meta"; }
  const char* operator()(const CtLoad&) const { return "ct"; }
  const char* operator()(const CtSet&) const { return "ct"; }
  const char* operator()(const Bitwise&) const { return "bitwise"; }
  const char* operator()(const Byteorder&) const { return "byteorder"; }
  const char* operator()(const Cmp&) const { return "cmp"; }
  const char* operator()(const Range&) const { return "range"; }
  const char* operator()(const Lookup&) const { return "lookup"; }
  const char* operator()(const Immediate&) const { return "immediate"; }
  const char* operator()(const Counter&) const { return "counter"; }
  const char* operator()(const Limit&) const { return "limit"; }
  const char* operator()(const Log&) const { return "log"; }
  const char* operator()(const Reject&) const { return "reject"; }
  const char* operator()(const Notrack&) const { return "notrack"; }
  const char* operator()(const FusedCmp&) const { return "fused"; }
  const char* operator()(const Exthdr&) const { return "exthdr"; }
  const char* operator()(const Fib&) const { return "fib"; }
  const char* operator()(const TcpMss&) const { return "tcpmss"; }
  const char* operator()(const ChecksumFill&) const { return "checksum"; }
  const char* operator()(const Recent&) const { return "recent"; }
  const char* operator()(const Hashlimit&) const { return "hashlimit"; }
  const char* operator()(const StringMatch&) const { return "string"; }
  const char* operator()(const Ipv6HeaderMatch&) const { return "ipv6header"; }
  const char* operator()(const PayloadWrite&) const { return "payload"; }
  const char* operator()(const Queue&) const { return "queue"; }
  const char* operator()(const Quota&) const { return "quota"; }
  const char* operator()(const FlowOffload&) const { return "flow_offload"; }
  const char* operator()(const Objref&) const { return "objref"; }
  const char* operator()(const Numgen&) const { return "numgen"; }
  const char* operator()(const Hash&) const { return "hash"; }
  const char* operator()(const ExthdrWrite&) const { return "exthdr"; }
  const char* operator()(const Rt&) const { return "rt"; }
  const char* operator()(const Synproxy&) const { return "synproxy"; }
  const char* operator()(const Dynset&) const { return "dynset"; }
  const char* operator()(const TimeMatch&) const { return "time"; }
  const char* operator()(const Socket&) const { return "socket"; }
  const char* operator()(const Tproxy&) const { return "tproxy"; }
  const char* operator()(const Nat& e) const {
    switch (e.kind) {
      case NatKind::kSnat:
      case NatKind::kDnat: return "nat";
      case NatKind::kMasq: return "masq";
      case NatKind::kRedir: return "redir";
    }
    return "nat";
  }
};

// --- sets -------------------------------------------------------------------

// One element as the kernel holds it (intervals of plain interval sets are
// split into a start element and an end marker with flag 1), handed to a
// callback one at a time rather than collected: a set of a million
// elements is printed without a second copy of it.
struct KernelElement {
  const Bytes& key;
  const Bytes* key_end;  // null: none
  const SetElement* from;  // its data or verdict; null: none ("")
  uint32_t flags = 0;
};

constexpr uint32_t kElemIntervalEnd = 0x1;
constexpr uint32_t kElemCatchall = 0x2;

std::string ElementValue(const SetElement& e) {
  if (e.verdict) return VerdictPieces(*e.verdict);
  return ElementWords(e.data);
}

// `bytes` + 1 as a big-endian number; false on overflow (all 0xff).
bool IncrementBigEndian(Bytes& bytes) {
  for (size_t i = bytes.size(); i-- > 0;) {
    if (++bytes[i] != 0) return true;
  }
  return false;
}

// The non-empty keys of a plain interval set, in key order.
std::vector<const SetElement*> SortedStarts(const Set& set) {
  std::vector<const SetElement*> sorted;
  for (const SetElement& e : set.elements) {
    if (!e.key.empty()) sorted.push_back(&e);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SetElement* a, const SetElement* b) {
                     return std::lexicographical_compare(
                         a->key.begin(), a->key.end(), b->key.begin(),
                         b->key.end());
                   });
  return sorted;
}

// Plain (non-concatenated) interval sets: sorted start elements, with an
// end marker at end+1 wherever the next interval does not start right there,
// and a leading marker at 0 when the first interval starts above 0.
template <typename Fn>
void SplitIntervals(const Set& set, const std::vector<const SetElement*>& sorted, Fn fn) {
  std::optional<Bytes> gap_start;  // where the previous interval's end marker goes
  if (!sorted.empty()) {
    Bytes zero(sorted.front()->key.size(), 0);
    if (sorted.front()->key != zero) gap_start = zero;
  }
  for (const SetElement* e : sorted) {
    if (gap_start && *gap_start != e->key) fn(KernelElement{*gap_start, nullptr, nullptr, kElemIntervalEnd});
    fn(KernelElement{e->key, nullptr, e, 0});
    Bytes next = e->key_end.value_or(e->key);
    gap_start.reset();
    if (IncrementBigEndian(next)) gap_start = next;
  }
  if (gap_start) fn(KernelElement{*gap_start, nullptr, nullptr, kElemIntervalEnd});
  // Catch-all elements (empty key) go last.
  for (const SetElement& e : set.elements) {
    if (e.key.empty()) fn(KernelElement{e.key, nullptr, &e, kElemCatchall});
  }
}

// Calls `fn` with each kernel element of `set`, in order.
template <typename Fn>
void ForEachKernelElement(const Set& set, const std::vector<const SetElement*>* sorted, Fn fn) {
  if (sorted != nullptr) return SplitIntervals(set, *sorted, fn);
  for (const SetElement& e : set.elements) {
    fn(KernelElement{e.key, e.key_end ? &*e.key_end : nullptr, &e,
                     e.key.empty() ? kElemCatchall : 0u});
  }
}

void AppendElement(std::string* out, const KernelElement& e) {
  absl::StrAppend(out, "\telement ", ElementWords(e.key));
  if (e.key_end != nullptr) absl::StrAppend(out, " - ", ElementWords(*e.key_end));
  absl::StrAppend(out, " : ", e.from != nullptr ? ElementValue(*e.from) : "", e.flags, " [end]");
}

std::string ChainHeader(const Chain& chain) {
  std::string out = absl::StrCat("# chain ", chain.name);
  if (!chain.base) return out + "\n";
  const BaseChain& b = *chain.base;
  absl::StrAppend(&out, " type ", b.type, " hook ", HookName(b.hook),
                  " priority ", b.priority);
  if (!b.devices.empty()) {
    absl::StrAppend(&out, b.devices.size() == 1 ? " device " : " devices ",
                    absl::StrJoin(b.devices, ","));
  }
  absl::StrAppend(&out, " policy ",
                  b.policy == VerdictCode::kDrop ? "drop" : "accept", "\n");
  return out;
}

}  // namespace

const char* LimitUnitName(uint64_t seconds) {
  switch (seconds) {
    case 1: return "second";
    case 60: return "minute";
    case 3600: return "hour";
    case 86400: return "day";
    case 604800: return "week";
    default: return nullptr;
  }
}

bool IsAnonymousSetName(std::string_view name) { return !AnonymousSetPrefix(name).empty(); }

const char* PayloadBaseName(PayloadBase base) { return BaseName(base); }

std::string PrintData(const Bytes& bytes) {
  std::string out = DataPieces(bytes);
  if (!out.empty()) out.pop_back();  // no trailing space
  return out;
}

std::string PrintExpr(const Expr& expr) {
  const char* name = std::visit(NameOf{}, expr);
  std::string body = std::visit([](const auto& e) { return Body(e); }, expr);
  return absl::StrCat("[ ", name, " ", body, "]");
}

std::string PrintRule(const Table& table, const Chain& chain, const Rule& rule) {
  std::string out = absl::StrCat(FamilyName(table.family), " ", table.name,
                                 " ", chain.name, "\n");
  for (const Node& node : rule.exprs) {
    absl::StrAppend(&out, "  ", PrintExpr(node.expr), "\n");
  }
  return out;
}

namespace {

// Header "NAME TABLE FLAGS [size N]" (size for interval sets and maps, N =
// the number of kernel elements), then "NAME TABLE 0" and one line of
// tab-separated elements, as in the payload files.
// Called as text piles up in `out`; may take it away.
using Drain = absl::FunctionRef<void(std::string*)>;

void AppendSet(std::string* out, const Table& table, const Set& set, Drain drain) {
  std::vector<const SetElement*> sorted;
  const bool split = set.interval() && !(set.flags & kSetConcat);
  if (split) sorted = SortedStarts(set);
  const std::vector<const SetElement*>* starts = split ? &sorted : nullptr;
  size_t count = 0;
  ForEachKernelElement(set, starts, [&](const KernelElement&) { ++count; });
  std::string name = SetDisplayName(set.name);
  absl::StrAppend(out, absl::StrFormat("%s %s %x", name, table.name, set.flags));
  if (set.flags & (kSetInterval | kSetMap)) absl::StrAppend(out, " size ", count);
  absl::StrAppend(out, "\n", name, " ", table.name, " 0\n");
  if (count == 0) return;
  ForEachKernelElement(set, starts, [&](const KernelElement& e) {
    AppendElement(out, e);
    drain(out);
  });
  absl::StrAppend(out, "\n");
}

}  // namespace

std::string PrintSet(const Table& table, const Set& set) {
  std::string out;
  AppendSet(&out, table, set, [](std::string*) {});
  return out;
}

std::string PrintRuleset(const Ruleset& ruleset) {
  std::string out;
  PrintRuleset(ruleset, [&](std::string_view piece) { out.append(piece); });
  return out;
}

void PrintRuleset(const Ruleset& ruleset, absl::FunctionRef<void(std::string_view)> sink) {
  constexpr size_t kPiece = 64 << 10;
  std::string out;
  auto drain = [&](std::string* text) {
    if (text->size() < kPiece) return;
    sink(*text);
    text->clear();
  };
  for (const Table& table : ruleset.tables) {
    absl::StrAppend(&out, "# table ", FamilyName(table.family), " ",
                    table.name, "\n");
    for (const Object& o : table.objects) {
      absl::StrAppend(&out, "# object type ", o.type, " name ", o.name, "\n");
    }
    for (const Flowtable& f : table.flowtables) {
      absl::StrAppend(&out, "# flowtable ", f.name, " hook ingress priority ", f.priority,
                      " devices ", absl::StrJoin(f.devices, ","),
                      f.flags != 0 ? absl::StrFormat(" flags 0x%x", f.flags) : "", "\n");
    }
    for (const Set& set : table.sets) {
      if (set.anonymous()) continue;
      AppendSet(&out, table, set, drain);
      absl::StrAppend(&out, "\n");
    }
    // Anonymous sets are printed once, before the first rule that uses them
    // (both by hash: a rule per anonymous set is a common shape).
    SetNameIndex sets(table);
    absl::flat_hash_set<std::string_view> printed;
    for (const Chain& chain : table.chains) {
      absl::StrAppend(&out, ChainHeader(chain));
      for (const Rule& rule : chain.rules) {
        for (const Node& node : rule.exprs) {
          const auto* lookup = std::get_if<Lookup>(&node.expr);
          if (lookup == nullptr) continue;
          const Set* set = sets.Find(table, lookup->set);
          if (set == nullptr || !set->anonymous()) continue;
          if (!printed.insert(set->name).second) continue;
          AppendSet(&out, table, *set, drain);
        }
        absl::StrAppend(&out, PrintRule(table, chain, rule), "\n");
        drain(&out);
      }
    }
  }
  sink(out);
}

}  // namespace rulejit::ir
