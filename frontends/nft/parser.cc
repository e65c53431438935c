// The nft ruleset grammar: tables, the command forms (`add`, `insert`,
// `flush ruleset`) and the checks on jumps; chains are in chain.cc, the
// token cursor in parser_tokens.cc, sets and maps in sets.cc, `define` and
// `include` in scopes.cc.
#include "frontends/nft/parser.h"

#include "absl/strings/str_cat.h"
#include "ir/reader.h"

namespace rulejit::frontends::nft {
namespace {

using ir::FamilyFromName;

}  // namespace

Parser::Parser(ir::Diagnostics& diags, int file, std::string_view text,
               std::string base_dir, int depth)
    : diags_(diags), file_(file), base_dir_(std::move(base_dir)), depth_(depth),
      toks_(text, file) {
  const LexError& bad = toks_.error();
  if (bad.loc.line != 0) Error(bad.loc, bad.message);
}

// ---------------------------------------------------------------------------
// Entry points

bool Parser::ParseFile(ir::Ruleset& rs) {
  rs_ = &rs;
  while (!sink_.failed && SkipSeparators()) {
    if (!ParseBlockItem()) break;
    ReleaseConsumed(0);
  }
  if (!sink_.failed && depth_ == 0 && CheckJumpTargets(rs) && CheckHookLimits(rs) &&
      CheckFlowOffloads(rs) && CheckLinkLayerChains(rs)) {
    MarkDynamicSets(rs);
  }
  if (!sink_.failed) DetachDormantChains(rs);
  return !sink_.failed;
}

// arp and bridge tables see ARP packets and bridged frames, which rulejit
// does not model (its packets are IP packets at the ip hooks): their base
// chains load, but a policy that drops is refused, as rules are
// (ParseRule), rather than silently never applied.
bool Parser::CheckLinkLayerChains(const ir::Ruleset& rs) {
  for (const ir::Table& t : rs.tables) {
    if (t.family != ir::Family::kArp && t.family != ir::Family::kBridge) continue;
    for (const ir::Chain& c : t.chains) {
      if (c.base && c.base->policy == ir::VerdictCode::kDrop &&
          !dormant_.contains(absl::StrCat(ir::FamilyName(t.family), "/", t.name))) {
        return Error(c.loc, absl::StrCat("unsupported policy drop in a ", ir::FamilyName(t.family),
                                         " table (ARP packets and bridged frames are not modelled)"));
      }
    }
  }
  return true;
}

// A dormant table (`flags dormant`) is loaded but its base chains are not
// registered at their hooks: they see no packets, and jumps into them
// cannot happen either (only base chains start a traversal). They become
// regular chains, after the checks that hold for them as declared.
void Parser::DetachDormantChains(ir::Ruleset& rs) const {
  for (ir::Table& t : rs.tables) {
    if (!dormant_.contains(absl::StrCat(ir::FamilyName(t.family), "/", t.name))) continue;
    for (ir::Chain& c : t.chains) c.base.reset();
  }
}

bool Parser::ParseRuleOnly(ir::Table& table, std::string_view chain_name) {
  ir::Chain* chain = nullptr;
  for (ir::Chain& c : table.chains) {
    if (c.name == chain_name) chain = &c;
  }
  if (chain == nullptr) {
    return Error(Peek().loc, absl::StrCat("no chain '", std::string(chain_name), "'"));
  }
  SkipNewlines();
  // An error leaves `table` as it was: what the rule added (the rule, the
  // chains it binds, its anonymous and meter sets) is taken off again. (A
  // copy of the table per rule made adding N rules one at a time O(N^2).)
  const size_t chain_at = static_cast<size_t>(chain - table.chains.data());
  const size_t rules_before = chain->rules.size();
  const size_t chains_before = table.chains.size();
  const size_t sets_before = table.sets.size();
  bool ok = ParseRule(table, *chain, false);
  if (ok) {
    SkipSeparators();
    ok = Peek().kind == Tok::kEnd || ErrorUnexpected("end of rule");
  }
  ok = ok && !sink_.failed;
  // The new rule and the rules of the chains it bound: their dynsets.
  for (size_t i = rules_before; ok && i < table.chains[chain_at].rules.size(); ++i) {
    ok = MarkDynamicSets(table, table.chains[chain_at].rules[i]);
  }
  for (size_t c = chains_before; ok && c < table.chains.size(); ++c) {
    for (size_t i = 0; ok && i < table.chains[c].rules.size(); ++i) {
      ok = MarkDynamicSets(table, table.chains[c].rules[i]);
    }
  }
  if (!ok) {
    std::vector<ir::Rule>& rules = table.chains[chain_at].rules;
    rules.erase(rules.begin() + static_cast<std::ptrdiff_t>(rules_before), rules.end());
    table.chains.erase(table.chains.begin() + static_cast<std::ptrdiff_t>(chains_before),
                       table.chains.end());
    table.sets.erase(table.sets.begin() + static_cast<std::ptrdiff_t>(sets_before),
                     table.sets.end());
  }
  return ok;
}

bool Parser::ParseSetDeclOnly(ir::Table& table, std::string_view name) {
  ir::Set set;
  set.name = std::string(name);
  set.loc = Peek().loc;
  SetType st;
  // The conformance files write `type T [: D] [flags F]` on one line and
  // declare maps and sets alike: a data type makes it a map.
  bool is_map = false;
  toks_.Scan(pos_, [&](const Token& t) {
    is_map |= t.text == ":" && t.kind != Tok::kString;
    return true;
  });
  while (!sink_.failed && SkipSeparators()) {
    if (AtWord("type") || AtWord("typeof")) {
      if (!ParseSetTypeSpec(&st, set, is_map)) return false;
    } else if (AcceptWord("flags")) {
      std::string f;
      do {
        if (!ExpectWord(&f, "set flag")) return false;
        if (f == "interval") set.flags |= ir::kSetInterval;
        else if (f == "timeout") set.flags |= ir::kSetTimeout;
        else if (f == "constant") set.flags |= ir::kSetConstant;
        else if (f == "dynamic") set.flags |= ir::kSetEval;
        else return Error(toks_[pos_ - 1].loc, absl::StrCat("unsupported set flag '", f, "'"));
      } while (AcceptPunct(","));
    } else if (AtWord("timeout") || AtWord("size")) {
      if (!ParseSetSizeOrTimeout(set)) return false;
    } else if (AcceptWord("gc-interval") || AcceptWord("policy")) {
      std::string v;
      if (!ExpectWord(&v, "value")) return false;
    } else {
      return ErrorUnexpected("set declaration");
    }
  }
  if (sink_.failed) return false;
  if (st.fields.empty()) return Error(set.loc, "set has no type");
  table.sets.push_back(std::move(set));
  return true;
}

bool Parser::ParseElementsOnly(ir::Table& table, std::string_view name) {
  ir::Set* set = nullptr;
  for (ir::Set& s : table.sets) {
    if (s.name == name) set = &s;
  }
  if (set == nullptr) {
    return Error(Peek().loc, absl::StrCat("no set '", std::string(name), "'"));
  }
  // Reuse the block parser by pretending the elements were braced.
  SkipNewlines();
  ir::SourceLoc loc = Peek().loc;
  Token open{.kind = Tok::kPunct, .space_before = true, .loc = loc, .text = "{"};
  toks_.Insert(pos_, &open, 1);
  Token close{.kind = Tok::kPunct, .space_before = true, .loc = toks_.end_token().loc,
              .text = "}"};
  toks_.Insert(toks_.size() - 1, &close, 1);
  if (!ParseElementBlock(table, *set)) return false;
  SkipSeparators();
  if (Peek().kind != Tok::kEnd) return ErrorUnexpected("end of elements");
  return true;
}

// ---------------------------------------------------------------------------
// Ruleset grammar

bool Parser::ParseTopLevel() {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return ErrorUnexpected("a command");
  std::string w = t.text;
  ir::SourceLoc loc = t.loc;
  if (IsScopeWord(w)) return ParseScopeItem(Block{});
  if (w == "flush") {
    Next();
    if (AcceptWord("ruleset")) {
      // Applies to the ruleset as far as this file is concerned.
      rs_->tables.clear();
      chain_index_.clear();
      interval_index_.clear();
      return true;
    }
    if (AcceptWord("table")) return ParseFlushTable();
    return Error(Peek().loc, "unsupported flush command (only 'flush ruleset' and "
                             "'flush table')");
  }
  if (w == "table") {
    Next();
    ir::Family family = ir::Family::kIp;
    if (!ParseFamily(&family)) return false;
    std::string name;
    if (!ExpectIdentifier(&name, "table name")) return false;
    GetTable(family, name, loc);
    size_t index = 0;
    for (size_t i = 0; i < rs_->tables.size(); ++i) {
      if (rs_->tables[i].family == family && rs_->tables[i].name == name) index = i;
    }
    // `table inet fw4` alone declares the table (as `add table`).
    if (!AcceptPunct("{")) return true;
    return ParseTableBlock(index);
  }
  if (w == "add" || w == "create") {
    Next();
    return ParseCommand(false);
  }
  if (w == "insert") {
    Next();
    return ParseCommand(true);
  }
  static const std::vector<std::string_view> kCommands = {
      "table", "add", "create", "insert", "flush", "define", "include",
      "redefine"};
  static const std::vector<std::string_view> kOther = {
      "delete", "destroy", "list", "replace", "rename", "reset", "monitor",
      "describe", "export", "import", "undefine", "get"};
  for (std::string_view o : kOther) {
    if (o == w) return Error(loc, absl::StrCat("unsupported command '", w, "'"));
  }
  return Error(loc, absl::StrCat("unknown command '", w, "'"),
               ir::DidYouMean(w, kCommands));
}

// `flush table FAMILY NAME`: every chain of the table loses its rules;
// chains, sets and their elements stay (nft sends a rule deletion for the
// table, nothing else).
bool Parser::ParseFlushTable() {
  const ir::SourceLoc loc = Peek().loc;
  ir::Family family = ir::Family::kIp;
  if (!ParseFamily(&family)) return false;
  std::string name;
  if (!ExpectIdentifier(&name, "table name")) return false;
  for (ir::Table& table : rs_->tables) {
    if (table.family != family || table.name != name) continue;
    for (ir::Chain& chain : table.chains) chain.rules.clear();
    return true;
  }
  return Error(loc, absl::StrCat("no table '", name, "' in family ", ir::FamilyName(family)));
}

bool Parser::ParseFamily(ir::Family* family) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return true;
  std::optional<ir::Family> f = FamilyFromName(t.text);
  if (!f) return true;
  // `table ip {` would be a table named ip: a family needs a name after it.
  const Token& after = PeekAt(1);
  if (after.kind != Tok::kWord && after.kind != Tok::kString) return true;
  Next();
  *family = *f;
  return true;
}

