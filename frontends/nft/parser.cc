// The nft ruleset grammar: tables, chains, sets and maps, the command forms
// (`add`, `insert`, `flush ruleset`); `define` and `include` are in
// scopes.cc.
#include "frontends/nft/parser.h"

#include "absl/strings/str_cat.h"

namespace rulejit::frontends::nft {
namespace {

constexpr size_t kMaxExpansions = 100000;

std::optional<ir::Family> FamilyFromName(std::string_view w) {
  if (w == "ip") return ir::Family::kIp;
  if (w == "ip6") return ir::Family::kIp6;
  if (w == "inet") return ir::Family::kInet;
  if (w == "netdev") return ir::Family::kNetdev;
  if (w == "bridge") return ir::Family::kBridge;
  if (w == "arp") return ir::Family::kArp;
  return std::nullopt;
}

std::optional<int32_t> NamedPriority(std::string_view w) {
  if (w == "raw") return -300;
  if (w == "mangle") return -150;
  if (w == "dstnat") return -100;
  if (w == "filter") return 0;
  if (w == "security") return 50;
  if (w == "srcnat") return 100;
  return std::nullopt;
}

}  // namespace

Parser::Parser(ir::Diagnostics& diags, int file, std::string_view text,
               std::string base_dir, int depth)
    : diags_(diags), file_(file), base_dir_(std::move(base_dir)), depth_(depth) {
  ir::SourceLoc bad;
  toks_ = Lex(text, file, &bad);
  if (bad.line != 0) {
    Error(bad, "unexpected character");
  }
}

// ---------------------------------------------------------------------------
// Tokens

bool Parser::ExpandVar() {
  while (pos_ < toks_.size() && toks_[pos_].kind == Tok::kVar) {
    Token var = toks_[pos_];
    const std::vector<Token>* value = LookupDefine(var.text);
    if (value == nullptr) {
      std::vector<std::string_view> names;
      for (const Scope& scope : scopes_) {
        for (const auto& [n, _] : scope) names.push_back(n);
      }
      Error(var.loc, absl::StrCat("undefined variable '$", var.text, "'"),
            ir::DidYouMean(var.text, names));
      toks_[pos_].kind = Tok::kEnd;
      return false;
    }
    if (++expansions_ > kMaxExpansions) {
      Error(var.loc, "too many variable expansions");
      toks_[pos_].kind = Tok::kEnd;
      return false;
    }
    std::vector<Token> body = *value;
    if (!body.empty()) body.front().space_before = var.space_before;
    toks_.erase(toks_.begin() + pos_);
    toks_.insert(toks_.begin() + pos_, body.begin(), body.end());
  }
  return true;
}

const Token& Parser::Peek() {
  ExpandVar();
  if (sink_.failed) return toks_.back();
  return toks_[pos_];
}

// Look-ahead does not expand variables: a $var is just "not a keyword".
const Token& Parser::PeekAt(size_t ahead) {
  Peek();
  return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
}

Token Parser::Next() {
  Token t = Peek();
  if (!sink_.failed && pos_ + 1 < toks_.size()) ++pos_;
  return t;
}

bool Parser::AtWord(std::string_view w) {
  const Token& t = Peek();
  return t.kind == Tok::kWord && t.text == w;
}

bool Parser::AtPunct(std::string_view p) {
  const Token& t = Peek();
  return t.kind == Tok::kPunct && t.text == p;
}

bool Parser::AcceptWord(std::string_view w) {
  if (!AtWord(w)) return false;
  Next();
  return true;
}

bool Parser::AcceptPunct(std::string_view p) {
  if (!AtPunct(p)) return false;
  Next();
  return true;
}

bool Parser::ExpectPunct(std::string_view p) {
  if (AcceptPunct(p)) return true;
  return ErrorUnexpected(absl::StrCat("'", std::string(p), "'"));
}

bool Parser::ExpectWord(std::string* out, std::string_view what) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return ErrorUnexpected(what);
  *out = Next().text;
  return true;
}

