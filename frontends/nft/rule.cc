// The nft rule grammar and its lowering to IR.
//
// Each match `LHS [op] RHS` lowers the way nft's netlink_linearize does:
//
//   deps      meta nfproto / meta protocol / meta l4proto / meta iiftype
//             compares that nft adds implicitly, once per rule
//   load      payload / meta / ct load => reg 1 (concatenations: next words)
//   mask      bitwise & for bit fields, user `& mask`, prefixes
//   compare   cmp, range, or lookup in an (anonymous) set
//
// Host-order values (meta/ct) are byte-swapped with `byteorder` before
// ordered compares and ranges, because the kernel compares with memcmp.
#include "frontends/nft/parser.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace rulejit::frontends::nft {
namespace {

enum class RelOp { kImplicit, kEq, kNeq, kLt, kGt, kLte, kGte, kNot };

U128 BitsMask(uint32_t bits) {
  return bits >= 128 ? ~static_cast<U128>(0)
                     : ((static_cast<U128>(1) << bits) - 1);
}

ir::CmpOp ToCmp(RelOp op) {
  switch (op) {
    case RelOp::kNeq: return ir::CmpOp::kNeq;
    case RelOp::kLt: return ir::CmpOp::kLt;
    case RelOp::kGt: return ir::CmpOp::kGt;
    case RelOp::kLte: return ir::CmpOp::kLte;
    case RelOp::kGte: return ir::CmpOp::kGte;
    case RelOp::kImplicit:
    case RelOp::kEq:
    case RelOp::kNot:
      return ir::CmpOp::kEq;
  }
  return ir::CmpOp::kEq;
}

bool IsOrdering(RelOp op) {
  return op == RelOp::kLt || op == RelOp::kGt || op == RelOp::kLte ||
         op == RelOp::kGte;
}

uint32_t Pad4(uint32_t n) { return (n + 3) / 4 * 4; }

const std::vector<std::string_view>& StatementWords() {
  static const std::vector<std::string_view> kWords = {
      "accept", "drop", "continue", "return", "jump", "goto", "counter",
      "log", "limit", "reject", "notrack", "meta", "ct", "ip", "ip6", "tcp",
      "udp", "udplite", "sctp", "dccp", "icmp", "icmpv6", "th", "ether",
      "vlan", "esp", "ah", "comp", "igmp", "mark", "iifname", "oifname",
      "iif", "oif", "comment", "quota", "queue", "snat", "dnat", "masquerade",
      "redirect"};
  return kWords;
}

bool IsUnsupportedStatement(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      // Statements parsed in statements.cc, but no expressions.
      "queue", "quota", "snat", "dnat", "masquerade", "redirect",
      "dup", "fwd", "tproxy", "synproxy", "flow", "meter", "add", "update",
      "delete", "numgen", "jhash", "symhash", "fib", "rt", "osf", "socket",
      "exthdr", "hbh", "frag", "dst", "mh", "srh", "rt0", "rt2", "rt4",
      "arp", "gre", "gretap", "geneve", "vxlan", "ipsec", "tunnel", "last",
      "xt", "set", "map", "vmap", "inner", "cgroupv2", "mpath", "osf",
      "secmark", "objref", "ipip", "ip6ip", "reset", "dscp", "ecn"};
  for (std::string_view k : kWords) {
    if (k == w) return true;
  }
  return false;
}

// Splits `word` at `sep` positions until both sides parse (`echo-request`
// contains a '-' and is not a range).
template <typename Fn>
bool SplitAt(std::string_view word, char sep, Fn&& try_parts) {
  for (size_t i = 1; i + 1 < word.size(); ++i) {
    if (word[i] != sep) continue;
    if (try_parts(word.substr(0, i), word.substr(i + 1))) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// Rules and statements

bool Parser::ParseRule(ir::Table& table, ir::Chain& chain, bool insert) {
  table_ = &table;
  ctx_ = ProtoCtx{};
  pending_sets_.clear();
  ir::Rule rule;
  rule.loc = Peek().loc;
  while (!failed_ && !AtStmtEnd()) {
    if (AcceptWord("comment")) {
      if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
      rule.comment = Next().text;
      continue;
    }
    if (!ParseStatement(rule)) return false;
  }
  if (failed_) return false;
  if (rule.exprs.empty()) return ErrorUnexpected("a statement");
  MergePayloadCompares(rule);
  for (ir::Set& s : pending_sets_) table.sets.push_back(std::move(s));
  pending_sets_.clear();
  if (insert) {
    chain.rules.insert(chain.rules.begin(), std::move(rule));
  } else {
    chain.rules.push_back(std::move(rule));
  }
  return true;
}

namespace {

// A `[ payload load ] [ cmp eq ]` match that stmt_reduce may merge.
struct PayloadMatch {
  size_t at;  // index of the load; the cmp follows it
  ir::PayloadBase base;
  uint32_t offset, len;
};

// True for expressions that are part of a match; anything else (verdicts,
// counters, set statements, map lookups) is a statement.
bool IsMatchPart(const ir::Expr& e) {
  if (const auto* lk = std::get_if<ir::Lookup>(&e)) return !lk->dreg.has_value();
  return std::holds_alternative<ir::PayloadLoad>(e) || std::holds_alternative<ir::MetaLoad>(e) ||
         std::holds_alternative<ir::CtLoad>(e) || std::holds_alternative<ir::Bitwise>(e) ||
         std::holds_alternative<ir::Byteorder>(e) || std::holds_alternative<ir::Cmp>(e) ||
         std::holds_alternative<ir::Range>(e) || std::holds_alternative<ir::Exthdr>(e);
}

// The header fields that name the next protocol (ether type, vlan type,
// ip protocol, ip6 nexthdr): nft's EXPR_F_PROTOCOL payloads.
bool IsProtocolKey(const PayloadMatch& m) {
  switch (m.base) {
    case ir::PayloadBase::kLink:
      return m.len == 2 && (m.offset == 12 || m.offset == 16);
    case ir::PayloadBase::kNetwork:
      return m.len == 1 && (m.offset == 9 || m.offset == 6);
    default:
      return false;
  }
}

// nft's payload_can_merge: adjacent, at most 16 bytes, and only when the
// result still fits 4 bytes, or is a link header load, or one side is
// already wider than 4 bytes.
bool CanMerge(const PayloadMatch& a, const PayloadMatch& b) {
  if (a.base != b.base || a.offset + a.len != b.offset) return false;
  uint32_t total = a.len + b.len;
  if (total > 16) return false;
  return total <= 4 || a.base == ir::PayloadBase::kLink || a.len > 4 || b.len > 4;
}

}  // namespace

// nft (stmt_reduce): the payload equality matches of a rule, up to a
// statement that is not a match, are sorted by header and offset, and
// adjacent ones merge into one load:
//   [ load 1b @ th + 1 ] [ cmp eq 0x01 ] [ load 1b @ th + 0 ] [ cmp eq 0x02 ]
//   → [ load 2b @ th + 0 ] [ cmp eq 0x0102 ]
// The merged match stands where the lower one stood, or where the higher
// one stood when that one names a protocol, so that a dependency still
// precedes what needs it.
void Parser::MergePayloadCompares(ir::Rule& rule) {
  auto& x = rule.exprs;
  std::vector<bool> erase(x.size(), false);
  std::vector<PayloadMatch> run;
  auto merge_run = [&] {
    std::stable_sort(run.begin(), run.end(), [](const PayloadMatch& a, const PayloadMatch& b) {
      return a.base != b.base ? a.base < b.base : a.offset < b.offset;
    });
    for (size_t k = 1; k < run.size(); ++k) {
      PayloadMatch& last = run[k - 1];
      PayloadMatch& cur = run[k];
      if (!CanMerge(last, cur)) continue;
      const bool into_cur = IsProtocolKey(cur);
      size_t keep = into_cur ? cur.at : last.at;
      size_t drop = into_cur ? last.at : cur.at;
      ir::Bytes data = std::get<ir::Cmp>(x[last.at + 1].expr).data;
      const ir::Bytes& tail = std::get<ir::Cmp>(x[cur.at + 1].expr).data;
      data.insert(data.end(), tail.begin(), tail.end());
      auto& load = std::get<ir::PayloadLoad>(x[keep].expr);
      load.offset = last.offset;
      load.len = last.len + cur.len;
      std::get<ir::Cmp>(x[keep + 1].expr).data = std::move(data);
      erase[drop] = erase[drop + 1] = true;
      cur = PayloadMatch{keep, last.base, last.offset, last.len + cur.len};
    }
    run.clear();
  };
  for (size_t i = 0; i < x.size(); ++i) {
    if (!IsMatchPart(x[i].expr)) {
      merge_run();
      continue;
    }
    if (i + 1 >= x.size()) continue;
    const auto* p = std::get_if<ir::PayloadLoad>(&x[i].expr);
    const auto* c = std::get_if<ir::Cmp>(&x[i + 1].expr);
    if (p && c && p->dreg == 1 && c->sreg == 1 && c->op == ir::CmpOp::kEq &&
        c->data.size() == p->len) {
      run.push_back(PayloadMatch{i, p->base, p->offset, p->len});
      ++i;
    }
  }
  merge_run();
  size_t out = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (erase[i]) continue;
    if (out != i) x[out] = std::move(x[i]);
    ++out;
  }
  x.resize(out);
}

bool Parser::ParseStatement(ir::Rule& rule) {
  const Token& t = Peek();
  ir::SourceLoc loc = t.loc;
  if (t.kind == Tok::kSetRef) return ParseMatch(rule);
  if (t.kind != Tok::kWord) return ErrorUnexpected("a statement");
  std::string w = t.text;
  if (w == "accept" || w == "drop" || w == "continue" || w == "return" ||
      w == "jump" || w == "goto") {
    ir::Immediate imm;
    if (!ParseVerdict(&imm.verdict)) return false;
    Emit(rule, imm, loc);
    return true;
  }
  if (w == "counter") return ParseCounter(rule);
  if (w == "log") return ParseLog(rule);
  if (w == "limit") return ParseLimit(rule);
  if (w == "reject") return ParseReject(rule);
  if (w == "quota") return ParseQuota(rule);
  if (w == "queue") return ParseQueue(rule);
  if (w == "snat" || w == "dnat" || w == "masquerade" || w == "redirect") {
    return ParseNat(rule);
  }
  if (w == "notrack") {
    Next();
    Emit(rule, ir::Notrack{}, loc);
    return true;
  }
  bool qualified = w == "meta" || w == "ct";
  if (qualified || IsUnqualifiedMeta(w)) {
    size_t key_at = qualified ? 1 : 0;
    if (w == "ct" && PeekAt(1).kind == Tok::kWord &&
        (PeekAt(1).text == "original" || PeekAt(1).text == "reply")) {
      key_at = 2;  // ct original zone set 1
    }
    const Token& after = PeekAt(key_at + 1);
    if (after.kind == Tok::kWord && after.text == "set") {
      Field target;
      if (!ParseField(&target)) return false;
      if (target.kind == Field::Kind::kCt && target.ct == ir::CtKey::kHelper) {
        // `ct helper set NAME` references a ct helper object (objref).
        return Error(target.loc, "unsupported ct helper object reference");
      }
      Next();  // set
      return ParseSetStmt(rule, target, target.kind == Field::Kind::kCt);
    }
    return ParseMatch(rule);
  }
  if (IsPayloadProto(w) || w == "exthdr") return ParseMatch(rule);
  if (IsIpv6Exthdr(w) && PeekAt(1).kind == Tok::kWord &&
      (LookupIpv6ExthdrField(w, PeekAt(1).text) || (w == "srh" && PeekAt(1).text == "sid"))) {
    return ParseMatch(rule);
  }
  if (IsUnsupportedStatement(w)) {
    return Error(loc, absl::StrCat("unsupported statement or expression '", w, "'"));
  }
  return Error(loc, absl::StrCat("unknown statement '", w, "'"),
               ir::DidYouMean(w, StatementWords()));
}

bool Parser::ParseVerdict(ir::Verdict* v) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return ErrorUnexpected("verdict");
  std::string w = Next().text;
  if (w == "accept") v->code = ir::VerdictCode::kAccept;
  else if (w == "drop") v->code = ir::VerdictCode::kDrop;
  else if (w == "continue") v->code = ir::VerdictCode::kContinue;
  else if (w == "return") v->code = ir::VerdictCode::kReturn;
  else if (w == "jump" || w == "goto") {
    v->code = w == "jump" ? ir::VerdictCode::kJump : ir::VerdictCode::kGoto;
    if (AtPunct("{")) return Error(Peek().loc, "unsupported anonymous chain binding");
    if (!ExpectName(&v->chain, "chain name")) return false;
  } else {
    return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown verdict '", w, "'"),
                 ir::DidYouMean(w, {"accept", "drop", "continue", "return", "jump", "goto"}));
  }
  return true;
}

