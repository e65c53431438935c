// The IR reader's parsers of statements and of the expressions beyond
// plain loads and compares (log, reject, exthdr, queue, quota, NAT, fib,
// tcpmss, recent, hashlimit, string, checksum, flow_offload, objref, numgen, rt, synproxy,
// notrack): each reads the body its ir/printer.cc Body() prints.
#include <limits>
#include <vector>

#include "ir/reader_cursor.h"

namespace rulejit::ir::reader_internal {
namespace {

// What may follow a log prefix: "group G snaplen S qthreshold Q " or
// "(level L )(FLAG )*" with flags in the printer's order. Fills `e`.
bool ParseLogTail(std::string_view text, Log& e) {
  Cursor c(text, 0);
  if (c.TryLiteral("group ")) {
    e.group = c.Number("the group");
    c.Literal(" snaplen ");
    e.snaplen = c.Number("the snaplen");
    c.Literal(" qthreshold ");
    e.qthreshold = c.Number("the qthreshold");
    c.Literal(" ");
    return !c.failed() && c.AtEnd();
  }
  if (c.TryLiteral("level ")) {
    e.level = c.Number("the level");
    c.Literal(" ");
  }
  for (const auto& [bit, name] : kLogFlagNames) {
    if (c.Peek(absl::StrCat(name, " "))) {
      c.Literal(name);
      c.Literal(" ");
      e.flags |= bit;
    }
  }
  return !c.failed() && c.AtEnd();
}

// The log body is free text when it has a prefix (which may hold spaces), so
// it is parsed from the line as a whole: the prefix is the shortest text
// after "prefix " that leaves a valid tail. Consumes up to the final "]".
Expr ParseLog(Cursor& c) {
  std::string_view rest = c.Rest();
  if (rest.empty() || rest.back() != ']') {
    c.Skip(rest.size());
    c.Fail("expected ']' at the end of the line");
    return Log{};
  }
  std::string_view body = rest.substr(0, rest.size() - 1);
  Log e;
  constexpr std::string_view kPrefix = "prefix ";
  if (body.substr(0, kPrefix.size()) == kPrefix) {
    for (size_t p = kPrefix.size() + 1; p <= body.size(); ++p) {
      Log candidate;
      if (body[p - 1] != ' ' || !ParseLogTail(body.substr(p), candidate)) continue;
      candidate.prefix =
          std::string(body.substr(kPrefix.size(), p - 1 - kPrefix.size()));
      c.Skip(body.size());
      return candidate;
    }
    c.Fail("log prefix is not followed by a valid log tail");
    return e;
  }
  if (!ParseLogTail(body, e)) {
    c.Fail(absl::StrCat("expected log options (prefix, group, level, flags), "
                        "found ", c.Found()));
    return e;
  }
  c.Skip(body.size());
  return e;
}

Expr ParseReject(Cursor& c) {
  Reject e;
  c.Literal("type ");
  // NFT_REJECT_* types are 0..2 (RejectType).
  e.type = static_cast<RejectType>(c.Number("the reject type", 2));
  c.Literal(" code ");
  e.code = c.Number("the reject code");
  c.Literal(" ");
  return e;
}

// "write tcpopt reg 1 => 2b @ 2 + 2 ".
Expr ParseExthdrWrite(Cursor& c) {
  ExthdrWrite e;
  c.Literal("tcpopt reg ");
  e.sreg = c.Register();
  c.Literal(" => ");
  e.len = c.Number("the write length", 4);
  c.Literal("b @ ");
  e.type = static_cast<uint8_t>(c.Number("the option kind", 255));
  c.Literal(" + ");
  e.offset = c.Number("the offset", 255);
  c.Literal(" ");
  return e;
}

Expr ParseExthdr(Cursor& c) {
  if (c.TryLiteral("write ")) return ParseExthdrWrite(c);
  Exthdr e;
  c.Literal("load ");
  if (c.TryLiteral("ipv6 ")) {
    e.op = ExthdrOp::kIpv6;
  } else if (c.TryLiteral("tcpopt ")) {
    e.op = ExthdrOp::kTcpopt;
  } else {
    e.op = ExthdrOp::kSctp;
  }
  e.len = c.Number("the load length", 64);
  c.Literal("b @ ");
  e.type = static_cast<uint8_t>(c.Number("the header type", 255));
  c.Literal(" + ");
  e.offset = c.Number("the offset", 255);
  if (c.TryLiteral(" present")) e.present = true;
  c.Literal(" => reg ");
  e.dreg = c.Register();
  c.Literal(" ");
  return e;
}

// "saddr . iif oif present => reg 1 ": flags, result, present, register.
Expr ParseFib(Cursor& c) {
  static constexpr std::pair<std::string_view, uint32_t> kFlags[] = {
      {"saddr", kFibSaddr}, {"daddr", kFibDaddr}, {"mark", kFibMark},
      {"iif", kFibIif},     {"oif", kFibOif}};
  static constexpr std::pair<std::string_view, FibResult> kResults[] = {
      {"oifname", FibResult::kOifName}, {"oif", FibResult::kOif}, {"type", FibResult::kAddrType},
      {"addrclass6", FibResult::kXtAddrClass6}};
  Fib e;
  e.flags = 0;
  do {
    bool found = false;
    for (const auto& [name, bit] : kFlags) {
      if (c.TryLiteral(name)) {
        e.flags |= bit;
        found = true;
        break;
      }
    }
    if (!found) c.Fail("expected a fib flag: saddr, daddr, mark, iif or oif");
  } while (!c.failed() && c.TryLiteral(" . "));
  c.Literal(" ");
  bool found = false;
  for (const auto& [name, result] : kResults) {
    if (!c.failed() && c.TryLiteral(name)) {
      e.result = result;
      found = true;
      break;
    }
  }
  if (!found) c.Fail("expected a fib result: oif, oifname or type");
  if (c.TryLiteral(" present")) e.flags |= kFibPresent;
  c.Literal(" => reg ");
  e.dreg = c.Register();
  c.Literal(" ");
  return e;
}

// "load transparent => reg 1 " (cgroupv2: "load cgroupv2 level 2 => reg 1 ").
Expr ParseSocket(Cursor& c) {
  static constexpr std::pair<std::string_view, SocketKey> kKeys[] = {
      {"transparent", SocketKey::kTransparent}, {"mark", SocketKey::kMark},
      {"wildcard", SocketKey::kWildcard},       {"cgroupv2", SocketKey::kCgroupv2}};
  Socket e;
  c.Literal("load ");
  bool found = false;
  for (const auto& [name, key] : kKeys) {
    if (!found && !c.failed() && c.TryLiteral(name)) e.key = key, found = true;
  }
  if (!found) c.Fail("expected a socket key: transparent, mark, wildcard or cgroupv2");
  if (e.key == SocketKey::kCgroupv2) {
    c.Literal(" level ");
    e.level = static_cast<uint32_t>(c.Number("the cgroup level", 255));
  }
  c.Literal(" => reg ");
  e.dreg = c.Register();
  c.Literal(" ");
  return e;
}

// "ip addr reg 1 port reg 2 ", "port reg 1 ", TPROXY's "... else drop ".
Expr ParseTproxy(Cursor& c) {
  Tproxy e;
  if (c.TryLiteral("ip6 ")) {
    e.family = Family::kIp6;
  } else if (c.TryLiteral("ip ")) {
    e.family = Family::kIp;
  }
  if (c.TryLiteral("addr reg ")) {
    e.addr = c.Register();
    c.Literal(" ");
  }
  if (c.TryLiteral("port reg ")) {
    e.port = c.Register();
    c.Literal(" ");
  }
  if (c.TryLiteral("else drop ")) e.else_drop = true;
  return e;
}

// The first of `choices` (each word with its trailing space) at the
// cursor: its value goes to `out`; none fails with `expected`.
template <typename T, size_t N>
void ParseChoice(Cursor& c, const std::pair<std::string_view, T> (&choices)[N], T* out,
                 const char* expected) {
  for (const auto& [word, value] : choices) {
    if (c.TryLiteral(word)) {
      *out = value;
      return;
    }
  }
  c.Fail(expected);
}

// The Body(Recent) text of ir/printer.cc.
Expr ParseRecent(Cursor& c) {
  Recent e;
  static constexpr std::pair<std::string_view, RecentOp> kOps[] = {
      {"set ", RecentOp::kSet}, {"rcheck ", RecentOp::kCheck},
      {"update ", RecentOp::kUpdate}, {"remove ", RecentOp::kRemove}};
  ParseChoice(c, kOps, &e.op, "expected set, rcheck, update or remove");
  c.Literal("name ");
  e.name = std::string(c.Token("the table name"));
  c.Literal(" ");
  e.invert = c.TryLiteral("invert ");
  if (c.TryLiteral("seconds ")) {
    e.seconds = static_cast<uint32_t>(c.Number("the seconds", 0xffffffff));
    c.Literal(" ");
  }
  if (c.TryLiteral("hitcount ")) {
    e.hitcount = static_cast<uint32_t>(c.Number("the hit count", 0xffffffff));
    c.Literal(" ");
  }
  e.reap = c.TryLiteral("reap ");
  e.rttl = c.TryLiteral("rttl ");
  if (c.TryLiteral("rdest ")) {
    e.rdest = true;
  } else {
    c.Literal("rsource ");
  }
  c.Literal("mask ");
  e.mask = c.DataPieces();
  return e;
}

// The Body(Ipv6HeaderMatch) text of ir/printer.cc.
Expr ParseIpv6Header(Cursor& c) {
  Ipv6HeaderMatch e;
  c.Literal("flags 0x");
  const uint64_t flags = c.HexNumber("the header flags");
  if (flags > 0xff) c.Fail("the header flags are one byte");
  e.flags = static_cast<uint8_t>(flags);
  c.Literal(" ");
  e.invert = c.TryLiteral("invert ");
  e.soft = c.TryLiteral("soft ");
  return e;
}

// The Body(StringMatch) text of ir/printer.cc.
Expr ParseStringMatch(Cursor& c) {
  StringMatch e;
  c.Literal("algo ");
  e.algo = std::string(c.Token("the algorithm"));
  c.Literal(" from ");
  e.from = static_cast<uint16_t>(c.Number("the start offset", 65535));
  c.Literal(" to ");
  e.to = static_cast<uint16_t>(c.Number("the end offset", 65535));
  c.Literal(" len ");
  const size_t len = c.Number("the pattern length", 128);
  c.Literal(" pattern ");
  e.pattern = c.DataPieces();
  if (!c.failed() && (len == 0 || len > e.pattern.size() || e.pattern.size() - len >= 4)) {
    c.Fail("the pattern length does not fit its words");
  }
  if (!c.failed()) e.pattern.resize(len);
  e.icase = c.TryLiteral("icase ");
  e.invert = c.TryLiteral("invert ");
  return e;
}

// The Body(Hashlimit) text of ir/printer.cc.
Expr ParseHashlimit(Cursor& c) {
  Hashlimit e;
  constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
  auto number = [&](std::string_view name, uint64_t max) {
    c.Literal(name);
    const uint64_t v = c.Number(name, max);
    c.Literal(" ");
    return v;
  };
  c.Literal("name ");
  e.name = std::string(c.Token("the table name"));
  c.Literal(" mode ");
  static constexpr std::pair<std::string_view, uint32_t> kModes[] = {
      {"srcip", kHashlimitSrcIp}, {"srcport", kHashlimitSrcPort},
      {"dstip", kHashlimitDstIp}, {"dstport", kHashlimitDstPort}};
  if (!c.TryLiteral("none")) {
    do {
      uint32_t bit = 0;
      ParseChoice(c, kModes, &bit, "expected srcip, srcport, dstip or dstport");
      e.mode |= bit;
    } while (c.TryLiteral(","));
  }
  c.Literal(" ");
  e.avg = number("avg ", kMax64);
  e.burst = number("burst ", kMax64);
  e.invert = c.TryLiteral("invert ");
  e.bytes = c.TryLiteral("bytes ");
  if (c.TryLiteral("rate-match ")) {
    e.rate_match = true;
    e.interval = static_cast<uint32_t>(number("interval ", 0xffffffff));
  }
  e.srcmask = static_cast<uint8_t>(number("srcmask ", 128));
  e.dstmask = static_cast<uint8_t>(number("dstmask ", 128));
  e.size = static_cast<uint32_t>(number("size ", 0xffffffff));
  e.max = static_cast<uint32_t>(number("max ", 0xffffffff));
  e.gc_interval = static_cast<uint32_t>(number("gcinterval ", 0xffffffff));
  e.expire = static_cast<uint32_t>(number("expire ", 0xffffffff));
  return e;
}

// The Body(TimeMatch) text of ir/printer.cc.
Expr ParseTimeMatch(Cursor& c) {
  TimeMatch e;
  auto pair = [&](std::string_view name, uint32_t* lo, uint32_t* hi) {
    c.Literal(name);
    *lo = static_cast<uint32_t>(c.Number("a number"));
    c.Literal("-");
    *hi = static_cast<uint32_t>(c.Number("a number"));
    c.Literal(" ");
  };
  auto one = [&](std::string_view name, uint32_t* v) {
    c.Literal(name);
    *v = static_cast<uint32_t>(c.Number("a bit mask"));
    c.Literal(" ");
  };
  pair("date ", &e.date_start, &e.date_stop);
  pair("daytime ", &e.daytime_start, &e.daytime_stop);
  one("weekdays ", &e.weekdays);
  one("monthdays ", &e.monthdays);
  e.kerneltz = c.TryLiteral("kerneltz ");
  e.contiguous = c.TryLiteral("contiguous ");
  return e;
}

// "set N " or "clamp ".
Expr ParseTcpMss(Cursor& c) {
  TcpMss e;
  if (c.TryLiteral("clamp ")) {
    e.clamp = true;
    return e;
  }
  c.Literal("set ");
  e.mss = static_cast<uint16_t>(c.Number("the MSS", 65535));
  c.Literal(" ");
  return e;
}

Expr ParseQueue(Cursor& c) {
  Queue e;
  if (c.TryLiteral("sreg_qnum ")) {
    e.sreg_qnum = c.Register();
  } else {
    c.Literal("num ");
    e.num = static_cast<uint16_t>(c.Number("the queue number", 65535));
    if (c.TryLiteral("-")) {
      uint64_t last = c.Number("the last queue number", 65535);
      if (!c.failed() && (last <= e.num || last - e.num >= 65535)) {
        c.Fail("the last queue must follow the first, at most 65535 queues");
      }
      e.total = static_cast<uint16_t>(last - e.num + 1);
    }
  }
  c.Literal(" ");
  if (c.TryLiteral("bypass ")) e.flags |= kQueueBypass;
  if (c.TryLiteral("fanout ")) e.flags |= kQueueFanout;
  return e;
}

Expr ParseQuota(Cursor& c) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  Quota e;
  c.Literal("bytes ");
  e.bytes = c.Number("the quota in bytes", kMax);
  c.Literal(" consumed ");
  e.consumed = c.Number("the consumed bytes", kMax);
  c.Literal(" flags ");
  e.over = c.Number("the quota flags", 1) == 1;
  c.Literal(" ");
  return e;
}

// The optional "NAME reg R " pieces and "flags 0xF " of nat/masq/redir.
void ParseNatTail(Cursor& c, Nat& e, bool addresses) {
  auto reg = [&c](std::string_view name, std::optional<Reg>& r) {
    if (c.TryLiteral(absl::StrCat(Sv(name), " reg "))) {
      r = c.Register();
      c.Literal(" ");
    }
  };
  if (addresses) {
    reg("addr_min", e.addr_min);
    reg("addr_max", e.addr_max);
  }
  reg("proto_min", e.proto_min);
  reg("proto_max", e.proto_max);
  if (c.TryLiteral("flags 0x")) {
    std::string_view hex = c.Token("the nat flags");
    uint32_t flags = 0;
    // Canonical as printed: lowercase, no leading zeros, never 0x0.
    if (!c.failed() && (hex.size() > 8 || !absl::SimpleHexAtoi(Sv(hex), &flags) ||
                        flags == 0 || absl::StrFormat("%x", flags) != Sv(hex))) {
      c.Fail("expected the nat flags in hex (nonzero, lowercase, as printed)");
    }
    e.flags = flags;
    c.Literal(" ");
  }
}

Expr ParseNat(Cursor& c) {
  Nat e;
  if (c.TryLiteral("snat ")) {
    e.kind = NatKind::kSnat;
  } else {
    c.Literal("dnat ");
    e.kind = NatKind::kDnat;
  }
  if (c.TryLiteral("ip6 ")) {
    e.family = Family::kIp6;
  } else if (c.TryLiteral("inet ")) {
    e.family = Family::kInet;  // ports only, in an inet table
  } else {
    c.Literal("ip ");
  }
  ParseNatTail(c, e, true);
  return e;
}

Expr ParseMasq(Cursor& c) {
  Nat e;
  e.kind = NatKind::kMasq;
  ParseNatTail(c, e, false);
  return e;
}

Expr ParseRedir(Cursor& c) {
  Nat e;
  e.kind = NatKind::kRedir;
  ParseNatTail(c, e, false);
  return e;
}

Expr ParseFlowOffload(Cursor& c) {
  FlowOffload e;
  c.Literal("flowtable ");
  e.flowtable = std::string(c.Token("a flowtable name"));
  c.Literal(" ");
  return e;
}

Expr ParseObjref(Cursor& c) {
  Objref e;
  if (c.TryLiteral("sreg ")) {
    e.sreg = c.Register();
    c.Literal(" set ");
    e.set = std::string(c.Token("an object map name"));
  } else {
    c.Literal("type ");
    e.type = static_cast<uint32_t>(c.Number("the object type", 255));
    c.Literal(" name ");
    e.name = std::string(c.Token("an object name"));
  }
  c.Literal(" ");
  return e;
}

Expr ParseRt(Cursor& c) {
  Rt e;
  c.Literal("load tcpmss => reg ");
  e.dreg = c.Register();
  c.Literal(" ");
  return e;
}

Expr ParseSynproxy(Cursor& c) {
  Synproxy e;
  c.Literal("mss ");
  e.mss = static_cast<uint16_t>(c.Number("the mss", 65535));
  c.Literal(" wscale ");
  e.wscale = static_cast<uint8_t>(c.Number("the window scale", 255));
  c.Literal(" ");
  return e;
}

// "mod M " and, when not 0, "offset O ": the end of numgen and hash.
void ParseModOffset(Cursor& c, uint32_t* mod, uint32_t* offset) {
  c.Literal("mod ");
  *mod = static_cast<uint32_t>(c.Number("the modulus"));
  c.Literal(" ");
  if (c.TryLiteral("offset ")) {
    *offset = static_cast<uint32_t>(c.Number("the offset"));
    if (*offset == 0) c.Fail("offset 0 is not printed");
    c.Literal(" ");
  }
}

Expr ParseNumgen(Cursor& c) {
  Numgen e;
  c.Literal("reg ");
  e.dreg = c.Register();
  c.Literal(" = ");
  if (c.TryLiteral("random ")) {
    e.random = true;
  } else {
    c.Literal("inc ");
  }
  ParseModOffset(c, &e.mod, &e.offset);
  return e;
}

// The Body(Hash) text; the seed as libnftnl prints it (0x%x).
Expr ParseHash(Cursor& c) {
  Hash e;
  c.Literal("reg ");
  e.dreg = c.Register();
  c.Literal(" = ");
  if (c.TryLiteral("symhash()")) {
    e.symmetric = true;
  } else {
    c.Literal("jhash(reg ");
    e.sreg = c.Register();
    c.Literal(", ");
    e.len = static_cast<uint8_t>(c.Number("the key length", 255));
    if (c.TryLiteral(", 0x")) {
      e.seed = static_cast<uint32_t>(c.HexNumber("the seed"));
    }
    c.Literal(")");
  }
  c.Literal(" % ");
  ParseModOffset(c, &e.mod, &e.offset);
  return e;
}

// The Body(Dynset) text of ir/printer.cc; each "expr [ NAME BODY] " holds
// a counter, limit or quota.
Expr ParseDynset(Cursor& c) {
  Dynset e;
  static constexpr std::pair<std::string_view, DynsetOp> kOps[] = {
      {"add ", DynsetOp::kAdd}, {"update ", DynsetOp::kUpdate}, {"delete ", DynsetOp::kDelete}};
  ParseChoice(c, kOps, &e.op, "expected add, update or delete");
  c.Literal("reg_key ");
  e.sreg_key = c.Register();
  c.Literal(" set ");
  e.set = std::string(c.Token("the set name"));
  c.Literal(" ");
  if (c.TryLiteral("sreg_data ")) {
    e.sreg_data = c.Register();
    c.Literal(" ");
  }
  if (c.TryLiteral("timeout ")) {
    e.timeout_ms = c.Number("the timeout");
    if (e.timeout_ms == 0) c.Fail("timeout 0 is not printed");
    c.Literal("ms ");
  }
  while (!c.failed() && c.TryLiteral("expr [ ")) {
    std::string_view name = c.Token("an element expression");
    c.Literal(" ");
    if (name != "counter" && name != "limit" && name != "quota") {
      c.Fail("expected counter, limit or quota");
      break;
    }
    Expr inner = ExprParserFor(name)(c);
    c.Literal("] ");
    if (const auto* x = std::get_if<Counter>(&inner)) e.exprs.push_back(*x);
    if (const auto* x = std::get_if<Limit>(&inner)) e.exprs.push_back(*x);
    if (const auto* x = std::get_if<Quota>(&inner)) e.exprs.push_back(*x);
  }
  return e;
}

}  // namespace