// Names may be written bare or quoted.
bool Parser::ExpectName(std::string* out, std::string_view what) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord && t.kind != Tok::kString) {
    return ErrorUnexpected(what);
  }
  if (t.kind == Tok::kWord && IsReservedWord(t.text)) {
    return Error(t.loc, absl::StrCat("'", t.text, "' is a keyword of nft's grammar, not a ",
                                     std::string(what)),
                 "nft refuses it here (a syntax error): choose another name");
  }
  *out = Next().text;
  return true;
}

// nft 1.0.6 names tables, chains, sets, maps, flowtables and objects where
// it declares or commands them, and chains in jumps, with a bare word
// only: `chain "c"`, `jump "c"` are syntax errors there.
bool Parser::ExpectIdentifier(std::string* out, std::string_view what) {
  if (Peek().kind == Tok::kString) {
    return Error(Peek().loc, absl::StrCat("a quoted ", std::string(what), ": nft 1.0.6 takes a "
                                          "bare name here"),
                 "drop the quotes");
  }
  return ExpectName(out, what);
}

bool Parser::AtStmtEnd() {
  const Token& t = Peek();
  return t.kind == Tok::kNewline || t.kind == Tok::kEnd ||
         (t.kind == Tok::kPunct && (t.text == ";" || t.text == "}"));
}

bool Parser::AtBlockClose() {
  const Token& t = Peek();
  return t.kind == Tok::kPunct && t.text == "}";
}

bool Parser::CloseBlock(bool items_end_with_separator) {
  auto separator = [](const Token& t) {
    return t.kind == Tok::kNewline || t.kind == Tok::kEnd ||
           (t.kind == Tok::kPunct && t.text == ";");
  };
  const bool after_separator =
      pos_ > 0 && (separator(toks_[pos_ - 1]) ||
                   (toks_[pos_ - 1].kind == Tok::kPunct && toks_[pos_ - 1].text == "{"));
  if (items_end_with_separator && !after_separator) {
    return Error(Peek().loc, "expected newline or ';' before '}'");
  }
  Next();
  if (!separator(Peek())) return ErrorUnexpected("newline or ';' after '}'");
  return true;
}

void Parser::SkipNewlines() {
  while (!sink_.failed && Peek().kind == Tok::kNewline) Next();
}

// Skips newlines and semicolons; false at end of input.
bool Parser::SkipSeparators() {
  while (!sink_.failed) {
    const Token& t = Peek();
    if (t.kind == Tok::kNewline || (t.kind == Tok::kPunct && t.text == ";")) {
      Next();
      continue;
    }
    return t.kind != Tok::kEnd;
  }
  return false;
}

bool Parser::Error(ir::SourceLoc loc, std::string msg, std::string hint) {
  return sink_.Error(loc, std::move(msg), std::move(hint));
}

bool Parser::ErrorUnexpected(std::string_view what) {
  const Token& t = Peek();
  std::string got;
  switch (t.kind) {
    case Tok::kNewline: got = "end of line"; break;
    case Tok::kEnd: got = "end of input"; break;
    case Tok::kString: got = absl::StrCat("\"", t.text, "\""); break;
    default: got = absl::StrCat("'", t.text, "'"); break;
  }
  return Error(t.loc, absl::StrCat("expected ", std::string(what), ", got ", got));
}

// ---------------------------------------------------------------------------
// Entry points

bool Parser::ParseFile(ir::Ruleset& rs) {
  rs_ = &rs;
  while (!sink_.failed && SkipSeparators()) {
    if (!ParseBlockItem()) break;
  }
  if (!sink_.failed && depth_ == 0 && CheckJumpTargets(rs) && CheckHookLimits(rs)) {
    CheckFlowOffloads(rs);
  }
  return !sink_.failed;
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
  // Work on a copy so that an error after the rule leaves `table` as it was.
  ir::Table scratch = table;
  ir::Chain& target = scratch.chains[chain - table.chains.data()];
  if (!ParseRule(scratch, target, false)) return false;
  SkipSeparators();
  if (Peek().kind != Tok::kEnd) return ErrorUnexpected("end of rule");
  if (sink_.failed) return false;
  table = std::move(scratch);
  return true;
}

