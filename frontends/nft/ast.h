// The nft syntax tree (internal to frontends/nft): what the parser builds
// from the tokens of a rule, before any lowering. Every node keeps the
// source location of its first token, so the linearizer's messages point at
// `file:line:col` as the parser's do.
//
//   rule       := statement+ [comment]
//   statement  := Match | Verdict | Counter | Log | Limit | Quota | Queue
//               | Notrack | Reject | MetaCtSet | PayloadSet | Nat | FlowOffload
//               | Objref | Synproxy
//   Match      := Lhs [RelOp] Rhs
//   Lhs        := Field ('.' Field)* [('&' | '|' | '^') constant]*
//   Rhs        := ValueRhs (value, range, prefix, flag list, concatenation)
//               | SetRhs ({ elements }) | NamedSetRhs (@name)
//               | VmapRhs (vmap { k : verdict } | vmap @name)
//   MetaCtSet  := (meta|ct) KEY set SetValue
//   SetValue   := SetConstant | ValueExpr | FieldValue | MapValue
#ifndef RULEJIT_FRONTENDS_NFT_AST_H_
#define RULEJIT_FRONTENDS_NFT_AST_H_

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "frontends/nft/fields.h"
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
  std::vector<Value> data_rest;  // the values after the first of concatenated data
  std::vector<Item> data_items;  // interval data: every field's range
  std::string object;  // object maps: the object's name
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
  uint32_t obj_type = 0;      // object maps: ir::kObj* (the data is a name)
  Field data;                 // map data type (when !verdict_map)
  // The data's further fields when it is a concatenation (`ipv4_addr .
  // inet_service`: address and port from one lookup, for NAT).
  std::vector<Field> data_rest;
  // The data of each element is a range (`1.2.3.4-1.2.3.9`, `10.0.0.0/24
  // . 80-90`; anonymous NAT maps): its low ends, then its high ends.
  bool data_interval = false;
  // Bytes of the data: one field as loaded, a concatenation (or a range)
  // padded to 4 bytes per field (as the registers hold it).
  uint32_t DataLen() const;
};

