// The IR reader: `[ ... ]` lines back into expressions (see ir/reader.h),
// each kind's body read by a Cursor (ir/reader_cursor.h): the loads,
// compares and register operations here, statements in reader_stmt.cc.
// Numbers must be canonical (no leading zeros, lowercase hex) because
// anything else would not print back identically.
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
#include "ir/reader_cursor.h"
#include "ir/reader_line.h"

namespace rulejit::ir {
namespace {

using reader_internal::Cursor;
using reader_internal::Sv;


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

using reader_internal::BodyParser;

// The matches and loads; statements are reader_stmt.cc's.
BodyParser ParserFor(std::string_view name) {
  static constexpr std::pair<std::string_view, BodyParser> kParsers[] = {
      {"payload", &ParsePayload},     {"meta", &ParseMeta},
      {"ct", &ParseCt},               {"bitwise", &ParseBitwise},
      {"byteorder", &ParseByteorder}, {"cmp", &ParseCmp},
      {"range", &ParseRange},         {"lookup", &ParseLookup},
      {"immediate", &ParseImmediate}, {"counter", &ParseCounter},
      {"limit", &ParseLimit},
  };
  for (const auto& [n, parser] : kParsers) {
    if (n == name) return parser;
  }
  return reader_internal::StatementParserFor(name);
}

}  // namespace

namespace reader_internal {

BodyParser ExprParserFor(std::string_view name) { return ParserFor(name); }

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