// A table declaration (`table F T`, `add table F T`, with or without a
// block). nft sends the table's flags with each one, 0 without `flags
// dormant`: the last declaration of the batch decides whether it is dormant.
ir::Table& Parser::GetTable(ir::Family family, const std::string& name,
                            ir::SourceLoc loc) {
  dormant_.erase(absl::StrCat(ir::FamilyName(family), "/", name));
  for (ir::Table& t : rs_->tables) {
    if (t.family == family && t.name == name) return t;
  }
  ir::Table t;
  t.family = family;
  t.name = name;
  t.loc = loc;
  rs_->tables.push_back(std::move(t));
  return rs_->tables.back();
}

bool Parser::ParseCommand(bool insert) {
  const ir::SourceLoc loc = Peek().loc;
  std::string what;
  if (!ParseCommandObject(insert, &what)) return false;
  uint32_t object_type = 0;  // `add counter|quota|ct helper|... FAMILY TABLE NAME { }`
  if (IsObjectWord(what)) {
    object_type = ParseObjectKind();
    if (object_type == 0) return false;
  } else {
    Next();
  }
  ir::Family family = ir::Family::kIp;
  if (!ParseFamily(&family)) return false;
  std::string table_name;
  if (!ExpectIdentifier(&table_name, "table name")) return false;
  if (what == "table") {
    GetTable(family, table_name, loc);
    if (AcceptPunct("{")) {
      for (size_t i = 0; i < rs_->tables.size(); ++i) {
        if (rs_->tables[i].family == family && rs_->tables[i].name == table_name) {
          return ParseTableBlock(i);
        }
      }
    }
    return true;
  }
  size_t index = rs_->tables.size();
  for (size_t i = 0; i < rs_->tables.size(); ++i) {
    if (rs_->tables[i].family == family && rs_->tables[i].name == table_name) index = i;
  }
  if (index == rs_->tables.size()) {
    return Error(toks_[pos_ - 1].loc,
                 absl::StrCat("no table '", table_name, "' in family ",
                              ir::FamilyName(family)));
  }
  if (object_type != 0) return ParseObjectDecl(rs_->tables[index], object_type);
  std::string name;
  ir::SourceLoc name_loc = Peek().loc;
  if (!ExpectIdentifier(&name, what == "rule" ? "chain name" : "name")) return false;
  ir::Table& table = rs_->tables[index];
  if (what == "chain") return ParseChainBlock(index, name, name_loc);
  if (what == "rule") return ParseRuleCommand(table, name, name_loc, insert);
  if (what == "set" || what == "map") {
    if (!ExpectPunct("{")) return false;
    return ParseSetBlock(table, name, what == "map", name_loc);
  }
  if (what == "flowtable") {
    if (!ExpectPunct("{")) return false;
    return ParseFlowtableBlock(table, name, name_loc);
  }
  // element
  ir::Set* set = nullptr;
  for (ir::Set& s : table.sets) {
    if (s.name == name) set = &s;
  }
  if (set == nullptr) return Error(name_loc, absl::StrCat("no set '", name, "'"));
  return ParseElementBlock(table, *set);
}

