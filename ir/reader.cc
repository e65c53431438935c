// The IR reader: `[ ... ]` lines back into expressions (see ir/reader.h).
//
// A Cursor walks one line, consuming the printer's literal spelling piece by
// piece; the first mismatch records its column and message and turns every
// later call into a no-op, so each per-kind parser reads straight through
// like the printf it inverts. Numbers must be canonical (no leading zeros,
// lowercase hex) because anything else would not print back identically.
#include "ir/reader.h"

#include <array>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ir/diag.h"
#include "ir/reader_line.h"

namespace rulejit::ir {
namespace {

// Abseil here is built with its own string_view; Abseil string functions
// take that type, so std::string_view arguments go through this.
absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

class Cursor {
 public:
  Cursor(std::string_view text, size_t column_base)
      : text_(text), base_(column_base) {}

  bool failed() const { return error_.has_value(); }
  size_t error_column() const { return error_col_; }
  const std::string& error() const { return *error_; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  std::string_view Rest() const { return text_.substr(pos_); }
  size_t Column() const { return base_ + pos_ + 1; }
  void Skip(size_t n) { pos_ = std::min(text_.size(), pos_ + n); }

  // Records the first error only, at the current column.
  void Fail(std::string message) {
    if (failed()) return;
    error_ = std::move(message);
    error_col_ = Column();
  }

  // What comes next, for messages: the next token or "end of line".
  std::string Found() const {
    if (AtEnd()) return "end of line";
    std::string_view rest = Rest();
    return absl::StrCat("'", Sv(rest.substr(0, rest.find(' '))), "'");
  }

  bool Peek(std::string_view lit) const {
    return !failed() && Rest().substr(0, lit.size()) == lit;
  }

  bool TryLiteral(std::string_view lit) {
    if (!Peek(lit)) return false;
    pos_ += lit.size();
    return true;
  }

  void Literal(std::string_view lit) {
    if (failed() || TryLiteral(lit)) return;
    Fail(absl::StrCat("expected '", Sv(lit), "', found ", Found()));
  }

  // Characters up to the next space (or end); must be non-empty.
  std::string_view Token(std::string_view what) {
    if (failed()) return {};
    std::string_view rest = Rest();
    size_t n = std::min(rest.find(' '), rest.size());
    if (n == 0) {
      Fail(absl::StrCat("expected ", Sv(what), ", found ", Found()));
      return {};
    }
    pos_ += n;
    return rest.substr(0, n);
  }

  // A canonical decimal number <= max.
  uint64_t Number(std::string_view what,
                  uint64_t max = std::numeric_limits<uint32_t>::max()) {
    if (failed()) return 0;
    std::string_view rest = Rest();
    size_t n = 0;
    while (n < rest.size() && absl::ascii_isdigit(rest[n])) ++n;
    if (n == 0 || (n > 1 && rest[0] == '0')) {
      Fail(absl::StrCat("expected ", Sv(what), " (a decimal number), found ",
                        Found()));
      return 0;
    }
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t digit = rest[i] - '0';
      if (digit > max || value > (max - digit) / 10) {
        Fail(absl::StrCat(Sv(what), " is out of range (at most ", max, ")"));
        return 0;
      }
      value = value * 10 + digit;
    }
    pos_ += n;
    return value;
  }

  Reg Register() { return static_cast<Reg>(Number("a register number", 255)); }

  // "0x%08x" (lowercase) as 4 little-endian bytes appended to `out`.
  void DataWord(Bytes& out) {
    if (failed()) return;
    std::string_view rest = Rest();
    bool ok = rest.size() >= 10 && rest.substr(0, 2) == "0x" &&
              (rest.size() == 10 || rest[10] == ' ');
    uint32_t word = 0;
    for (size_t i = 2; ok && i < 10; ++i) {
      char ch = rest[i];
      int digit = absl::ascii_isdigit(ch)             ? ch - '0'
                  : (ch >= 'a' && ch <= 'f')          ? ch - 'a' + 10
                                                      : -1;
      ok = digit >= 0;
      word = (word << 4) | static_cast<uint32_t>(digit < 0 ? 0 : digit);
    }
    if (!ok) {
      Fail(absl::StrCat("expected a data word 0x%08x, found ", Found()));
      return;
    }
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(word >> (8 * i)));
    pos_ += 10;
  }

