// The nft parser (internal to frontends/nft): a recursive-descent parser
// over lexer tokens. The ruleset grammar (parser.cc: tables, chains,
// commands, define/include; sets.cc: set declarations) builds IR tables,
// chains and sets directly. A rule's statements are parsed into syntax trees
// (ast.h; rule.cc statements, expr.cc fields and values) and handed one by
// one to the linearizer (linearize.h), which evaluates and lowers them.
// Where nft's grammar depends on what the rule has established (the size
// of `ct saddr`, how `dnat to ADDR:PORT` splits, whether a nat port has a
// transport protocol), the parser asks the linearizer's protocol context.
#ifndef RULEJIT_FRONTENDS_NFT_PARSER_H_
#define RULEJIT_FRONTENDS_NFT_PARSER_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "frontends/nft/ast.h"
#include "frontends/nft/fields.h"
#include "frontends/nft/lexer.h"
#include "frontends/nft/linearize.h"
#include "frontends/nft/values.h"
#include "ir/chain_index.h"
#include "ir/set_name_index.h"
#include "ir/diag.h"
#include "ir/ir.h"

namespace rulejit::frontends::nft {

// Words that start statements or expressions nft has and this frontend
// does not support (a located "unsupported" error, not "unknown").
bool IsUnsupportedStatement(std::string_view w);
// Why one of those cannot be given the kernel's meaning (a hint), or "".
std::string UnsupportedWhy(std::string_view w);

// Words nft's scanner always makes keywords, which nft refuses where a
// name (table, chain, set, object, device) goes (keywords.cc).
bool IsReservedWord(std::string_view word);

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
  bool ExpectIdentifier(std::string* out, std::string_view what);
  bool ExpectName(std::string* out, std::string_view what);
  bool AtStmtEnd();
  // Whether the next token is the '}' of a block (table, chain, set,
  // flowtable, object).
  bool AtBlockClose();
  // Consumes that '}' as nft's grammar has it: every item of a block ends
  // with a newline or ';' (so '}' follows '{' or one of them; not in the
  // one-statement bodies of counter, quota, limit and secmark objects:
  // `items_end_with_separator` false), and so does the block itself (a
  // newline, ';' or the end of input follows).
  bool CloseBlock(bool items_end_with_separator = true);
  void SkipNewlines();
  bool SkipSeparators();
  bool Error(ir::SourceLoc loc, std::string msg, std::string hint = "");
  bool ErrorUnexpected(std::string_view what);
  bool ExpandVar();
  // Replaces the token at the cursor by `n` tokens (none: removes it), the
  // cursor on the first of them; O(n) however long the file is.
  void SpliceAtCursor(const Token* repl, size_t n);
  // Lets go of the tokens consumed from `floor` on, but the last two and
  // those of pending chain bindings (TokenStream::Release). The caller
  // holds no reference to any of them.
  void ReleaseConsumed(size_t floor);
  // One level deeper in `{ }` or `( )` for as long as it lives: `ok()` is
  // false (and a located error recorded) past kMaxNesting (limits.h), so
  // that the recursive descent cannot run out of stack.
  class Nesting {
   public:
    Nesting(Parser& parser, ir::SourceLoc loc);
    ~Nesting() { --parser_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    bool ok() const { return ok_; }

   private:
    Parser& parser_;
    bool ok_;
  };

