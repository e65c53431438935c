// The nft rule grammar: a rule is statements up to the end of the line,
// each parsed into an ast::Statement and handed to the linearizer before
// the next is parsed (so messages keep the order of the text); then nft's
// stmt_reduce merges adjacent payload compares (stmt_reduce.cc).
//
//   counter [packets N bytes M]         log [prefix S] [level L] [group N] ...
//   limit rate [over] N/UNIT [burst N]  reject [with tcp reset | icmp CODE ...]
//   accept | drop | jump CHAIN | ...    notrack
//
// Matches are parsed in match_parse.cc, meta/ct/payload set statements in
// set_stmt.cc, quota, queue and nat in statements.cc, flow add in
// flowtable.cc.
#include "frontends/nft/parser.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace rulejit::frontends::nft {
namespace {

const std::vector<std::string_view>& StatementWords() {
  static const std::vector<std::string_view> kWords = {
      "accept", "drop", "continue", "return", "jump", "goto", "counter",
      "log", "limit", "reject", "notrack", "meta", "ct", "ip", "ip6", "tcp",
      "udp", "udplite", "sctp", "dccp", "icmp", "icmpv6", "th", "ether",
      "vlan", "esp", "ah", "comp", "igmp", "mark", "iifname", "oifname",
      "iif", "oif", "comment", "quota", "queue", "snat", "dnat", "masquerade",
      "redirect", "fib", "flow", "add", "update", "delete", "meter", "socket", "tproxy"};
  return kWords;
}

}  // namespace

// ---------------------------------------------------------------------------
// Rules and statements

bool Parser::ParseRule(ir::Table& table, ir::Chain& chain, bool insert) {
  bindings_.clear();
  in_rule_ = true;
  table_ = &table;
  chain_ = &chain;
  lin_.StartRule(table);
  ir::Rule rule;
  rule.loc = Peek().loc;
  if (table.family == ir::Family::kArp || table.family == ir::Family::kBridge) {
    return Error(rule.loc, absl::StrCat("unsupported rule in a ", ir::FamilyName(table.family),
                                        " table (ARP packets and bridged frames are not modelled)"));
  }
  while (!sink_.failed && !AtStmtEnd()) {
    if (AcceptWord("comment")) {
      if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
      rule.comment = Next().text;
      continue;
    }
    if (!ParseStatement(rule)) return false;
  }
  if (sink_.failed) return false;
  if (rule.exprs.empty()) return ErrorUnexpected("a statement");
  MergePayloadCompares(rule);
  for (ir::Set& s : lin_.TakePendingSets()) table.sets.push_back(std::move(s));
  if (insert) {
    chain.rules.insert(chain.rules.begin(), std::move(rule));
  } else {
    chain.rules.push_back(std::move(rule));
  }
  in_rule_ = false;
  return ParseBindings(table);  // `chain` may move from here on
}