// The object of `add`/`insert`: table, chain, rule, set, map, element
// (`insert` takes rules only). Leaves the word to the caller.
bool Parser::ParseCommandObject(bool insert, std::string* what) {
  const Token& t = Peek();
  *what = t.kind == Tok::kWord ? t.text : "";
  static const std::vector<std::string_view> kObjects = {
      "table", "chain", "rule", "set", "map", "element", "flowtable", "counter", "quota",
      "limit", "ct", "secmark", "synproxy"};
  if (insert && *what != "rule") {
    return ErrorUnexpected("'rule' after 'insert'");
  }
  for (std::string_view o : kObjects) {
    if (o == *what) return true;
  }
  return Error(t.loc, absl::StrCat("unknown object '", *what, "'"),
               ir::DidYouMean(*what, kObjects));
}

// `add rule FAMILY TABLE CHAIN RULE`, the chain `name` resolved.
bool Parser::ParseRuleCommand(ir::Table& table, const std::string& name, ir::SourceLoc name_loc,
                              bool insert) {
  ir::Chain* chain = const_cast<ir::Chain*>(FindChain(table, name));
  if (chain == nullptr) {
    std::vector<std::string_view> names;
    for (const ir::Chain& c : table.chains) names.push_back(c.name);
    return Error(name_loc, absl::StrCat("no chain '", name, "' in table '", table.name, "'"),
                 ir::DidYouMean(name, names));
  }
  if (AtWord("position") || AtWord("index") || AtWord("handle")) {
    return Error(Peek().loc, "unsupported rule position");
  }
  const size_t chain_index = chain - table.chains.data();
  if (!ParseRule(table, *chain, insert)) return false;  // may add bound chains
  const ir::Chain& added = table.chains[chain_index];
  return CheckJumpsAddedBefore(table, insert ? added.rules.front() : added.rules.back());
}