bool Parser::ParseSetDeclOnly(ir::Table& table, std::string_view name) {
  ir::Set set;
  set.name = std::string(name);
  set.loc = Peek().loc;
  SetType st;
  // The conformance files write `type T [: D] [flags F]` on one line and
  // declare maps and sets alike: a data type makes it a map.
  bool is_map = false;
  for (size_t i = pos_; i < toks_.size(); ++i) {
    is_map |= toks_[i].text == ":" && toks_[i].kind != Tok::kString;
  }
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
        else if (f != "dynamic") return Error(toks_[pos_ - 1].loc, absl::StrCat("unsupported set flag '", f, "'"));
      } while (AcceptPunct(","));
    } else if (AcceptWord("timeout") || AcceptWord("size") || AcceptWord("gc-interval") ||
               AcceptWord("policy")) {
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
  Token open{Tok::kPunct, "{", loc, true};
  toks_.insert(toks_.begin() + pos_, open);
  Token close{Tok::kPunct, "}", toks_.back().loc, true};
  toks_.insert(toks_.end() - 1, close);
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
  if (*f == ir::Family::kBridge || *f == ir::Family::kArp) {
    return Error(t.loc, absl::StrCat("unsupported family '", t.text, "'"));
  }
  Next();
  *family = *f;
  return true;
}

ir::Table& Parser::GetTable(ir::Family family, const std::string& name,
                            ir::SourceLoc loc) {
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
  ir::Chain* chain = nullptr;
  for (ir::Chain& c : table.chains) {
    if (c.name == name) chain = &c;
  }
  if (chain == nullptr) {
    std::vector<std::string_view> names;
    for (const ir::Chain& c : table.chains) names.push_back(c.name);
    return Error(name_loc, absl::StrCat("no chain '", name, "' in table '", table.name, "'"),
                 ir::DidYouMean(name, names));
  }
  if (AtWord("position") || AtWord("index") || AtWord("handle")) {
    return Error(Peek().loc, "unsupported rule position");
  }
  if (!ParseRule(table, *chain, insert)) return false;
  return CheckJumpsAddedBefore(table, insert ? chain->rules.front() : chain->rules.back());
}

