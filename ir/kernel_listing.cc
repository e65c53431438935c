// Reading `nft --debug=netlink list ruleset` back onto a ruleset (see
// kernel_listing.h).
#include "ir/kernel_listing.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ir/printer.h"

namespace rulejit::ir {
namespace {

absl::Status ListingError(uint32_t line, std::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("listing line ", line, ": ", std::string(message)));
}

// "0100000a": one register word as nft prints it (host order, which is
// little-endian here), so its bytes are those of the value in memory.
bool AppendWord(absl::string_view word, Bytes& out) {
  uint32_t v = 0;
  if (word.size() != 8 || !absl::SimpleHexAtoi(word, &v)) return false;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return true;
}

bool IsVerdictWord(absl::string_view w) {
  return w == "accept" || w == "drop" || w == "continue" || w == "return" || w == "jump" ||
         w == "goto" || w == "queue";
}

// The text after `element `: KEY [- KEY_END] : [DATA | VERDICT] FLAGS [end].
absl::StatusOr<ListedElement> ParseElement(absl::string_view text, uint32_t line) {
  std::vector<absl::string_view> words = absl::StrSplit(text, absl::ByAnyChar(" \t"),
                                                        absl::SkipEmpty());
  ListedElement e;
  e.line = line;
  size_t i = 0;
  for (; i < words.size() && words[i] != ":" && words[i] != "-"; ++i) {
    if (!AppendWord(words[i], e.key)) return ListingError(line, "bad element key word");
  }
  if (i < words.size() && words[i] == "-") {
    e.key_end.emplace();
    for (++i; i < words.size() && words[i] != ":"; ++i) {
      if (!AppendWord(words[i], *e.key_end)) return ListingError(line, "bad element end word");
    }
  }
  if (i == words.size()) return ListingError(line, "element without ':'");
  std::vector<absl::string_view> value;
  for (++i; i < words.size() && words[i] != "[end]"; ++i) value.push_back(words[i]);
  if (i == words.size() || value.empty() || !absl::SimpleAtoi(value.back(), &e.flags)) {
    return ListingError(line, "element without flags and [end]");
  }
  value.pop_back();
  if (!value.empty() && IsVerdictWord(value.front())) {
    // The verdict reads as an immediate's.
    absl::StatusOr<Expr> imm =
        ParseExprLine(absl::StrCat("[ immediate reg 0 ", absl::StrJoin(value, " "), " ]"));
    const auto* as_imm = imm.ok() ? std::get_if<Immediate>(&*imm) : nullptr;
    if (as_imm == nullptr) return ListingError(line, "bad element verdict");
    e.verdict = as_imm->verdict;
    return e;
  }
  for (absl::string_view w : value) {
    if (!AppendWord(w, e.data)) return ListingError(line, "bad element data word");
  }
  return e;
}

// A header line: `FAMILY TABLE @SET` or `FAMILY TABLE CHAIN HANDLE [POS]`.
struct Header {
  Family family = Family::kIp;
  std::string table;
  std::string name;  // the set (without '@') or the chain
  bool set = false;
};

absl::StatusOr<Header> ParseHeader(absl::string_view line, uint32_t line_no) {
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (words.size() < 3) return ListingError(line_no, "expected 'FAMILY TABLE CHAIN|@SET'");
  std::optional<Family> family = FamilyFromName(std::string_view(words[0].data(), words[0].size()));
  if (!family) return ListingError(line_no, absl::StrCat("unknown family '", words[0], "'"));
  Header h{.family = *family, .table = std::string(words[1]), .name = std::string(words[2])};
  h.set = absl::ConsumePrefix(&words[2], "@");
  if (h.set) h.name = std::string(words[2]);
  return h;
}

// An expression line as the printer spells it. The kernel dumps
// attributes that nft leaves out when it builds a rule: a lookup's flags
// when they are 0.
std::string AsPrinted(absl::string_view line) {
  std::string out(line);
  if (absl::StrContains(line, "[ lookup ") && absl::EndsWith(line, " 0x0 ]")) {
    out.replace(out.size() - 6, 6, " ]");
  }
  // A dynset's timeout 0: the set's own, which the printer leaves out.
  if (size_t at = out.find(" timeout 0ms"); at != std::string::npos &&
                                            absl::StrContains(line, "[ dynset ")) {
    out.erase(at, 12);
  }
  return out;
}

}  // namespace