  // One or more "0x%08x " pieces (each followed by a space, as printed).
  Bytes DataPieces() {
    Bytes out;
    do {
      DataWord(out);
      Literal(" ");
    } while (!failed() && Peek("0x"));
    return out;
  }

 private:
  std::string_view text_;
  size_t base_;  // columns of leading whitespace trimmed off
  size_t pos_ = 0;
  std::optional<std::string> error_;
  size_t error_col_ = 0;
};

// "unknown meta key 'x'" plus a did-you-mean over the known names.
template <typename Key>
void FailUnknownKey(Cursor& c, std::string_view kind,
                    std::string_view name, Key last,
                    const char* (*name_of)(Key)) {
  std::vector<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    names.push_back(name_of(static_cast<Key>(i)));
  }
  std::string hint = DidYouMean(name, names);
  c.Fail(absl::StrCat("unknown ", Sv(kind), " key '", Sv(name), "'",
                      hint.empty() ? "" : absl::StrCat(" (did you mean '", hint, "'?)")));
}

// Parses KEY with `from_name`; on failure reports at the key's column.
template <typename Key>
Key ParseKey(Cursor& c, std::string_view kind, Key last,
             std::optional<Key> (*from_name)(std::string_view),
             const char* (*name_of)(Key)) {
  Cursor probe = c;  // to report at the key's start
  std::string_view name = c.Token(absl::StrCat("a ", Sv(kind), " key"));
  if (c.failed()) return Key{};
  std::optional<Key> key = from_name(name);
  if (!key) {
    FailUnknownKey(probe, kind, name, last, name_of);
    c = probe;
    return Key{};
  }
  return *key;
}

CtDir ParseDirSuffix(Cursor& c) {
  if (!c.TryLiteral(", dir ")) return CtDir::kNone;
  CtDir dir = CtDir::kNone;
  if (c.TryLiteral("original")) {
    dir = CtDir::kOriginal;
  } else if (c.TryLiteral("reply")) {
    dir = CtDir::kReply;
  } else {
    c.Fail(absl::StrCat("expected 'original' or 'reply', found ", c.Found()));
  }
  c.Literal(" ");
  return dir;
}

// --- one parser per expression kind (inverse of the printer's Body) --------

PayloadBase ParsePayloadBase(Cursor& c) {
  if (c.TryLiteral("link")) return PayloadBase::kLink;
  if (c.TryLiteral("network")) return PayloadBase::kNetwork;
  if (c.TryLiteral("transport")) return PayloadBase::kTransport;
  if (c.TryLiteral("inner")) return PayloadBase::kInner;
  if (c.TryLiteral("ip6t-transport")) return PayloadBase::kIp6tTransport;
  c.Fail(absl::StrCat("expected a payload base (link, network, transport, "
                      "inner, ip6t-transport), found ", c.Found()));
  return PayloadBase::kNetwork;
}

Expr ParsePayloadWrite(Cursor& c) {
  PayloadWrite e;
  c.Literal("reg ");
  e.sreg = c.Register();
  c.Literal(" => ");
  e.len = c.Number("the write length");
  c.Literal("b @ ");
  e.base = ParsePayloadBase(c);
  c.Literal(" header + ");
  e.offset = c.Number("the header offset");
  c.Literal(" csum_type ");
  e.csum_type = c.Number("the checksum type");
  c.Literal(" csum_off ");
  e.csum_offset = c.Number("the checksum offset");
  c.Literal(" csum_flags ");
  if (c.TryLiteral("0x1")) {
    e.csum_flags = kCsumL4PseudoHdr;
  } else if (!c.TryLiteral("0x0")) {
    c.Fail(absl::StrCat("expected checksum flags 0x0 or 0x1, found ", c.Found()));
  }
  c.Literal(" ");
  return e;
}

