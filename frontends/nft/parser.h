// The nft parser (internal to frontends/nft): a recursive-descent parser
// over lexer tokens that lowers as it goes, the way nft's evaluate and
// netlink_linearize steps do, straight into IR tables, chains, rules and
// sets. parser.cc holds the ruleset grammar (tables, chains, sets, commands,
// define/include); rule.cc the rule grammar and its lowering.
#ifndef RULEJIT_FRONTENDS_NFT_PARSER_H_
#define RULEJIT_FRONTENDS_NFT_PARSER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "frontends/nft/fields.h"
#include "frontends/nft/lexer.h"
#include "frontends/nft/values.h"
#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends::nft {

// One item on the right-hand side of a match or in a set: a value, a range
// `lo-hi` or a prefix `v/len`. For concatenations, one per field.
struct Item {
  enum class Kind : uint8_t { kValue, kRange, kPrefix };
  Kind kind = Kind::kValue;
  Value lo;
  U128 hi = 0;           // kRange
  uint32_t prefix = 0;   // kPrefix
  // kRange whose ends nft swapped (an hour range that wraps at midnight
  // UTC): it matches outside [lo, hi].
  bool outside = false;
  ir::SourceLoc loc;
};

// A set element: one Item per concatenated field, plus a map value.
struct Element {
  std::vector<Item> key;
  std::optional<ir::Verdict> verdict;
  std::optional<Value> data;
  ir::SourceLoc loc;
};

// The left-hand side of a match: one field, or a concatenation.
struct Lhs {
  std::vector<Field> fields;
  // `& MASK` / `| X` / `^ X` applied to a single field (in field units).
  bool has_binop = false;
  U128 and_mask = ~static_cast<U128>(0);
  U128 xor_val = 0;
  ir::SourceLoc loc;
};

// What the rule has established so far (nft's protocol context), used to
// add implicit dependencies only once.
struct ProtoCtx {
  int net = 0;      // 4 or 6 once known
  int l4 = -1;      // transport protocol number once known
  // Transport protocols an anonymous set allowed (`meta l4proto { tcp,
  // udp }`): with more than one, a tcp/udp/... header field is ambiguous.
  std::vector<int> l4_alternatives;
  bool link = false;
  bool vlan = false;
  bool icmp_type = false;  // icmp/icmpv6 type already tested
  int ethertype = -1;      // `ether type X` matched
  int icmp_type_value = -1;  // `icmp type X` matched
};

// A set statement's value (value_expr.cc): a folded constant, or one field
// followed by operations ('&' '|' '^' with a constant or with another
// field's value, 'l' << and 'r' >> by a constant).
struct ValueExpr {
  struct Step {
    char op = 0;
    U128 constant = 0;
    // Set: the operand is this value, computed in the next register
    // (a bitwise with a register operand).
    std::shared_ptr<const ValueExpr> operand;
  };
  bool has_source = false;
  Field source;
  U128 constant = 0;
  std::vector<Step> ops;
};

// The key/data layout of a set, derived from a type or typeof declaration.
struct SetType {
  std::vector<Field> fields;  // one per concatenated key field
  bool is_map = false;
  bool verdict_map = false;
  Field data;                 // map data type (when !verdict_map)
};

class Parser {
 public:
  Parser(ir::Diagnostics& diags, int file, std::string_view text,
         std::string base_dir, int depth);

  bool ParseFile(ir::Ruleset& rs);
  bool ParseRuleOnly(ir::Table& table, std::string_view chain);
  bool ParseSetDeclOnly(ir::Table& table, std::string_view name);
  bool ParseElementsOnly(ir::Table& table, std::string_view name);

 private:
  // ---- tokens (parser.cc)
  const Token& Peek();
  const Token& PeekAt(size_t ahead);
  Token Next();
  bool AtWord(std::string_view w);
  bool AtPunct(std::string_view p);
  bool AcceptWord(std::string_view w);
  bool AcceptPunct(std::string_view p);
  bool ExpectPunct(std::string_view p);
  bool ExpectWord(std::string* out, std::string_view what);
  bool ExpectName(std::string* out, std::string_view what);
  bool AtStmtEnd();
  void SkipNewlines();
  bool SkipSeparators();
  bool Error(ir::SourceLoc loc, std::string msg, std::string hint = "");
  bool ErrorUnexpected(std::string_view what);
  bool ExpandVar();

  // ---- ruleset grammar (parser.cc)
  bool ParseTopLevel();
  bool ParseDefine();
  bool ParseInclude();
  bool ParseCommand(bool insert);
  bool ParseFamily(ir::Family* family);
  ir::Table& GetTable(ir::Family family, const std::string& name,
                      ir::SourceLoc loc);
  bool ParseTableBlock(size_t table_index);
  bool ParseChainBlock(size_t table_index, const std::string& name,
                       ir::SourceLoc loc);
  bool ParseChainHeader(ir::Chain& chain, ir::Family family);
  bool ParsePriority(int32_t* prio, ir::Family family);
  bool ParseSetBlock(ir::Table& table, const std::string& name, bool is_map,
                     ir::SourceLoc loc);
  bool ParseSetTypeSpec(SetType* st, ir::Set& set, bool is_map);
  bool ParseTypeofExpr(std::vector<Field>* fields);
  bool ParseElementBlock(ir::Table& table, ir::Set& set);
  bool SkipBlock();
  bool CheckJumpTargets(const ir::Ruleset& rs);