bool Parser::ParseCounter(ir::Rule& rule) {
  ir::SourceLoc loc = Next().loc;
  ir::Counter c;
  if (AtWord("name")) return Error(Peek().loc, "unsupported named counter");
  // `packets N bytes M`, in either order.
  for (int i = 0; i < 2 && (AtWord("packets") || AtWord("bytes")); ++i) {
    bool packets = Next().text == "packets";
    std::string n;
    if (!ExpectWord(&n, "count")) return false;
    auto v = ParseNumber(n);
    if (!v || *v > UINT64_MAX) return Error(toks_[pos_ - 1].loc, "bad counter value");
    (packets ? c.packets : c.bytes) = static_cast<uint64_t>(*v);
  }
  Emit(rule, c, loc);
  return true;
}

bool Parser::ParseLog(ir::Rule& rule) {
  ir::SourceLoc loc = Next().loc;
  ir::Log log;
  static const std::vector<std::string_view> kLevels = {
      "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
      "audit"};
  bool audit = false, other = false, nflog_option = false;
  while (!failed_) {
    if (AcceptWord("prefix")) {
      const Token& p = Peek();
      if (p.kind != Tok::kString && p.kind != Tok::kWord) return ErrorUnexpected("log prefix");
      log.prefix = Next().text;
      other = true;
    } else if (AcceptWord("level")) {
      std::string l;
      ir::SourceLoc lloc = Peek().loc;
      if (!ExpectWord(&l, "log level")) return false;
      auto it = std::find(kLevels.begin(), kLevels.end(), l);
      if (it == kLevels.end()) {
        return Error(lloc, absl::StrCat("unknown log level '", l, "'"), ir::DidYouMean(l, kLevels));
      }
      uint32_t level = static_cast<uint32_t>(it - kLevels.begin());
      audit = level == 8;
      log.level = level;
    } else if (AcceptWord("group")) {
      std::string g;
      if (!ExpectWord(&g, "log group")) return false;
      auto v = ParseNumber(g);
      if (!v || *v > 65535) return Error(toks_[pos_ - 1].loc, "bad log group");
      log.group = static_cast<uint32_t>(*v);
      other = true;
    } else if (AtWord("snaplen") || AtWord("queue-threshold")) {
      // nflog options: the copy length and the batching threshold.
      const bool snaplen = Next().text == "snaplen";
      std::string n;
      if (!ExpectWord(&n, snaplen ? "snaplen" : "queue threshold")) return false;
      auto v = ParseNumber(n);
      if (!v || *v > (snaplen ? UINT32_MAX : 65535)) {
        return Error(toks_[pos_ - 1].loc, absl::StrCat("bad log ", snaplen ? "snaplen" : "queue threshold"));
      }
      (snaplen ? log.snaplen : log.qthreshold) = static_cast<uint32_t>(*v);
      other = true;
      nflog_option = true;
    } else if (AcceptWord("flags")) {
      std::string f;
      if (!ExpectWord(&f, "log flags")) return false;
      other = true;
      if (f == "all") {
        log.flags |= 0x2f;
      } else if (f == "tcp") {
        std::string what;
        do {
          if (!ExpectWord(&what, "tcp log flag")) return false;
          if (what == "sequence") log.flags |= 0x1;
          else if (what == "options") log.flags |= 0x2;
          else return Error(toks_[pos_ - 1].loc, "unknown tcp log flag");
        } while (AcceptPunct(","));
      } else if (f == "ip") {
        if (!AcceptWord("options")) return ErrorUnexpected("'options'");
        log.flags |= 0x4;
      } else if (f == "skuid") {
        log.flags |= 0x8;
      } else if (f == "ether") {
        log.flags |= 0x20;
      } else {
        return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown log flag '", f, "'"),
                     ir::DidYouMean(f, {"all", "tcp", "ip", "skuid", "ether"}));
      }
    } else {
      break;
    }
  }
  if (failed_) return false;
  if (audit && other) return Error(loc, "log level audit takes no other options");
  if (log.group && log.flags != 0) return Error(loc, "log group does not take flags");
  if (log.group && log.level) return Error(loc, "log group does not take a level");
  if (nflog_option && !log.group) return Error(loc, "log snaplen and queue-threshold need a group");
  Emit(rule, log, loc);
  return true;
}

