// The state of one rule's decompilation, shared by nft_rule.cc (loads,
// matches, lookups) and nft_stmt.cc (actions: log, limit, reject, NAT ...).
#ifndef RULEJIT_EMIT_NFT_RULE_INTERNAL_H_
#define RULEJIT_EMIT_NFT_RULE_INTERNAL_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "emit/nft_keys.h"
#include "emit/nft_rule.h"

namespace rulejit::emit {

// What a register word holds: a loaded expression, or a constant
// (`konst`), or a map lookup's result (`map` with its key fields).
struct RegValue {
  Value v;
  std::optional<ir::Bytes> konst;
  const ir::Set* map = nullptr;
  std::vector<Value> map_keys;
  bool present = false;  // fib/exthdr `exists` form: 1 or 0
};

struct Stmt {
  std::string text;
  std::string neq_masked;  // a payload `!=` written so nft cannot merge it
  bool payload_rel = false;
  Json json, json_masked;  // the same as libnftables JSON (null: no JSON form)
  std::string json_why;    // why json is null, where known
};

struct RuleCtx {
  const ir::Table& table;
  SetShapes& shapes;
  Facts facts;
  std::array<std::optional<RegValue>, ir::kRegWords> regs;
  std::vector<Stmt> stmts;

  // The value register `r` holds, or an error.
  absl::StatusOr<RegValue> Get(ir::Reg r) const;
  void Put(ir::Reg r, RegValue v);
  void Say(std::string text, Json json) {
    stmts.push_back(Stmt{std::move(text), "", false, std::move(json), nullptr, ""});
  }
};

// `v` as a value expression for a statement that writes `target`'s type
// (constants in target's literal form, maps with target's data type).
// Its JSON goes to `json` (null where it has none).
absl::StatusOr<std::string> RenderAs(RuleCtx& ctx, const RegValue& v, const Value& target,
                                     Json& json);

// {"match": {"op": OP, "left": LEFT, "right": RIGHT}}; null when left or
// right has no JSON form.
Json MatchJson(const char* op, const Json& left, const Json& right);
// One key field, or {"concat": [...]} of several; null if any has none.
Json KeyJson(const std::vector<Value>& keys);
// "@name", or {"set": [elements]} of an anonymous set.
absl::StatusOr<Json> SetRefJson(const ir::Set& set, const SetShape& shape);

// The key fields a lookup (or dynset) of `set` reads from `sreg` on;
// records them as the shape of a named set.
absl::StatusOr<std::vector<Value>> KeyFields(RuleCtx& ctx, const ir::Set& set, ir::Reg sreg);

// One function per action expression (nft_stmt.cc); each appends to ctx.
absl::Status Action(RuleCtx& ctx, const ir::Node& node);

}  // namespace rulejit::emit

#endif  // RULEJIT_EMIT_NFT_RULE_INTERNAL_H_