Expr ParsePayload(Cursor& c) {
  if (c.TryLiteral("write ")) return ParsePayloadWrite(c);
  if (!c.Peek("load ")) {
    c.Fail(absl::StrCat("unsupported payload operation ", c.Found(),
                        " (expected 'load' or 'write')"));
    return PayloadLoad{};
  }
  PayloadLoad e;
  c.Literal("load ");
  e.len = c.Number("the load length");
  c.Literal("b @ ");
  e.base = ParsePayloadBase(c);
  c.Literal(" header + ");
  e.offset = c.Number("the header offset");
  c.Literal(" => reg ");
  e.dreg = c.Register();
  c.Literal(" ");
  return e;
}

Expr ParseMeta(Cursor& c) {
  bool load = c.TryLiteral("load ");
  if (!load && !c.TryLiteral("set ")) {
    c.Fail(absl::StrCat("expected 'load' or 'set', found ", c.Found()));
    return MetaLoad{};
  }
  MetaKey key = ParseKey<MetaKey>(c, "meta", kLastMetaKey,
                                  &MetaKeyFromName, &MetaKeyName);
  if (load) {
    c.Literal(" => reg ");
    MetaLoad e{key, c.Register()};
    c.Literal(" ");
    return e;
  }
  c.Literal(" with reg ");
  MetaSet e{key, c.Register()};
  c.Literal(" ");
  return e;
}

Expr ParseCt(Cursor& c) {
  bool load = c.TryLiteral("load ");
  if (!load && !c.TryLiteral("set ")) {
    c.Fail(absl::StrCat("expected 'load' or 'set', found ", c.Found()));
    return CtLoad{};
  }
  CtKey key = ParseKey<CtKey>(c, "ct", CtKey::kId, &CtKeyFromName, &CtKeyName);
  if (load) {
    CtLoad e;
    e.key = key;
    c.Literal(" => reg ");
    e.dreg = c.Register();
    c.Literal(" ");
    e.dir = ParseDirSuffix(c);
    return e;
  }
  CtSet e;
  e.key = key;
  c.Literal(" with reg ");
  e.sreg = c.Register();
  c.Literal(" ");
  e.dir = ParseDirSuffix(c);
  return e;
}

Expr ParseBitwise(Cursor& c) {
  Bitwise e;
  c.Literal("reg ");
  e.dreg = c.Register();
  c.Literal(" = ( reg ");
  e.sreg = c.Register();
  c.Literal(" ");
  bool lshift = c.TryLiteral("<< ");
  if (lshift || c.TryLiteral(">> ")) {
    e.op = lshift ? BitwiseOp::kLshift : BitwiseOp::kRshift;
    Bytes amount = c.DataPieces();
    if (!c.failed() && amount.size() != 4) {
      c.Fail("a shift amount is one data word");
    }
    if (amount.size() == 4) {
      e.shift = amount[0] | amount[1] << 8 | amount[2] << 16 |
                static_cast<uint32_t>(amount[3]) << 24;
    }
    c.Literal(") ");
    return e;
  }
  // `( reg S OP reg S2 )`: a register operand.
  for (auto [text, op] : {std::pair{"& reg ", BitwiseOp::kAndReg},
                          std::pair{"| reg ", BitwiseOp::kOrReg},
                          std::pair{"^ reg ", BitwiseOp::kXorReg}}) {
    if (!c.TryLiteral(text)) continue;
    e.op = op;
    e.sreg2 = c.Register();
    c.Literal(" ) ");
    return e;
  }
  if (!c.TryLiteral("& ")) {
    c.Fail(absl::StrCat("bitwise operation ", c.Found(),
                        " is not in the IR (it has '& mask ^ xor', '<<', '>>', "
                        "'& | ^ reg')"));
    return e;
  }
  e.op = BitwiseOp::kMaskXor;
  e.mask = c.DataPieces();
  c.Literal(") ^ ");
  size_t xor_col = c.Column();
  e.xor_ = c.DataPieces();
  if (!c.failed() && e.xor_.size() != e.mask.size()) {
    c.Fail(absl::StrCat("xor has ", e.xor_.size() / 4, " words but mask has ",
                        e.mask.size() / 4, " (column ", xor_col, ")"));
  }
  e.len = static_cast<uint32_t>(e.mask.size());
  return e;
}