bool Parser::ParseLimit(ir::Rule& rule) {
  ir::SourceLoc loc = Next().loc;
  if (!AcceptWord("rate")) {
    if (AtWord("name")) return Error(Peek().loc, "unsupported named limit");
    return ErrorUnexpected("'rate'");
  }
  ir::Limit lim;
  if (AcceptWord("over")) lim.over = true;
  else AcceptWord("until");
  // RATE[/UNIT] or RATE BYTEUNIT/UNIT, with optional spaces around '/'.
  auto parse_rate = [&](uint64_t* rate, uint64_t* unit, bool* bytes,
                        bool need_time) -> bool {
    std::string w;
    if (!ExpectWord(&w, "rate")) return false;
    ir::SourceLoc wloc = toks_[pos_ - 1].loc;
    std::vector<std::string> parts = absl::StrSplit(w, '/');
    std::optional<U128> n = ParseNumber(parts[0]);
    if (!n || *n > UINT32_MAX * static_cast<U128>(1024)) return Error(wloc, "bad rate");
    uint64_t mult = 1;
    std::string byte_unit;
    std::string time_unit = parts.size() > 1 ? parts[1] : "";
    if (parts.size() == 1) {
      if (Peek().kind == Tok::kWord &&
          (Peek().text.rfind("bytes", 0) == 0 || Peek().text.rfind("kbytes", 0) == 0 ||
           Peek().text.rfind("mbytes", 0) == 0)) {
        std::vector<std::string> bp = absl::StrSplit(Next().text, '/');
        byte_unit = bp[0];
        if (bp.size() > 1) time_unit = bp[1];
      }
      if (time_unit.empty() && AtWord("/")) {
        Next();
        if (!ExpectWord(&time_unit, "time unit")) return false;
      }
    }
    if (!byte_unit.empty()) {
      *bytes = true;
      if (byte_unit == "bytes") mult = 1;
      else if (byte_unit == "kbytes") mult = 1024;
      else if (byte_unit == "mbytes") mult = 1024 * 1024;
      else return Error(wloc, absl::StrCat("unknown unit '", byte_unit, "'"));
    }
    *rate = static_cast<uint64_t>(*n) * mult;
    if (time_unit.empty()) {
      if (need_time) return Error(wloc, "rate needs a time unit");
      *unit = 1;
      return true;
    }
    static const std::pair<std::string_view, uint64_t> kUnits[] = {
        {"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400},
        {"week", 604800}};
    for (const auto& [name, secs] : kUnits) {
      if (name == time_unit) {
        *unit = secs;
        return true;
      }
    }
    return Error(wloc, absl::StrCat("unknown time unit '", time_unit, "'"),
                 ir::DidYouMean(time_unit, {"second", "minute", "hour", "day", "week"}));
  };
  if (!parse_rate(&lim.rate, &lim.unit_seconds, &lim.bytes, true)) return false;
  lim.burst = lim.bytes ? 0 : 5;
  if (AcceptWord("burst")) {
    std::string b;
    if (!ExpectWord(&b, "burst")) return false;
    auto n = ParseNumber(b);
    if (!n || *n > UINT32_MAX) return Error(toks_[pos_ - 1].loc, "bad burst");
    uint64_t mult = 1;
    bool byte_burst = false;
    if (AcceptWord("packets")) {
      if (lim.bytes) return Error(toks_[pos_ - 1].loc, "burst in packets for a byte rate");
    } else if (AcceptWord("bytes")) {
      mult = 1;
      byte_burst = true;
    } else if (AcceptWord("kbytes")) {
      mult = 1024;
      byte_burst = true;
    } else if (AcceptWord("mbytes")) {
      mult = 1024 * 1024;
      byte_burst = true;
    }
    if (byte_burst && !lim.bytes) {
      return Error(toks_[pos_ - 1].loc, "burst in bytes for a packet rate");
    }
    if (*n * mult > UINT32_MAX) return Error(toks_[pos_ - 1].loc, "burst too large");
    lim.burst = static_cast<uint32_t>(*n * mult);
  }
  Emit(rule, lim, loc);
  return true;
}

bool Parser::ParseReject(ir::Rule& rule) {
  ir::SourceLoc loc = Next().loc;
  ir::Family fam = table_->family;
  ir::Reject rej;
  if (fam == ir::Family::kIp) rej = {0, 3};
  else if (fam == ir::Family::kIp6) rej = {0, 4};
  else rej = {2, 1};
  if (AcceptWord("with")) {
    std::string kind;
    ir::SourceLoc kloc = Peek().loc;
    if (!ExpectWord(&kind, "reject type")) return false;
    if (kind == "tcp") {
      if (!AcceptWord("reset")) return ErrorUnexpected("'reset'");
      Field dep;
      dep.dep = Dep::kL4;
      dep.l4proto = 6;
      dep.loc = loc;
      // nft puts a statement's dependency at the front of the rule.
      ir::Rule front;
      if (!EmitDeps(front, dep)) return false;
      rule.exprs.insert(rule.exprs.begin(), front.exprs.begin(), front.exprs.end());
      rej = {1, 0};
    } else if (kind == "icmp" || kind == "icmpv6" || kind == "icmpx") {
      AcceptWord("type");
      DType t = kind == "icmp" ? DType::kIcmpCode
                : kind == "icmpv6" ? DType::kIcmpv6Code : DType::kIcmpxCode;
      std::string code;
      ir::SourceLoc cloc = Peek().loc;
      if (!ExpectWord(&code, "reject code")) return false;
      std::optional<Value> v = ParseValue(t, code, 8);
      if (!v) {
        return Error(cloc, absl::StrCat("unknown ", kind, " code '", code, "'"),
                     ir::DidYouMean(code, SymbolNames(t)));
      }
      if (kind == "icmpx") {
        rej = {2, static_cast<uint32_t>(v->num)};
      } else {
        int net = kind == "icmp" ? 4 : 6;
        if ((fam == ir::Family::kIp && net == 6) || (fam == ir::Family::kIp6 && net == 4)) {
          return Error(kloc, absl::StrCat("reject with ", kind, " in a ",
                                          ir::FamilyName(fam), " table"));
        }
        ir::Rule front;
        if (!EmitNetDep(front, net, loc)) return false;
        rule.exprs.insert(rule.exprs.begin(), front.exprs.begin(), front.exprs.end());
        rej = {0, static_cast<uint32_t>(v->num)};
      }
    } else {
      return Error(kloc, absl::StrCat("unknown reject type '", kind, "'"),
                   ir::DidYouMean(kind, {"tcp", "icmp", "icmpv6", "icmpx"}));
    }
  } else if (fam == ir::Family::kInet || fam == ir::Family::kNetdev) {
    // Plain reject after an explicit network protocol match picks its ICMP.
    if (ctx_.net == 4) rej = {0, 3};
    if (ctx_.net == 6) rej = {0, 4};
  }
  Emit(rule, rej, loc);
  return true;
}

// ---------------------------------------------------------------------------
// Expressions

bool Parser::ParseField(Field* field) {
  const Token& t = Peek();
  ir::SourceLoc loc = t.loc;
  if (t.kind == Tok::kSetRef) return ParseRawPayload(field);
  if (t.kind != Tok::kWord) return ErrorUnexpected("an expression");
  std::string w = Next().text;
  if ((w == "tcp" && AtWord("option")) || (w == "sctp" && AtWord("chunk"))) {
    if (!ParseOptionField(w, field)) return false;
  } else if (w == "exthdr") {
    std::string hdr;
    ir::SourceLoc hloc = Peek().loc;
    if (!ExpectWord(&hdr, "extension header name")) return false;
    std::optional<Field> fd = LookupExthdrPresence(hdr);
    if (!fd) {
      return Error(hloc, absl::StrCat("unknown extension header '", hdr, "'"),
                   ir::DidYouMean(hdr, ExthdrPresenceNames()));
    }
    *field = *fd;
  } else if (w == "srh" && AtWord("sid")) {
    // srh sid[N]
    Next();
    std::string n;
    if (!ExpectPunct("[") || !ExpectWord(&n, "segment number") || !ExpectPunct("]")) return false;
    std::optional<Field> fd = LookupIpv6ExthdrField(w, absl::StrCat("sid[", n, "]"));
    if (!fd) return Error(toks_[pos_ - 2].loc, "segment number must be 1..8");
    *field = *fd;
  } else if (IsIpv6Exthdr(w) && Peek().kind == Tok::kWord &&
             LookupIpv6ExthdrField(w, Peek().text)) {
    *field = *LookupIpv6ExthdrField(w, Next().text);
  } else if (IsPayloadProto(w)) {
    const Token& f = Peek();
    if (f.kind != Tok::kWord) return ErrorUnexpected(absl::StrCat(w, " header field"));
    std::string name = f.text;
    std::optional<Field> fd = LookupPayloadField(w, name);
    if (!fd) {
      static constexpr std::string_view kExt[] = {
          "option", "hbh", "rt", "frag", "dst", "mh", "srh", "sackperm", "chunk",
          "taddr", "daddr", "saddr",
          "exthdr", "timestamp", "mss", "window", "sack", "sack0", "maxseg"};
      for (std::string_view e : kExt) {
        if (e == name) return Error(f.loc, absl::StrCat("unsupported expression '", w, " ", name, "'"));
      }
      return Error(f.loc, absl::StrCat("unknown ", w, " field '", name, "'"),
                   ir::DidYouMean(name, PayloadFieldNames(w)));
    }
    Next();
    *field = *fd;
  } else if (w == "meta" || IsUnqualifiedMeta(w)) {
    std::string key = w;
    ir::SourceLoc kloc = loc;
    if (w == "meta") {
      kloc = Peek().loc;
      if (!ExpectWord(&key, "meta key")) return false;
    }
    std::optional<Field> fd = LookupMetaField(key);
    if (fd && (key == "ibrname" || key == "obrname" || key == "ibrpvid" ||
               key == "ibrvproto" || key == "broute") &&
        table_->family != ir::Family::kBridge) {
      return Error(kloc, absl::StrCat("meta ", key, " is only valid in bridge tables"));
    }
    if (!fd) {
      return Error(kloc, absl::StrCat("unknown meta key '", key, "'"),
                   ir::DidYouMean(key, MetaKeyNames()));
    }
    *field = *fd;
  } else if (w == "ct") {
    ir::CtDir dir = ir::CtDir::kNone;
    if (AcceptWord("original")) dir = ir::CtDir::kOriginal;
    else if (AcceptWord("reply")) dir = ir::CtDir::kReply;
    std::string key;
    ir::SourceLoc kloc = Peek().loc;
    if (!ExpectWord(&key, "ct key")) return false;
    static constexpr std::string_view kNoDir[] = {
        "state", "direction", "status", "mark", "secmark", "expiration",
        "event", "id", "label"};
    for (std::string_view k : kNoDir) {
      if (dir != ir::CtDir::kNone && k == key) {
        return Error(kloc, absl::StrCat("ct ", key, " takes no direction"));
      }
    }
    int net = 0;
    bool plain = key == "saddr" || key == "daddr";
    if ((key == "ip" || key == "ip6" || plain) && dir == ir::CtDir::kNone) {
      return Error(kloc, absl::StrCat("ct ", key, " needs a direction (original or reply)"));
    }
    if (key == "ip" || key == "ip6") {
      net = key == "ip" ? 4 : 6;
      if (ctx_.net != 0 && ctx_.net != net) {
        return Error(kloc, "conflicting network protocols in one rule");
      }
      if (!AtWord("saddr") && !AtWord("daddr")) return ErrorUnexpected("'saddr' or 'daddr'");
      key = Next().text;
    } else if (plain) {
      net = table_->family == ir::Family::kIp    ? 4
            : table_->family == ir::Family::kIp6 ? 6
                                                 : ctx_.net;
      if (net == 0) {
        return Error(kloc, absl::StrCat("ct ", key, " needs a protocol context "
                                        "(use 'ct original ip ", key, "')"));
      }
    }
    std::optional<Field> fd = LookupCtField(key, dir, net);
    if (fd && plain) {
      // Without `ip`/`ip6` nft loads the family-sized NFT_CT_SRC/DST.
      fd->ct_plain_addr = true;
      fd->ct = key == "saddr" ? ir::CtKey::kSrc : ir::CtKey::kDst;
    }
    if (!fd) {
      static constexpr std::string_view kUnsup[] = {
          "count", "helper", "timeout", "expectation", "l3proto"};
      for (std::string_view u : kUnsup) {
        if (u == key) return Error(kloc, absl::StrCat("unsupported ct key '", key, "'"));
      }
      return Error(kloc, absl::StrCat("unknown ct key '", key, "'"),
                   ir::DidYouMean(key, CtKeyNames()));
    }
    *field = *fd;
  } else if (IsUnsupportedStatement(w)) {
    return Error(loc, absl::StrCat("unsupported expression '", w, "'"));
  } else {
    std::vector<std::string_view> c = PayloadProtoNames();
    c.push_back("meta");
    c.push_back("ct");
    return Error(loc, absl::StrCat("unknown expression '", w, "'"), ir::DidYouMean(w, c));
  }
  field->loc = loc;
  return true;
}

// `,OFFSET,LENGTH` after `@BASE` (bits, each at most `max`).
bool Parser::ParseOffsetLength(uint32_t max, std::string_view what, uint32_t nums[2]) {
  for (int i = 0; i < 2; ++i) {
    if (!ExpectPunct(",")) return false;
    std::string w;
    if (!ExpectWord(&w, "number")) return false;
    auto v = ParseNumber(w);
    if (!v || *v > max) {
      return Error(toks_[pos_ - 1].loc, absl::StrCat("bad ", std::string(what), " offset/length"));
    }
    nums[i] = static_cast<uint32_t>(*v);
  }
  return true;
}

// `tcp option NAME [FIELD]`, `tcp option NUM`, `tcp option @KIND,OFF,LEN`,
// `sctp chunk NAME [FIELD]`; without a field, the presence of the option
// (the value that follows is `exists` / `missing`).
bool Parser::ParseOptionField(std::string_view proto, Field* field) {
  const bool tcp = proto == "tcp";
  Next();  // option / chunk
  const Token& t = Peek();
  ir::SourceLoc loc = t.loc;
  if (tcp && t.kind == Tok::kSetRef) {
    Token kind_tok = Next();
    auto kind = ParseNumber(kind_tok.text);
    if (!kind || *kind > 255) return Error(loc, "bad tcp option kind");
    uint32_t nums[2];
    if (!ParseOffsetLength(255 * 8, "tcp option", nums)) return false;
    if (nums[1] == 0 || nums[1] > 32 || nums[0] % 8 != 0) {
      return Error(loc, "unsupported tcp option offset/length");
    }
    Field f;
    f.kind = Field::Kind::kExthdr;
    f.exthdr_op = ir::ExthdrOp::kTcpopt;
    f.exthdr_type = static_cast<uint8_t>(*kind);
    f.off_bits = nums[0];
    f.len_bits = nums[1];
    *field = f;
    return true;
  }
  if (t.kind != Tok::kWord) return ErrorUnexpected(tcp ? "tcp option name" : "sctp chunk name");
  std::string name = Next().text;
  std::string sub;
  if (Peek().kind == Tok::kWord) {
    std::vector<std::string_view> fields =
        tcp ? TcpOptionFieldNames(name) : SctpChunkFieldNames(name);
    if (std::find(fields.begin(), fields.end(), Peek().text) != fields.end()) sub = Next().text;
  }
  std::optional<Field> fd = tcp ? LookupTcpOption(name, sub) : LookupSctpChunk(name, sub);
  if (!fd) {
    return Error(loc, absl::StrCat("unknown ", tcp ? "tcp option '" : "sctp chunk '", name, "'"),
                 ir::DidYouMean(name, tcp ? TcpOptionNames() : SctpChunkNames()));
  }
  *field = *fd;
  return true;
}

bool Parser::ParseRawPayload(Field* field) {
  Token t = Next();
  Field f;
  f.kind = Field::Kind::kPayload;
  f.type = DType::kInteger;
  f.loc = t.loc;
  if (t.text == "ll") f.base = ir::PayloadBase::kLink;
  else if (t.text == "nh") f.base = ir::PayloadBase::kNetwork;
  else if (t.text == "th") f.base = ir::PayloadBase::kTransport;
  else if (t.text == "ih") f.base = ir::PayloadBase::kInner;
  else return Error(t.loc, absl::StrCat("unknown payload base '@", t.text, "'"),
                    ir::DidYouMean(t.text, {"ll", "nh", "th", "ih"}));
  uint32_t nums[2];
  if (!ParseOffsetLength(0xffffff, "raw payload", nums)) return false;
  f.off_bits = nums[0];
  f.len_bits = nums[1];
  if (f.len_bits == 0 || f.LoadLen() > 16) {
    return Error(t.loc, "unsupported raw payload length");
  }
  if (t.text == "th") f.dep = Dep::kNone;
  *field = f;
  return true;
}

bool Parser::ParseLhs(Lhs* lhs) {
  lhs->loc = Peek().loc;
  Field f;
  if (!ParseField(&f)) return false;
  lhs->fields.push_back(f);
  while (AtWord(".")) {
    Next();
    if (!ParseField(&f)) return false;
    lhs->fields.push_back(f);
  }
  if (lhs->fields.size() > 1 || AtWord("map")) {
    for (const Field& x : lhs->fields) {
      // Without `ip`/`ip6` the address size is only known from the family,
      // which nft refuses inside concatenations and map keys.
      if (x.ct_plain_addr) {
        return Error(x.loc, "ct saddr/daddr of unknown size in a concatenation or map "
                            "(use 'ct original ip saddr')");
      }
    }
  }
  while (!failed_) {
    const Token& t = Peek();
    std::string op = t.text;
    bool is_and = (t.kind == Tok::kPunct && op == "&") || (t.kind == Tok::kWord && op == "and");
    bool is_or = (t.kind == Tok::kPunct && op == "|") || (t.kind == Tok::kWord && op == "or");
    bool is_xor = (t.kind == Tok::kPunct && op == "^") || (t.kind == Tok::kWord && op == "xor");
    bool is_shift = (t.kind == Tok::kPunct && (op == "<<" || op == ">>")) ||
                    (t.kind == Tok::kWord && (op == "lshift" || op == "rshift"));
    if (is_shift) return Error(t.loc, "unsupported shift in a match");
    if (!is_and && !is_or && !is_xor) break;
    if (lhs->fields.size() != 1) return Error(t.loc, "unsupported binary operation on a concatenation");
    Next();
    U128 v = 0;
    if (!ParseBinopOperand(lhs->fields[0], &v)) return false;
    lhs->has_binop = true;
    if (is_and) {
      lhs->and_mask &= v;
      lhs->xor_val &= v;
    } else if (is_or) {
      lhs->and_mask &= ~v;
      lhs->xor_val |= v;
    } else {
      lhs->xor_val ^= v;
    }
  }
  return !failed_;
}

bool Parser::ParseBinopOperand(const Field& f, U128* out) {
  if (AcceptPunct("(")) {
    if (!ParseConstExpr(f, out)) return false;
    return ExpectPunct(")");
  }
  Item item;
  if (!ParseItem(f, &item)) return false;
  if (item.kind != Item::Kind::kValue || item.lo.is_str) {
    return Error(item.loc, "expected a constant");
  }
  *out = item.lo.num;
  return true;
}

// value ( '|' value )*  (flag combinations such as `syn | ack`)
bool Parser::ParseConstExpr(const Field& f, U128* out) {
  *out = 0;
  do {
    U128 v = 0;
    if (!ParseBinopOperand(f, &v)) return false;
    *out |= v;
  } while (AcceptPunct("|"));
  return true;
}

bool Parser::ParseItem(const Field& f, Item* item) {
  const Token& t = Peek();
  item->loc = t.loc;
  if (t.kind == Tok::kPunct && t.text == "(") {
    Next();
    U128 v = 0;
    if (!ParseConstExpr(f, &v)) return false;
    if (!ExpectPunct(")")) return false;
    item->kind = Item::Kind::kValue;
    item->lo.num = v;
    return true;
  }
  if (t.kind == Tok::kString) {
    if (f.type != DType::kString) {
      // Quoted symbols ("ssh") are fine for non-string types too.
      std::optional<Value> v = ParseValue(f.type, t.text, f.len_bits);
      if (!v) return Error(t.loc, absl::StrCat("invalid value \"", t.text, "\""));
      Next();
      item->lo = *v;
      // "A"-"B": a range of quoted values (`meta hour "21:00"-"02:00"`).
      if (AtWord("-") && PeekAt(1).kind == Tok::kString) {
        Next();
        const Token& e = Peek();
        std::optional<Value> hi = ParseValue(f.type, e.text, f.len_bits);
        if (!hi) return Error(e.loc, absl::StrCat("invalid value \"", e.text, "\""));
        Next();
        item->kind = Item::Kind::kRange;
        item->hi = hi->num;
        if (item->hi < item->lo.num) {
          // Local hours map to UTC with a wrap at midnight: nft swaps the
          // ends and matches outside them.
          if (f.type != DType::kHour) return Error(item->loc, "range end is below its start");
          std::swap(item->lo.num, item->hi);
          item->outside = true;
        }
      }
      return true;
    }
    if (t.text.size() > 15 && t.text.find('*') == std::string::npos) {
      return Error(t.loc, "interface name too long");
    }
    if (t.text.empty()) return Error(t.loc, "empty string");
    item->lo.is_str = true;
    item->lo.str = Next().text;
    return true;
  }
  if (t.kind != Tok::kWord) return ErrorUnexpected("a value");
  std::string w = t.text;
  if (f.type == DType::kString) {
    item->lo.is_str = true;
    item->lo.str = Next().text;
    return true;
  }
  uint32_t bits = f.len_bits;
  if (std::optional<Value> v = ParseValue(f.type, w, bits)) {
    if (f.type == DType::kDay && v->num > 6) {
      return Error(item->loc, "day must be 0..6 (Sunday..Saturday)");
    }
    Next();
    item->lo = *v;
    // `syn | ack`: flag values combine into one constant.
    while (AtPunct("|")) {
      Next();
      U128 more = 0;
      if (!ParseBinopOperand(f, &more)) return false;
      item->lo.num |= more;
    }
    return true;
  }
  if (IsPayloadProto(w) || w == "meta" || w == "ct" || IsUnqualifiedMeta(w) ||
      IsUnsupportedStatement(w) || w == "osf") {
    return Error(item->loc, "unsupported non-constant operand");
  }
  if (w == "*") return Error(item->loc, "unsupported catch-all element '*'");
  // lo-hi
  Value lo;
  U128 hi = 0;
  if (SplitAt(w, '-', [&](std::string_view a, std::string_view b) {
        auto va = ParseValue(f.type, a, bits);
        auto vb = ParseValue(f.type, b, bits);
        if (!va || !vb) return false;
        lo = *va;
        hi = vb->num;
        return true;
      })) {
    Next();
    if (hi < lo.num) return Error(item->loc, "range end is below its start");
    item->kind = Item::Kind::kRange;
    item->lo = lo;
    item->hi = hi;
    return true;
  }
  // value/len
  size_t slash = w.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    auto va = ParseValue(f.type, w.substr(0, slash), bits);
    auto plen = ParseNumber(w.substr(slash + 1));
    if (va && plen) {
      if (*plen > bits) return Error(item->loc, "prefix length too large");
      Next();
      item->kind = Item::Kind::kPrefix;
      item->lo = *va;
      item->prefix = static_cast<uint32_t>(*plen);
      return true;
    }
  }
  std::vector<std::string_view> names = SymbolNames(f.type);
  if (ParseNumber(w)) {
    return Error(item->loc, absl::StrCat("value '", w, "' exceeds the ", bits, "-bit field"));
  }
  return Error(item->loc, absl::StrCat("invalid value '", w, "'"),
               names.empty() ? "" : ir::DidYouMean(w, names));
}

