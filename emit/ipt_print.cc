// iptables-save text of a ruleset (see ipt_print.h).
//
//   *filter
//   :INPUT DROP [0:0]
//   :WEB - [0:0]
//   -A INPUT -s 10.0.0.0/10 -p tcp -m tcp --dport 22 -j ACCEPT
//   COMMIT
#include "emit/ipt_print.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "emit/nft_value.h"
#include "ir/printer.h"

namespace rulejit::emit {
namespace {

absl::Status Refuse(std::string why) { return absl::InvalidArgumentError(std::move(why)); }

// One rule's walk: the node it is at, and what it has printed.
struct IptRule {
  const std::vector<ir::Node>& nodes;
  size_t at = 0;
  std::optional<uint8_t> l4proto;  // `-p` compared equal
  bool frag_checked = false;       // xt_tcp/xt_udp's "first fragment" check
  bool port_printed = false;
  std::map<ir::Reg, ir::Bytes> konst;  // immediates into data registers (NAT targets)
  std::vector<std::string> words;

  const ir::Expr* Peek(size_t ahead = 0) const {
    return at + ahead < nodes.size() ? &nodes[at + ahead].expr : nullptr;
  }
};

const char* Neg(ir::CmpOp op) { return op == ir::CmpOp::kNeq ? "! " : ""; }

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

const ir::Cmp* CmpOn(const ir::Expr* e, ir::Reg reg) {
  const auto* c = e ? std::get_if<ir::Cmp>(e) : nullptr;
  return c && c->sreg == reg && (c->op == ir::CmpOp::kEq || c->op == ir::CmpOp::kNeq) ? c : nullptr;
}

// -i / -o / -p
absl::Status MetaMatch(IptRule& r, const ir::MetaLoad& m) {
  const ir::Cmp* c = CmpOn(r.Peek(1), m.dreg);
  if (!c) return Refuse(absl::StrCat("meta ", ir::MetaKeyName(m.key), " without a plain compare"));
  if (m.key == ir::MetaKey::kIifName || m.key == ir::MetaKey::kOifName) {
    std::optional<std::string> name = IfaceName(c->data);
    if (!name) return Refuse("an interface name iptables cannot write");
    r.words.push_back(absl::StrCat(Neg(c->op), m.key == ir::MetaKey::kIifName ? "-i " : "-o ", *name));
  } else if (m.key == ir::MetaKey::kL4Proto && c->data.size() == 1) {
    const uint8_t p = c->data[0];
    const char* name = p == 6 ? "tcp" : p == 17 ? "udp" : p == 1 ? "icmp" : nullptr;
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
  } else if (*r.l4proto == 1 && p.offset == 0 && (p.len == 1 || p.len == 2) && !mask) {
    if (!c || c->data.size() != p.len) return Refuse("an icmp type match iptables cannot write");
    r.words.push_back(absl::StrCat("-m icmp ", Neg(c->op), "--icmp-type ", c->data[0],
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
  if (network && p.len >= 1 && p.len <= 4 && (p.offset == 12 || p.offset == 16)) {
    const ir::Cmp* c = CmpOn(r.Peek(next), p.dreg);
    if (!c || c->data.size() != p.len) return Refuse("an address match without a plain compare");
    const int plen = mask ? PrefixLength(mask->mask) : static_cast<int>(p.len * 8);
    if (plen < 0) return Refuse("an address mask that is no prefix");
    ir::Bytes d = c->data;
    d.resize(4, 0);
    r.words.push_back(absl::StrFormat("%s%s %u.%u.%u.%u/%d", Neg(c->op), p.offset == 12 ? "-s" : "-d",
                                      d[0], d[1], d[2], d[3], plen));
    r.at += next + 1;
    return absl::OkStatus();
  }
  if (network && p.offset == 6 && p.len == 2 && mask && mask->mask == ir::Bytes{0x1f, 0xff}) {
    const ir::Cmp* c = CmpOn(r.Peek(next), p.dreg);
    if (!c || c->op != ir::CmpOp::kEq || c->data != ir::Bytes{0, 0}) return Refuse("a fragment match iptables cannot write");
    r.frag_checked = true;
    r.at += next + 1;
    return absl::OkStatus();
  }
  if (p.base == ir::PayloadBase::kTransport && r.frag_checked && r.l4proto) {
    if (std::optional<absl::Status> s = TcpFlagsOrIcmp(r, p, mask, next)) return *s;
  }
  if (p.base == ir::PayloadBase::kTransport && p.len == 2 && (p.offset == 0 || p.offset == 2) && !mask) {
    if (!r.frag_checked || !r.l4proto || (*r.l4proto != 6 && *r.l4proto != 17)) {
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

// -m conntrack --ctstate A,B: (ct state & bits) != 0.
absl::Status CtMatch(IptRule& r, const ir::CtLoad& ct) {
  const auto* b = r.Peek(1) ? std::get_if<ir::Bitwise>(r.Peek(1)) : nullptr;
  const ir::Cmp* c = CmpOn(r.Peek(2), ct.dreg);
  if (ct.key != ir::CtKey::kState || ct.dir != ir::CtDir::kNone || !b || b->op != ir::BitwiseOp::kMaskXor ||
      !c || c->data.size() != 4 || LeInt(c->data) != 0 || b->mask.size() != 4) {
    return Refuse("a ct match with no iptables form in the printer");
  }
  static constexpr std::pair<uint32_t, const char*> kStates[] = {
      {1, "INVALID"}, {2, "ESTABLISHED"}, {4, "RELATED"}, {8, "NEW"}, {64, "UNTRACKED"}};
  uint32_t bits = LeInt(b->mask);
  std::vector<std::string> names;
  for (const auto& [bit, name] : kStates) {
    if (bits & bit) names.push_back(name);
    bits &= ~bit;
  }
  if (bits || names.empty()) return Refuse("ct state bits iptables cannot name");
  // != 0: one of the states; == 0: none of them.
  r.words.push_back(absl::StrCat("-m conntrack ", c->op == ir::CmpOp::kEq ? "! " : "", "--ctstate ",
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
  if (l.flags) return Refuse("LOG options the printer does not write");
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
  const char* with = j.type == RejectType::kTcpReset ? "tcp-reset" : nullptr;
  for (const auto& [code, name] : kCodes) {
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

absl::StatusOr<std::string> PrintRule(const ir::Rule& rule) {
  IptRule r{rule.exprs};
  while (r.at < r.nodes.size()) {
    const ir::Expr& e = r.nodes[r.at].expr;
    absl::Status s;
    if (const auto* m = std::get_if<ir::MetaLoad>(&e)) {
      s = MetaMatch(r, *m);
    } else if (const auto* p = std::get_if<ir::PayloadLoad>(&e)) {
      s = PayloadMatch(r, *p);
    } else if (const auto* c = std::get_if<ir::CtLoad>(&e)) {
      s = CtMatch(r, *c);
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
  if (r.frag_checked && !r.port_printed) return Refuse("a fragment check with no port match");
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
  if (t.family != ir::Family::kIp) return Located(rs, t.loc, "table " + t.name, "not an ip table (iptables-save prints ip tables)");
  if (std::any_of(t.sets.begin(), t.sets.end(), [](const ir::Set& s) { return !s.anonymous(); }) || !t.objects.empty() || !t.flowtables.empty()) {
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
      absl::StatusOr<std::string> line = PrintRule(r);
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