bool Parser::ParseStatement(ir::Rule& rule) {
  const Token& t = Peek();
  ir::SourceLoc loc = t.loc;
  if (t.kind == Tok::kSetRef) return ParseMatch(rule);
  if (t.kind != Tok::kWord) return ErrorUnexpected("a statement");
  const std::string w = t.text;
  if (w == "snat" || w == "dnat" || w == "masquerade" || w == "redirect") {
    return ParseNat(rule);
  }
  if (w == "tproxy") return ParseTproxy(rule);
  ast::Statement stmt;
  bool ok = true;
  if ((w == "counter" || w == "quota" || w == "limit" || w == "synproxy") &&
      PeekAt(1).kind == Tok::kWord && PeekAt(1).text == "name") {
    ok = ParseObjref(&stmt);  // a named object (objects.cc)
  } else if (w == "accept" || w == "drop" || w == "continue" || w == "return" ||
             w == "jump" || w == "goto") {
    ast::Verdict v{{}, loc};
    ok = ParseVerdict(&v.verdict);
    stmt = v;
  } else if (w == "counter") {
    ok = ParseCounter(&stmt);
  } else if (w == "log") {
    ok = ParseLog(&stmt);
  } else if (w == "limit") {
    ok = ParseLimit(&stmt);
  } else if (w == "reject") {
    ok = ParseReject(&stmt);
  } else if (w == "quota") {
    ok = ParseQuota(&stmt);
  } else if (w == "queue") {
    ok = ParseQueue(&stmt);
  } else if (w == "notrack") {
    Next();
    stmt = ast::Notrack{loc};
  } else if (w == "synproxy") {
    ok = ParseSynproxyStmt(&stmt);
  } else if (w == "flow" && (PeekAt(1).text == "add" || PeekAt(1).text == "offload")) {
    ok = ParseFlowOffload(&stmt);
  } else if ((w == "add" || w == "update" || w == "delete") &&
             PeekAt(1).kind == Tok::kSetRef) {
    ok = ParseDynset(&stmt);  // dynset.cc
  } else if (w == "set" && (PeekAt(1).text == "add" || PeekAt(1).text == "update")) {
    ok = ParseLegacySetStmt(&stmt);
  } else if (w == "meter") {
    ok = ParseMeter(&stmt);
  } else {
    return ParseOtherStatement(rule, w, loc);
  }
  return ok && lin_.Lower(rule, stmt);
}

// Matches, meta/ct set statements, and the errors for unknown words.
bool Parser::ParseOtherStatement(ir::Rule& rule, const std::string& w, ir::SourceLoc loc) {
  bool qualified = w == "meta" || w == "ct";
  if (qualified || IsUnqualifiedMeta(w)) {
    size_t key_at = qualified ? 1 : 0;
    if (w == "ct" && PeekAt(1).kind == Tok::kWord &&
        (PeekAt(1).text == "original" || PeekAt(1).text == "reply")) {
      key_at = 2;  // ct original zone set 1
    }
    const Token& after = PeekAt(key_at + 1);
    if (after.kind == Tok::kWord && after.text == "set" && SetsNamedObject(w)) {
      ast::Statement stmt;  // `ct helper set "h"`, `meta secmark set "s"` (objects.cc)
      return ParseObjref(&stmt) && lin_.Lower(rule, stmt);
    }
    if (after.kind == Tok::kWord && after.text == "set") {
      Field target;
      if (!ParseField(&target)) return false;
      Next();  // set
      return ParseSetStmt(rule, target, target.kind == Field::Kind::kCt);
    }
    return ParseMatch(rule);
  }
  if (IsPayloadProto(w) || w == "exthdr" || w == "fib" || w == "numgen" || w == "socket" ||
      w == "jhash" || w == "symhash" ||
      (w == "rt" && PeekAt(1).kind == Tok::kWord && !LookupIpv6ExthdrField(w, PeekAt(1).text))) {
    return ParseMatch(rule);
  }
  if (IsIpv6Exthdr(w) && PeekAt(1).kind == Tok::kWord &&
      (LookupIpv6ExthdrField(w, PeekAt(1).text) || (w == "srh" && PeekAt(1).text == "sid"))) {
    return ParseMatch(rule);
  }
  if (IsUnsupportedStatement(w)) {
    return Error(loc, absl::StrCat("unsupported statement or expression '", w, "'"),
                 UnsupportedWhy(w));
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
    if (AtPunct("{")) return SkipBindingBody(v);
    if (!ExpectIdentifier(&v->chain, "chain name")) return false;
  } else {
    return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown verdict '", w, "'"),
                 ir::DidYouMean(w, {"accept", "drop", "continue", "return", "jump", "goto"}));
  }
  return true;
}

bool Parser::ParseCounter(ast::Statement* out) {
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
  *out = ast::Counter{c, loc};
  return true;
}