bool Parser::ParseConcatItem(const std::vector<Field>& fields,
                             std::vector<Item>* items) {
  items->clear();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) {
      if (!AtWord(".")) return ErrorUnexpected("'.' in a concatenation");
      Next();
    }
    Item it;
    if (!ParseItem(fields[i], &it)) return false;
    items->push_back(it);
  }
  return true;
}

// The lexer keeps `25:accept` (and `::1:accept`) as one word; in a map
// element split it at the last ':' unless the whole word is a key value.
void Parser::SplitMapWord(const SetType& st) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord || st.fields.empty()) return;
  size_t colon = t.text.rfind(':');
  if (colon == std::string::npos || colon == 0 || t.text.size() == 1) return;
  std::string left_text = t.text.substr(0, colon);
  std::string right_text = t.text.substr(colon + 1);
  bool alpha = !right_text.empty() && std::isalpha(static_cast<unsigned char>(right_text[0]));
  if (st.verdict_map && !alpha && !right_text.empty()) return;
  const Field& last = st.fields.back();
  if (st.fields.size() == 1 && ParseValue(last.type, t.text, last.len_bits)) return;
  if (st.fields.size() == 1 && !alpha && t.text.find('/') != std::string::npos) return;
  Token left = t, sep = t, right = t;
  left.text = left_text;
  sep.kind = Tok::kPunct;
  sep.text = ":";
  sep.loc.col += colon;
  right.text = right_text;
  right.loc.col += colon + 1;
  right.space_before = false;
  std::vector<Token> repl = {left, sep};
  if (!right.text.empty()) repl.push_back(right);
  toks_.erase(toks_.begin() + pos_);
  toks_.insert(toks_.begin() + pos_, repl.begin(), repl.end());
}

bool Parser::ParseMapValue(const SetType& st, Element* e) {
  if (st.verdict_map) {
    ir::Verdict v;
    if (!ParseVerdict(&v)) return false;
    e->verdict = v;
    return true;
  }
  Item it;
  if (!ParseItem(st.data, &it)) return false;
  if (it.kind != Item::Kind::kValue) return Error(it.loc, "unsupported range as map data");
  e->data = it.lo;
  return true;
}

// `{ a, b-c, d/24, e . f, k : v }` with newlines allowed; nested sets and
// $variables that hold sets are flattened.
bool Parser::ParseSetElements(const SetType& st, std::vector<Element>* elems) {
  if (!ExpectPunct("{")) return false;
  while (!failed_) {
    SkipNewlines();
    if (AcceptPunct("}")) return true;
    if (AtPunct("{")) {
      if (!ParseSetElements(st, elems)) return false;
    } else {
      Element e;
      e.loc = Peek().loc;
      if (st.is_map) SplitMapWord(st);
      if (AtWord("*")) {
        Next();  // catch-all: an element with an empty key
      } else if (!ParseConcatItem(st.fields, &e.key)) {
        return false;
      }
      // Element options nft prints back: ignore what does not match.
      if (AtWord("limit") || AtWord("quota") || AtWord("ct") || AtWord("last")) {
        return Error(Peek().loc, absl::StrCat("unsupported element statement '", Peek().text, "'"));
      }
      while (AtWord("timeout") || AtWord("expires") || AtWord("comment") ||
             AtWord("counter")) {
        std::string opt = Next().text;
        if (opt == "counter") {
          if (AcceptWord("packets")) {
            Next();
            if (!AcceptWord("bytes")) return ErrorUnexpected("'bytes'");
            Next();
          }
          continue;
        }
        Next();
      }
      if (st.is_map) {
        if (!AcceptPunct(":")) {
          // The lexer keeps `22:accept` as one word; handled in ParseItem
          // only for non-colon types, so accept a stand-alone ':' word.
          if (!AtWord(":")) return ErrorUnexpected("':' and a map value");
          Next();
        }
        if (!ParseMapValue(st, &e)) return false;
      }
      elems->push_back(std::move(e));
    }
    SkipNewlines();
    if (AcceptPunct(",")) continue;
    SkipNewlines();
    if (AcceptPunct("}")) return true;
    return ErrorUnexpected("',' or '}'");
  }
  return false;
}