// The kernel adds a batch in order: a rule added by a command may jump only
// to chains added before it (ENOENT otherwise, as nft reports for kube-proxy
// scripts that add a chain after the rule that jumps to it). A table block
// is different: nft adds all its chains before its rules.
bool Parser::CheckJumpsAddedBefore(const ir::Table& table, const ir::Rule& rule) {
  auto check = [&](const ir::Verdict& v, ir::SourceLoc loc) {
    if ((v.code != ir::VerdictCode::kJump && v.code != ir::VerdictCode::kGoto) ||
        FindChain(table, v.chain) != nullptr) {
      return true;
    }
    return Error(loc, absl::StrCat("jump to chain '", v.chain,
                                   "' before it is added (the kernel adds the batch in order)"));
  };
  for (const ir::Node& n : rule.exprs) {
    if (const auto* imm = std::get_if<ir::Immediate>(&n.expr)) {
      if (imm->dreg == ir::kVerdictReg && !check(imm->verdict, n.loc)) return false;
    } else if (const auto* lk = std::get_if<ir::Lookup>(&n.expr)) {
      const ir::Set* set = set_index_[SetKey(table, "")].Find(table, lk->set);
      if (set == nullptr || !set->anonymous()) continue;
      for (const ir::SetElement& e : set->elements) {
        if (e.verdict && !check(*e.verdict, e.loc)) return false;
      }
    }
  }
  return true;
}