BodyParser StatementParserFor(std::string_view name) {
  static constexpr std::pair<std::string_view, BodyParser> kParsers[] = {
      {"log", &ParseLog},             {"reject", &ParseReject},
      {"exthdr", &ParseExthdr},
      {"queue", &ParseQueue},         {"quota", &ParseQuota},
      {"nat", &ParseNat},             {"masq", &ParseMasq},
      {"redir", &ParseRedir},         {"fib", &ParseFib},
      {"tcpmss", &ParseTcpMss},       {"recent", &ParseRecent},
      {"hashlimit", &ParseHashlimit}, {"string", &ParseStringMatch},
      {"ipv6header", &ParseIpv6Header},
      {"time", &ParseTimeMatch},
      {"flow_offload", &ParseFlowOffload},
      {"objref", &ParseObjref},       {"numgen", &ParseNumgen},
      {"hash", &ParseHash},
      {"rt", &ParseRt},               {"synproxy", &ParseSynproxy},
      {"dynset", &ParseDynset},
      {"socket", &ParseSocket},       {"tproxy", &ParseTproxy},
      {"checksum", [](Cursor& c) -> Expr {
         c.Literal("fill ");
         return ChecksumFill{};
       }},
      {"notrack", [](Cursor&) -> Expr { return Notrack{}; }},
  };
  for (const auto& [n, parser] : kParsers) {
    if (n == name) return parser;
  }
  return nullptr;
}

}  // namespace rulejit::ir::reader_internal