  // ---- ruleset grammar (parser.cc)
  bool ParseTopLevel();
  bool ParseFlushTable();
  bool ParseCommand(bool insert);
  bool ParseCommandObject(bool insert, std::string* what);
  bool ParseRuleCommand(ir::Table& table, const std::string& name, ir::SourceLoc name_loc,
                        bool insert);
  bool ParseFamily(ir::Family* family);
  ir::Table& GetTable(ir::Family family, const std::string& name,
                      ir::SourceLoc loc);
  bool ParseTableBlock(size_t table_index);
  bool ParseTableItem(size_t table_index);
  bool ParseChainBlock(size_t table_index, const std::string& name,
                       ir::SourceLoc loc);
  bool ParseChainItem(size_t table_index, size_t chain_index);
  // Anonymous chain bindings, `jump { RULE; ... }` (the kernel's
  // NFT_CHAIN_BINDING): the verdict names a new chain and its body is
  // skipped; once the rule is added, ParseBindings parses each body into
  // that chain.
  bool SkipBindingBody(ir::Verdict* v);
  bool ParseBindings(ir::Table& table);
  bool ParseChainHeader(ir::Chain& chain, ir::Family family);
  bool ParseChainPolicy(ir::Chain& chain, const Token& t);
  bool ParseChainDevice(ir::Chain& chain);
  bool ParseDeviceList(std::vector<std::string>* devices);
  bool ParseBaseChainSpec(ir::Chain& chain, ir::Family family);
  bool ParsePriority(int32_t* prio, ir::Family family,
                     std::optional<ir::Hook> hook = std::nullopt);
  bool ParseSetBlock(ir::Table& table, const std::string& name, bool is_map,
                     ir::SourceLoc loc);
  bool ParseSetTypeSpec(SetType* st, ir::Set& set, bool is_map);
  bool ParseSetSizeOrTimeout(ir::Set& set);
  bool ParseTypeofExpr(std::vector<Field>* fields);
  bool ParseElementBlock(ir::Table& table, ir::Set& set);
  bool ParseDeclaredElements(ir::Set& set, const SetType& st, std::vector<Element>* pending);
  bool KeysFixedAfterElements(size_t* count);
  bool EncodeChunk(ir::Set& set, const SetType& st, std::vector<Element>& chunk);
  bool ParseAddedElements(ir::Set& set, const SetType& st);
  bool FillSetAtomically(ir::Set& set, const SetType& st, const std::vector<Element>& elems,
                         size_t before);
  bool CheckAddedIntervals(const ir::Table& table, const ir::Set& set, size_t before);
  bool SkipBlock();
  void DetachDormantChains(ir::Ruleset& rs) const;
  bool CheckLinkLayerChains(const ir::Ruleset& rs);
  bool CheckJumpTargets(const ir::Ruleset& rs);
  bool CheckHookLimits(const ir::Ruleset& rs);  // hook_limits.cc
  bool CheckJumpsAddedBefore(const ir::Table& table, const ir::Rule& rule);

  // ---- flowtables and `flow add @ft` (flowtable.cc)
  bool ParseFlowtableBlock(ir::Table& table, const std::string& name, ir::SourceLoc loc);
  bool ParseFlowtableDevices(ir::Flowtable& ft);
  bool ParseFlowOffload(ast::Statement* out);
  bool CheckFlowOffloads(const ir::Ruleset& rs);

  // ---- named objects and references to them (objects.cc)
  static bool IsObjectWord(std::string_view w);
  uint32_t ParseObjectKind();
  bool ParseObjectDecl(ir::Table& table, uint32_t type);
  bool ParseObjectStatementBody(std::string_view keyword, ir::Object* obj);
  bool SkipObjectComments();
  bool ParseCtObjectBody(ir::Object* obj);
  bool ParseObjref(ast::Statement* out);
  bool ParseDataItem(const SetType& st, const Field& f, Item* it);
  bool ParseSynproxyObjectBody(ir::Synproxy* out);
  bool ParseSynproxyNumber(std::string_view key, ir::Synproxy* out);
  bool ParseSynproxyStmt(ast::Statement* out);
  bool SynproxyValidHere(ir::SourceLoc loc);
  bool SetsNamedObject(std::string_view w);

  // ---- define/redefine/undefine in nft's scopes, include (scopes.cc)
  // The block whose items a file holds: the top level, or, for a file
  // included inside a table or chain block, that block.
  struct Block {
    enum class Kind : uint8_t { kTop, kTable, kChain };
    Kind kind = Kind::kTop;
    size_t table = 0;
    size_t chain = 0;
  };
  static bool IsScopeWord(std::string_view w);
  bool ParseScopeItem(const Block& where);
  bool ParseDefine();
  bool ParseUndefine();
  bool ParseInclude(const Block& where);
  bool IncludeFile(const std::string& path, ir::SourceLoc loc, const Block& where);
  bool ParseBlockItem();
  const std::vector<Token>* LookupDefine(std::string_view name) const;
  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }

  // ---- rules and statements (rule.cc)
  bool ParseRule(ir::Table& table, ir::Chain& chain, bool insert);
  bool ParseStatement(ir::Rule& rule);
  bool ParseOtherStatement(ir::Rule& rule, const std::string& w, ir::SourceLoc loc);
  bool ParseVerdict(ir::Verdict* v);
  bool ParseCounter(ast::Statement* out);
  bool ParseLog(ast::Statement* out);
  bool ParseLogLevel(std::optional<uint32_t>* level);
  bool ParseNflogOption(ir::Log* log);
  bool ParseLogFlags(uint32_t* flags);
  bool ParseLimit(ast::Statement* out);
  bool ParseRate(ir::Limit* lim);
  bool ParseBurst(ir::Limit* lim);
  bool ParseReject(ast::Statement* out);
  // ---- matches (match_parse.cc)
  bool ParseMatch(ir::Rule& rule);
  bool ParseRelOp(ast::Match* m);
  bool ParseRhs(ast::Match* m);
  bool ParseVmapRhs(ast::Match* m);
  bool ParseValueListRhs(ast::Match* m);
  // ---- expressions (expr.cc)
  bool ParseLhs(Lhs* lhs);
  bool ParseBinops(Lhs* lhs);
  bool ParseField(Field* field);
  bool ParsePayloadField(const std::string& proto, Field* field);
  bool ParseMetaField(const std::string& word, ir::SourceLoc loc, Field* field);
  bool ParseCtField(Field* field);
  bool ParseFibField(Field* field);
  bool ParseNumgenField(Field* field);
  bool ParseModulus(std::string_view what, ir::SourceLoc loc, std::optional<uint32_t>* mod,
                    std::optional<uint32_t>* seed, std::optional<uint32_t>* offset);
  bool ParseHashField(bool symmetric, ir::SourceLoc loc, Field* field);
  bool ParseRtField(Field* field);
  bool ParseSocketField(Field* field);  // socket.cc
  bool ParseTproxy(ir::Rule& rule);
  bool ParseTproxyTarget(int family, std::string* addr, std::string* port);
  bool ParseRawPayload(Field* field);
  bool ParseOptionField(std::string_view proto, Field* field);
  bool ParseOffsetLength(uint32_t max, std::string_view what, uint32_t nums[2]);
  bool ParseBinopOperand(const Field& f, U128* out);
  bool ParseConstExpr(const Field& f, U128* out, std::string_view sep = "|");
  bool ParseItem(const Field& f, Item* item);
  bool ParseQuotedItem(const Field& f, Item* item);
  bool ParseWordItem(const Field& f, Item* item);
  bool ParseRangeOrPrefix(const Field& f, const std::string& w, Item* item, bool* matched);
  bool ParseConcatItem(const std::vector<Field>& fields,
                       std::vector<Item>* items);
  // Where ParseSetElements hands its elements on as it goes, a chunk of
  // kElementChunk at a time, so that a long list is never held whole as
  // syntax: `flush` encodes the elements into the set and clears them.
  struct ElementStream {
    absl::FunctionRef<bool(std::vector<Element>&)> flush;
    size_t flushed = 0;  // elements handed on so far
  };
  static constexpr size_t kElementChunk = 4096;
  bool ParseSetElements(const SetType& st, std::vector<Element>* elems,
                        ElementStream* stream = nullptr);
  bool ParseElementOptions();
  bool ParseMapValue(const SetType& st, Element* e);
  void SplitMapWord(const SetType& st);
  // ---- dynamic set statements and meters (dynset.cc)
  bool ParseDynset(ast::Statement* out);
  bool ParseLegacySetStmt(ast::Statement* out);
  bool ParseMeter(ast::Statement* out);
  bool ParseDynsetElement(const SetType* st, ast::Dynset* d);
  bool ParseDynsetParts(const std::vector<Field>* types, std::vector<ast::DynsetPart>* parts);
  bool ParseDynsetOption(ast::Dynset* d, bool* done);
  const SetType* KnownSetType(std::string_view set) const;
  bool DeclareMeterSet(const ast::Dynset& d, uint32_t size, ir::SourceLoc loc);
  bool MarkDynamicSets(ir::Ruleset& rs);
  bool MarkDynamicSets(ir::Table& t, const ir::Rule& r);
  // ---- set statements (set_stmt.cc)
  bool ParseSetStmt(ir::Rule& rule, const Field& target, bool is_ct);
  bool ParseSetValue(const Field& target, ast::SetValue* out);
  bool ParseSetConstant(const Field& target, Item* first, U128* v);
  bool ParseTcpOptionSet(ir::Rule& rule, const Lhs& lhs);
  bool ParsePayloadSet(ir::Rule& rule, const Lhs& lhs);
  bool ParsePayloadSetFrom(ir::Rule& rule, const Lhs& src, ast::PayloadSet& s);
  bool ParseMapLookup(const Lhs& src, const Field& target, ast::MapValue* out,
                      std::vector<Field> data_rest = {});
  // value_expr.cc
  bool IsValueExprTarget(const Field& target) const;
  bool ParseValuePrimary(const Field& target, ValueExpr* out);
  bool ParseValueExpr(const Field& target, int min_prec, ValueExpr* out);
  // statements.cc
  bool ParseQuota(ast::Statement* out);
  bool ParseQueue(ast::Statement* out);
  bool ParseNat(ir::Rule& rule);
  bool ParseNatFamily(ast::Nat* s, int* family);
  bool ParseNatTarget(ir::Rule& rule, const std::string& w, int family, ast::Nat* s);
  bool ParseBracketedNatAddress(std::string* addr_text, std::string* port_text);
  bool ParseNatMap(const std::string& w, int family, ir::SourceLoc vloc, ast::Nat* s);
  bool ParseNatAddresses(const std::string& addr_text, int family, ir::SourceLoc vloc,
                         std::vector<ir::Bytes>* addrs);
  bool ParseNatPorts(const ir::Rule& rule, const std::string& w, const std::string& port_text,
                     ir::SourceLoc vloc, std::vector<ir::Bytes>* ports);
  bool ParseNatFlags(uint32_t* flags);
  bool ParseNatAddress(std::string_view word, int family, ir::SourceLoc loc,
                       ir::Bytes* out);