// `{ ITEM... }` of a table, its defines scoped to it (as nft's are).
bool Parser::ParseTableBlock(size_t table_index) {
  PushScope();
  const size_t floor = pos_;
  while (!sink_.failed) {
    SkipSeparators();
    if (AtBlockClose()) {
      PopScope();
      return CloseBlock();
    }
    if (!ParseTableItem(table_index)) return false;
    ReleaseConsumed(floor);  // a table of many chains or sets
  }
  return false;
}

// One item of a table block: chain, set, map, flags, comment, define,
// include.
bool Parser::ParseTableItem(size_t table_index) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return ErrorUnexpected("'chain', 'set', 'map' or '}'");
  const std::string w = t.text;
  const ir::SourceLoc loc = t.loc;
  if (IsScopeWord(w)) return ParseScopeItem(Block{Block::Kind::kTable, table_index, 0});
  if (w == "chain" || w == "set" || w == "map" || w == "flowtable") {
    Next();
    std::string name;
    ir::SourceLoc name_loc = Peek().loc;
    if (!ExpectIdentifier(&name, absl::StrCat(w == "map" ? "set" : w, " name"))) return false;
    if (w == "chain") return ParseChainBlock(table_index, name, name_loc);
    if (!ExpectPunct("{")) return false;
    if (w == "flowtable") return ParseFlowtableBlock(rs_->tables[table_index], name, name_loc);
    return ParseSetBlock(rs_->tables[table_index], name, w == "map", name_loc);
  }
  if (IsObjectWord(w)) {
    const uint32_t type = ParseObjectKind();
    return type != 0 && ParseObjectDecl(rs_->tables[table_index], type);
  }
  if (w == "flags") {
    Next();
    std::string f;
    if (!ExpectWord(&f, "table flag")) return false;
    if (f != "dormant" && f != "owner" && f != "persist") {
      return Error(loc, absl::StrCat("unknown table flag '", f, "'"));
    }
    if (f == "dormant") {
      const ir::Table& t = rs_->tables[table_index];
      dormant_.insert(absl::StrCat(ir::FamilyName(t.family), "/", t.name));
    }
    return true;
  }
  if (w == "comment") {
    Next();
    if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
    Next();
    return true;
  }
  static const std::vector<std::string_view> kKnown = {
      "chain", "set", "map", "flowtable", "flags", "comment", "define", "include",
      "counter", "quota", "limit", "ct", "secmark"};
  static const std::vector<std::string_view> kUnsupported = {"tunnel"};
  for (std::string_view u : kUnsupported) {
    if (u == w) return Error(loc, absl::StrCat("unsupported table object '", w, "'"));
  }
  return Error(loc, absl::StrCat("unknown table object '", w, "'"),
               ir::DidYouMean(w, kKnown));
}


bool Parser::SkipBlock() {
  int depth = 1;
  while (!sink_.failed && depth > 0) {
    Token t = Next();
    if (t.kind == Tok::kEnd) return ErrorUnexpected("'}'");
    if (t.kind == Tok::kPunct && t.text == "{") ++depth;
    if (t.kind == Tok::kPunct && t.text == "}") --depth;
  }
  return !sink_.failed;
}

bool Parser::CheckJumpTargets(const ir::Ruleset& rs) {
  for (const ir::Table& t : rs.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        for (const ir::Node& n : r.exprs) {
          const auto* imm = std::get_if<ir::Immediate>(&n.expr);
          if (imm == nullptr || imm->dreg != ir::kVerdictReg) continue;
          const ir::Verdict& v = imm->verdict;
          if ((v.code == ir::VerdictCode::kJump || v.code == ir::VerdictCode::kGoto) &&
              FindChain(t, v.chain) == nullptr) {
            return Error(n.loc, absl::StrCat("jump to unknown chain '", v.chain, "'"));
          }
        }
      }
    }
    for (const ir::Set& s : t.sets) {
      for (const ir::SetElement& e : s.elements) {
        if (e.verdict && (e.verdict->code == ir::VerdictCode::kJump ||
                          e.verdict->code == ir::VerdictCode::kGoto) &&
            FindChain(t, e.verdict->chain) == nullptr) {
          return Error(e.loc, absl::StrCat("jump to unknown chain '", e.verdict->chain, "'"));
        }
      }
    }
  }
  return true;
}

}  // namespace rulejit::frontends::nft