bool Parser::ParseMatch(ir::Rule& rule) {
  Lhs lhs;
  if (!ParseLhs(&lhs)) return false;
  const Token& opt = Peek();
  RelOp op = RelOp::kImplicit;
  static const std::pair<std::string_view, RelOp> kOps[] = {
      {"==", RelOp::kEq}, {"!=", RelOp::kNeq}, {"<", RelOp::kLt},
      {">", RelOp::kGt},  {"<=", RelOp::kLte}, {">=", RelOp::kGte},
      {"!", RelOp::kNot}};
  static const std::pair<std::string_view, RelOp> kWordOps[] = {
      {"eq", RelOp::kEq}, {"ne", RelOp::kNeq}, {"lt", RelOp::kLt},
      {"gt", RelOp::kGt}, {"le", RelOp::kLte}, {"ge", RelOp::kGte}};
  ir::SourceLoc op_loc = opt.loc;
  if (opt.kind == Tok::kPunct) {
    for (const auto& [s, o] : kOps) {
      if (s == opt.text) {
        op = o;
        Next();
        break;
      }
    }
  } else if (opt.kind == Tok::kWord) {
    for (const auto& [s, o] : kWordOps) {
      if (s == opt.text) {
        op = o;
        Next();
        break;
      }
    }
  }
  if (AtStmtEnd()) return ErrorUnexpected("a value to match");
  if (AtWord("set")) {
    if (op != RelOp::kImplicit) return Error(op_loc, "unexpected operator before 'set'");
    Next();
    return ParsePayloadSet(rule, lhs);
  }
  const std::vector<Field>& fields = lhs.fields;
  bool concat = fields.size() > 1;
  const Field& f0 = fields[0];
  SetType st;
  st.fields = SetKeyFields(fields);

  // vmap { k : verdict } / vmap @name
  if (AcceptWord("vmap")) {
    if (op != RelOp::kImplicit) return Error(op_loc, "unexpected operator before vmap");
    st.is_map = true;
    st.verdict_map = true;
    std::string set_name;
    ir::SourceLoc sloc = Peek().loc;
    if (Peek().kind == Tok::kSetRef) {
      set_name = Next().text;
      const ir::Set* s = table_->FindSet(set_name);
      if (s == nullptr || !s->verdict_map) {
        return Error(sloc, absl::StrCat("no verdict map '", set_name, "'"));
      }
    } else {
      std::vector<Element> elems;
      if (!ParseSetElements(st, &elems)) return false;
      if (!AddAnonSet(rule, st, elems, sloc, &set_name)) return false;
    }
    const ir::Set* vs = table_->FindSet(set_name);
    for (const ir::Set& x : pending_sets_) {
      if (x.name == set_name) vs = &x;
    }
    if (!EmitKeyLoads(rule, fields, vs)) return false;
    ir::Lookup lk;
    lk.sreg = 1;
    lk.set = set_name;
    lk.dreg = ir::kVerdictReg;
    Emit(rule, lk, lhs.loc);
    return true;
  }
  if (AtWord("map")) return Error(Peek().loc, "unsupported map expression in a match");

  // Collect the right-hand side.
  std::vector<Element> elems;
  std::string named_set;
  bool is_set = false;
  ir::SourceLoc rhs_loc = Peek().loc;
  std::optional<U128> flag_mask;  // `a / b`
  if (Peek().kind == Tok::kSetRef) {
    named_set = Next().text;
    const ir::Set* s = table_->FindSet(named_set);
    if (s == nullptr) {
      std::vector<std::string_view> names;
      for (const ir::Set& x : table_->sets) {
        if (!x.anonymous()) names.push_back(x.name);
      }
      return Error(rhs_loc, absl::StrCat("no set '", named_set, "' in table '", table_->name, "'"),
                   ir::DidYouMean(named_set, names));
    }
    uint32_t key_len = 0;
    for (const Field& f : fields) {
      // A shifted-down bitfield is as wide as its value (ip6 dscp: 1 byte).
      uint32_t len = IsShiftedBitfield(f) ? (f.len_bits + 7) / 8 : f.LoadLen();
      key_len += concat ? Pad4(len) : len;
    }
    if (s->key_len != key_len) {
      return Error(rhs_loc, absl::StrCat("set '", named_set, "' has a ", s->key_len,
                                         "-byte key, the expression is ", key_len, " bytes"));
    }
    is_set = true;
  } else if (AtPunct("{")) {
    if (!ParseSetElements(st, &elems)) return false;
    if (elems.empty()) return Error(rhs_loc, "empty set");
    is_set = !(elems.size() == 1 && !concat && !elems[0].key.empty());
  } else {
    do {
      Element e;
      e.loc = Peek().loc;
      SkipNewlines();
      if (!ParseConcatItem(fields, &e.key)) return false;
      elems.push_back(std::move(e));
    } while (AcceptPunct(","));
    if (AtWord("/") && IsBitmask(f0.type) && !concat) {
      Next();
      U128 m = 0;
      do {
        U128 v = 0;
        if (!ParseBinopOperand(f0, &v)) return false;
        m |= v;
      } while (AcceptPunct(","));
      flag_mask = m;
    }
    if (elems.size() > 1) {
      if (IsBitmask(f0.type) && !concat) {
        // `syn,ack` on a flag type is one value: any of the flags.
        Element merged = elems[0];
        for (const Element& e : elems) {
          if (e.key[0].kind != Item::Kind::kValue) return Error(e.loc, "unexpected range in a flag list");
          merged.key[0].lo.num |= e.key[0].lo.num;
        }
        elems = {merged};
      } else {
        is_set = true;
      }
    }
  }

  if (is_set && op != RelOp::kImplicit && op != RelOp::kEq && op != RelOp::kNeq) {
    return Error(op_loc, "unsupported operator with a set");
  }
  if (op == RelOp::kNot && !IsBitmask(f0.type)) {
    return Error(op_loc, "'!' needs a flag type (use '!=')");
  }
  if (lhs.has_binop && op == RelOp::kNot) return Error(op_loc, "'!' after a binary operation");

  // `x ^ c == v` → `x == v ^ c`: nft moves a pure xor to the constant.
  if (lhs.has_binop && !concat && !is_set && lhs.xor_val != 0 &&
      (lhs.and_mask & BitsMask(f0.len_bits)) == BitsMask(f0.len_bits) &&
      elems[0].key[0].kind == Item::Kind::kValue && !elems[0].key[0].lo.is_str &&
      (op == RelOp::kImplicit || op == RelOp::kEq || op == RelOp::kNeq)) {
    elems[0].key[0].lo.num ^= lhs.xor_val & BitsMask(f0.len_bits);
    lhs.has_binop = false;
  }

  // `meta protocol ip` / `meta nfproto ipv4` in a table of that family is
  // always true: nft drops it. (nft's stmt_reduce drops `meta protocol`
  // when it meets the next statement: the last statement of a rule stays.)
  const bool last_statement = AtStmtEnd() || AtWord("comment");
  if (!concat && !is_set && !lhs.has_binop && f0.kind == Field::Kind::kMeta &&
      !(f0.meta == ir::MetaKey::kProtocol && last_statement) &&
      (f0.meta == ir::MetaKey::kProtocol || f0.meta == ir::MetaKey::kNfProto) &&
      (op == RelOp::kImplicit || op == RelOp::kEq) &&
      elems[0].key[0].kind == Item::Kind::kValue &&
      (table_->family == ir::Family::kIp || table_->family == ir::Family::kIp6)) {
    bool v4 = table_->family == ir::Family::kIp;
    U128 own = f0.meta == ir::MetaKey::kProtocol ? (v4 ? 0x0800 : 0x86dd) : (v4 ? 2 : 10);
    if (elems[0].key[0].lo.num == own) {
      ctx_.net = v4 ? 4 : 6;
      return true;
    }
  }

  // A bitfield under a mask: nft takes the field's value (isolated and
  // shifted down), then masks it; a prefix is such a mask:
  // `ip dscp 1/6` → `ip dscp & 0x3f == 1` → & 0xfc, >> 2, & 0x3f, cmp 1.
  if (!concat && !is_set && f0.kind == Field::Kind::kPayload && f0.Shift() > 0 &&
      (lhs.has_binop || elems[0].key[0].kind == Item::Kind::kPrefix) &&
      elems[0].key[0].kind != Item::Kind::kRange) {
    return EmitBitfieldMaskMatch(rule, f0, lhs, ToCmp(op), elems[0].key[0]);
  }

  // Dependencies, then loads into consecutive registers.
  for (const Field& f : fields) {
    if (!EmitDeps(rule, f)) return false;
  }
  bool set_interval = false;
  if (is_set) {
    if (!named_set.empty()) {
      const ir::Set* s = table_->FindSet(named_set);
      set_interval = s != nullptr && s->interval();
    } else {
      for (const Element& e : elems) {
        for (const Item& it : e.key) set_interval |= it.kind != Item::Kind::kValue;
      }
    }
  }

  // Byte-aligned prefix on a byte-aligned field: nft loads only the prefix
  // bytes: `ip saddr 192.168.2.0/24` → load 3b, cmp eq.
  if (!is_set && !concat && !lhs.has_binop && elems[0].key[0].kind == Item::Kind::kPrefix &&
      !f0.NeedsMask() && !f0.host_order && elems[0].key[0].prefix % 8 == 0 &&
      elems[0].key[0].prefix > 0 && f0.kind == Field::Kind::kPayload &&
      (op == RelOp::kImplicit || op == RelOp::kEq || op == RelOp::kNeq)) {
    const Item& it = elems[0].key[0];
    uint32_t n = it.prefix / 8;
    EmitLoad(rule, f0, 1, n);
    ir::Bytes full = Encode(f0, it.lo, f0.LoadLen());
    ir::Cmp c;
    c.op = op == RelOp::kNeq ? ir::CmpOp::kNeq : ir::CmpOp::kEq;
    c.sreg = 1;
    c.data.assign(full.begin(), full.begin() + n);
    Emit(rule, c, it.loc);
    return true;
  }

  // The same for ct addresses: full load, compare the prefix bytes only.
  if (!is_set && !concat && !lhs.has_binop && elems[0].key[0].kind == Item::Kind::kPrefix &&
      !f0.host_order && elems[0].key[0].prefix % 8 == 0 && elems[0].key[0].prefix > 0 &&
      f0.kind == Field::Kind::kCt &&
      (op == RelOp::kImplicit || op == RelOp::kEq || op == RelOp::kNeq)) {
    const Item& it = elems[0].key[0];
    EmitLoad(rule, f0, 1, f0.LoadLen());
    ir::Bytes full = Encode(f0, it.lo, f0.LoadLen());
    ir::Cmp c;
    c.op = op == RelOp::kNeq ? ir::CmpOp::kNeq : ir::CmpOp::kEq;
    c.sreg = 1;
    c.data.assign(full.begin(), full.begin() + it.prefix / 8);
    Emit(rule, c, it.loc);
    return true;
  }

  int word = 0;
  for (const Field& f : fields) {
    ir::Reg reg = ir::RegForWord(word);
    EmitLoad(rule, f, reg, f.LoadLen());
    // Field mask, user mask, prefix mask: one bitwise, as nft merges them.
    U128 mask = BitsMask(f.len_bits);
    U128 xr = 0;
    bool need = f.NeedsMask();
    if (!concat && lhs.has_binop) {
      mask &= lhs.and_mask;
      xr = lhs.xor_val & BitsMask(f.len_bits);
      need = true;
    }
    if (!concat && !is_set && elems[0].key[0].kind == Item::Kind::kPrefix) {
      uint32_t p = elems[0].key[0].prefix;
      mask &= BitsMask(f.len_bits) & ~BitsMask(f.len_bits - p);
      need = true;
    }
    if (!concat && !is_set && flag_mask) {
      mask &= *flag_mask;
      need = true;
    }
    bool implicit_flags = !concat && !is_set && IsBitmask(f.type) && !flag_mask &&
                          !lhs.has_binop && (op == RelOp::kImplicit || op == RelOp::kNot) &&
                          elems[0].key[0].kind == Item::Kind::kValue;
    if (implicit_flags) {
      mask &= elems[0].key[0].lo.num;
      need = true;
    }
    if (need) {
      ir::Bitwise b;
      b.sreg = b.dreg = reg;
      b.len = f.LoadLen();
      b.mask = EncodeNum(f, mask, f.LoadLen());
      b.xor_ = EncodeNum(f, xr, f.LoadLen());
      Emit(rule, b, f.loc);
    }
    // A named set holds the field's values (`type dscp`), and so does a
    // concatenation: shift it down.
    if ((!named_set.empty() || concat) && IsShiftedBitfield(f)) {
      EmitBitfieldShiftDown(rule, f, reg, f.LoadLen());
    }
    if (concat && set_interval && f.host_order && f.LoadLen() > 1) {
      ir::Byteorder bo;
      bo.op = ir::ByteorderOp::kHton;
      bo.sreg = bo.dreg = reg;
      bo.len = bo.size = f.LoadLen();
      Emit(rule, bo, f.loc);
    }
    if (implicit_flags) {
      ir::Cmp c;
      c.op = op == RelOp::kNot ? ir::CmpOp::kEq : ir::CmpOp::kNeq;
      c.sreg = reg;
      c.data = ir::Bytes(f.LoadLen(), 0);
      Emit(rule, c, rhs_loc);
      return true;
    }
    word += Pad4(f.LoadLen()) / 4;
  }

  if (is_set) {
    if (named_set.empty() && !AddAnonSet(rule, st, elems, rhs_loc, &named_set)) return false;
    const ir::Set* s = nullptr;
    for (const ir::Set& x : pending_sets_) {
      if (x.name == named_set) s = &x;
    }
    if (s == nullptr) s = table_->FindSet(named_set);
    if (!concat && f0.host_order && f0.LoadLen() > 1 && s != nullptr && s->interval()) {
      ir::Byteorder bo;
      bo.op = ir::ByteorderOp::kHton;
      bo.len = bo.size = f0.LoadLen();
      Emit(rule, bo, rhs_loc);
    }
    ir::Lookup lk;
    lk.sreg = 1;
    lk.set = named_set;
    lk.invert = op == RelOp::kNeq;
    Emit(rule, lk, rhs_loc);
    if (!concat && !elems.empty() && (op == RelOp::kImplicit || op == RelOp::kEq)) {
      NoteSetContext(f0, elems);
    }
    return true;
  }

  // A single value, range or prefix (possibly a concatenation of values).
  const Element& e = elems[0];
  if (concat) {
    ir::Cmp c;
    c.op = ToCmp(op);
    c.sreg = 1;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (e.key[i].kind != Item::Kind::kValue) {
        return Error(e.key[i].loc, "unsupported range in a concatenation outside a set");
      }
      ir::Bytes b = Encode(fields[i], e.key[i].lo, fields[i].LoadLen());
      b.resize(Pad4(fields[i].LoadLen()), 0);
      c.data.insert(c.data.end(), b.begin(), b.end());
    }
    c.data.resize(c.data.size() - (Pad4(fields.back().LoadLen()) - fields.back().LoadLen()));
    Emit(rule, c, e.loc);
    return true;
  }
  const Item& it = e.key[0];
  uint32_t len = f0.LoadLen();
  bool swap = f0.host_order && len > 1 && (IsOrdering(op) || it.kind == Item::Kind::kRange);
  if (swap) {
    ir::Byteorder bo;
    bo.op = ir::ByteorderOp::kHton;
    bo.len = bo.size = len;
    Emit(rule, bo, it.loc);
  }
  auto enc = [&](U128 v) {
    if (swap) return EncodeNumber(v, len, false);
    return EncodeNum(f0, v, len);
  };
  if (it.kind == Item::Kind::kRange) {
    if (op != RelOp::kImplicit && op != RelOp::kEq && op != RelOp::kNeq) {
      return Error(op_loc, "unsupported operator with a range");
    }
    ir::Range r;
    r.negate = op == RelOp::kNeq;
    r.sreg = 1;
    if (it.outside) r.negate = !r.negate;
    r.from = enc(it.lo.num);
    r.to = enc(it.hi);
    Emit(rule, r, it.loc);
    return true;
  }
  ir::Cmp c;
  c.op = ToCmp(op);
  c.sreg = 1;
  if (it.lo.is_str) {
    std::string s = it.lo.str;
    bool wildcard = !s.empty() && s.back() == '*' && (s.size() < 2 || s[s.size() - 2] != '\\');
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '*') continue;
      out.push_back(s[i]);
    }
    if (wildcard) out.pop_back();
    if (out.size() > len) return Error(it.loc, "string too long");
    c.data.assign(out.begin(), out.end());
    if (!wildcard) c.data.resize(len, 0);
    if (c.data.empty()) {
      // `"*"` matches every name: nft emits nothing to compare.
      return true;
    }
  } else if (it.kind == Item::Kind::kPrefix) {
    U128 m = BitsMask(f0.len_bits) & ~BitsMask(f0.len_bits - it.prefix);
    c.data = EncodeNum(f0, it.lo.num & m, len);
  } else {
    U128 v = it.lo.num;
    if (lhs.has_binop) v &= BitsMask(f0.len_bits);
    c.data = enc(v);
  }
  Emit(rule, c, it.loc);
  if (op == RelOp::kImplicit || op == RelOp::kEq) NoteContext(f0, it);
  return true;
}