Expr ParseByteorder(Cursor& c) {
  Byteorder e;
  c.Literal("reg ");
  e.dreg = c.Register();
  c.Literal(" = ");
  if (c.TryLiteral("hton")) {
    e.op = ByteorderOp::kHton;
  } else if (c.TryLiteral("ntoh")) {
    e.op = ByteorderOp::kNtoh;
  } else {
    c.Fail(absl::StrCat("expected 'hton' or 'ntoh', found ", c.Found()));
  }
  c.Literal("(reg ");
  e.sreg = c.Register();
  c.Literal(", ");
  e.size = c.Number("the element size");
  c.Literal(", ");
  e.len = c.Number("the length");
  c.Literal(") ");
  return e;
}

std::optional<CmpOp> CmpOpFromName(std::string_view name) {
  static constexpr std::pair<std::string_view, CmpOp> kOps[] = {
      {"eq", CmpOp::kEq}, {"neq", CmpOp::kNeq}, {"lt", CmpOp::kLt},
      {"lte", CmpOp::kLte}, {"gt", CmpOp::kGt}, {"gte", CmpOp::kGte}};
  for (const auto& [n, op] : kOps) {
    if (n == name) return op;
  }
  return std::nullopt;
}

Expr ParseCmp(Cursor& c) {
  Cmp e;
  Cursor at_op = c;
  std::optional<CmpOp> op = CmpOpFromName(c.Token("a compare operator"));
  if (!op && !c.failed()) {
    at_op.Fail(absl::StrCat("unknown compare operator ", at_op.Found(),
                            " (eq, neq, lt, lte, gt, gte)"));
    c = at_op;
    return e;
  }
  e.op = op.value_or(CmpOp::kEq);
  c.Literal(" reg ");
  e.sreg = c.Register();
  c.Literal(" ");
  e.data = c.DataPieces();
  return e;
}

Expr ParseRange(Cursor& c) {
  Range e;
  if (c.TryLiteral("neq ")) {
    e.negate = true;
  } else if (!c.TryLiteral("eq ")) {
    c.Fail(absl::StrCat("expected 'eq' or 'neq', found ", c.Found()));
    return e;
  }
  c.Literal("reg ");
  e.sreg = c.Register();
  c.Literal(" ");
  Bytes both = c.DataPieces();
  if (!c.failed() && both.size() % 8 != 0) {
    c.Fail("a range needs the same number of words for FROM and TO");
  }
  size_t half = both.size() / 2;
  e.from.assign(both.begin(), both.begin() + half);
  e.to.assign(both.begin() + half, both.end());
  return e;
}

Expr ParseLookup(Cursor& c) {
  Lookup e;
  c.Literal("reg ");
  e.sreg = c.Register();
  c.Literal(" set ");
  e.set = std::string(c.Token("a set name"));
  c.Literal(" ");
  if (c.TryLiteral("dreg ")) {
    e.dreg = c.Register();
    c.Literal(" ");
  }
  if (c.TryLiteral("0x1 ")) e.invert = true;
  return e;
}

