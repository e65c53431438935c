// Lowering of a match `LHS [op] RHS` whose right-hand side is a set: the
// dispatch over ast::Rhs, vmaps, named and anonymous set lookups.
//
//   tcp dport { 22, 80 }      → deps, [ payload load 2b @ th + 2 ]
//                               [ lookup reg 1 set __set0 ]
//   tcp dport vmap { 22 : accept }
//                             → deps, load, [ lookup ... dreg 0 ]
//   ip saddr . tcp dport @s   → deps, loads into reg 1 and 9, lookup
//
// Host-order keys (meta/ct) of interval sets are byte-swapped first,
// because the kernel compares interval keys with memcmp. Single values are
// lowered in match_value.cc.
#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"
#include "frontends/nft/lower_util.h"

namespace rulejit::frontends::nft {

bool Linearizer::LowerMatch(ir::Rule& rule, const ast::Match& m) {
  // One case per right-hand side kind: a new ast::Rhs kind fails to compile.
  struct Dispatch {
    Linearizer& lin;
    ir::Rule& rule;
    const ast::Match& m;
    bool operator()(const ast::VmapRhs& r) { return lin.LowerVmap(rule, m, r); }
    bool operator()(const ast::NamedSetRhs& r) { return lin.LowerNamedSetMatch(rule, m, r); }
    bool operator()(const ast::SetRhs& r) {
      return lin.CheckSetOperator(m) && lin.CheckOperator(m) &&
             lin.LowerSetMatch(rule, m, "", r.elements);
    }
    bool operator()(const ast::ValueRhs& r) {
      return lin.CheckOperator(m) && lin.LowerValueMatch(rule, m, r);
    }
  };
  return std::visit(Dispatch{*this, rule, m}, m.rhs);
}

// A set takes `==` and `!=` only.
bool Linearizer::CheckSetOperator(const ast::Match& m) {
  if (m.op != ast::RelOp::kImplicit && m.op != ast::RelOp::kEq && m.op != ast::RelOp::kNeq) {
    return Error(m.op_loc, "unsupported operator with a set");
  }
  return true;
}

// `!` is for flag types, and not after a binary operation.
bool Linearizer::CheckOperator(const ast::Match& m) {
  if (m.op == ast::RelOp::kNot && !IsBitmask(m.lhs.fields[0].type)) {
    return Error(m.op_loc, "'!' needs a flag type (use '!=')");
  }
  if (m.lhs.has_binop && m.op == ast::RelOp::kNot) {
    return Error(m.op_loc, "'!' after a binary operation");
  }
  return true;
}

// `KEY vmap { k : verdict }` / `KEY vmap @name` → loads, [ lookup dreg 0 ]
bool Linearizer::LowerVmap(ir::Rule& rule, const ast::Match& m, const ast::VmapRhs& r) {
  std::string set_name = r.named;
  if (!set_name.empty()) {
    const ir::Set* s = FindTableSet(set_name);
    if (s == nullptr || !s->verdict_map) {
      return Error(m.rhs_loc, absl::StrCat("no verdict map '", set_name, "'"));
    }
  } else {
    SetType st{SetKeyFields(m.lhs.fields), /*is_map=*/true, /*verdict_map=*/true, {}};
    if (!AddAnonSet(st, r.elements, m.rhs_loc, &set_name)) return false;
  }
  if (!EmitKeyLoads(rule, m.lhs.fields, FindSet(set_name))) return false;
  ir::Lookup lk;
  lk.sreg = 1;
  lk.set = set_name;
  lk.dreg = ir::kVerdictReg;
  Emit(rule, lk, m.lhs.loc);
  return true;
}

// `KEY @name`: the set must exist with a key as long as the expression's.
bool Linearizer::LowerNamedSetMatch(ir::Rule& rule, const ast::Match& m,
                                    const ast::NamedSetRhs& r) {
  const ir::Set* s = FindTableSet(r.name);
  if (s == nullptr) {
    std::vector<std::string_view> names;
    for (const ir::Set& x : table_->sets) {
      if (!x.anonymous()) names.push_back(x.name);
    }
    return Error(m.rhs_loc, absl::StrCat("no set '", r.name, "' in table '", table_->name, "'"),
                 ir::DidYouMean(r.name, names));
  }
  const uint32_t key_len = SetKeyLen(m.lhs.fields);
  if (s->key_len != key_len) {
    return Error(m.rhs_loc, absl::StrCat("set '", r.name, "' has a ", s->key_len,
                                         "-byte key, the expression is ", key_len, " bytes"));
  }
  return CheckSetOperator(m) && CheckOperator(m) && LowerSetMatch(rule, m, r.name, {});
}

// Deps, key loads, the anonymous set (when `set_name` is empty), lookup.
bool Linearizer::LowerSetMatch(ir::Rule& rule, const ast::Match& m, std::string set_name,
                               const std::vector<Element>& elems) {
  const Lhs& lhs = m.lhs;
  for (const Field& f : lhs.fields) {
    if (!EmitDeps(rule, f)) return false;
  }
  const bool named = !set_name.empty();
  const ir::Set* declared = named ? FindTableSet(set_name) : nullptr;
  const bool interval = named ? declared != nullptr && declared->interval() : HasRanges(elems);
  EmitSetMatchLoads(rule, lhs, named, interval);
  const bool concat = lhs.fields.size() > 1;
  SetType st{SetKeyFields(lhs.fields), false, false, {}};
  if (!named && !AddAnonSet(st, elems, m.rhs_loc, &set_name)) return false;
  const ir::Set* s = FindSet(set_name);
  const Field& f0 = lhs.fields[0];
  if (!concat && f0.host_order && f0.LoadLen() > 1 && s != nullptr && s->interval()) {
    ir::Byteorder bo;
    bo.op = ir::ByteorderOp::kHton;
    bo.len = bo.size = f0.LoadLen();
    Emit(rule, bo, m.rhs_loc);
  }
  ir::Lookup lk;
  lk.sreg = 1;
  lk.set = set_name;
  lk.invert = m.op == ast::RelOp::kNeq;
  Emit(rule, lk, m.rhs_loc);
  if (!concat && !elems.empty() && (m.op == ast::RelOp::kImplicit || m.op == ast::RelOp::kEq)) {
    NoteSetContext(f0, elems);
  }
  return true;
}

// The key of a set match into consecutive registers: a single field with
// its field mask and the user's `& | ^` merged into one bitwise, a
// concatenation as EmitKeyLoads lays it out.
void Linearizer::EmitSetMatchLoads(ir::Rule& rule, const Lhs& lhs, bool named, bool interval) {
  if (lhs.fields.size() > 1) {
    EmitKeyFieldLoads(rule, lhs.fields, named, interval);
    return;
  }
  const Field& f = lhs.fields[0];
  EmitLoad(rule, f, 1, f.LoadLen());
  if (f.NeedsMask() || lhs.has_binop) {
    U128 mask = BitsMask(f.len_bits), xr = 0;
    if (lhs.has_binop) {
      mask &= lhs.and_mask;
      xr = lhs.xor_val & BitsMask(f.len_bits);
    }
    EmitBitwise(rule, f, 1, mask, xr);
  }
  if (named && IsShiftedBitfield(f)) EmitBitfieldShiftDown(rule, f, 1, f.LoadLen());
}

}  // namespace rulejit::frontends::nft