bool Parser::EmitBitfieldMaskMatch(ir::Rule& rule, const Field& f, const Lhs& lhs, ir::CmpOp op,
                                   const Item& it) {
  const uint32_t len = f.LoadLen();
  if (!EmitValueSource(rule, f, len)) return false;
  // The value is in host order now (EmitValueSource byte-swaps 2 bytes).
  U128 mask = BitsMask(f.len_bits);
  U128 xr = 0;
  if (lhs.has_binop) {
    mask &= lhs.and_mask;
    xr = lhs.xor_val & BitsMask(f.len_bits);
  }
  if (it.kind == Item::Kind::kPrefix) mask &= ~BitsMask(f.len_bits - it.prefix);
  ir::Bitwise b;
  b.len = len;
  b.mask = EncodeNumber(mask, len, true);
  b.xor_ = EncodeNumber(xr, len, true);
  Emit(rule, b, f.loc);
  ir::Cmp c;
  c.op = op;
  c.sreg = 1;
  U128 v = it.kind == Item::Kind::kPrefix ? it.lo.num & mask : it.lo.num & BitsMask(f.len_bits);
  c.data = EncodeNumber(v, len, true);
  Emit(rule, c, it.loc);
  return true;
}

// Dependencies and loads of a set/map key into consecutive registers, with
// bit-field masks, and host-order fields byte-swapped for interval sets.
bool Parser::EmitKeyLoads(ir::Rule& rule, const std::vector<Field>& fields, const ir::Set* set) {
  const bool interval = set != nullptr && set->interval();
  const bool named = set != nullptr && !set->anonymous();
  for (const Field& f : fields) {
    if (!EmitDeps(rule, f)) return false;
  }
  int word = 0;
  for (const Field& f : fields) {
    ir::Reg reg = ir::RegForWord(word);
    EmitLoad(rule, f, reg, f.LoadLen());
    if (f.NeedsMask()) {
      ir::Bitwise b;
      b.sreg = b.dreg = reg;
      b.len = f.LoadLen();
      b.mask = EncodeNum(f, BitsMask(f.len_bits), f.LoadLen());
      b.xor_ = ir::Bytes(f.LoadLen(), 0);
      Emit(rule, b, f.loc);
    }
    if ((named || fields.size() > 1) && IsShiftedBitfield(f)) {
      EmitBitfieldShiftDown(rule, f, reg, f.LoadLen());
    }
    if (interval && f.host_order && f.LoadLen() > 1) {
      ir::Byteorder bo;
      bo.op = ir::ByteorderOp::kHton;
      bo.sreg = bo.dreg = reg;
      bo.len = bo.size = f.LoadLen();
      Emit(rule, bo, f.loc);
    }
    word += Pad4(f.LoadLen()) / 4;
  }
  return true;
}

// `meta mark set KEY map { k : v, ... }` / `map @name`
bool Parser::ParseMapStmtSource(ir::Rule& rule, const Lhs& src, const Field& target) {
  ir::SourceLoc loc = Next().loc;  // map
  // `ip6 saddr & ::ffff map { ... }`: the key is masked after its load.
  const bool masked_key = src.has_binop && src.fields.size() == 1 && !src.fields[0].NeedsMask();
  if (src.has_binop && !masked_key) {
    return Error(loc, "unsupported binary operation before map");
  }
  SetType st;
  st.fields = SetKeyFields(src.fields);
  st.is_map = true;
  st.data = target;
  std::string name;
  if (Peek().kind == Tok::kSetRef) {
    name = Next().text;
    const ir::Set* s = table_->FindSet(name);
    if (s == nullptr || !(s->flags & ir::kSetMap) || s->verdict_map) {
      return Error(toks_[pos_ - 1].loc, absl::StrCat("no map '", name, "'"));
    }
  } else {
    std::vector<Element> elems;
    if (!ParseSetElements(st, &elems)) return false;
    if (elems.empty()) return Error(loc, "empty map");
    if (!AddAnonSet(rule, st, elems, loc, &name)) return false;
  }
  const ir::Set* s = table_->FindSet(name);
  for (const ir::Set& x : pending_sets_) {
    if (x.name == name) s = &x;
  }
  if (!EmitKeyLoads(rule, src.fields, s)) return false;
  if (masked_key) {
    const Field& f = src.fields[0];
    ir::Bitwise b;
    b.len = f.LoadLen();
    b.mask = EncodeNum(f, src.and_mask & BitsMask(f.len_bits), b.len);
    b.xor_ = EncodeNum(f, src.xor_val & BitsMask(f.len_bits), b.len);
    Emit(rule, b, loc);
  }
  ir::Lookup lk;
  lk.sreg = 1;
  lk.set = name;
  lk.dreg = 1;
  Emit(rule, lk, loc);
  return true;
}

