// The grammar of the statements that change a set from the packet path
// (lowered in lower_dynset.cc):
//
//   add|update|delete @SET { KEY [timeout T] [STMT ...] [: DATA] }
//   set add|update KEY [timeout T] @SET          (the older spelling)
//   meter NAME [size N] { KEY [timeout T] STMT }   (declares set NAME)
//
// KEY and DATA are concatenations (`.`) of fields and constants; a
// constant takes the type of the set's field at its place, so the set
// must be declared before the rule then. STMT: counter, limit, quota,
// each kept per element. At the end of the file, the sets these statements
// change become dynamic, and what the kernel refuses (nft_dynset_init) is
// an error at the statement.
#include "absl/strings/str_cat.h"
#include "frontends/nft/parser.h"
#include "ir/dynset_eval.h"
#include "ir/util.h"

namespace rulejit::frontends::nft {
namespace {

// Does `t` start a field (as opposed to a constant)?
bool StartsField(const Token& t) {
  if (t.kind != Tok::kWord) return false;
  const std::string& w = t.text;
  return StartsSourceField(w) || w == "fib" || w == "rt" || w == "exthdr" || w == "jhash" ||
         w == "symhash";
}

ir::DynsetOp OpFromWord(std::string_view w) {
  if (w == "add") return ir::DynsetOp::kAdd;
  if (w == "update") return ir::DynsetOp::kUpdate;
  return ir::DynsetOp::kDelete;
}

}  // namespace

const SetType* Parser::KnownSetType(std::string_view set) const {
  auto it = set_types_.find(SetKey(*table_, set));
  return it == set_types_.end() ? nullptr : &it->second;
}

bool Parser::ParseDynset(ast::Statement* out) {
  ast::Dynset d;
  d.loc = Peek().loc;
  d.op = OpFromWord(Next().text);
  d.set = Next().text;  // the @SET token
  if (!ExpectPunct("{") || !ParseDynsetElement(KnownSetType(d.set), &d) || !ExpectPunct("}")) {
    return false;
  }
  *out = std::move(d);
  return true;
}

bool Parser::ParseLegacySetStmt(ast::Statement* out) {
  ast::Dynset d;
  d.loc = Next().loc;  // set
  d.op = OpFromWord(Next().text);
  if (!ParseDynsetParts(nullptr, &d.key)) return false;
  bool done = false;
  while (!done && !sink_.failed) {
    if (!ParseDynsetOption(&d, &done)) return false;
  }
  if (Peek().kind != Tok::kSetRef) return ErrorUnexpected("a set (@name)");
  d.set = Next().text;
  *out = std::move(d);
  return true;
}

bool Parser::ParseMeter(ast::Statement* out) {
  ast::Dynset d;
  d.loc = Next().loc;  // meter
  if (!ExpectIdentifier(&d.set, "meter name")) return false;
  uint32_t size = 0;
  if (AcceptWord("size")) {
    std::string w;
    if (!ExpectWord(&w, "meter size")) return false;
    auto n = ParseNumber(w);
    if (!n || *n == 0 || *n > UINT32_MAX) return Error(toks_[pos_ - 1].loc, "bad meter size");
    size = static_cast<uint32_t>(*n);
  }
  if (!ExpectPunct("{") || !ParseDynsetElement(KnownSetType(d.set), &d) || !ExpectPunct("}")) {
    return false;
  }
  // nft: a meter with a timeout refreshes it, one without only adds.
  d.op = d.timeout_ms != 0 ? ir::DynsetOp::kUpdate : ir::DynsetOp::kAdd;
  if (!DeclareMeterSet(d, size, d.loc)) return false;
  *out = std::move(d);
  return true;
}

// KEY [options and statements] [: DATA], inside the braces.
bool Parser::ParseDynsetElement(const SetType* st, ast::Dynset* d) {
  SkipNewlines();
  if (!ParseDynsetParts(st != nullptr ? &st->fields : nullptr, &d->key)) return false;
  bool done = false;
  while (!done && !sink_.failed) {
    SkipNewlines();
    if (!ParseDynsetOption(d, &done)) return false;
  }
  if (Peek().text == ":" && Peek().kind != Tok::kString) {
    Next();
    std::vector<Field> data_types;
    if (st != nullptr && st->is_map && !st->verdict_map) {
      data_types.push_back(st->data);
      data_types.insert(data_types.end(), st->data_rest.begin(), st->data_rest.end());
    }
    if (!ParseDynsetParts(st != nullptr ? &data_types : nullptr, &d->data)) return false;
  }
  SkipNewlines();
  return !sink_.failed;
}

bool Parser::ParseDynsetParts(const std::vector<Field>* types,
                              std::vector<ast::DynsetPart>* parts) {
  do {
    ast::DynsetPart p;
    p.loc = Peek().loc;
    const size_t at = parts->size();
    if (StartsField(Peek())) {
      Field f;
      if (!ParseField(&f)) return false;
      p.field = f;
    } else {
      if (types == nullptr || at >= types->size()) {
        return Error(p.loc, "a constant here needs the set declared, with its type, before "
                            "this rule");
      }
      const Field& type = (*types)[at];
      Item item;
      if (!ParseItem(type, &item)) return false;
      if (item.kind != Item::Kind::kValue) {
        return Error(item.loc, "only single values can be put into a set from a rule");
      }
      p.constant = lin_.Encode(type, item.lo, type.LoadLen());
    }
    parts->push_back(std::move(p));
  } while (AcceptWord("."));
  return true;
}

// `timeout T`, `comment "..."` and the element's statements; `done` at
// anything else.
bool Parser::ParseDynsetOption(ast::Dynset* d, bool* done) {
  ast::Statement stmt;
  if (AcceptWord("timeout")) {
    std::string w;
    if (!ExpectWord(&w, "timeout")) return false;
    auto ms = ParseValue(DType::kTime, w, 64);
    if (!ms || ms->num == 0 || ms->num > UINT64_MAX / 1000000) {
      return Error(toks_[pos_ - 1].loc, absl::StrCat("bad timeout '", w, "'"));
    }
    d->timeout_ms = static_cast<uint64_t>(ms->num);
  } else if (AcceptWord("comment")) {
    if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
    Next();
  } else if (AtWord("counter")) {
    if (!ParseCounter(&stmt)) return false;
    d->exprs.push_back(std::get<ast::Counter>(stmt).counter);
  } else if (AtWord("limit")) {
    if (!ParseLimit(&stmt)) return false;
    d->exprs.push_back(std::get<ast::Limit>(stmt).limit);
  } else if (AtWord("quota")) {
    if (!ParseQuota(&stmt)) return false;
    d->exprs.push_back(std::get<ast::Quota>(stmt).quota);
  } else if (AtWord("ct") || AtWord("last") || AtWord("expires")) {
    return Error(Peek().loc,
                 absl::StrCat("unsupported element statement '", Peek().text, "'"));
  } else {
    *done = true;
  }
  return true;
}

// nft declares a meter's set: the key's type, dynamic, with timeouts when
// the meter has one.
bool Parser::DeclareMeterSet(const ast::Dynset& d, uint32_t size, ir::SourceLoc loc) {
  if (lin_.FindSet(d.set) != nullptr) return true;
  ir::Set set;
  set.name = d.set;
  set.loc = loc;
  set.flags = ir::kSetEval | (d.timeout_ms != 0 ? ir::kSetTimeout : 0);
  set.size = size;
  SetType st;
  for (const ast::DynsetPart& p : d.key) {
    if (!p.field) return Error(p.loc, "a meter's key is made of fields");
    st.fields.push_back(*p.field);
    set.field_lens.push_back(p.field->LoadLen());
    set.key_len += ir::Pad4(p.field->LoadLen());
  }
  set_types_[SetKey(*table_, d.set)] = st;
  table_->sets.push_back(std::move(set));
  return true;
}

// After the whole file: every set a statement changes is dynamic; what
// nft_dynset_init refuses is an error at the statement.
bool Parser::MarkDynamicSets(ir::Ruleset& rs) {
  for (ir::Table& t : rs.tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        if (!MarkDynamicSets(t, r)) return false;
      }
    }
  }
  return true;
}

// The same for one rule of `t`; on an error no set is marked.
bool Parser::MarkDynamicSets(ir::Table& t, const ir::Rule& r) {
  std::vector<ir::Set*> changed;
  for (const ir::Node& n : r.exprs) {
    const auto* d = std::get_if<ir::Dynset>(&n.expr);
    if (d == nullptr) continue;
    ir::Set* set = nullptr;
    for (ir::Set& s : t.sets) {
      if (s.name == d->set) set = &s;
    }
    if (set == nullptr) {
      return Error(n.loc, absl::StrCat("no set '", d->set, "' in table '", t.name, "'"));
    }
    const char* refusal = ir::DynsetRefusal(*set, *d);
    if (refusal != nullptr) return Error(n.loc, refusal);
    changed.push_back(set);
  }
  for (ir::Set* set : changed) set->flags |= ir::kSetEval;
  return true;
}

}  // namespace rulejit::frontends::nft