  ir::Diagnostics& diags_;
  int file_;
  std::string base_dir_;
  int depth_;
  TokenStream toks_;
  size_t pos_ = 0;
  size_t expansions_ = 0;
  size_t expanded_tokens_ = 0;
  int nesting_ = 0;  // see Nesting
  // Defined symbols, one map per open scope (the file, then each table,
  // chain or set block inside it), innermost last.
  using Scope = absl::flat_hash_map<std::string, std::vector<Token>>;
  std::vector<Scope> scopes_ = std::vector<Scope>(1);
  Block block_;  // what this parser's file holds
  // Declared key/data types of named sets, by "TABLE-ADDRESS/SET" (the IR
  // keeps only sizes; `add element` needs the types to encode values).
  absl::flat_hash_map<std::string, SetType> set_types_;
  std::string SetKey(const ir::Table& table, std::string_view set) const;
  // The chains of each table by name, by "FAMILY/TABLE/" (chains are only
  // appended; `flush ruleset` starts over). Handed to included files as
  // set_types_ is.
  absl::flat_hash_map<std::string, ir::ChainIndex> chain_index_;
  absl::flat_hash_map<std::string, ir::SetNameIndex> set_index_;  // as chain_index_
  const ir::Chain* FindChain(const ir::Table& table, std::string_view name);
  // The elements of interval sets that `add element` added to, ordered by
  // key (element index by key bytes), by SetKey: each command checks its
  // elements against their neighbours only (sets.cc). Rebuilt when the set
  // does not have as many elements as the index; dropped when the set is
  // declared again.
  using IntervalIndex = std::multimap<ir::Bytes, size_t>;
  absl::flat_hash_map<std::string, IntervalIndex> interval_index_;
  ir::Ruleset* rs_ = nullptr;
  struct PendingBinding {
    std::string chain;  // "__chainN"
    size_t body = 0;    // token index of its '{'
    ir::SourceLoc loc;
  };
  std::vector<PendingBinding> bindings_;  // of the rule being parsed
  absl::flat_hash_set<std::string> dormant_;  // "FAMILY/TABLE" with flags dormant
  bool in_rule_ = false;  // inside ParseRule (where bindings may be)
  bool in_binding_ = false;
  absl::flat_hash_set<std::string> bound_;  // "TABLE-INDEX/CHAIN" of bindings  // parsing a binding's body (no bindings in it)
  ir::Table* table_ = nullptr;       // table of the rule being parsed
  const ir::Chain* chain_ = nullptr;  // chain of the rule being parsed
  ErrorSink sink_{diags_};
  Linearizer lin_{sink_};
};

}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_PARSER_H_