bool Parser::ParseSetStmt(ir::Rule& rule, const Field& target, bool is_ct) {
  ir::SourceLoc loc = Peek().loc;
  uint32_t len = target.LoadLen();
  const Token& t = Peek();
  bool source_field =
      t.kind == Tok::kWord && (IsPayloadProto(t.text) || t.text == "meta" ||
                               t.text == "ct" || IsUnqualifiedMeta(t.text));
  // `KEY map { ... }` / `KEY map @m` comes before the first '{' or '@'.
  bool is_map = false;
  for (size_t i = 0; source_field && i < 16; ++i) {
    const Token& a = PeekAt(i);
    if (a.kind == Tok::kNewline || a.kind == Tok::kEnd || a.kind == Tok::kSetRef ||
        (a.kind == Tok::kPunct && (a.text == "{" || a.text == ";" || a.text == "}"))) {
      break;
    }
    if (a.kind == Tok::kWord && a.text == "map") is_map = true;
  }
  const bool expr_start = source_field || Peek().kind == Tok::kWord || AtPunct("(");
  if (IsValueExprTarget(target) && !is_map && expr_start) {
    ValueExpr v;
    if (!ParseValueExpr(target, 1, &v)) return false;
    return EmitValueExpr(rule, target, v, 1, loc) && EmitSetTarget(rule, target, is_ct);
  }
  if (source_field) {
    Lhs src;
    if (!ParseLhs(&src)) return false;
    if (AtWord("map")) {
      if (!ParseMapStmtSource(rule, src, target)) return false;
      return EmitSetTarget(rule, target, is_ct);
    }
    if (src.fields.size() != 1) return Error(loc, "unsupported concatenation as a value");
    const Field& f = src.fields[0];
    if (f.kind == Field::Kind::kPayload && f.LoadLen() == 1 && len > 1) {
      return EmitNarrowSource(rule, src, len) && EmitSetTarget(rule, target, is_ct);
    }
    if (f.LoadLen() != len || f.NeedsMask()) {
      return Error(loc, "unsupported value expression of a different size");
    }
    if (AtWord("map")) return Error(Peek().loc, "unsupported map expression");
    if (!EmitDeps(rule, f)) return false;
    EmitLoad(rule, f, 1, len);
    if (src.has_binop) {
      ir::Bitwise b;
      b.len = len;
      b.mask = EncodeNum(f, src.and_mask & BitsMask(f.len_bits), len);
      b.xor_ = EncodeNum(f, src.xor_val & BitsMask(f.len_bits), len);
      Emit(rule, b, loc);
    }
  } else {
    U128 v = 0;
    Item first;
    if (!ParseSetConstant(target, &first, &v)) return false;
    ir::Immediate imm;
    imm.dreg = 1;
    imm.data = first.lo.is_str ? Encode(target, first.lo, len) : EncodeNum(target, v, len);
    Emit(rule, imm, loc);
  }
  return EmitSetTarget(rule, target, is_ct);
}

// The value of a set statement: a constant, possibly folded (`0x11 xor
// 0x1331`, `0x12 or 0x11`, flag lists `ecn, cwr`). `first` keeps the first
// item (strings), `v` the folded number.
bool Parser::ParseSetConstant(const Field& target, Item* first, U128* v) {
  if (!ParseItem(target, first)) return false;
  if (first->kind != Item::Kind::kValue) return Error(first->loc, "expected a value");
  *v = first->lo.num;
  while (IsBitmask(target.type) && AcceptPunct(",")) {
    Item more;
    if (!ParseItem(target, &more)) return false;
    if (more.kind != Item::Kind::kValue) return Error(more.loc, "expected a value");
    *v |= more.lo.num;
  }
  while (!failed_) {
    const Token& o = Peek();
    std::string s = o.text;
    char kind = 0;
    if (s == "and" || (o.kind == Tok::kPunct && s == "&")) kind = '&';
    else if (s == "or" || (o.kind == Tok::kPunct && s == "|")) kind = '|';
    else if (s == "xor" || (o.kind == Tok::kPunct && s == "^")) kind = '^';
    if (kind == 0) break;
    Next();
    U128 w = 0;
    if (!ParseBinopOperand(target, &w)) return false;
    *v = kind == '&' ? (*v & w) : kind == '|' ? (*v | w) : (*v ^ w);
  }
  return !failed_;
}