// The kernel adds a batch in order: a rule added by a command may jump only
// to chains added before it (ENOENT otherwise, as nft reports for kube-proxy
// scripts that add a chain after the rule that jumps to it). A table block
// is different: nft adds all its chains before its rules.
bool Parser::CheckJumpsAddedBefore(const ir::Table& table, const ir::Rule& rule) {
  auto check = [&](const ir::Verdict& v, ir::SourceLoc loc) {
    if ((v.code != ir::VerdictCode::kJump && v.code != ir::VerdictCode::kGoto) ||
        table.FindChain(v.chain) != nullptr) {
      return true;
    }
    return Error(loc, absl::StrCat("jump to chain '", v.chain,
                                   "' before it is added (the kernel adds the batch in order)"));
  };
  for (const ir::Node& n : rule.exprs) {
    if (const auto* imm = std::get_if<ir::Immediate>(&n.expr)) {
      if (imm->dreg == ir::kVerdictReg && !check(imm->verdict, n.loc)) return false;
    } else if (const auto* lk = std::get_if<ir::Lookup>(&n.expr)) {
      const ir::Set* set = table.FindSet(lk->set);
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
  while (!sink_.failed) {
    SkipSeparators();
    if (AtBlockClose()) {
      PopScope();
      return CloseBlock();
    }
    if (!ParseTableItem(table_index)) return false;
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
    if (f == "dormant") return Error(loc, "unsupported table flag 'dormant'");
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

bool Parser::ParseChainBlock(size_t table_index, const std::string& name,
                             ir::SourceLoc loc) {
  ir::Table* table = &rs_->tables[table_index];
  ir::Chain* chain = nullptr;
  for (ir::Chain& c : table->chains) {
    if (c.name == name) chain = &c;
  }
  if (chain == nullptr) {
    ir::Chain c;
    c.name = name;
    c.loc = loc;
    table->chains.push_back(std::move(c));
    chain = &table->chains.back();
  }
  if (!AcceptPunct("{")) return true;  // `add chain T C` without a body
  const size_t chain_index = chain - table->chains.data();
  PushScope();
  while (!sink_.failed) {
    SkipSeparators();
    if (AtBlockClose()) {
      PopScope();
      return CloseBlock();
    }
    if (Peek().kind == Tok::kEnd) return ErrorUnexpected("'}'");
    if (!ParseChainItem(table_index, chain_index)) return false;
  }
  return false;
}

// One item of a chain block: a header line, define, include, or a rule.
bool Parser::ParseChainItem(size_t table_index, size_t chain_index) {
  ir::Table& table = rs_->tables[table_index];
  ir::Chain& chain = table.chains[chain_index];
  if (AtWord("type") || AtWord("policy") || AtWord("comment") ||
      AtWord("devices") || AtWord("device")) {
    return ParseChainHeader(chain, table.family);
  }
  if (Peek().kind == Tok::kWord && IsScopeWord(Peek().text)) {
    return ParseScopeItem(Block{Block::Kind::kChain, table_index, chain_index});
  }
  return ParseRule(table, chain, false);
}

bool Parser::ParseChainHeader(ir::Chain& chain, ir::Family family) {
  Token t = Next();
  if (t.text == "comment") {
    if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
    Next();
    return true;
  }
  if (t.text == "policy") return ParseChainPolicy(chain, t);
  if (t.text == "devices" || t.text == "device") return ParseChainDevice(chain);
  return ParseBaseChainSpec(chain, family);
}

// `policy accept|drop` of a base chain; `t` is the `policy` token.
bool Parser::ParseChainPolicy(ir::Chain& chain, const Token& t) {
  std::string p;
  if (!ExpectWord(&p, "policy")) return false;
  if (!chain.base) return Error(t.loc, "policy on a regular chain");
  if (p == "accept") chain.base->policy = ir::VerdictCode::kAccept;
  else if (p == "drop") chain.base->policy = ir::VerdictCode::kDrop;
  else return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown policy '", p, "'"),
                    ir::DidYouMean(p, {"accept", "drop"}));
  return true;
}

// `device D`, `devices = { D }` on a line of its own.
bool Parser::ParseChainDevice(ir::Chain& chain) {
  if (!chain.base) chain.base.emplace();
  AcceptPunct("=");
  std::string dev;
  if (AcceptPunct("{")) {
    SkipNewlines();
    if (!ExpectName(&dev, "device name")) return false;
    SkipNewlines();
    if (AcceptPunct(",")) return Error(Peek().loc, "unsupported multi-device chain");
    if (!ExpectPunct("}")) return false;
  } else if (!ExpectName(&dev, "device name")) {
    return false;
  }
  chain.base->device = dev;
  return true;
}

// `type T hook H [device D] priority P` (the `type` word already read).
bool Parser::ParseBaseChainSpec(ir::Chain& chain, ir::Family family) {
  ir::BaseChain base;
  if (chain.base) base = *chain.base;
  if (!ExpectWord(&base.type, "chain type")) return false;
  if (base.type != "filter" && base.type != "nat" && base.type != "route") {
    return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown chain type '", base.type, "'"),
                 ir::DidYouMean(base.type, {"filter", "nat", "route"}));
  }
  if (!AcceptWord("hook")) return ErrorUnexpected("'hook'");
  std::string hook;
  ir::SourceLoc hook_loc = Peek().loc;
  if (!ExpectWord(&hook, "hook name")) return false;
  std::optional<ir::Hook> h = ir::HookFromName(hook);
  if (!h) {
    return Error(hook_loc, absl::StrCat("unknown hook '", hook, "'"),
                 ir::DidYouMean(hook, {"prerouting", "input", "forward", "output",
                                       "postrouting", "ingress", "egress"}));
  }
  base.hook = *h;
  if (base.type == "nat" &&
      (*h == ir::Hook::kForward || *h == ir::Hook::kIngress || *h == ir::Hook::kEgress ||
       (family != ir::Family::kIp && family != ir::Family::kIp6 && family != ir::Family::kInet))) {
    return Error(hook_loc, "nat chains hook prerouting, input, output or postrouting "
                           "of ip, ip6 or inet tables");
  }
  // A route chain filters locally generated packets as a filter chain does
  // and, in the kernel, routes a packet again when it changed its mark,
  // addresses or tos: the kernel takes it at output of ip, ip6, inet only.
  if (base.type == "route" &&
      (*h != ir::Hook::kOutput ||
       (family != ir::Family::kIp && family != ir::Family::kIp6 && family != ir::Family::kInet))) {
    return Error(hook_loc, "route chains hook output of ip, ip6 or inet tables");
  }
  if (AcceptWord("device")) {
    if (!ExpectName(&base.device, "device name")) return false;
  } else if (AtWord("devices")) {
    ir::SourceLoc dloc = Next().loc;
    AcceptPunct("=");
    if (!ExpectPunct("{")) return false;
    if (!ExpectName(&base.device, "device name")) return false;
    if (!AtPunct("}")) return Error(dloc, "unsupported multi-device chain");
    Next();
  }
  if (!AcceptWord("priority")) return ErrorUnexpected("'priority'");
  if (!ParsePriority(&base.priority, family, base.hook)) return false;
  chain.base = base;
  return true;
}

// A number, or a standard name with an optional `+ N` / `- N`. nft 1.0.6
// takes `dstnat` at prerouting and `srcnat` at postrouting only ("invalid
// priority expression value in this context").
bool Parser::ParsePriority(int32_t* prio, ir::Family family, std::optional<ir::Hook> hook) {
  const Token& t = Peek();
  if (t.kind != Tok::kWord) return ErrorUnexpected("priority");
  std::string w = Next().text;
  ir::SourceLoc loc = toks_[pos_ - 1].loc;
  auto parse_signed = [](std::string_view s) -> std::optional<int64_t> {
    bool neg = !s.empty() && s[0] == '-';
    if (neg) s.remove_prefix(1);
    std::optional<U128> n = ParseNumber(s);
    if (!n || *n > 0x7fffffff) return std::nullopt;
    return neg ? -static_cast<int64_t>(*n) : static_cast<int64_t>(*n);
  };
  int64_t value = 0;
  if (auto n = parse_signed(w)) {
    value = *n;
  } else {
    // `filter`, `filter-10` (one word), `filter + 10`, `filter - 10`.
    std::string base = w;
    std::optional<int64_t> delta;
    size_t dash = w.find('-');
    if (dash != std::string::npos && dash > 0) {
      base = w.substr(0, dash);
      delta = parse_signed(w.substr(dash));
      if (!delta) return Error(loc, absl::StrCat("bad priority '", w, "'"));
    }
    std::optional<int32_t> named = NamedPriority(base);
    const bool ip_family = family == ir::Family::kIp || family == ir::Family::kIp6 ||
                           family == ir::Family::kInet;
    if (named && hook && ip_family &&
        ((base == "dstnat" && *hook != ir::Hook::kPrerouting) ||
         (base == "srcnat" && *hook != ir::Hook::kPostrouting))) {
      return Error(loc, absl::StrCat("priority '", base, "' is not valid at hook ",
                                     ir::HookName(*hook)),
                   base == "dstnat" ? "dstnat is for prerouting" : "srcnat is for postrouting");
    }
    if (!named) {
      return Error(loc, absl::StrCat("unknown priority '", w, "'"),
                   ir::DidYouMean(base, {"raw", "mangle", "dstnat", "filter",
                                         "security", "srcnat"}));
    }
    value = *named + delta.value_or(0);
    if (AtPunct("+") || AtWord("-")) {
      bool minus = Next().text == "-";
      std::string n;
      if (!ExpectWord(&n, "number")) return false;
      std::optional<int64_t> d = parse_signed(n);
      if (!d) return Error(toks_[pos_ - 1].loc, "expected a number");
      value += minus ? -*d : *d;
    }
  }
  *prio = static_cast<int32_t>(value);
  return true;
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
              t.FindChain(v.chain) == nullptr) {
            return Error(n.loc, absl::StrCat("jump to unknown chain '", v.chain, "'"));
          }
        }
      }
    }
    for (const ir::Set& s : t.sets) {
      for (const ir::SetElement& e : s.elements) {
        if (e.verdict && (e.verdict->code == ir::VerdictCode::kJump ||
                          e.verdict->code == ir::VerdictCode::kGoto) &&
            t.FindChain(e.verdict->chain) == nullptr) {
          return Error(e.loc, absl::StrCat("jump to unknown chain '", e.verdict->chain, "'"));
        }
      }
    }
  }
  return true;
}

}  // namespace rulejit::frontends::nft
