// iptables-save text of a ruleset (see ipt_print.h).
//
//   *filter
//   :INPUT DROP [0:0]
//   :WEB - [0:0]
//   -A INPUT -s 10.0.0.0/10 -p tcp -m tcp --dport 22 -j ACCEPT
//   COMMIT
#include "emit/ipt_print.h"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "emit/ipt_print_internal.h"
#include "emit/nft_value.h"
#include "ir/printer.h"

namespace rulejit::emit {
namespace {

using ipt_internal::CmpOn;
using ipt_internal::IptRule;
using ipt_internal::Neg;
using ipt_internal::Refuse;

// An interface name compare: "eth0" (NUL after it) or "eth+" (a prefix).
std::optional<std::string> IfaceName(const ir::Bytes& data) {
  size_t nul = std::find(data.begin(), data.end(), 0) - data.begin();
  std::string name(data.begin(), data.begin() + nul);
  if (name.empty()) return std::nullopt;
  for (char c : name) {
    if (c <= ' ' || c > '~' || c == '"' || c == '+') return std::nullopt;
  }
  if (nul == data.size()) return name + "+";
  if (!std::all_of(data.begin() + nul, data.end(), [](uint8_t b) { return b == 0; })) return std::nullopt;
  return name;
}

// -i / -o / -p
absl::Status MetaMatch(IptRule& r, const ir::MetaLoad& m) {
  if (m.key == ir::MetaKey::kMark) return ipt_internal::MarkLoad(r, false);
  if (m.key == ir::MetaKey::kSkUid || m.key == ir::MetaKey::kSkGid) return ipt_internal::OwnerMatch(r, m);
  if (m.key == ir::MetaKey::kSecPath) return ipt_internal::PolicyMatch(r, m);
  const ir::Cmp* c = CmpOn(r.Peek(1), m.dreg);
  if (!c) return Refuse(absl::StrCat("meta ", ir::MetaKeyName(m.key), " without a plain compare"));
  if (m.key == ir::MetaKey::kIifName || m.key == ir::MetaKey::kOifName) {
    std::optional<std::string> name = IfaceName(c->data);
    if (!name) return Refuse("an interface name iptables cannot write");
    r.words.push_back(absl::StrCat(Neg(c->op), m.key == ir::MetaKey::kIifName ? "-i " : "-o ", *name));
  } else if ((m.key == (r.ipv6() ? ir::MetaKey::kIp6tL4Proto : ir::MetaKey::kL4Proto)) && c->data.size() == 1) {
    const uint8_t p = c->data[0];
    const char* name = p == 6 ? "tcp" : p == 17 ? "udp" : p == 1 ? "icmp" : p == 58 ? "ipv6-icmp" : nullptr;
    r.words.push_back(absl::StrCat(Neg(c->op), "-p ", name ? name : absl::StrCat(p)));
    if (c->op == ir::CmpOp::kEq) r.l4proto = p;
  } else {
    return Refuse(absl::StrCat("meta ", ir::MetaKeyName(m.key), " has no iptables form in the printer"));
  }
  r.at += 2;
  return absl::OkStatus();
}

// TCP flag names as iptables writes them (FIN,SYN,...), or "" when `bits`
// has one it cannot name.
std::string FlagNames(uint8_t bits) {
  static constexpr const char* kNames[] = {"FIN", "SYN", "RST", "PSH", "ACK", "URG"};
  if (bits & 0xc0) return "";
  if (bits == 0) return "NONE";
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    if (bits & (1 << i)) names.push_back(kNames[i]);
  }
  return absl::StrJoin(names, ",");
}

// `-m tcp --tcp-flags MASK COMP` (the flags byte masked, compared) and
// `-m icmp --icmp-type T[/C]`; nullopt for other loads.
std::optional<absl::Status> TcpFlagsOrIcmp(IptRule& r, const ir::PayloadLoad& p, const ir::Bitwise* mask,
                                           size_t next) {
  const ir::Cmp* c = CmpOn(r.Peek(next), p.dreg);
  if (*r.l4proto == 6 && p.offset == 13 && p.len == 1) {
    if (!mask || !c || c->data.size() != 1) return Refuse("a TCP flags match iptables cannot write");
    std::string m = FlagNames(mask->mask[0]), v = FlagNames(c->data[0]);
    if (m.empty() || v.empty() || (c->data[0] & ~mask->mask[0])) return Refuse("TCP flags iptables cannot name");
    r.words.push_back(absl::StrCat("-m tcp ", Neg(c->op), "--tcp-flags ", m, " ", v));
  } else if (*r.l4proto == (r.ipv6() ? 58 : 1) && p.offset == 0 && (p.len == 1 || p.len == 2) && !mask) {
    if (!c || c->data.size() != p.len) return Refuse("an icmp type match iptables cannot write");
    r.words.push_back(absl::StrCat(r.ipv6() ? "-m icmp6 " : "-m icmp ", Neg(c->op),
                                   r.ipv6() ? "--icmpv6-type " : "--icmp-type ", c->data[0],
                                   p.len == 2 ? absl::StrCat("/", c->data[1]) : ""));
  } else {
    return std::nullopt;
  }
  r.port_printed = true;  // the match the fragment check belongs to
  r.at += next + 1;
  return absl::OkStatus();
}

// -s / -d with an optional prefix mask, the fragment check, --sport / --dport.
absl::Status PayloadMatch(IptRule& r, const ir::PayloadLoad& p) {
  const ir::Bitwise* mask = nullptr;
  size_t next = 1;
  if (const auto* b = r.Peek(1) ? std::get_if<ir::Bitwise>(r.Peek(1)) : nullptr;
      b && b->op == ir::BitwiseOp::kMaskXor && b->sreg == p.dreg && b->dreg == p.dreg &&
      std::all_of(b->xor_.begin(), b->xor_.end(), [](uint8_t x) { return x == 0; })) {
    mask = b;
    next = 2;
  }
  const bool network = p.base == ir::PayloadBase::kNetwork;
  // iptables-nft loads only the prefix's bytes (`-s 10.0.0.0/8`: 1 byte).
  const size_t alen = r.ipv6() ? 16 : 4;
  const uint32_t src = r.ipv6() ? 8 : 12, dst = r.ipv6() ? 24 : 16;
  if (network && p.len >= 1 && p.len <= alen && (p.offset == src || p.offset == dst)) {
    const ir::Cmp* c = CmpOn(r.Peek(next), p.dreg);
    if (!c || c->data.size() != p.len) return Refuse("an address match without a plain compare");
    const int plen = mask ? PrefixLength(mask->mask) : static_cast<int>(p.len * 8);
    if (plen < 0) return Refuse("an address mask that is no prefix");
    ir::Bytes d = c->data;
    d.resize(alen, 0);
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(r.ipv6() ? AF_INET6 : AF_INET, d.data(), buf, sizeof buf);
    r.words.push_back(absl::StrFormat("%s%s %s/%d", Neg(c->op), p.offset == src ? "-s" : "-d", buf, plen));
    r.at += next + 1;
    return absl::OkStatus();
  }
  // -m ttl --ttl-eq|lt|gt N / -m hl --hl-eq|lt|gt N (`!` on -eq only).
  if (network && p.offset == (r.ipv6() ? 7u : 8u) && p.len == 1 && !mask) {
    const auto* c = r.PeekAs<ir::Cmp>(1);
    if (!c || c->sreg != p.dreg || c->data.size() != 1 || c->op == ir::CmpOp::kLte || c->op == ir::CmpOp::kGte) {
      return Refuse("a hop limit match iptables cannot write");
    }
    const char* op = c->op == ir::CmpOp::kLt ? "lt " : c->op == ir::CmpOp::kGt ? "gt " : "eq ";
    r.words.push_back(absl::StrCat(r.ipv6() ? "-m hl " : "-m ttl ", Neg(c->op), r.ipv6() ? "--hl-" : "--ttl-", op,
                                   c->data[0]));
    r.at += 2;
    return absl::OkStatus();
  }
  if (network && !r.ipv6() && p.offset == 6 && p.len == 2 && mask && mask->mask == ir::Bytes{0x1f, 0xff}) {
    const ir::Cmp* c = CmpOn(r.Peek(next), p.dreg);
    if (!c || c->data != ir::Bytes{0, 0}) return Refuse("a fragment match iptables cannot write");
    if (c->op == ir::CmpOp::kNeq) {
      r.words.push_back("-f");  // a non-first fragment
    } else if (!r.frag_checked) {  // `! -f`, or the check before a port match
      r.frag_checked = true;
      r.frag_word = r.words.size();
    }
    r.at += next + 1;
    return absl::OkStatus();
  }
  // ip6tables-legacy's matches read the header it finds (ip6t-transport);
  // iptables' check the fragment offset first.
  const bool transport = r.ipv6() ? p.base == ir::PayloadBase::kIp6tTransport
                                  : p.base == ir::PayloadBase::kTransport && r.frag_checked;
  if (transport && r.l4proto) {
    if (std::optional<absl::Status> s = TcpFlagsOrIcmp(r, p, mask, next)) return *s;
  }
  if (transport && !mask) {
    if (std::optional<absl::Status> s = ipt_internal::MultiportMatch(r, p)) return *s;
  }
  if ((p.base == ir::PayloadBase::kTransport || p.base == ir::PayloadBase::kIp6tTransport) && p.len == 2 &&
      (p.offset == 0 || p.offset == 2) && !mask) {
    if (!transport || !r.l4proto || (*r.l4proto != 6 && *r.l4proto != 17)) {
      return Refuse("a port match without `-p tcp` or `-p udp` and its fragment check");
    }
    const char* proto = *r.l4proto == 6 ? "tcp" : "udp";
    const char* opt = p.offset == 0 ? "--sport" : "--dport";
    auto port = [](const ir::Bytes& b) { return (b[0] << 8) | b[1]; };
    if (const ir::Cmp* c = CmpOn(r.Peek(1), p.dreg); c && c->data.size() == 2) {
      r.words.push_back(absl::StrCat("-m ", proto, " ", Neg(c->op), opt, " ", port(c->data)));
    } else if (const auto* g = r.Peek(1) ? std::get_if<ir::Range>(r.Peek(1)) : nullptr;
               g && g->sreg == p.dreg && g->from.size() == 2 && g->to.size() == 2) {
      r.words.push_back(absl::StrCat("-m ", proto, " ", g->negate ? "! " : "", opt, " ", port(g->from), ":",
                                     port(g->to)));
    } else {
      return Refuse("a port match without a compare or range");
    }
    r.port_printed = true;
    r.at += 2;
    return absl::OkStatus();
  }
  return Refuse(absl::StrCat("a match on ", ir::PrintExpr(p), " has no iptables form in the printer"));
}

// -m conntrack --ctdir / --ctproto: a plain compare of the key.
absl::Status CtCompare(IptRule& r, const ir::CtLoad& ct) {
  const ir::Cmp* c = CmpOn(r.Peek(1), ct.dreg);
  if (c && c->data.size() == 1 && ct.key == ir::CtKey::kDirection && ct.dir == ir::CtDir::kNone &&
      c->op == ir::CmpOp::kEq && c->data[0] <= 1) {
    r.words.push_back(c->data[0] ? "-m conntrack --ctdir REPLY" : "-m conntrack --ctdir ORIGINAL");
  } else if (c && c->data.size() == 1 && ct.key == ir::CtKey::kProtocol && ct.dir == ir::CtDir::kOriginal) {
    r.words.push_back(absl::StrCat("-m conntrack ", Neg(c->op), "--ctproto ", c->data[0]));
  } else {
    return Refuse("a ct match with no iptables form in the printer");
  }
  r.at += 2;
  return absl::OkStatus();
}

// -m conntrack --ctstate A,B: (ct state & bits) != 0; --ctstate SNAT,DNAT
// and --ctstatus the same on ct status.
absl::Status CtMatch(IptRule& r, const ir::CtLoad& ct) {
  const auto* b = r.Peek(1) ? std::get_if<ir::Bitwise>(r.Peek(1)) : nullptr;
  const ir::Cmp* c = b ? CmpOn(r.Peek(2), b->dreg) : nullptr;
  if ((ct.key != ir::CtKey::kState && ct.key != ir::CtKey::kStatus) || ct.dir != ir::CtDir::kNone || !b ||
      b->op != ir::BitwiseOp::kMaskXor || b->sreg != ct.dreg || !c || c->data.size() != 4 || LeInt(c->data) != 0 ||
      b->mask.size() != 4 || LeInt(b->xor_) != 0) {
    return CtCompare(r, ct);
  }
  using Names = std::vector<std::pair<uint32_t, const char*>>;
  static const Names kStates = {{1, "INVALID"}, {2, "ESTABLISHED"}, {4, "RELATED"}, {8, "NEW"}, {64, "UNTRACKED"}};
  static const Names kNat = {{0x10, "SNAT"}, {0x20, "DNAT"}};
  static const Names kStatus = {{1, "EXPECTED"}, {2, "SEEN_REPLY"}, {4, "ASSURED"}, {8, "CONFIRMED"}};
  uint32_t bits = LeInt(b->mask);
  const bool nat = ct.key == ir::CtKey::kStatus && (bits & 0x30);
  const Names& known = ct.key == ir::CtKey::kState ? kStates : nat ? kNat : kStatus;
  std::vector<std::string> names;
  for (const auto& [bit, name] : known) {
    if (bits & bit) names.push_back(name);
    bits &= ~bit;
  }
  if (bits || names.empty()) return Refuse("ct state bits iptables cannot name");
  // != 0: one of the states; == 0: none of them.
  r.words.push_back(absl::StrCat("-m conntrack ", c->op == ir::CmpOp::kEq ? "! " : "",
                                 ct.key == ir::CtKey::kStatus && !nat ? "--ctstatus " : "--ctstate ",
                                 absl::StrJoin(names, ",")));
  r.at += 3;
  return absl::OkStatus();
}

absl::Status Verdict(IptRule& r, const ir::Verdict& v) {
  switch (v.code) {
    case ir::VerdictCode::kAccept: r.words.push_back("-j ACCEPT"); break;
    case ir::VerdictCode::kDrop: r.words.push_back("-j DROP"); break;
    case ir::VerdictCode::kReturn: r.words.push_back("-j RETURN"); break;
    case ir::VerdictCode::kJump: r.words.push_back("-j " + v.chain); break;
    case ir::VerdictCode::kGoto: r.words.push_back("-g " + v.chain); break;
    default: return Refuse("a verdict iptables cannot write");
  }
  ++r.at;
  return absl::OkStatus();
}

// -j LOG / -j NFLOG
absl::Status LogTarget(IptRule& r, const ir::Log& l) {
  static constexpr std::pair<uint32_t, const char*> kFlags[] = {
      {kLogTcpSeq, " --log-tcp-sequence"}, {kLogTcpOpt, " --log-tcp-options"}, {kLogIpOpt, " --log-ip-options"},
      {kLogUid, " --log-uid"}, {kLogMacDecode, " --log-macdecode"}};
  std::string flags;
  uint32_t left = l.flags;
  for (const auto& [bit, name] : kFlags) {
    if (left & bit) flags += name;
    left &= ~bit;
  }
  if (left || (l.group && l.flags)) return Refuse("LOG options the printer does not write");
  std::string s;
  if (l.group) {
    s = absl::StrCat("-j NFLOG --nflog-group ", *l.group);
    if (l.prefix) absl::StrAppend(&s, " --nflog-prefix ", Quote(*l.prefix));
    if (l.snaplen) absl::StrAppend(&s, " --nflog-size ", l.snaplen);
    if (l.qthreshold) absl::StrAppend(&s, " --nflog-threshold ", l.qthreshold);
  } else {
    s = "-j LOG";
    if (l.prefix) absl::StrAppend(&s, " --log-prefix ", Quote(*l.prefix));
    if (l.level) absl::StrAppend(&s, " --log-level ", *l.level);
    s += flags;
  }
  r.words.push_back(s);
  ++r.at;
  return absl::OkStatus();
}

absl::Status RejectTarget(IptRule& r, const ir::Reject& j) {
  static constexpr std::pair<uint32_t, const char*> kCodes[] = {
      {0, "icmp-net-unreachable"}, {1, "icmp-host-unreachable"}, {2, "icmp-proto-unreachable"},
      {3, "icmp-port-unreachable"}, {9, "icmp-net-prohibited"}, {10, "icmp-host-prohibited"},
      {13, "icmp-admin-prohibited"}};
  static constexpr std::pair<uint32_t, const char*> kCodes6[] = {
      {0, "icmp6-no-route"}, {1, "icmp6-adm-prohibited"}, {3, "icmp6-addr-unreachable"},
      {4, "icmp6-port-unreachable"}, {5, "icmp6-policy-fail"}, {6, "icmp6-reject-route"}};
  const char* with = j.type == RejectType::kTcpReset ? "tcp-reset" : nullptr;
  for (const auto& [code, name] : r.ipv6() ? std::span<const std::pair<uint32_t, const char*>>(kCodes6)
                                               : std::span<const std::pair<uint32_t, const char*>>(kCodes)) {
    if (j.type == RejectType::kIcmpUnreach && j.code == code) with = name;
  }
  if (!with) return Refuse("a reject iptables cannot write");
  r.words.push_back(absl::StrCat("-j REJECT --reject-with ", with));
  ++r.at;
  return absl::OkStatus();
}

absl::Status LimitMatch(IptRule& r, const ir::Limit& l) {
  const char* unit = l.unit_seconds == 1 ? "sec" : l.unit_seconds == 60 ? "min"
                   : l.unit_seconds == 3600 ? "hour" : l.unit_seconds == 86400 ? "day" : nullptr;
  if (!unit || l.bytes || l.over) return Refuse("a limit iptables' limit match cannot write");
  r.words.push_back(absl::StrCat("-m limit --limit ", l.rate, "/", unit, " --limit-burst ", l.burst));
  ++r.at;
  return absl::OkStatus();
}

// -j MASQUERADE / SNAT --to-source A[-B][:P[-Q]] / DNAT --to-destination ...
absl::Status NatTarget(IptRule& r, const ir::Nat& n) {
  constexpr uint32_t kKnown = ir::kNatMapIps | ir::kNatProtoSpecified | ir::kNatRandom |
                              ir::kNatRandomFully | ir::kNatPersistent;
  if (n.flags & ~kKnown) return Refuse("NAT flags the printer does not write");
  auto value = [&](std::optional<ir::Reg> reg) -> std::optional<ir::Bytes> {
    if (!reg) return std::nullopt;
    auto it = r.konst.find(*reg);
    return it == r.konst.end() ? std::nullopt : std::optional<ir::Bytes>(it->second);
  };
  auto addr = [](const ir::Bytes& b) { return absl::StrFormat("%u.%u.%u.%u", b[0], b[1], b[2], b[3]); };
  auto port = [](const ir::Bytes& b) { return absl::StrCat((b[0] << 8) | b[1]); };
  std::string to;
  if (n.addr_min) {
    std::optional<ir::Bytes> lo = value(n.addr_min), hi = n.addr_max ? value(n.addr_max) : lo;
    if (!lo || !hi || lo->size() != 4 || hi->size() != 4 || n.family != ir::Family::kIp) {
      return Refuse("a NAT address that is not a constant IPv4 address");
    }
    to = addr(*lo) + (*hi != *lo ? "-" + addr(*hi) : "");
  }
  if (n.proto_min) {
    std::optional<ir::Bytes> lo = value(n.proto_min), hi = n.proto_max ? value(n.proto_max) : lo;
    if (!lo || !hi || lo->size() < 2 || hi->size() < 2) return Refuse("a NAT port that is not a constant");
    absl::StrAppend(&to, ":", port(*lo), *hi != *lo ? "-" + port(*hi) : "");
  }
  std::string s;
  switch (n.kind) {
    case NatKind::kMasq: s = "-j MASQUERADE"; break;
    case NatKind::kRedir: s = "-j REDIRECT"; break;
    case NatKind::kSnat: s = "-j SNAT"; break;
    case NatKind::kDnat: s = "-j DNAT"; break;
  }
  if (!to.empty()) {
    const bool ports_only = n.kind == NatKind::kMasq || n.kind == NatKind::kRedir;
    if (ports_only && n.addr_min) return Refuse("a masquerade or redirect with an address");
    absl::StrAppend(&s, ports_only ? " --to-ports " : n.kind == NatKind::kSnat ? " --to-source " : " --to-destination ",
                    ports_only ? to.substr(1) : to);
  }
  if (n.flags & ir::kNatRandom) absl::StrAppend(&s, " --random");
  if (n.flags & ir::kNatRandomFully) absl::StrAppend(&s, " --random-fully");
  if (n.flags & ir::kNatPersistent) absl::StrAppend(&s, " --persistent");
  r.words.push_back(s);
  ++r.at;
  return absl::OkStatus();
}

absl::StatusOr<std::string> PrintIptRule(const ir::Table& table, const ir::Chain& chain, const ir::Rule& rule) {
  IptRule r{table, rule.exprs};
  if (chain.base) r.hook = chain.base->hook;
  while (r.at < r.nodes.size()) {
    const ir::Expr& e = r.nodes[r.at].expr;
    absl::Status s;
    if (const auto* m = std::get_if<ir::MetaLoad>(&e)) {
      s = MetaMatch(r, *m);
    } else if (const auto* p = std::get_if<ir::PayloadLoad>(&e)) {
      s = PayloadMatch(r, *p);
    } else if (const auto* c = std::get_if<ir::CtLoad>(&e)) {
      s = c->key == ir::CtKey::kMark && c->dir == ir::CtDir::kNone ? ipt_internal::MarkLoad(r, true) : CtMatch(r, *c);
    } else if (const auto* f = std::get_if<ir::Fib>(&e)) {
      std::optional<absl::Status> rpf = ipt_internal::RpfilterMatch(r, *f);
      s = rpf ? *rpf : ipt_internal::AddrtypeMatch(r, *f);
    } else if (const auto* x = std::get_if<ir::Exthdr>(&e)) {
      s = ipt_internal::RtMatch(r, *x);
    } else if (const auto* rc = std::get_if<ir::Recent>(&e)) {
      s = ipt_internal::RecentMatch(r, *rc);
    } else if (const auto* t = std::get_if<ir::TcpMss>(&e)) {
      s = ipt_internal::TcpMssTarget(r, *t);
    } else if (std::holds_alternative<ir::Socket>(e)) {
      s = ipt_internal::SocketMatch(r);
    } else if (const auto* tp = std::get_if<ir::Tproxy>(&e)) {
      s = ipt_internal::TproxyTarget(r, *tp);
    } else if (std::optional<absl::Status> m = ipt_internal::ConstStore(r, e)) {
      s = *m;
    } else if (std::optional<absl::Status> t = ipt_internal::RawTarget(r, e)) {
      s = *t;
    } else if (std::holds_alternative<ir::Counter>(e)) {
      ++r.at;  // iptables counts every rule
    } else if (const auto* i = std::get_if<ir::Immediate>(&e); i && i->dreg == ir::kVerdictReg) {
      s = Verdict(r, i->verdict);
    } else if (i) {
      r.konst[i->dreg] = i->data;
      ++r.at;
    } else if (const auto* l = std::get_if<ir::Log>(&e)) {
      s = LogTarget(r, *l);
    } else if (const auto* j = std::get_if<ir::Reject>(&e)) {
      s = RejectTarget(r, *j);
    } else if (const auto* l = std::get_if<ir::Limit>(&e)) {
      s = LimitMatch(r, *l);
    } else if (const auto* n = std::get_if<ir::Nat>(&e)) {
      s = NatTarget(r, *n);
    } else {
      s = Refuse(absl::StrCat(ir::PrintExpr(e), " has no iptables form in the printer"));
    }
    if (!s.ok()) return s;
  }
  // A first-fragment check no port match needed: `! -f` where it was.
  if (r.frag_checked && !r.port_printed) r.words.insert(r.words.begin() + r.frag_word, "! -f");
  if (!rule.comment.empty()) {
    if (rule.comment.find_first_of("\"\\\n") != std::string::npos) return Refuse("a comment iptables-save cannot quote");
    // Before the verdict, as iptables-save puts it.
    auto verdict = std::find_if(r.words.begin(), r.words.end(), [](const std::string& w) {
      return w.rfind("-j ", 0) == 0 || w.rfind("-g ", 0) == 0;
    });
    r.words.insert(verdict, "-m comment --comment " + Quote(rule.comment));
  }
  return absl::StrJoin(r.words, " ");
}

absl::Status Located(const ir::Ruleset& rs, const ir::SourceLoc& loc, const std::string& what,
                     absl::string_view why) {
  std::string where = rs.Where(loc);
  return absl::InvalidArgumentError(absl::StrCat(where.empty() ? "" : where + ": ", what, ": ", why));
}

// Whether base chain `c` is the built-in chain of that name iptables has
// in `table` (its hook, type and priority).
bool BuiltIn(const std::string& table, const ir::Chain& c) {
  struct Known {
    const char* table;
    const char* name;
    const char* type;
    int32_t priority;
  };
  static constexpr Known kChains[] = {
      {"filter", "INPUT", "filter", 0}, {"filter", "FORWARD", "filter", 0}, {"filter", "OUTPUT", "filter", 0},
      {"nat", "PREROUTING", "nat", -100}, {"nat", "INPUT", "nat", 100}, {"nat", "OUTPUT", "nat", -100},
      {"nat", "POSTROUTING", "nat", 100}, {"mangle", "PREROUTING", "filter", -150},
      {"mangle", "INPUT", "filter", -150}, {"mangle", "FORWARD", "filter", -150},
      {"mangle", "OUTPUT", "route", -150}, {"mangle", "POSTROUTING", "filter", -150},
      {"raw", "PREROUTING", "filter", -300}, {"raw", "OUTPUT", "filter", -300}};
  for (const Known& k : kChains) {
    if (table != k.table || c.name != k.name) continue;
    std::string hook = ir::HookName(c.base->hook);
    std::transform(hook.begin(), hook.end(), hook.begin(), ::toupper);
    return hook == k.name && c.base->type == k.type && c.base->priority == k.priority;
  }
  return false;
}

absl::StatusOr<std::string> PrintTable(const ir::Ruleset& rs, const ir::Table& t) {
  if (t.family != ir::Family::kIp && t.family != ir::Family::kIp6) {
    return Located(rs, t.loc, "table " + t.name, "neither an ip nor an ip6 table (iptables-save and ip6tables-save print those)");
  }
  if (t.family != rs.tables.front().family) {
    return Located(rs, t.loc, "table " + t.name, "ip and ip6 tables in one ruleset (iptables-save and ip6tables-save print one family each)");
  }
  // The one object iptables makes: CT --helper's (printed at its rule).
  const bool helpers_only = std::all_of(t.objects.begin(), t.objects.end(),
                                        [](const ir::Object& o) { return o.type == ir::kObjCtHelper; });
  if (std::any_of(t.sets.begin(), t.sets.end(), [](const ir::Set& s) { return !s.anonymous(); }) || !helpers_only ||
      !t.flowtables.empty()) {
    return Located(rs, t.loc, "table " + t.name, "named sets or objects, which iptables has not");
  }
  std::string out = absl::StrCat("*", t.name, "\n");
  std::string rules;
  for (const ir::Chain& c : t.chains) {
    if (c.base && !BuiltIn(t.name, c)) {
      return Located(rs, t.loc, "chain " + c.name, "a base chain iptables has not in table " + t.name);
    }
    absl::StrAppend(&out, ":", c.name, " ",
                    !c.base ? "-" : c.base->policy == ir::VerdictCode::kDrop ? "DROP" : "ACCEPT", " [0:0]\n");
    for (const ir::Rule& r : c.rules) {
      absl::StatusOr<std::string> line = PrintIptRule(t, c, r);
      if (!line.ok()) return Located(rs, r.loc, "rule in chain " + c.name, line.status().message());
      absl::StrAppend(&rules, "-A ", c.name, line->empty() ? "" : " ", *line, "\n");
    }
  }
  return out + rules + "COMMIT\n";
}

}  // namespace

absl::StatusOr<std::string> PrintIptables(const ir::Ruleset& ruleset) {
  std::string out;
  for (const ir::Table& t : ruleset.tables) {
    absl::StatusOr<std::string> text = PrintTable(ruleset, t);
    if (!text.ok()) return text.status();
    out += *text;
  }
  return out;
}

}  // namespace rulejit::emit