absl::StatusOr<KernelListing> ParseKernelListing(std::string_view text) {
  KernelListing out;
  ListedSet* set = nullptr;        // the set whose elements follow
  std::string block;               // the rule block being read
  uint32_t block_line = 0;
  auto finish_block = [&]() -> absl::Status {
    if (block.empty()) return absl::OkStatus();
    absl::StatusOr<RuleBlock> rule = ParseRuleBlock(block, -1, block_line);
    block.clear();
    if (!rule.ok()) return ListingError(block_line, std::string(rule.status().message()));
    out.rules.push_back(*std::move(rule));
    return absl::OkStatus();
  };
  uint32_t line_no = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_no;
    if (absl::StartsWith(line, "table ")) break;  // the text listing follows
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty()) {
      if (absl::Status s = finish_block(); !s.ok()) return s;
      set = nullptr;
      continue;
    }
    if (line.front() != ' ' && line.front() != '\t') {  // a header
      if (absl::Status s = finish_block(); !s.ok()) return s;
      absl::StatusOr<Header> h = ParseHeader(trimmed, line_no);
      if (!h.ok()) return h.status();
      set = nullptr;
      if (h->set) {
        out.sets.push_back({.family = h->family, .table = h->table, .name = h->name});
        set = &out.sets.back();
      } else {
        block = absl::StrCat(FamilyName(h->family), " ", h->table, " ", h->name, "\n");
        block_line = line_no;
      }
      continue;
    }
    if (set != nullptr) {
      for (absl::string_view part : absl::StrSplit(trimmed, "element ", absl::SkipEmpty())) {
        absl::StatusOr<ListedElement> e = ParseElement(part, line_no);
        if (!e.ok()) return e.status();
        set->elements.push_back(*std::move(e));
      }
      continue;
    }
    if (absl::StartsWith(trimmed, "userdata = ")) continue;  // the rule's comment
    if (block.empty()) return ListingError(line_no, "expression outside a rule");
    absl::StrAppend(&block, AsPrinted(line), "\n");
  }
  if (absl::Status s = finish_block(); !s.ok()) return s;
  return out;
}

namespace {

std::string ChainKey(Family family, std::string_view table, std::string_view chain) {
  return absl::StrCat(FamilyName(family), " ", std::string(table), " ", std::string(chain));
}

// The set names a rule's expressions use, in order.
std::vector<std::string*> SetRefs(Rule& rule) {
  std::vector<std::string*> refs;
  for (Node& n : rule.exprs) {
    if (auto* e = std::get_if<Lookup>(&n.expr)) refs.push_back(&e->set);
    if (auto* e = std::get_if<Dynset>(&n.expr)) refs.push_back(&e->set);
    if (auto* e = std::get_if<Objref>(&n.expr); e != nullptr && !e->set.empty()) {
      refs.push_back(&e->set);
    }
  }
  return refs;
}

// Names the kernel's anonymous sets in `kernel_rule` as `our_rule` names
// them (recorded in `renames`, the kernel's name to ours).
absl::Status MatchSetNames(Rule& kernel_rule, Rule our_rule, const std::string& where,
                           std::map<std::string, std::string>& renames) {
  std::vector<std::string*> theirs = SetRefs(kernel_rule);
  std::vector<std::string*> mine = SetRefs(our_rule);
  if (theirs.size() != mine.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the kernel's rule uses ",
                                                   theirs.size(), " sets, rulejit's ",
                                                   mine.size()));
  }
  for (size_t i = 0; i < theirs.size(); ++i) {
    if (*theirs[i] == *mine[i] && !IsAnonymousSetName(*mine[i])) continue;
    if (!IsAnonymousSetName(*theirs[i]) || !IsAnonymousSetName(*mine[i])) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the kernel's rule uses set ",
                                                     *theirs[i], " where rulejit's uses ",
                                                     *mine[i]));
    }
    renames[*theirs[i]] = *mine[i];
    *theirs[i] = *mine[i];
  }
  return absl::OkStatus();
}

// The first `len` bytes of a listed key or data (the words pad them).
absl::StatusOr<Bytes> Trim(const Bytes& words, uint32_t len, uint32_t line) {
  if (words.size() < len) return ListingError(line, "element shorter than the set's key or data");
  return Bytes(words.begin(), words.begin() + len);
}