namespace ast {

// The relational operator of a match; kImplicit when none was written.
enum class RelOp { kImplicit, kEq, kNeq, kLt, kGt, kLte, kGte, kNot };

// `tcp dport 22`, `ip saddr 10.0.0.0/8`, `tcp flags syn,ack / syn,ack,rst`,
// `ip saddr . tcp dport 1.2.3.4 . 22`, `tcp dport { 22 }`: one value.
struct ValueRhs {
  Element value;
  std::optional<U128> flag_mask;  // `a / b` on a flag type
};

// `tcp dport { 22, 80 }`, `tcp dport 22, 80`: an anonymous set.
struct SetRhs {
  std::vector<Element> elements;
};

// `ip saddr @blocked`.
struct NamedSetRhs {
  std::string name;
};

// `tcp dport vmap { 22 : accept }` (elements) or `vmap @name` (named).
struct VmapRhs {
  std::string named;
  std::vector<Element> elements;
};

using Rhs = std::variant<ValueRhs, SetRhs, NamedSetRhs, VmapRhs>;

struct Match {
  Lhs lhs;
  RelOp op = RelOp::kImplicit;
  ir::SourceLoc op_loc;   // the operator, or the token after the lhs
  ir::SourceLoc rhs_loc;  // the first token of the right-hand side
  Rhs rhs;
  // Nothing but a comment follows: nft's stmt_reduce keeps a redundant
  // `meta protocol` match that ends a rule.
  bool last_statement = false;
};

struct Verdict {
  ir::Verdict verdict;
  ir::SourceLoc loc;
};

// The statements whose syntax maps onto one IR expression without any
// protocol context: `counter`, `log`, `limit`, `quota`, `queue`.
struct Counter {
  ir::Counter counter;
  ir::SourceLoc loc;
};
struct Log {
  ir::Log log;
  ir::SourceLoc loc;
};
struct Limit {
  ir::Limit limit;
  ir::SourceLoc loc;
};
struct Quota {
  ir::Quota quota;
  ir::SourceLoc loc;
};
struct Queue {
  ir::Queue queue;
  ir::SourceLoc loc;
};
struct Notrack {
  ir::SourceLoc loc;
};

// `synproxy [mss N] [wscale N] [timestamp] [sack-perm]`.
struct Synproxy {
  ir::Synproxy synproxy;
  ir::SourceLoc loc;
};

// `reject`, `reject with tcp reset`, `reject with icmp|icmpv6|icmpx CODE`.
struct Reject {
  enum class With : uint8_t { kDefault, kTcpReset, kIcmp, kIcmpv6, kIcmpx };
  With with = With::kDefault;
  uint32_t code = 0;     // kIcmp, kIcmpv6, kIcmpx
  std::string with_word;  // "icmp", "icmpv6", "icmpx" as written
  ir::SourceLoc loc;      // `reject`
  ir::SourceLoc with_loc;  // the word after `with`
};

// `KEY map { k : v, ... }` / `KEY map @name` as a value (set statements,
// nat addresses): a lookup whose data is the value.
struct MapValue {
  Lhs key;
  bool masked_key = false;  // `ip6 saddr & ::ffff map { ... }`: mask after the load
  SetType type;             // the key fields, and the target as the data
  std::string named;        // `map @name`
  ir::SourceLoc named_loc;
  std::vector<Element> elements;  // `map { ... }`
  ir::SourceLoc loc;              // `map`
};

// A constant value, folded (`0x11 xor 0x1331`, flag lists `ecn, cwr`):
// `first` keeps the first item (a string), `value` the folded number.
struct SetConstant {
  Item first;
  U128 value = 0;
};

// Another field as the value, with `& | ^` constants (`meta mark set ct mark`).
struct FieldValue {
  Lhs field;
};

using SetValue = std::variant<SetConstant, ValueExpr, FieldValue, MapValue>;

// `meta KEY set VALUE` / `ct [dir] KEY set VALUE`.
struct MetaCtSet {
  Field target;
  bool is_ct = false;
  ir::SourceLoc loc;  // the value's first token
  SetValue value;
};

// `FIELD set VALUE` on a header field: new field = (field & and_mask) ^
// xor_val, from the field itself (`from_field`) or a constant.
struct PayloadSet {
  Field target;
  ir::SourceLoc loc;
  bool from_field = false;
  U128 and_mask = 0;
  U128 xor_val = 0;
  bool from_rt_mtu = false;  // a TCP option set to `rt mtu`
  // Another field of the target's size or a map lookup, written whole.
  std::optional<std::variant<FieldValue, MapValue>> value;
};

// `snat|dnat [ip|ip6] to ADDR[-ADDR][:PORT[-PORT]] [FLAGS]`, `masquerade`,
// `redirect`, with addresses and ports already encoded (nft's grammar
// splits `ADDR:PORT` by the address family, which the parser resolves).
struct Nat {
  ir::Nat nat;                    // kind, family, flags
  std::vector<ir::Bytes> addrs;   // none, min, or min and max
  std::vector<ir::Bytes> ports;   // none, min, or min and max
  std::optional<MapValue> map;    // `dnat ip to KEY map { ... }`: the address
  bool addr_port = false;         // `dnat ip addr . port to KEY map`: both from the map
  ir::SourceLoc loc;
};

// `flow add @NAME` / `flow offload @NAME`.
struct FlowOffload {
  std::string flowtable;
  ir::SourceLoc loc;
};

// `counter name "c"`, `ct helper set "h"`, `quota name KEY map @m`, ...:
// the named object of `type` (ir::kObj*), or the one a map gives.
struct Objref {
  uint32_t type = 0;
  std::string name;
  ir::SourceLoc name_loc;
  std::optional<MapValue> map;
  ir::SourceLoc loc;
};

// One part of a dynamic set statement's key or data: a field's value, or a
// constant already encoded as the set's type holds it.
struct DynsetPart {
  std::optional<Field> field;
  ir::Bytes constant;  // when !field
  ir::SourceLoc loc;
  uint32_t Len() const { return field ? field->LoadLen() : static_cast<uint32_t>(constant.size()); }
};

// `add|update|delete @SET { KEY [timeout T] [STMT ...] [: DATA] }`, the
// older `set add|update KEY @SET`, and `meter NAME { KEY STMT }`.
struct Dynset {
  ir::DynsetOp op = ir::DynsetOp::kAdd;
  std::string set;
  std::vector<DynsetPart> key;
  std::vector<DynsetPart> data;  // maps
  uint64_t timeout_ms = 0;
  std::vector<ir::DynsetElemExpr> exprs;
  ir::SourceLoc loc;
};

using Statement = std::variant<Match, Verdict, Counter, Log, Limit, Quota, Queue, Notrack,
                               Reject, MetaCtSet, PayloadSet, Nat, FlowOffload, Objref,
                               Synproxy, Dynset>;

}  // namespace ast
}  // namespace rulejit::frontends::nft

#endif  // RULEJIT_FRONTENDS_NFT_AST_H_
