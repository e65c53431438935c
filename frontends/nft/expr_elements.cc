// The nft grammar of set elements `{ ... }`: keys, map values (`25:accept`
// split where the key's type says), verdict maps and element options
// (timeout, expires, comment, counter). Lowered in set_elements.cc.
#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontends/nft/limits.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

// The lexer keeps `25:accept` (and `::1:accept`) as one word; in a map
// element split it at the last ':' unless the whole word is a value of the
// key's first field.
void Parser::SplitMapWord(const SetType& st) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord || st.fields.empty()) return;
  size_t colon = t.text.rfind(':');
  if (colon == std::string::npos || colon == 0 || t.text.size() == 1) return;
  std::string left_text = t.text.substr(0, colon);
  std::string right_text = t.text.substr(colon + 1);
  bool alpha = !right_text.empty() && std::isalpha(static_cast<unsigned char>(right_text[0]));
  if (st.verdict_map && !alpha && !right_text.empty()) return;
  // The word is the key's first field (`2001:db8::1 . 80 : ...` keeps it).
  const Field& first = st.fields.front();
  if (ParseValue(first.type, t.text, first.len_bits)) return;
  // A range of it (`dead::beef-dead::1:aced`).
  for (size_t dash = t.text.find('-'); dash != std::string::npos; dash = t.text.find('-', dash + 1)) {
    if (ParseValue(first.type, t.text.substr(0, dash), first.len_bits) &&
        ParseValue(first.type, t.text.substr(dash + 1), first.len_bits)) {
      return;
    }
  }
  if (st.fields.size() == 1 && !alpha && t.text.find('/') != std::string::npos) return;
  Token left = t, sep = t, right = t;
  left.text = left_text;
  sep.kind = Tok::kPunct;
  sep.text = ":";
  sep.loc.col += colon;
  right.text = right_text;
  right.loc.col += colon + 1;
  right.space_before = false;
  const Token repl[] = {std::move(left), std::move(sep), std::move(right)};
  SpliceAtCursor(repl, repl[2].text.empty() ? 2 : 3);
}

// Interval map data: an item, or `LO - HI` written with spaces.
bool Parser::ParseDataItem(const SetType& st, const Field& f, Item* it) {
  if (!ParseItem(f, it)) return false;
  if (st.data_interval && it->kind == Item::Kind::kValue && !it->lo.is_str && AtWord("-") &&
      PeekAt(1).kind == Tok::kWord) {
    if (std::optional<Value> hi = ParseValue(f.type, PeekAt(1).text, f.len_bits)) {
      pos_ += 2;
      if (hi->num < it->lo.num) return Error(it->loc, "range end is below its start");
      it->kind = Item::Kind::kRange;
      it->hi = hi->num;
    }
  }
  if (it->kind != Item::Kind::kValue && !st.data_interval) {
    return Error(it->loc, "unsupported range as map data");
  }
  return true;
}

bool Parser::ParseMapValue(const SetType& st, Element* e) {
  if (st.obj_type != 0) return ExpectName(&e->object, "object name");
  if (st.verdict_map) {
    ir::Verdict v;
    if ((AtWord("jump") || AtWord("goto")) && PeekAt(1).kind == Tok::kPunct &&
        PeekAt(1).text == "{") {
      return Error(PeekAt(1).loc, "a chain binding is not a map value (nft takes a chain name)");
    }
    if (!ParseVerdict(&v)) return false;
    e->verdict = v;
    return true;
  }
  Item it;
  if (!ParseDataItem(st, st.data, &it)) return false;
  e->data = it.lo;
  e->data_items.push_back(it);
  for (const Field& f : st.data_rest) {
    if (!AcceptWord(".")) return ErrorUnexpected("'.' and the next field of the map data");
    it = Item{};
    if (!ParseDataItem(st, f, &it)) return false;
    e->data_rest.push_back(it.lo);
    e->data_items.push_back(it);
  }
  // nft 1.0.6 sends the data of an element with no range in it unpaired
  // (half the map's data length): the kernel refuses it (EINVAL).
  if (st.data_interval &&
      std::none_of(e->data_items.begin(), e->data_items.end(),
                   [](const Item& i) { return i.kind != Item::Kind::kValue; })) {
    return Error(e->data_items.front().loc,
                 "map data without a range in an interval map: nft sends it short and the "
                 "kernel refuses it (EINVAL)",
                 "write the single address as a range, ADDR-ADDR");
  }
  return true;
}

// Element options nft prints back (timeout, expires, comment, counter):
// skipped; element statements are not supported.
bool Parser::ParseElementOptions() {
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
  return true;
}

// `{ a, b-c, d/24, e . f, k : v }` with newlines allowed; nested sets and
// $variables that hold sets are flattened. With a `stream`, every
// kElementChunk elements go on to its flush as they are parsed.
bool Parser::ParseSetElements(const SetType& st, std::vector<Element>* elems,
                              ElementStream* stream) {
  Nesting nesting(*this, Peek().loc);
  if (!nesting.ok() || !ExpectPunct("{")) return false;
  while (!sink_.failed) {
    SkipNewlines();
    if (AcceptPunct("}")) return true;
    if (AtPunct("{")) {
      if (!ParseSetElements(st, elems, stream)) return false;
    } else {
      Element e;
      e.loc = Peek().loc;
      if (st.is_map) SplitMapWord(st);
      if (AtWord("*")) {
        Next();  // catch-all: an element with an empty key
      } else if (!ParseConcatItem(st.fields, &e.key)) {
        return false;
      }
      if (!ParseElementOptions()) return false;
      if (st.is_map) {
        if (!AcceptPunct(":")) {
          // The lexer keeps `22:accept` as one word; handled in ParseItem
          // only for non-colon types, so accept a stand-alone ':' word.
          if (!AtWord(":")) return ErrorUnexpected("':' and a map value");
          Next();
        }
        if (!ParseMapValue(st, &e)) return false;
      }
      if (elems->size() + (stream ? stream->flushed : 0) >= kMaxElements) {
        return Error(e.loc, absl::StrCat("more than ", kMaxElements, " elements"));
      }
      elems->push_back(std::move(e));
      if (stream && elems->size() >= kElementChunk) {
        stream->flushed += elems->size();
        if (!stream->flush(*elems)) return false;
      }
    }
    SkipNewlines();
    if (AcceptPunct(",")) continue;
    SkipNewlines();
    if (AcceptPunct("}")) return true;
    return ErrorUnexpected("',' or '}'");
  }
  return false;
}

}  // namespace rulejit::frontends::nft