// The value one below `key`, as a big-endian number of key.size() bytes.
Bytes Decrement(Bytes key) {
  for (size_t i = key.size(); i-- > 0;) {
    if (key[i]-- != 0) break;
  }
  return key;
}

constexpr uint32_t kElemIntervalEnd = 1;  // NFT_SET_ELEM_INTERVAL_END
constexpr uint32_t kElemCatchall = 2;     // NFT_SET_ELEM_CATCHALL

// The listing names no element's object: an object map's element takes it
// from rulejit's element of the same key.
absl::Status NameObject(const Set& ours, SetElement& out) {
  for (const SetElement& mine : ours.elements) {
    if (mine.key == out.key && mine.key_end.value_or(mine.key) == out.key_end.value_or(out.key)) {
      out.object = mine.object;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the kernel holds an element of object map ", ours.name, " that rulejit's reading lacks"));
}

// `set` is rulejit's declaration with rulejit's elements.
absl::StatusOr<SetElement> ToElement(const Set& set, const ListedElement& e) {
  SetElement out;
  absl::StatusOr<Bytes> key =
      (e.flags & kElemCatchall) ? Bytes() : Trim(e.key, set.key_len, e.line);
  if (!key.ok()) return key.status();
  out.key = *std::move(key);
  if (e.key_end) {
    absl::StatusOr<Bytes> end = Trim(*e.key_end, set.key_len, e.line);
    if (!end.ok()) return end.status();
    out.key_end = *std::move(end);
  }
  if (set.data_len > 0 && !set.verdict_map) {
    absl::StatusOr<Bytes> data = Trim(e.data, set.data_len, e.line);
    if (!data.ok()) return data.status();
    out.data = *std::move(data);
  }
  out.verdict = e.verdict;
  return out;
}

// An rbtree interval set lists each interval's start and, flagged, its
// exclusive end (none when the interval reaches the top, and none when the
// next interval starts there), in no particular order.
absl::StatusOr<std::vector<SetElement>> FromRbtree(const Set& set,
                                                   std::vector<ListedElement> listed) {
  std::vector<SetElement> out;
  // The catch-all element stands apart from the intervals.
  auto catchalls = std::stable_partition(listed.begin(), listed.end(), [](const ListedElement& e) {
    return !(e.flags & kElemCatchall);
  });
  for (auto it = catchalls; it != listed.end(); ++it) {
    absl::StatusOr<SetElement> el = ToElement(set, *it);
    if (!el.ok()) return el.status();
    out.push_back(*std::move(el));
  }
  listed.erase(catchalls, listed.end());
  for (ListedElement& e : listed) {
    absl::StatusOr<Bytes> key = Trim(e.key, set.key_len, e.line);
    if (!key.ok()) return key.status();
    e.key = *std::move(key);
  }
  // An end sorts before a start at the same value (it closes the interval
  // below it).
  std::stable_sort(listed.begin(), listed.end(),
                   [](const ListedElement& a, const ListedElement& b) {
                     return a.key != b.key ? a.key < b.key
                                           : (a.flags & kElemIntervalEnd) >
                                                 (b.flags & kElemIntervalEnd);
                   });
  std::optional<SetElement> open;
  auto close = [&](const Bytes& exclusive_end) {
    open->key_end = Decrement(exclusive_end);
    out.push_back(*std::move(open));
    open.reset();
  };
  for (const ListedElement& e : listed) {
    const bool end = (e.flags & kElemIntervalEnd) != 0;
    if (open) close(e.key);
    if (end) continue;
    absl::StatusOr<SetElement> start = ToElement(set, e);
    if (!start.ok()) return start.status();
    open = *std::move(start);
  }
  if (open) close(Bytes(set.key_len, 0));  // 0 - 1: the all-ones top
  return out;
}

absl::StatusOr<std::vector<SetElement>> ToElements(const Set& set,
                                                   const std::vector<ListedElement>& listed) {
  const bool rbtree = set.interval() && std::none_of(listed.begin(), listed.end(),
                                                     [](const ListedElement& e) {
                                                       return e.key_end.has_value();
                                                     });
  absl::StatusOr<std::vector<SetElement>> out = std::vector<SetElement>();
  if (rbtree) {
    out = FromRbtree(set, listed);
  } else {
    for (const ListedElement& e : listed) {
      absl::StatusOr<SetElement> el = ToElement(set, e);
      if (!el.ok()) return el.status();
      out->push_back(*std::move(el));
    }
  }
  if (out.ok() && (set.obj_type != 0 || (set.flags & kSetObject))) {
    for (SetElement& el : *out) {
      if (absl::Status s = NameObject(set, el); !s.ok()) return s;
    }
  }
  return out;
}

// Every chain's rules from the kernel, in place of ours.
absl::Status TakeRules(const Ruleset& ours, const KernelListing& kernel, Ruleset& out,
                       std::vector<std::map<std::string, std::string>>& renames) {
  absl::flat_hash_map<std::string, std::vector<const RuleBlock*>> by_chain;
  for (const RuleBlock& b : kernel.rules) {
    by_chain[ChainKey(b.family, b.table, b.chain)].push_back(&b);
  }
  for (size_t t = 0; t < out.tables.size(); ++t) {
    Table& table = out.tables[t];
    for (Chain& chain : table.chains) {
      auto it = by_chain.find(ChainKey(table.family, table.name, chain.name));
      const size_t theirs = it == by_chain.end() ? 0 : it->second.size();
      if (theirs != chain.rules.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "chain ", ChainKey(table.family, table.name, chain.name), ": the kernel holds ",
            theirs, " rules, rulejit's reading ", chain.rules.size()));
      }
      for (size_t r = 0; r < theirs; ++r) {
        Rule& rule = chain.rules[r];
        Rule kernel_rule = it->second[r]->rule;
        const std::string where = ours.Where(rule.loc);
        if (absl::Status s = MatchSetNames(kernel_rule, rule, where, renames[t]); !s.ok()) {
          return s;
        }
        for (Node& n : kernel_rule.exprs) n.loc = rule.loc;
        rule.exprs = std::move(kernel_rule.exprs);
      }
      by_chain.erase(ChainKey(table.family, table.name, chain.name));
    }
  }
  if (!by_chain.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel holds rules in chain ", by_chain.begin()->first,
                     ", which rulejit's reading lacks"));
  }
  return absl::OkStatus();
}

