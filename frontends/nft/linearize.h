// The nft linearizer (internal to frontends/nft): evaluates a rule's syntax
// tree against nft's protocol context (implicit dependencies, deps.cc) and
// lowers it to IR expressions, the way nft's evaluate and
// netlink_linearize steps do. One short function per match right-hand side
// kind and per statement kind, dispatched by std::visit over ast::Rhs,
// ast::Statement and ast::SetValue, so a new kind is a compile error until
// it is lowered.
//
//   parser ─ ast::Statement ─▶ Linearizer::Lower (lower_stmt.cc) ─▶ ir::Rule
//                              │ match.cc         sets, named sets, vmaps
//                              │ match_value.cc   values, ranges, prefixes, flags
//                              │ lower_set.cc     meta/ct set, payload set
//                              │ lower_nat.cc     snat, dnat, masquerade, redirect
//                              │ value_expr.cc    `meta mark set` expressions
//                              │ deps.cc          protocol context, implicit deps
//                              │ emit.cc          loads, encodings, key loads
//                              │ set_elements.cc  { ... } → ir::Set
//                              └ stmt_reduce.cc   payload compares merged (per rule)
//
// A rule is lowered statement by statement as the parser finishes each one,
// so messages come in the order of the text.
#ifndef RULEJIT_FRONTENDS_NFT_LINEARIZE_H_
#define RULEJIT_FRONTENDS_NFT_LINEARIZE_H_

#include <string>
#include <string_view>
#include <vector>

#include "frontends/nft/ast.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/set_name_index.h"

namespace rulejit::frontends::nft {

// nft's stmt_reduce (stmt_reduce.cc): merges a rule's adjacent payload
// equality matches into one load and compare.
void MergePayloadCompares(ir::Rule& rule);

// The checksums a write to header field `f` must update (lower_set.cc);
// false for headers whose writes are not supported.
bool WriteChecksum(const Field& f, ir::PayloadWrite* w);

// Where the parser and the linearizer report user errors: only the first
// error of a parse is kept (the parse stops there).
struct ErrorSink {
  explicit ErrorSink(ir::Diagnostics& d) : diags(d) {}
  // Records the error unless one was recorded already; returns false.
  bool Error(ir::SourceLoc loc, std::string msg, std::string hint = "");
  ir::Diagnostics& diags;
  bool failed = false;
};

// What the rule has established so far (nft's protocol context), used to
// add implicit dependencies only once.
struct ProtoCtx {
  int net = 0;      // 4 or 6 once known
  int l4 = -1;      // transport protocol number once known
  // Transport protocols an anonymous set allowed (`meta l4proto { tcp,
  // udp }`): with more than one, a tcp/udp/... header field is ambiguous.
  std::vector<int> l4_alternatives;
  // `ct [original|reply] protocol` matched where the network protocol is
  // known (an ip or ip6 table, or after `meta nfproto`): nft then knows the
  // transport protocol of `ct proto-src` / `ct proto-dst` too.
  bool ct_l4 = false;
  bool link = false;
  bool vlan = false;
  bool icmp_type = false;  // icmp/icmpv6 type already tested
  int ethertype = -1;      // `ether type X` matched
  int icmp_type_value = -1;  // `icmp type X` matched
};

// "counter", "quota", "ct helper", ... for ir::kObj* (objects.cc).
const char* ObjectTypeName(uint32_t type);

class Linearizer {
 public:
  explicit Linearizer(ErrorSink& sink) : sink_(sink) {}

  // Starts a rule of `table`: an empty protocol context, no pending sets.
  void StartRule(ir::Table& table);
  // Points at `table` without starting a rule (set declarations).
  void SetTable(ir::Table& table) { table_ = &table; }
  const ProtoCtx& ctx() const { return ctx_; }
  // Whether the rule's network protocol is known (nft's network base).
  bool NetworkKnown() const;
  // The anonymous sets the rule needs, to add to the table with it.
  std::vector<ir::Set> TakePendingSets();
  int anon_counter() const { return anon_counter_; }
  void set_anon_counter(int n) { anon_counter_ = n; }

  // Lowers one statement (lower_stmt.cc).
  bool Lower(ir::Rule& rule, const ast::Statement& stmt);