Expr ParseImmediate(Cursor& c) {
  Immediate e;
  c.Literal("reg ");
  e.dreg = c.Register();
  c.Literal(" ");
  if (e.dreg != kVerdictReg) {
    e.data = c.DataPieces();
    return e;
  }
  static constexpr std::pair<std::string_view, VerdictCode> kSimple[] = {
      {"accept ", VerdictCode::kAccept}, {"drop ", VerdictCode::kDrop},
      {"continue ", VerdictCode::kContinue}, {"return ", VerdictCode::kReturn},
      {"break ", VerdictCode::kBreak}};
  for (const auto& [text, code] : kSimple) {
    if (c.TryLiteral(text)) {
      e.verdict.code = code;
      return e;
    }
  }
  if (c.TryLiteral("jump -> ")) {
    e.verdict.code = VerdictCode::kJump;
  } else if (c.TryLiteral("goto -> ")) {
    e.verdict.code = VerdictCode::kGoto;
  } else {
    c.Fail(absl::StrCat("expected a verdict (accept, drop, continue, return, "
                        "jump -> CHAIN, goto -> CHAIN), found ", c.Found()));
    return e;
  }
  e.verdict.chain = std::string(c.Token("a chain name"));
  c.Literal(" ");
  return e;
}

Expr ParseCounter(Cursor& c) {
  Counter e;
  c.Literal("pkts ");
  e.packets = c.Number("the packet count", std::numeric_limits<uint64_t>::max());
  c.Literal(" bytes ");
  e.bytes = c.Number("the byte count", std::numeric_limits<uint64_t>::max());
  c.Literal(" ");
  return e;
}

Expr ParseLimit(Cursor& c) {
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400},
      {"week", 604800}};
  Limit e;
  c.Literal("rate ");
  e.rate = c.Number("the rate", std::numeric_limits<uint64_t>::max());
  c.Literal("/");
  bool named = false;
  for (const auto& [name, seconds] : kUnits) {
    if (c.TryLiteral(name)) {
      e.unit_seconds = seconds;
      named = true;
      break;
    }
  }
  if (!named) {
    // The printer's fallback for other periods: seconds as a number.
    e.unit_seconds = c.Number("the rate unit", std::numeric_limits<uint64_t>::max());
    for (const auto& [name, seconds] : kUnits) {
      if (e.unit_seconds == seconds) c.Fail(absl::StrCat("write '", Sv(name), "'"));
    }
    if (!c.failed() && e.unit_seconds == 0) c.Fail("the rate unit must be positive");
  }
  c.Literal(" burst ");
  e.burst = c.Number("the burst");
  c.Literal(" type ");
  if (c.TryLiteral("bytes")) {
    e.bytes = true;
  } else if (!c.TryLiteral("packets")) {
    c.Fail(absl::StrCat("expected 'packets' or 'bytes', found ", c.Found()));
  }
  c.Literal(" flags ");
  if (c.TryLiteral("0x1")) {
    e.over = true;
  } else if (!c.TryLiteral("0x0")) {
    c.Fail(absl::StrCat("expected limit flags 0x0 or 0x1 (over), found ",
                        c.Found()));
  }
  c.Literal(" ");
  return e;
}