// Every set's elements from the kernel (none when the listing has none).
absl::Status TakeElements(const KernelListing& kernel, Ruleset& out,
                          const std::vector<std::map<std::string, std::string>>& renames) {
  std::vector<std::vector<bool>> taken(out.tables.size());
  for (size_t t = 0; t < out.tables.size(); ++t) {
    taken[t].assign(out.tables[t].sets.size(), false);
  }
  for (const ListedSet& listed : kernel.sets) {
    auto table = std::find_if(out.tables.begin(), out.tables.end(), [&](const Table& t) {
      return t.family == listed.family && t.name == listed.table;
    });
    if (table == out.tables.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the kernel holds table ", listed.table, ", which rulejit's reading lacks"));
    }
    // An anonymous set is ours under the name our rule gives it.
    const auto& names = renames[table - out.tables.begin()];
    auto renamed = names.find(listed.name);
    if (IsAnonymousSetName(listed.name) && renamed == names.end()) continue;  // no rule uses it
    const std::string& name = renamed == names.end() ? listed.name : renamed->second;
    auto set = std::find_if(table->sets.begin(), table->sets.end(),
                            [&](const Set& s) { return s.name == name; });
    if (set == table->sets.end()) {
      return absl::InvalidArgumentError(absl::StrCat("the kernel holds set ", listed.name,
                                                     ", which rulejit's reading lacks"));
    }
    absl::StatusOr<std::vector<SetElement>> elements = ToElements(*set, listed.elements);
    if (!elements.ok()) return elements.status();
    for (SetElement& e : *elements) e.loc = set->loc;
    set->elements = *std::move(elements);
    taken[table - out.tables.begin()][set - table->sets.begin()] = true;
  }
  // A set the listing does not show is empty in the kernel.
  for (size_t t = 0; t < out.tables.size(); ++t) {
    for (size_t i = 0; i < out.tables[t].sets.size(); ++i) {
      if (!taken[t][i]) out.tables[t].sets[i].elements.clear();
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Ruleset> WithKernelBytecode(const Ruleset& ours, const KernelListing& kernel) {
  Ruleset out = ours;
  std::vector<std::map<std::string, std::string>> renames(out.tables.size());
  if (absl::Status s = TakeRules(ours, kernel, out, renames); !s.ok()) return s;
  if (absl::Status s = TakeElements(kernel, out, renames); !s.ok()) return s;
  return out;
}

}  // namespace rulejit::ir