  // ---- primitives also used by the statements still lowered while parsed
  void Emit(ir::Rule& rule, ir::Expr e, ir::SourceLoc loc);
  void EmitLoad(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len);
  ir::Bytes Encode(const Field& f, const Value& v, uint32_t len);
  ir::Bytes EncodeNum(const Field& f, U128 v, uint32_t len);
  bool EmitDeps(ir::Rule& rule, const Field& f);
  bool EmitNetDep(ir::Rule& rule, int net, ir::SourceLoc loc);
  // Loads a set or map key; `set` (may be null) says whether it is an
  // interval set and whether it is named.
  bool EmitKeyLoads(ir::Rule& rule, const std::vector<Field>& fields, const ir::Set* set);
  // The loads of a key, from register `first` on (a jhash key goes into
  // the hash's register).
  void EmitKeyFieldLoads(ir::Rule& rule, const std::vector<Field>& fields, bool named,
                         bool interval, ir::Reg first = ir::RegForWord(0));
  // One field of such a key, loaded into `reg`.
  void EmitKeyFieldLoad(ir::Rule& rule, const Field& f, ir::Reg reg, bool shift_down,
                        bool interval);
  void EmitBitwise(ir::Rule& rule, const Field& f, ir::Reg reg, U128 mask, U128 xr);
  void EmitBitfieldShiftDown(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len);
  // Loads a map's key and looks it up; the data goes to reg 1 (lower_set.cc).
  bool EmitMapLookup(ir::Rule& rule, const ast::MapValue& m);
  // Does the rule match a transport protocol (a nat port needs one)?
  bool HasTransportMatch(const ir::Rule& rule) const;
  // value_expr.cc
  bool EmitValueSource(ir::Rule& rule, const Field& f, uint32_t len, ir::Reg reg = 1);
  bool EmitValueExpr(ir::Rule& rule, const Field& target, const ValueExpr& v, ir::Reg reg,
                     ir::SourceLoc loc);
  bool EmitNarrowSource(ir::Rule& rule, const Lhs& src, uint32_t len);
  bool EmitSetTarget(ir::Rule& rule, const Field& target, bool is_ct);
  // set_elements.cc
  bool AddAnonSet(const SetType& st, const std::vector<Element>& elems, ir::SourceLoc loc,
                  std::string* name);
  // The set `name` of the rule's pending sets or of the table, or null.
  const ir::Set* FindSet(const std::string& name) const;
  bool FillSet(ir::Set& set, const SetType& st, const std::vector<Element>& elems);
  bool CheckOverlaps(const ir::Set& set);
  // concat_overlap.cc: elements [before, ..) of a concatenated interval
  // set the kernel would refuse, as a located error.
  bool CheckConcatElements(const ir::Set& set, size_t before);
  // Merges touching and overlapping intervals of a one-field interval set.
  void MergeIntervals(ir::Set& set);

 private:
  bool Error(ir::SourceLoc loc, std::string msg, std::string hint = "") {
    return sink_.Error(loc, std::move(msg), std::move(hint));
  }

  // ---- statements (lower_stmt.cc)
  bool EmitStatement(ir::Rule& rule, ir::Expr e, ir::SourceLoc loc);
  bool LowerVerdict(ir::Rule& rule, const ast::Verdict& s);
  bool LowerReject(ir::Rule& rule, const ast::Reject& s);
  // Lowers `reject with ...`'s dependency to the front of the rule.
  bool EmitDepsInFront(ir::Rule& rule, const Field* dep, int net, ir::SourceLoc loc);

  // ---- set statements (lower_set.cc)
  bool LowerMetaCtSet(ir::Rule& rule, const ast::MetaCtSet& s);
  bool EmitSetConstant(ir::Rule& rule, const ast::MetaCtSet& s, const ast::SetConstant& c);
  bool EmitFieldValue(ir::Rule& rule, const ast::MetaCtSet& s, const Lhs& src);
  bool LowerPayloadSet(ir::Rule& rule, const ast::PayloadSet& s);
  bool EmitPayloadSetValue(ir::Rule& rule, const ast::PayloadSet& s);
  bool LowerTcpOptionSet(ir::Rule& rule, const ast::PayloadSet& s);
  // ---- nat (lower_nat.cc)
  bool LowerNat(ir::Rule& rule, const ast::Nat& s);
  bool LowerNatMap(ir::Rule& rule, const ast::Nat& s, ir::Nat nat);
  bool LowerObjref(ir::Rule& rule, const ast::Objref& s);
  // ---- dynamic sets (lower_dynset.cc)
  bool LowerDynset(ir::Rule& rule, const ast::Dynset& s);
  void EmitDynsetParts(ir::Rule& rule, const std::vector<ast::DynsetPart>& parts, int word);