// log [prefix S] [level L] [group N] [snaplen N] [queue-threshold N]
//     [flags all | tcp sequence,options | ip options | skuid | ether]
bool Parser::ParseLog(ast::Statement* out) {
  ast::Log s;
  s.loc = Next().loc;
  ir::Log& log = s.log;
  bool audit = false, other = false, nflog_option = false;
  while (!sink_.failed) {
    if (AcceptWord("prefix")) {
      const Token& p = Peek();
      if (p.kind != Tok::kString && p.kind != Tok::kWord) return ErrorUnexpected("log prefix");
      log.prefix = Next().text;
      other = true;
    } else if (AcceptWord("level")) {
      if (!ParseLogLevel(&log.level)) return false;
      audit = log.level == 8;
    } else if (AcceptWord("group")) {
      std::string g;
      if (!ExpectWord(&g, "log group")) return false;
      auto v = ParseNumber(g);
      if (!v || *v > 65535) return Error(toks_[pos_ - 1].loc, "bad log group");
      log.group = static_cast<uint32_t>(*v);
      other = true;
    } else if (AtWord("snaplen") || AtWord("queue-threshold")) {
      if (!ParseNflogOption(&log)) return false;
      other = nflog_option = true;
    } else if (AcceptWord("flags")) {
      if (!ParseLogFlags(&log.flags)) return false;
      other = true;
    } else {
      break;
    }
  }
  if (sink_.failed) return false;
  if (audit && other) return Error(s.loc, "log level audit takes no other options");
  if (log.group && log.flags != 0) return Error(s.loc, "log group does not take flags");
  if (log.group && log.level) return Error(s.loc, "log group does not take a level");
  if (nflog_option && !log.group) return Error(s.loc, "log snaplen and queue-threshold need a group");
  *out = s;
  return true;
}

// emerg .. debug (0..7), audit (8).
bool Parser::ParseLogLevel(std::optional<uint32_t>* level) {
  static const std::vector<std::string_view> kLevels = {
      "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
      "audit"};
  std::string l;
  ir::SourceLoc lloc = Peek().loc;
  if (!ExpectWord(&l, "log level")) return false;
  auto it = std::find(kLevels.begin(), kLevels.end(), l);
  if (it == kLevels.end()) {
    return Error(lloc, absl::StrCat("unknown log level '", l, "'"), ir::DidYouMean(l, kLevels));
  }
  *level = static_cast<uint32_t>(it - kLevels.begin());
  return true;
}

// nflog options: `snaplen N` (the copy length), `queue-threshold N` (the
// batching threshold).
bool Parser::ParseNflogOption(ir::Log* log) {
  const bool snaplen = Next().text == "snaplen";
  std::string n;
  if (!ExpectWord(&n, snaplen ? "snaplen" : "queue threshold")) return false;
  auto v = ParseNumber(n);
  if (!v || *v > (snaplen ? UINT32_MAX : 65535)) {
    return Error(toks_[pos_ - 1].loc,
                 absl::StrCat("bad log ", snaplen ? "snaplen" : "queue threshold"));
  }
  (snaplen ? log->snaplen : log->qthreshold) = static_cast<uint32_t>(*v);
  return true;
}

// The words after `log flags`: NF_LOG_* bits.
bool Parser::ParseLogFlags(uint32_t* flags) {
  std::string f;
  if (!ExpectWord(&f, "log flags")) return false;
  if (f == "all") {
    *flags |= kLogTcpSeq | kLogTcpOpt | kLogIpOpt | kLogUid | kLogMacDecode;
  } else if (f == "tcp") {
    std::string what;
    do {
      if (!ExpectWord(&what, "tcp log flag")) return false;
      if (what == "sequence") *flags |= kLogTcpSeq;
      else if (what == "options") *flags |= kLogTcpOpt;
      else return Error(toks_[pos_ - 1].loc, "unknown tcp log flag");
    } while (AcceptPunct(","));
  } else if (f == "ip") {
    if (!AcceptWord("options")) return ErrorUnexpected("'options'");
    *flags |= kLogIpOpt;
  } else if (f == "skuid") {
    *flags |= kLogUid;
  } else if (f == "ether") {
    *flags |= kLogMacDecode;
  } else {
    return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown log flag '", f, "'"),
                 ir::DidYouMean(f, {"all", "tcp", "ip", "skuid", "ether"}));
  }
  return true;
}