  // ---- rules (rule.cc)
  bool ParseRule(ir::Table& table, ir::Chain& chain, bool insert);
  bool ParseStatement(ir::Rule& rule);
  bool ParseMatch(ir::Rule& rule);
  bool ParseLhs(Lhs* lhs);
  bool ParseField(Field* field);
  bool ParseRawPayload(Field* field);
  bool ParseOptionField(std::string_view proto, Field* field);
  bool ParseOffsetLength(uint32_t max, std::string_view what, uint32_t nums[2]);
  bool ParseBinopOperand(const Field& f, U128* out);
  bool ParseConstExpr(const Field& f, U128* out);
  bool ParseItem(const Field& f, Item* item);
  bool ParseConcatItem(const std::vector<Field>& fields,
                       std::vector<Item>* items);
  bool ParseSetElements(const SetType& st, std::vector<Element>* elems);
  bool ParseVerdict(ir::Verdict* v);
  bool ParseMapValue(const SetType& st, Element* e);
  void SplitMapWord(const SetType& st);
  void MergePayloadCompares(ir::Rule& rule);
  bool ParseSetStmt(ir::Rule& rule, const Field& target, bool is_ct);
  bool ParseSetConstant(const Field& target, Item* first, U128* v);
  bool ParsePayloadSet(ir::Rule& rule, const Lhs& lhs);
  bool ParseMapStmtSource(ir::Rule& rule, const Lhs& src, const Field& target);
  bool EmitSetTarget(ir::Rule& rule, const Field& target, bool is_ct);
  // value_expr.cc
  bool IsValueExprTarget(const Field& target) const;
  bool ParseValuePrimary(const Field& target, ValueExpr* out);
  bool ParseValueExpr(const Field& target, int min_prec, ValueExpr* out);
  bool EmitValueSource(ir::Rule& rule, const Field& f, uint32_t len, ir::Reg reg = 1);
  bool EmitValueDeps(ir::Rule& rule, const ValueExpr& v);
  void EmitBitfieldShiftDown(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len);
  bool EmitValueExpr(ir::Rule& rule, const Field& target, const ValueExpr& v, ir::Reg reg,
                     ir::SourceLoc loc);
  bool EmitNarrowSource(ir::Rule& rule, const Lhs& src, uint32_t len);
  // Loads a set or map key; `set` (may be null) says whether it is an
  // interval set and whether it is named.
  bool EmitKeyLoads(ir::Rule& rule, const std::vector<Field>& fields, const ir::Set* set);
  bool ParseCounter(ir::Rule& rule);
  bool ParseLog(ir::Rule& rule);
  bool ParseLimit(ir::Rule& rule);
  bool ParseReject(ir::Rule& rule);
  // statements.cc
  bool ParseQuota(ir::Rule& rule);
  bool ParseQueue(ir::Rule& rule);
  bool ParseNat(ir::Rule& rule);
  bool ParseNatAddress(std::string_view word, int family, ir::SourceLoc loc,
                       ir::Bytes* out);

  // ---- lowering (rule.cc)
  void Emit(ir::Rule& rule, ir::Expr e, ir::SourceLoc loc);
  bool EmitDeps(ir::Rule& rule, const Field& f);
  bool EmitL3L4Deps(ir::Rule& rule, const Field& f);
  bool EmitNetDep(ir::Rule& rule, int net, ir::SourceLoc loc);
  void EmitLoad(ir::Rule& rule, const Field& f, ir::Reg reg, uint32_t len);
  ir::Bytes Encode(const Field& f, const Value& v, uint32_t len);
  ir::Bytes EncodeNum(const Field& f, U128 v, uint32_t len);
  bool AddAnonSet(ir::Rule& rule, const SetType& st,
                  const std::vector<Element>& elems, ir::SourceLoc loc,
                  std::string* name);
  bool FillSet(ir::Set& set, const SetType& st,
               const std::vector<Element>& elems);
  bool EmitBitfieldMaskMatch(ir::Rule& rule, const Field& f, const Lhs& lhs, ir::CmpOp op,
                             const Item& it);
  void NoteContext(const Field& f, const Item& item);
  void NoteSetContext(const Field& f, const std::vector<Element>& elems);
  bool CheckOverlaps(const ir::Set& set);
  void MergeAdjacent(ir::Set& set);
  std::string FreshAnonName(std::string_view prefix);

  ir::Diagnostics& diags_;
  int file_;
  std::string base_dir_;
  int depth_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  size_t expansions_ = 0;
  absl::flat_hash_map<std::string, std::vector<Token>> defines_;
  // Declared key/data types of named sets, by "TABLE-ADDRESS/SET" (the IR
  // keeps only sizes; `add element` needs the types to encode values).
  absl::flat_hash_map<std::string, SetType> set_types_;
  std::string SetKey(const ir::Table& table, std::string_view set) const;
  ir::Ruleset* rs_ = nullptr;
  ir::Table* table_ = nullptr;       // table of the rule being parsed
  ProtoCtx ctx_;
  std::vector<ir::Set> pending_sets_;  // anonymous sets of the current rule
  int anon_counter_ = 0;
  bool failed_ = false;
};

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_PARSER_H_