  // ---- matches (match.cc)
  bool LowerMatch(ir::Rule& rule, const ast::Match& m);
  bool CheckSetOperator(const ast::Match& m);
  bool CheckOperator(const ast::Match& m);
  bool LowerVmap(ir::Rule& rule, const ast::Match& m, const ast::VmapRhs& r);
  bool LowerNamedSetMatch(ir::Rule& rule, const ast::Match& m, const ast::NamedSetRhs& r);
  bool LowerSetMatch(ir::Rule& rule, const ast::Match& m, std::string set_name,
                     const std::vector<Element>& elems);
  void EmitSetMatchLoads(ir::Rule& rule, const Lhs& lhs, bool named, bool interval);
  // ---- single values (match_value.cc)
  bool LowerValueMatch(ir::Rule& rule, const ast::Match& m, const ast::ValueRhs& r);
  bool DropsOwnProtocol(const ast::Match& m, const Lhs& lhs, const Item& it);
  bool EmitBitfieldMaskMatch(ir::Rule& rule, const Field& f, const Lhs& lhs, ir::CmpOp op,
                             const Item& it);
  bool EmitPrefixBytesMatch(ir::Rule& rule, const ast::Match& m, const Field& f,
                            const Item& it);
  bool EmitConcatValueMatch(ir::Rule& rule, const ast::Match& m, const Element& e);
  bool EmitSingleValueMatch(ir::Rule& rule, const ast::Match& m, const Lhs& lhs,
                            const ast::ValueRhs& r, const Item& it);
  void EmitValueMask(ir::Rule& rule, const Lhs& lhs, const ast::ValueRhs& r, const Item& it,
                     bool implicit_flags);
  bool EmitValueCompare(ir::Rule& rule, const ast::Match& m, const Lhs& lhs, const Item& it,
                        bool swap);
  bool EmitRangeCompare(ir::Rule& rule, const ast::Match& m, const Field& f, const Item& it,
                        bool swap);
  bool EmitStringCompare(ir::Rule& rule, const ast::Match& m, const Field& f, const Item& it);

  // ---- protocol context and dependencies (deps.cc)
  bool EmitL3L4Deps(ir::Rule& rule, const Field& f);
  bool EmitL4Dep(ir::Rule& rule, const Field& f);
  bool EmitNetdevL4Dep(ir::Rule& rule, const Field& f, int net);
  bool EmitLinkDeps(ir::Rule& rule, const Field& f);
  bool EmitIcmpTypeDep(ir::Rule& rule, const Field& f);
  void NoteContext(const Field& f, const Item& item);
  void NoteSetContext(const Field& f, const std::vector<Element>& elems);

  // ---- value expressions (value_expr.cc)
  // `& | ^` constants of a value expression, merged: value = (value & mask) ^ xr.
  struct ConstantMask {
    U128 mask = 0xffffffffu;
    U128 xr = 0;
    bool pending = false;
    // Merges `op c` when op is & | ^; false for other operations.
    bool Add(char op, U128 c) {
      const U128 all = 0xffffffffu;
      switch (op) {
        case '&': mask &= c; xr &= c; break;
        case '|': mask &= ~c & all; xr = (xr & ~c) | c; break;
        case '^': xr ^= c; break;
        default: return false;
      }
      pending = true;
      return true;
    }
  };
  bool EmitValueDeps(ir::Rule& rule, const ValueExpr& v);
  bool EmitValueSteps(ir::Rule& rule, const Field& target, const ValueExpr& v, ir::Reg reg,
                      ir::SourceLoc loc);
  void EmitConstantMask(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len, bool network,
                        ir::SourceLoc loc, ConstantMask* m);

  // ---- set elements and anonymous sets (set_elements.cc)
  ir::Bytes EncodeData(const SetType& st, const Element& e);
  ir::Bytes EncodeDataRange(const SetType& st, const Element& e);
  bool EncodeElementKey(const ir::Set& set, const SetType& st, const Element& e,
                        ir::SetElement* out);
  bool EncodeKeyItem(const ir::Set& set, const Field& f, const Item& it, ir::Bytes* lo,
                     ir::Bytes* hi);
  std::string FreshAnonName(std::string_view prefix);
  // The table's set `name` (Table::FindSet through the hashed index), or null.
  const ir::Set* FindTableSet(std::string_view name) const { return table_sets_.Find(*table_, name); }

  ErrorSink& sink_;
  ir::Table* table_ = nullptr;
  ProtoCtx ctx_;
  std::vector<ir::Set> pending_sets_;  // anonymous sets of the current rule
  int anon_counter_ = 0;
  mutable ir::SetNameIndex table_sets_;  // of *table_, caught up on each lookup
};

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_LINEARIZE_H_
