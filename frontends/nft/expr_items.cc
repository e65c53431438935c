// The nft expression grammar, right of the field: left-hand sides with
// `& | ^` constants, constant expressions, and the items a field is
// compared with (values, quoted strings, ranges, prefixes, concatenations),
// parsed with the field's type as nft's evaluate step types them.
#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {
namespace {

// Splits `word` at `sep` positions until both sides parse (`echo-request`
// contains a '-' and is not a range).
template <typename Fn>
bool SplitWhereBothParse(std::string_view word, char sep, Fn&& try_parts) {
  for (size_t i = 1; i + 1 < word.size(); ++i) {
    if (word[i] != sep) continue;
    if (try_parts(word.substr(0, i), word.substr(i + 1))) return true;
  }
  return false;
}

}  // namespace

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
  return ParseBinops(lhs);
}

// `& MASK`, `| X`, `^ X` (or `and`, `or`, `xor`) after a single field,
// folded into one mask and xor.
bool Parser::ParseBinops(Lhs* lhs) {
  while (!sink_.failed) {
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
  return !sink_.failed;
}

bool Parser::ParseBinopOperand(const Field& f, U128* out) {
  if (AtPunct("(")) {
    Nesting nesting(*this, Next().loc);
    if (!nesting.ok() || !ParseConstExpr(f, out)) return false;
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

// value ( SEP value )*, or-ed: flag combinations such as `syn | ack`
// (SEP '|'), and flag lists `syn,ack` (SEP ',').
bool Parser::ParseConstExpr(const Field& f, U128* out, std::string_view sep) {
  *out = 0;
  do {
    U128 v = 0;
    if (!ParseBinopOperand(f, &v)) return false;
    *out |= v;
  } while (AcceptPunct(sep));
  return true;
}

bool Parser::ParseItem(const Field& f, Item* item) {
  const Token& t = Peek();
  item->loc = t.loc;
  if (f.untyped_ports) {
    return Error(t.loc, "a value of ct proto-src/proto-dst needs a transport protocol before it",
                 "match it first, e.g. 'meta l4proto tcp'");
  }
  if (t.kind == Tok::kPunct && t.text == "(") {
    Nesting nesting(*this, Next().loc);
    U128 v = 0;
    if (!nesting.ok() || !ParseConstExpr(f, &v)) return false;
    if (!ExpectPunct(")")) return false;
    item->kind = Item::Kind::kValue;
    item->lo.num = v;
    return true;
  }
  if (t.kind == Tok::kString) return ParseQuotedItem(f, item);
  if (t.kind != Tok::kWord) return ErrorUnexpected("a value");
  return ParseWordItem(f, item);
}

// A quoted value: a string, or a quoted symbol ("ssh") or range of them
// (`meta hour "21:00"-"02:00"`) of a non-string type.
bool Parser::ParseQuotedItem(const Field& f, Item* item) {
  const Token& t = Peek();
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

// A word: a string, a symbol or number (`syn | ack` combined), `lo-hi`,
// `value/len`.
bool Parser::ParseWordItem(const Field& f, Item* item) {
  const Token& t = Peek();
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
  bool matched = false;
  if (!ParseRangeOrPrefix(f, w, item, &matched)) return false;
  if (matched) return true;
  std::vector<std::string_view> names = SymbolNames(f.type);
  if (ParseNumber(w)) {
    return Error(item->loc, absl::StrCat("value '", w, "' exceeds the ", bits, "-bit field"));
  }
  if (f.type == DType::kUid || f.type == DType::kGid) {
    const char* kind = f.type == DType::kUid ? "user" : "group";
    return Error(item->loc, absl::StrCat("unknown ", kind, " '", w, "'"),
                 absl::StrCat("names resolve through this machine's ", kind,
                              " database, as nft resolves them; or give the number"));
  }
  return Error(item->loc, absl::StrCat("invalid value '", w, "'"),
               names.empty() ? "" : ir::DidYouMean(w, names));
}

// `lo-hi` or `value/len` in one word; `*matched` says whether `w` was one.
bool Parser::ParseRangeOrPrefix(const Field& f, const std::string& w, Item* item,
                                bool* matched) {
  const uint32_t bits = f.len_bits;
  // lo-hi
  Value lo;
  U128 hi = 0;
  if (SplitWhereBothParse(w, '-', [&](std::string_view a, std::string_view b) {
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
    *matched = true;
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
      *matched = true;
      return true;
    }
  }
  return true;
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

}  // namespace rulejit::frontends::nft