constexpr std::pair<std::string_view, uint32_t> kLogFlags[] = {
    {"tcpseq", 0x01}, {"tcpopt", 0x02}, {"ipopt", 0x04},
    {"uid", 0x08},    {"macdecode", 0x20}};

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
  for (const auto& [name, bit] : kLogFlags) {
    if (c.Peek(absl::StrCat(Sv(name), " "))) {
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
  e.type = c.Number("the reject type");
  c.Literal(" code ");
  e.code = c.Number("the reject code");
  c.Literal(" ");
  return e;
}

Expr ParseExthdr(Cursor& c) {
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
      {"oifname", FibResult::kOifName}, {"oif", FibResult::kOif}, {"type", FibResult::kAddrType}};
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

// The Body(Recent) text of ir/printer.cc.
Expr ParseRecent(Cursor& c) {
  Recent e;
  static constexpr std::pair<std::string_view, RecentOp> kOps[] = {
      {"set ", RecentOp::kSet}, {"rcheck ", RecentOp::kCheck},
      {"update ", RecentOp::kUpdate}, {"remove ", RecentOp::kRemove}};
  bool found = false;
  for (const auto& [name, op] : kOps) {
    if (c.TryLiteral(name)) {
      e.op = op;
      found = true;
      break;
    }
  }
  if (!found) c.Fail("expected set, rcheck, update or remove");
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
  c.Literal("mod ");
  e.mod = static_cast<uint32_t>(c.Number("the modulus"));
  c.Literal(" ");
  if (c.TryLiteral("offset ")) {
    e.offset = static_cast<uint32_t>(c.Number("the offset"));
    if (e.offset == 0) c.Fail("offset 0 is not printed");
    c.Literal(" ");
  }
  return e;
}

using BodyParser = Expr (*)(Cursor&);

BodyParser ParserFor(std::string_view name) {
  static constexpr std::pair<std::string_view, BodyParser> kParsers[] = {
      {"payload", &ParsePayload},     {"meta", &ParseMeta},
      {"ct", &ParseCt},               {"bitwise", &ParseBitwise},
      {"byteorder", &ParseByteorder}, {"cmp", &ParseCmp},
      {"range", &ParseRange},         {"lookup", &ParseLookup},
      {"immediate", &ParseImmediate}, {"counter", &ParseCounter},
      {"limit", &ParseLimit},         {"log", &ParseLog},
      {"reject", &ParseReject},       {"exthdr", &ParseExthdr},
      {"queue", &ParseQueue},         {"quota", &ParseQuota},
      {"nat", &ParseNat},             {"masq", &ParseMasq},
      {"redir", &ParseRedir},         {"fib", &ParseFib},
      {"tcpmss", &ParseTcpMss},       {"recent", &ParseRecent},
      {"checksum", [](Cursor& c) -> Expr {
         c.Literal("fill ");
         return ChecksumFill{};
       }},
      {"redir", &ParseRedir},         {"flow_offload", &ParseFlowOffload},
      {"objref", &ParseObjref},         {"numgen", &ParseNumgen},
      {"notrack", [](Cursor&) -> Expr { return Notrack{}; }},
  };
  for (const auto& [n, parser] : kParsers) {
    if (n == name) return parser;
  }
  return nullptr;
}

}  // namespace

namespace reader_internal {

LineResult ParseLine(std::string_view line) {
  size_t lead = 0;
  while (lead < line.size() && absl::ascii_isspace(line[lead])) ++lead;
  std::string_view text = line.substr(lead);
  while (!text.empty() && absl::ascii_isspace(text.back())) text.remove_suffix(1);
  Cursor c(text, lead);
  c.Literal("[ ");
  Cursor at_name = c;
  std::string_view name = c.Token("an expression name");
  c.Literal(" ");
  Expr expr;
  if (!c.failed()) {
    BodyParser parser = ParserFor(name);
    if (parser == nullptr) {
      at_name.Fail(absl::StrCat("expression '", Sv(name), "' is not in the IR"));
      c = at_name;
    } else {
      expr = parser(c);
    }
  }
  c.Literal("]");
  if (!c.failed() && !c.AtEnd()) c.Fail("unexpected text after ']'");
  if (c.failed()) return {std::nullopt, c.error_column(), c.error()};
  return {std::move(expr), lead + 1, ""};
}

}  // namespace reader_internal

absl::StatusOr<Expr> ParseExprLine(std::string_view line) {
  reader_internal::LineResult r = reader_internal::ParseLine(line);
  if (!r.expr) {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", r.column, ": ", r.error));
  }
  return std::move(*r.expr);
}

}  // namespace rulejit::ir