// The checksums a write to `f` must keep right, as nft chooses them: the
// header's own checksum (ip, tcp, icmp), and the transport checksum for
// fields of the pseudo-header (addresses, ip protocol), every udp field and
// raw writes to the transport payload. False for headers nft's rules for
// are not written down here.
static bool WriteChecksum(const Field& f, ir::PayloadWrite* w) {
  const bool ip4 = f.base == ir::PayloadBase::kNetwork && f.dep == Dep::kIpv4;
  const bool ip6 = f.base == ir::PayloadBase::kNetwork && f.dep == Dep::kIpv6;
  const bool l4 = f.base == ir::PayloadBase::kTransport &&
                  (f.dep == Dep::kL4 || f.dep == Dep::kL4Ipv4);
  if (ip4) {
    w->csum_type = ir::kCsumInet;
    w->csum_offset = 10;
    if (f.off_bits == 72 || f.off_bits == 96 || f.off_bits == 128) w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  if (ip6) {
    if (f.off_bits == 64 || f.off_bits == 192) w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  if (l4 && f.l4proto == 6) {
    w->csum_type = ir::kCsumInet;
    w->csum_offset = 16;
    return true;
  }
  if (l4 && f.l4proto == 1) {
    w->csum_type = ir::kCsumInet;
    w->csum_offset = 2;
    return true;
  }
  if (l4 && (f.l4proto == 17 || f.l4proto == 136)) {
    w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  if (f.base == ir::PayloadBase::kInner) {
    w->csum_flags = ir::kCsumL4PseudoHdr;
    return true;
  }
  return f.base == ir::PayloadBase::kLink;
}

// `FIELD set VALUE` on a header field: [ payload write ]. A field that does
// not fill whole bytes (or, when a checksum is updated, whole 16-bit words)
// is merged into the bytes around it: load, mask out the field, xor in the
// value, write. VALUE is a constant or the same field with `& | ^` constants.
bool Parser::ParsePayloadSet(ir::Rule& rule, const Lhs& lhs) {
  const Field& f = lhs.fields[0];
  ir::SourceLoc loc = lhs.loc;
  if (lhs.fields.size() != 1 || lhs.has_binop || f.kind != Field::Kind::kPayload) {
    return Error(loc, "unsupported target of a set statement");
  }
  ir::PayloadWrite w;
  if (!WriteChecksum(f, &w)) {
    return Error(loc, "unsupported statement: setting a field of this header");
  }
  const U128 field_mask = BitsMask(f.len_bits);
  U128 and_mask = 0, xor_val = 0;  // new field = (field & and_mask) ^ xor_val
  bool from_field = false;
  const Token& t = Peek();
  if (t.kind == Tok::kSetRef ||
      (t.kind == Tok::kWord && (IsPayloadProto(t.text) || t.text == "meta" || t.text == "ct" ||
                                IsUnqualifiedMeta(t.text)))) {
    Lhs src;
    if (!ParseLhs(&src)) return false;
    const Field& g = src.fields[0];
    if (src.fields.size() != 1 || g.kind != f.kind || g.base != f.base ||
        g.off_bits != f.off_bits || g.len_bits != f.len_bits) {
      return Error(src.loc, "unsupported value: only the same field with '&', '|', '^' constants");
    }
    and_mask = src.and_mask & field_mask;
    xor_val = src.xor_val & field_mask;
    from_field = true;
  } else {
    Item first;
    U128 v = 0;
    if (!ParseSetConstant(f, &first, &v)) return false;
    if (first.lo.is_str) return Error(first.loc, "expected a number");
    if ((v & ~field_mask) != 0) return Error(first.loc, "value does not fit the field");
    xor_val = v;
  }
  if (!EmitDeps(rule, f)) return false;
  uint32_t byte_off = f.LoadOffset();
  uint32_t size = f.LoadLen();
  uint32_t shift = f.Shift();
  const bool csum = w.csum_type != 0 || w.csum_flags != 0;
  if (csum && size % 2 != 0) {
    ++size;
    if (byte_off % 2 != 0) {
      --byte_off;
    } else {
      shift += 8;
    }
  }
  if (!from_field && shift == 0 && size * 8 == f.len_bits) {
    ir::Immediate imm;
    imm.dreg = 1;
    imm.data = EncodeNumber(xor_val, size, false);
    Emit(rule, imm, loc);
  } else {
    EmitLoad(rule, f, 1, size);
    std::get<ir::PayloadLoad>(rule.exprs.back().expr).offset = byte_off;
    const U128 all = BitsMask(size * 8);
    ir::Bitwise b;
    b.len = size;
    b.mask = EncodeNumber((~(field_mask << shift) | (and_mask << shift)) & all, size, false);
    b.xor_ = EncodeNumber((xor_val << shift) & all, size, false);
    Emit(rule, b, loc);
  }
  w.base = f.base;
  w.offset = byte_off;
  w.len = size;
  w.sreg = 1;
  Emit(rule, w, loc);
  return true;
}

// A one-byte header field as the value of a wider key (`meta mark set ip
// dscp | 4`): load, isolate and shift the bits down, then apply the binop
// on the register as a host-order word (one byte reads the same either way).
bool Parser::EmitNarrowSource(ir::Rule& rule, const Lhs& src, uint32_t len) {
  if (!EmitValueSource(rule, src.fields[0], len)) return false;
  if (src.has_binop) {
    U128 all = BitsMask(len * 8);
    ir::Bitwise b;
    b.len = len;
    b.mask = EncodeNumber(src.and_mask & all, len, true);
    b.xor_ = EncodeNumber(src.xor_val & all, len, true);
    Emit(rule, b, src.loc);
  }
  return true;
}

bool Parser::EmitSetTarget(ir::Rule& rule, const Field& target, bool is_ct) {
  if (is_ct) {
    ir::CtSet s;
    s.key = target.ct;
    s.sreg = 1;
    s.dir = target.dir;
    Emit(rule, s, target.loc);
  } else {
    ir::MetaSet s;
    s.key = target.meta;
    s.sreg = 1;
    Emit(rule, s, target.loc);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Lowering helpers

void Parser::Emit(ir::Rule& rule, ir::Expr e, ir::SourceLoc loc) {
  rule.exprs.push_back(ir::Node{std::move(e), loc});
}

void Parser::EmitLoad(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len) {
  switch (f.kind) {
    case Field::Kind::kPayload: {
      ir::PayloadLoad p;
      p.base = f.base;
      p.offset = f.LoadOffset();
      p.len = len;
      p.dreg = reg;
      Emit(rule, p, f.loc);
      return;
    }
    case Field::Kind::kMeta:
      Emit(rule, ir::MetaLoad{f.meta, reg}, f.loc);
      return;
    case Field::Kind::kCt:
      Emit(rule, ir::CtLoad{f.ct, reg, f.dir}, f.loc);
      return;
    case Field::Kind::kExthdr: {
      ir::Exthdr x;
      x.op = f.exthdr_op;
      x.type = f.exthdr_type;
      x.offset = f.LoadOffset();
      x.len = len;
      x.present = f.exthdr_present;
      x.dreg = reg;
      Emit(rule, x, f.loc);
      return;
    }
  }
}

ir::Bytes Parser::EncodeNum(const Field& f, U128 v, uint32_t len) {
  if (f.host_order) return EncodeNumber(v, len, true);
  return EncodeNumber(v << f.Shift(), len, false);
}

ir::Bytes Parser::Encode(const Field& f, const Value& v, uint32_t len) {
  if (v.is_str) {
    ir::Bytes b(len, 0);
    for (size_t i = 0; i < v.str.size() && i < len; ++i) b[i] = static_cast<uint8_t>(v.str[i]);
    return b;
  }
  return EncodeNum(f, v.num, len);
}

bool Parser::EmitNetDep(ir::Rule& rule, int net, ir::SourceLoc loc) {
  ir::Family fam = table_->family;
  if (ctx_.net == net) return true;
  if (ctx_.net != 0) return Error(loc, "conflicting network protocols in one rule");
  if (fam == ir::Family::kIp || fam == ir::Family::kIp6) {
    int own = fam == ir::Family::kIp ? 4 : 6;
    if (own != net) {
      return Error(loc, absl::StrCat("IPv", net, " expression in an ", ir::FamilyName(fam),
                                     " table"));
    }
    ctx_.net = net;
    return true;
  }
  if (ctx_.link && fam != ir::Family::kIp && fam != ir::Family::kIp6) {
    // With an Ethernet header established nft tests its ether type.
    Emit(rule, ir::PayloadLoad{ir::PayloadBase::kLink, 12, 2, 1}, loc);
    ir::Cmp c;
    c.sreg = 1;
    c.data = net == 4 ? ir::Bytes{0x08, 0x00} : ir::Bytes{0x86, 0xdd};
    Emit(rule, c, loc);
  } else if (fam == ir::Family::kInet) {
    Emit(rule, ir::MetaLoad{ir::MetaKey::kNfProto, 1}, loc);
    ir::Cmp c;
    c.sreg = 1;
    c.data = {static_cast<uint8_t>(net == 4 ? 2 : 10)};
    Emit(rule, c, loc);
  } else {
    Emit(rule, ir::MetaLoad{ir::MetaKey::kProtocol, 1}, loc);
    ir::Cmp c;
    c.sreg = 1;
    c.data = net == 4 ? ir::Bytes{0x08, 0x00} : ir::Bytes{0x86, 0xdd};
    Emit(rule, c, loc);
  }
  ctx_.net = net;
  return true;
}

bool Parser::EmitDeps(ir::Rule& rule, const Field& f) {
  if (!EmitL3L4Deps(rule, f)) return false;
  if (!f.icmp_types.empty() && ctx_.icmp_type_value >= 0 &&
      std::find(f.icmp_types.begin(), f.icmp_types.end(), ctx_.icmp_type_value) ==
          f.icmp_types.end()) {
    return Error(f.loc, "field does not exist in the ICMP type matched before");
  }
  if (f.icmp_types.empty() || ctx_.icmp_type) return true;
  // icmp id → [ load type ] [ lookup {echo-request, echo-reply} ]
  ctx_.icmp_type = true;
  Emit(rule, ir::PayloadLoad{ir::PayloadBase::kTransport, 0, 1, 1}, f.loc);
  if (f.icmp_types.size() == 1) {
    ir::Cmp c;
    c.sreg = 1;
    c.data = {f.icmp_types[0]};
    Emit(rule, c, f.loc);
    return true;
  }
  ir::Set set;
  set.name = FreshAnonName("__set");
  set.flags = ir::kSetAnonymous | ir::kSetConstant;
  set.key_len = 1;
  set.loc = f.loc;
  for (uint8_t t : f.icmp_types) {
    ir::SetElement e;
    e.key = {t};
    e.loc = f.loc;
    set.elements.push_back(e);
  }
  ir::Lookup lk;
  lk.sreg = 1;
  lk.set = set.name;
  pending_sets_.push_back(std::move(set));
  Emit(rule, lk, f.loc);
  return true;
}

// `meta l4proto` and `ip protocol`/`ip6 nexthdr`: matches that set the
// transport protocol context.
static bool IsL4ProtoField(const Field& f) {
  return (f.kind == Field::Kind::kMeta && f.meta == ir::MetaKey::kL4Proto) ||
         (f.kind == Field::Kind::kPayload && f.type == DType::kInetProto &&
          f.base == ir::PayloadBase::kNetwork);
}

// `icmp type` / `icmpv6 type`: the match that ICMP field dependencies check.
static bool IsIcmpTypeField(const Field& f) {
  return f.kind == Field::Kind::kPayload && f.base == ir::PayloadBase::kTransport &&
         f.off_bits == 0 && (f.type == DType::kIcmpType || f.type == DType::kIcmpv6Type);
}

bool Parser::EmitL3L4Deps(ir::Rule& rule, const Field& f) {
  ir::Family fam = table_->family;
  const bool l4_dep = f.dep == Dep::kL4 || f.dep == Dep::kL4Ipv4 || f.dep == Dep::kL4Ipv6;
  if (l4_dep && ctx_.l4_alternatives.size() > 1) {
    // nft: after `ip protocol { tcp, udp }` a tcp field may not hold.
    int other = ctx_.l4_alternatives[0] != f.l4proto ? ctx_.l4_alternatives[0]
                                                     : ctx_.l4_alternatives[1];
    return Error(f.loc, absl::StrCat("conflicting protocols specified: ",
                                     SymbolName(DType::kInetProto, other), " vs. ",
                                     SymbolName(DType::kInetProto, f.l4proto)));
  }
  switch (f.dep) {
    case Dep::kNone:
      return true;
    case Dep::kIpv4:
      return EmitNetDep(rule, 4, f.loc);
    case Dep::kIpv6:
      return EmitNetDep(rule, 6, f.loc);
    case Dep::kL4Ipv4:
    case Dep::kL4Ipv6: {
      int net = f.dep == Dep::kL4Ipv4 ? 4 : 6;
      // Either ICMP flavour may ride on either IP version (`meta nfproto
      // ipv4 icmpv6 type ...`): only a rule without a network protocol
      // gets the likely one (IPv4 for icmp, IPv6 for icmpv6).
      if (fam != ir::Family::kIp && fam != ir::Family::kIp6 && ctx_.net == 0 &&
          !EmitNetDep(rule, net, f.loc)) {
        return false;
      }
      if (fam == ir::Family::kNetdev || fam == ir::Family::kBridge) {
        // Without an L3 hook context nft tests the IP header's own field.
        if (ctx_.l4 == f.l4proto) return true;
        if (ctx_.l4 >= 0) return Error(f.loc, "conflicting transport protocols in one rule");
        int have = ctx_.net != 0 ? ctx_.net : net;
        Emit(rule, ir::PayloadLoad{ir::PayloadBase::kNetwork, have == 4 ? 9u : 6u, 1, 1}, f.loc);
        ir::Cmp c;
        c.sreg = 1;
        c.data = {f.l4proto};
        Emit(rule, c, f.loc);
        ctx_.l4 = f.l4proto;
        return true;
      }
      [[fallthrough]];
    }
    case Dep::kL4: {
      if (ctx_.l4 == f.l4proto) return true;
      if (ctx_.l4 >= 0) return Error(f.loc, "conflicting transport protocols in one rule");
      Emit(rule, ir::MetaLoad{ir::MetaKey::kL4Proto, 1}, f.loc);
      ir::Cmp c;
      c.sreg = 1;
      c.data = {f.l4proto};
      Emit(rule, c, f.loc);
      ctx_.l4 = f.l4proto;
      return true;
    }
    case Dep::kLink:
    case Dep::kVlan:
      if (!ctx_.link && fam != ir::Family::kBridge) {
        Emit(rule, ir::MetaLoad{ir::MetaKey::kIifType, 1}, f.loc);
        ir::Cmp c;
        c.sreg = 1;
        c.data = {0x01, 0x00};
        Emit(rule, c, f.loc);
      }
      ctx_.link = true;
      if (f.dep == Dep::kVlan && !ctx_.vlan && ctx_.ethertype >= 0) {
        return Error(f.loc, "vlan header after a non-vlan ether type match");
      }
      if (f.dep == Dep::kVlan && !ctx_.vlan) {
        Emit(rule, ir::PayloadLoad{ir::PayloadBase::kLink, 12, 2, 1}, f.loc);
        ir::Cmp c;
        c.sreg = 1;
        c.data = {0x81, 0x00};
        Emit(rule, c, f.loc);
        ctx_.vlan = true;
      }
      return true;
  }
  return true;
}

// nft (proto_ctx_update for each element of an anonymous set):
// `meta l4proto { tcp, udp }` records both; the last is the context.
// `icmp type { echo-reply, echo-request }` likewise leaves the last type
// as the context that `icmp id` checks.
void Parser::NoteSetContext(const Field& f, const std::vector<Element>& elems) {
  const bool l4 = IsL4ProtoField(f);
  const bool icmp_type = IsIcmpTypeField(f);
  if (!l4 && !icmp_type) return;
  for (const Element& e : elems) {
    if (e.key.size() != 1 || e.key[0].kind != Item::Kind::kValue || e.key[0].lo.is_str) continue;
    int v = static_cast<int>(e.key[0].lo.num);
    if (icmp_type) {
      ctx_.icmp_type = true;
      ctx_.icmp_type_value = v;
      continue;
    }
    auto& alt = ctx_.l4_alternatives;
    if (std::find(alt.begin(), alt.end(), v) == alt.end()) alt.push_back(v);
    ctx_.l4 = v;
  }
}

void Parser::NoteContext(const Field& f, const Item& item) {
  if (item.kind != Item::Kind::kValue || item.lo.is_str) return;
  if (IsIcmpTypeField(f)) {
    ctx_.icmp_type = true;
    ctx_.icmp_type_value = static_cast<int>(item.lo.num);
  }
  U128 v = item.lo.num;
  if (IsL4ProtoField(f)) ctx_.l4 = static_cast<int>(v);
  if (f.kind == Field::Kind::kMeta && f.meta == ir::MetaKey::kNfProto) {
    ctx_.net = v == 2 ? 4 : v == 10 ? 6 : ctx_.net;
  }
  bool ethertype = f.type == DType::kEtherType &&
                   (f.kind == Field::Kind::kMeta || f.base == ir::PayloadBase::kLink);
  if (ethertype) {
    if (v == 0x0800) ctx_.net = 4;
    if (v == 0x86dd) ctx_.net = 6;
    if (v == 0x8100 && f.kind == Field::Kind::kPayload) ctx_.vlan = true;
    if (f.kind == Field::Kind::kPayload && f.off_bits == 96) ctx_.ethertype = static_cast<int>(v);
  }
  if (f.kind == Field::Kind::kMeta && f.meta == ir::MetaKey::kIifType && v == 1) {
    ctx_.link = true;
  }
}

}  // namespace rulejit::frontends::nft
