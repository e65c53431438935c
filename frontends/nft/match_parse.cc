// The grammar of a match, `LHS [op] RHS`, into an ast::Match that the
// linearizer lowers (match.cc, match_value.cc). `LHS set VALUE` is the
// payload set statement (set_stmt.cc).
//
//   RHS := @name | { elements } | vmap (@name | { k : verdict, ... })
//        | item (',' item)* ['/' flags]     (a flag list is one value)
#include <span>

#include "absl/strings/str_cat.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {

bool Parser::ParseMatch(ir::Rule& rule) {
  ast::Match m;
  if (!ParseLhs(&m.lhs)) return false;
  if (!ParseRelOp(&m)) return false;
  if (AtStmtEnd()) return ErrorUnexpected("a value to match");
  if (AtWord("set")) {
    if (m.op != ast::RelOp::kImplicit) return Error(m.op_loc, "unexpected operator before 'set'");
    Next();
    return ParsePayloadSet(rule, m.lhs);
  }
  if (!ParseRhs(&m)) return false;
  return lin_.Lower(rule, m);
}

// `==`, `!=`, `<`, `>`, `<=`, `>=`, `!` or `eq`, `ne`, `lt`, `gt`, `le`,
// `ge`; none is kImplicit.
bool Parser::ParseRelOp(ast::Match* m) {
  static const std::pair<std::string_view, ast::RelOp> kOps[] = {
      {"==", ast::RelOp::kEq}, {"!=", ast::RelOp::kNeq}, {"<", ast::RelOp::kLt},
      {">", ast::RelOp::kGt},  {"<=", ast::RelOp::kLte}, {">=", ast::RelOp::kGte},
      {"!", ast::RelOp::kNot}};
  static const std::pair<std::string_view, ast::RelOp> kWordOps[] = {
      {"eq", ast::RelOp::kEq}, {"ne", ast::RelOp::kNeq}, {"lt", ast::RelOp::kLt},
      {"gt", ast::RelOp::kGt}, {"le", ast::RelOp::kLte}, {"ge", ast::RelOp::kGte}};
  const Token& t = Peek();
  m->op_loc = t.loc;
  if (t.kind != Tok::kPunct && t.kind != Tok::kWord) return true;
  using Ops = std::span<const std::pair<std::string_view, ast::RelOp>>;
  for (const auto& [s, o] : t.kind == Tok::kPunct ? Ops(kOps) : Ops(kWordOps)) {
    if (s == t.text) {
      m->op = o;
      Next();
      return true;
    }
  }
  return true;
}

bool Parser::ParseRhs(ast::Match* m) {
  if (AcceptWord("vmap")) return ParseVmapRhs(m);
  if (AtWord("map")) return Error(Peek().loc, "unsupported map expression in a match");
  m->rhs_loc = Peek().loc;
  if (Peek().kind == Tok::kSetRef) {
    m->rhs = ast::NamedSetRhs{Next().text};
    return true;
  }
  if (!AtPunct("{")) return ParseValueListRhs(m);
  SetType st;
  st.fields = SetKeyFields(m->lhs.fields);
  std::vector<Element> elems;
  if (!ParseSetElements(st, &elems)) return false;
  if (elems.empty()) return Error(m->rhs_loc, "empty set");
  // `{ 22 }` is the value 22.
  if (elems.size() == 1 && m->lhs.fields.size() == 1 && !elems[0].key.empty()) {
    m->rhs = ast::ValueRhs{std::move(elems[0]), std::nullopt};
  } else {
    m->rhs = ast::SetRhs{std::move(elems)};
  }
  m->last_statement = AtStmtEnd() || AtWord("comment");
  return true;
}

// vmap @name / vmap { k : verdict, ... }
bool Parser::ParseVmapRhs(ast::Match* m) {
  if (m->op != ast::RelOp::kImplicit) return Error(m->op_loc, "unexpected operator before vmap");
  m->rhs_loc = Peek().loc;
  ast::VmapRhs r;
  if (Peek().kind == Tok::kSetRef) {
    r.named = Next().text;
  } else {
    SetType st{SetKeyFields(m->lhs.fields), /*is_map=*/true, /*verdict_map=*/true, {}};
    if (!ParseSetElements(st, &r.elements)) return false;
  }
  m->rhs = std::move(r);
  return true;
}

// `v`, `v1, v2` (a set, or one value of any of the flags on a flag type),
// `flags / mask`.
bool Parser::ParseValueListRhs(ast::Match* m) {
  const std::vector<Field>& fields = m->lhs.fields;
  const Field& f0 = fields[0];
  const bool flags = IsBitmask(f0.type) && fields.size() == 1;
  std::vector<Element> elems;
  do {
    Element e;
    e.loc = Peek().loc;
    SkipNewlines();
    if (!ParseConcatItem(fields, &e.key)) return false;
    elems.push_back(std::move(e));
  } while (AcceptPunct(","));
  std::optional<U128> flag_mask;
  if (AtWord("/") && flags) {
    Next();
    U128 mask = 0;
    if (!ParseConstExpr(f0, &mask, ",")) return false;
    flag_mask = mask;
  }
  m->last_statement = AtStmtEnd() || AtWord("comment");
  if (elems.size() > 1 && !flags) {
    m->rhs = ast::SetRhs{std::move(elems)};
    return true;
  }
  // `syn,ack` on a flag type is one value: any of the flags.
  Element merged = elems[0];
  for (const Element& e : elems) {
    if (elems.size() == 1) break;
    if (e.key[0].kind != Item::Kind::kValue) return Error(e.loc, "unexpected range in a flag list");
    merged.key[0].lo.num |= e.key[0].lo.num;
  }
  m->rhs = ast::ValueRhs{std::move(merged), flag_mask};
  return true;
}

}  // namespace rulejit::frontends::nft