// limit rate [over|until] N[/UNIT] [burst N [packets|bytes|kbytes|mbytes]],
// or a byte rate `N BYTEUNIT/UNIT`.
bool Parser::ParseLimit(ast::Statement* out) {
  ast::Limit s;
  s.loc = Next().loc;
  if (!AcceptWord("rate")) {
    if (AtWord("name")) return Error(Peek().loc, "unsupported named limit");
    return ErrorUnexpected("'rate'");
  }
  ir::Limit& lim = s.limit;
  if (AcceptWord("over")) lim.over = true;
  else AcceptWord("until");
  if (!ParseRate(&lim)) return false;
  lim.burst = lim.bytes ? 0 : 5;
  if (AcceptWord("burst") && !ParseBurst(&lim)) return false;
  *out = s;
  return true;
}

// RATE[/UNIT] or RATE BYTEUNIT/UNIT, with optional spaces around '/'.
bool Parser::ParseRate(ir::Limit* lim) {
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
    lim->bytes = true;
    if (byte_unit == "bytes") mult = 1;
    else if (byte_unit == "kbytes") mult = 1024;
    else if (byte_unit == "mbytes") mult = 1024 * 1024;
    else return Error(wloc, absl::StrCat("unknown unit '", byte_unit, "'"));
  }
  lim->rate = static_cast<uint64_t>(*n) * mult;
  if (time_unit.empty()) return Error(wloc, "rate needs a time unit");
  static const std::pair<std::string_view, uint64_t> kUnits[] = {
      {"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400},
      {"week", 604800}};
  for (const auto& [name, secs] : kUnits) {
    if (name == time_unit) {
      lim->unit_seconds = secs;
      return true;
    }
  }
  return Error(wloc, absl::StrCat("unknown time unit '", time_unit, "'"),
               ir::DidYouMean(time_unit, {"second", "minute", "hour", "day", "week"}));
}

// `burst N [packets|bytes|kbytes|mbytes]`, in the rate's own unit.
bool Parser::ParseBurst(ir::Limit* lim) {
  std::string b;
  if (!ExpectWord(&b, "burst")) return false;
  auto n = ParseNumber(b);
  if (!n || *n > UINT32_MAX) return Error(toks_[pos_ - 1].loc, "bad burst");
  uint64_t mult = 1;
  bool byte_burst = false;
  if (AcceptWord("packets")) {
    if (lim->bytes) return Error(toks_[pos_ - 1].loc, "burst in packets for a byte rate");
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
  if (byte_burst && !lim->bytes) {
    return Error(toks_[pos_ - 1].loc, "burst in bytes for a packet rate");
  }
  if (*n * mult > UINT32_MAX) return Error(toks_[pos_ - 1].loc, "burst too large");
  lim->burst = static_cast<uint32_t>(*n * mult);
  return true;
}

bool Parser::ParseReject(ast::Statement* out) {
  ast::Reject r;
  r.loc = Next().loc;
  if (AcceptWord("with")) {
    r.with_loc = Peek().loc;
    if (!ExpectWord(&r.with_word, "reject type")) return false;
    const std::string& kind = r.with_word;
    if (kind == "tcp") {
      if (!AcceptWord("reset")) return ErrorUnexpected("'reset'");
      r.with = ast::Reject::With::kTcpReset;
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
      r.code = static_cast<uint32_t>(v->num);
      r.with = kind == "icmp" ? ast::Reject::With::kIcmp
               : kind == "icmpv6" ? ast::Reject::With::kIcmpv6 : ast::Reject::With::kIcmpx;
    } else {
      return Error(r.with_loc, absl::StrCat("unknown reject type '", kind, "'"),
                   ir::DidYouMean(kind, {"tcp", "icmp", "icmpv6", "icmpx"}));
    }
  }
  *out = r;
  return true;
}

}  // namespace rulejit::frontends::nft
