// Named stateful objects and the statements that refer to them, as nft
// 1.0.6 reads them (the bytecode checked with `nft --debug=netlink`):
//
//   counter c { packets 12 bytes 1433 }      counter name "c"
//   quota q { over 2000 bytes }              quota name ip saddr map @m drop
//   limit l { rate 10/second burst 5 packets }  limit name "l" accept
//   ct helper h { type "ftp" protocol tcp; l3proto inet }
//                                            ct helper set "h"
//                                            ct helper set udp dport map { 69 : "h" }
//   ct timeout t { protocol tcp; policy = { established: 100 } }
//                                            ct timeout set "t"
//   ct expectation e { protocol tcp; dport 21; timeout 1s; size 8 }
//                                            ct expectation set "e"
//   secmark s { "system_u:object_r:ssh_server_packet_t:s0" }
//                                            meta secmark set "s"
//   synproxy p { mss 1460; wscale 7; timestamp sack-perm }
//                                            synproxy name "p"
//   map m { type ipv4_addr : quota; elements = { 1.2.3.4 : "q" } }
//
// Declarations are recorded in ir::Table::objects, references lower to
// [ objref type T name N ] or, through a map, [ objref sreg 1 set M ]
// (ir::Objref has the meaning). A ct helper names a conntrack helper the
// kernel has (mainline: the list below), for its protocol, or the kernel
// refuses it (ENOENT). A synproxy object runs as the synproxy statement
// does (ir::Synproxy: SYNs are answered by the kernel and consumed);
// statement and object are valid at input and forward only.
#include "absl/strings/str_cat.h"
#include "frontends/kernel_helpers.h"
#include "frontends/nft/parser.h"

namespace rulejit::frontends::nft {
namespace {


std::optional<uint8_t> L4ProtoByName(std::string_view w) {
  if (w == "tcp") return 6;
  if (w == "udp") return 17;
  if (w == "dccp") return 33;
  if (w == "sctp") return 132;
  if (w == "udplite") return 136;
  if (w == "icmp") return 1;
  if (w == "icmpv6") return 58;
  if (w == "gre") return 47;
  return std::nullopt;
}

// `10s`, `1m30s`, `500ms`, `2h`, `1d`: milliseconds.
std::optional<uint64_t> DurationMs(std::string_view w) {
  uint64_t total = 0;
  while (!w.empty()) {
    size_t digits = 0;
    while (digits < w.size() && w[digits] >= '0' && w[digits] <= '9') ++digits;
    if (digits == 0 || digits > 9) return std::nullopt;
    const uint64_t n = std::stoull(std::string(w.substr(0, digits)));
    w.remove_prefix(digits);
    uint64_t unit = 0;
    if (w.starts_with("ms")) unit = 1, w.remove_prefix(2);
    else if (w.starts_with("s")) unit = 1000, w.remove_prefix(1);
    else if (w.starts_with("m")) unit = 60000, w.remove_prefix(1);
    else if (w.starts_with("h")) unit = 3600000, w.remove_prefix(1);
    else if (w.starts_with("d")) unit = 86400000, w.remove_prefix(1);
    else return std::nullopt;
    total += n * unit;
  }
  return total;
}

std::optional<uint8_t> L3ProtoByName(std::string_view w) {
  if (w == "ip") return 2;
  if (w == "ip6") return 10;
  if (w == "inet") return 1;
  return std::nullopt;
}

}  // namespace

const char* ObjectTypeName(uint32_t type) {
  switch (type) {
    case ir::kObjCounter: return "counter";
    case ir::kObjQuota: return "quota";
    case ir::kObjCtHelper: return "ct helper";
    case ir::kObjLimit: return "limit";
    case ir::kObjCtTimeout: return "ct timeout";
    case ir::kObjSecmark: return "secmark";
    case ir::kObjCtExpect: return "ct expectation";
    case ir::kObjSynproxy: return "synproxy";
  }
  return "object";
}

// `counter`, `quota`, `limit`, `secmark`, `synproxy`, or `ct` followed by
// `helper`, `timeout`, `expectation` (the words not read yet): the object
// type, or 0 (with an error for unknown ct objects).
uint32_t Parser::ParseObjectKind() {
  const Token t = Next();
  if (t.text == "counter") return ir::kObjCounter;
  if (t.text == "quota") return ir::kObjQuota;
  if (t.text == "limit") return ir::kObjLimit;
  if (t.text == "secmark") return ir::kObjSecmark;
  if (t.text == "synproxy") return ir::kObjSynproxy;
  const Token k = Next();
  if (k.text == "helper") return ir::kObjCtHelper;
  if (k.text == "timeout") return ir::kObjCtTimeout;
  if (k.text == "expectation") return ir::kObjCtExpect;
  Error(k.loc, absl::StrCat("unknown ct object '", k.text, "'"),
        ir::DidYouMean(k.text, {"helper", "timeout", "expectation"}));
  return 0;
}

bool Parser::IsObjectWord(std::string_view w) {
  return w == "counter" || w == "quota" || w == "limit" || w == "secmark" ||
         w == "synproxy" || w == "ct";
}

// `NAME { BODY }` of an object of `type` (ParseObjectKind read the kind),
// in a table block or after `add KIND FAMILY TABLE`.
bool Parser::ParseObjectDecl(ir::Table& table, uint32_t type) {
  ir::Object obj;
  obj.type = type;
  obj.loc = Peek().loc;
  if (!ExpectIdentifier(&obj.name, "object name") || !ExpectPunct("{")) return false;
  if (!SkipObjectComments()) return false;
  bool ok = true;
  switch (obj.type) {
    case ir::kObjCounter: ok = ParseObjectStatementBody("counter", &obj); break;
    case ir::kObjQuota: ok = ParseObjectStatementBody("quota", &obj); break;
    case ir::kObjLimit: ok = ParseObjectStatementBody("limit", &obj); break;
    case ir::kObjSecmark:
      if (Peek().kind != Tok::kString) return ErrorUnexpected("security context string");
      obj.text = Next().text;
      break;
    case ir::kObjSynproxy: ok = ParseSynproxyObjectBody(&obj.synproxy); break;
    default: ok = ParseCtObjectBody(&obj); break;
  }
  if (!ok || !SkipObjectComments()) return false;
  if (!AtBlockClose()) return ErrorUnexpected("'}'");
  // A statement body (counter, quota, limit, secmark) needs no separator.
  const bool statement_body = obj.type == ir::kObjCounter || obj.type == ir::kObjQuota ||
                              obj.type == ir::kObjLimit || obj.type == ir::kObjSecmark ||
                              obj.type == ir::kObjSynproxy;
  if (!CloseBlock(!statement_body)) return false;
  for (ir::Object& o : table.objects) {
    if (o.type == obj.type && o.name == obj.name) {
      o = std::move(obj);  // nft: adding it again keeps one
      return true;
    }
  }
  table.objects.push_back(std::move(obj));
  return true;
}

// Separators and `comment "TEXT"` lines, which nft's grammar takes
// anywhere in an object's block (not kept: they do not change what the
// object does).
bool Parser::SkipObjectComments() {
  SkipSeparators();
  while (AcceptWord("comment")) {
    if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
    Next();
    SkipSeparators();
  }
  return true;
}

// A synproxy object's body, as nft's grammar has it: empty, or `mss N`
// and `wscale N` (each may end its line), then optionally `timestamp`
// and `sack-perm` (which only shape the SYN-ACK: not kept).
bool Parser::ParseSynproxyObjectBody(ir::Synproxy* out) {
  if (!AtWord("mss")) return true;
  for (const char* key : {"mss", "wscale"}) {
    SkipSeparators();
    if (!AcceptWord(key)) return ErrorUnexpected(absl::StrCat("'", key, "'"));
    if (!ParseSynproxyNumber(key, out)) return false;
  }
  SkipSeparators();
  AcceptWord("timestamp");
  AcceptWord("sack-perm");
  return true;
}

// The number after `mss` (0..65535) or `wscale` (0..255, NLA_U8).
bool Parser::ParseSynproxyNumber(std::string_view key, ir::Synproxy* out) {
  std::string n;
  const ir::SourceLoc nloc = Peek().loc;
  if (!ExpectWord(&n, "number")) return false;
  std::optional<U128> v = ParseNumber(n);
  const bool mss = key == "mss";
  if (!v || *v > (mss ? 65535u : 255u)) {
    return Error(nloc, absl::StrCat("bad synproxy ", std::string(key), " '", n, "'"));
  }
  if (mss) out->mss = static_cast<uint16_t>(*v);
  else out->wscale = static_cast<uint8_t>(*v);
  return true;
}

// `synproxy [mss N] [wscale N] [timestamp] [sack-perm]` (any order; the
// word `synproxy` not read yet), valid at input and forward.
bool Parser::ParseSynproxyStmt(ast::Statement* out) {
  ast::Synproxy s;
  s.loc = Next().loc;
  if (!SynproxyValidHere(s.loc)) return false;
  while (!sink_.failed) {
    if (AcceptWord("mss")) {
      if (!ParseSynproxyNumber("mss", &s.synproxy)) return false;
    } else if (AcceptWord("wscale")) {
      if (!ParseSynproxyNumber("wscale", &s.synproxy)) return false;
    } else if (!AcceptWord("timestamp") && !AcceptWord("sack-perm")) {
      break;
    }
  }
  *out = s;
  return !sink_.failed;
}

// nft_synproxy_validate: a base chain of the input or forward hook (the
// kernel's EOPNOTSUPP elsewhere).
bool Parser::SynproxyValidHere(ir::SourceLoc loc) {
  if (chain_ == nullptr || !chain_->base) return true;
  const ir::Hook hook = chain_->base->hook;
  if (hook == ir::Hook::kInput || hook == ir::Hook::kForward) return true;
  return Error(loc, absl::StrCat("synproxy is not valid at hook ", ir::HookName(hook),
                                 " (the kernel's EOPNOTSUPP)"),
               "synproxy: input and forward only");
}

// The body of a counter, quota or limit object is its statement without the
// keyword: parsed as the statement.
bool Parser::ParseObjectStatementBody(std::string_view keyword, ir::Object* obj) {
  if (obj->type == ir::kObjCounter && AtPunct("}")) return true;
  const Token repl[] = {
      Token{.kind = Tok::kWord, .space_before = true, .loc = Peek().loc, .text = std::string(keyword)},
      Peek()};
  SpliceAtCursor(repl, 2);
  ast::Statement stmt;
  if (obj->type == ir::kObjCounter && !ParseCounter(&stmt)) return false;
  if (obj->type == ir::kObjQuota && !ParseQuota(&stmt)) return false;
  if (obj->type == ir::kObjLimit && !ParseLimit(&stmt)) return false;
  if (auto* c = std::get_if<ast::Counter>(&stmt)) obj->counter = c->counter;
  if (auto* q = std::get_if<ast::Quota>(&stmt)) obj->quota = q->quota;
  if (auto* l = std::get_if<ast::Limit>(&stmt)) obj->limit = l->limit;
  return true;
}

// ct helper: `type "NAME" protocol P; [l3proto F]`; ct timeout: `protocol
// P; [l3proto F;] policy = { STATE: N, ... }`; ct expectation: `protocol P;
// dport N; timeout T; size N; [l3proto F]`, in any order.
bool Parser::ParseCtObjectBody(ir::Object* obj) {
  ir::SourceLoc type_loc = obj->loc;
  while (!sink_.failed && !AtPunct("}")) {
    const Token t = Next();
    std::string v;
    if (t.text == "type" && obj->type == ir::kObjCtHelper) {
      type_loc = Peek().loc;
      if (!ExpectName(&obj->text, "helper name")) return false;
      if (!AcceptWord("protocol")) return ErrorUnexpected("'protocol'");
      if (!ExpectWord(&v, "protocol")) return false;
      if (!L4ProtoByName(v)) return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown protocol '", v, "'"));
      obj->l4proto = *L4ProtoByName(v);
    } else if (t.text == "protocol") {
      if (!ExpectWord(&v, "protocol")) return false;
      if (!L4ProtoByName(v)) return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown protocol '", v, "'"));
      obj->l4proto = *L4ProtoByName(v);
    } else if (t.text == "l3proto") {
      if (!ExpectWord(&v, "l3proto")) return false;
      if (!L3ProtoByName(v)) return Error(toks_[pos_ - 1].loc, absl::StrCat("unknown l3proto '", v, "'"));
      obj->l3proto = *L3ProtoByName(v);
    } else if (t.text == "policy" && obj->type == ir::kObjCtTimeout) {
      if (!ExpectPunct("=") || !ExpectPunct("{")) return false;
      while (!sink_.failed && !AcceptPunct("}")) {
        if (Peek().kind == Tok::kEnd) return ErrorUnexpected("'}' closing the policy");
        const Token p = Next();
        if (p.kind == Tok::kNewline || (p.kind == Tok::kPunct && p.text == ",")) continue;
        absl::StrAppend(&obj->text, obj->text.empty() ? "" : " ", p.text);
      }
    } else if ((t.text == "dport" || t.text == "size" || t.text == "timeout") &&
               obj->type == ir::kObjCtExpect) {
      if (!ExpectWord(&v, t.text)) return false;
      std::optional<uint64_t> n = t.text == "timeout" ? DurationMs(v) : std::nullopt;
      if (t.text != "timeout" && ParseNumber(v)) n = static_cast<uint64_t>(*ParseNumber(v));
      if (!n || *n > (t.text == "dport" ? 65535u : 0xffffffffu)) {
        return Error(toks_[pos_ - 1].loc, absl::StrCat("bad ", t.text, " '", v, "'"));
      }
      if (t.text == "dport") obj->dport = static_cast<uint16_t>(*n);
      if (t.text == "size") obj->size = static_cast<uint32_t>(*n);
      if (t.text == "timeout") obj->timeout_ms = static_cast<uint32_t>(*n);
    } else if (t.kind == Tok::kNewline || (t.kind == Tok::kPunct && t.text == ";")) {
      continue;
    } else if (t.text == "comment") {
      if (Peek().kind != Tok::kString) return ErrorUnexpected("comment string");
      Next();
    } else {
      return Error(t.loc, absl::StrCat("unknown ", ObjectTypeName(obj->type), " property '",
                                       t.text, "'"));
    }
  }
  if (obj->type == ir::kObjCtHelper && !KernelHasHelper(obj->text, obj->l4proto)) {
    return Error(type_loc, absl::StrCat("the kernel has no conntrack helper '", obj->text,
                                        "' for this protocol"),
                 absl::StrCat("mainline helpers: ", kKernelHelperNames));
  }
  if (obj->l4proto == 0) return Error(obj->loc, "the object needs a protocol");
  return !sink_.failed;
}

// At `ct helper|timeout|expectation set X` or `meta secmark set X` with X a
// name or a map: a reference to a named object (`meta secmark set ct
// secmark` is a meta set).
bool Parser::SetsNamedObject(std::string_view w) {
  const std::string& key = PeekAt(1).text;
  if (w == "ct") return key == "helper" || key == "timeout" || key == "expectation";
  if (w != "meta" || key != "secmark") return false;
  if (PeekAt(3).kind == Tok::kString) return true;
  for (size_t i = 3; i < 16; ++i) {
    const Token& t = PeekAt(i);
    if (t.kind == Tok::kNewline || t.kind == Tok::kEnd || t.kind == Tok::kPunct) return false;
    if (t.kind == Tok::kWord && t.text == "map") return true;
  }
  return false;
}

// `counter name X`, `quota name X`, `limit name X`, `ct helper set X`,
// `ct timeout set X`, `ct expectation set X`, `meta secmark set X`, where
// X is a name ("h" or h) or `KEY map { k : "name", ... }` / `KEY map @m`.
bool Parser::ParseObjref(ast::Statement* out) {
  ast::Objref s;
  s.loc = Peek().loc;
  if (AtWord("meta")) {
    Next();
    Next();  // secmark
    s.type = ir::kObjSecmark;
  } else {
    s.type = ParseObjectKind();
    if (s.type == 0) return false;
    if (s.type == ir::kObjSynproxy && !SynproxyValidHere(s.loc)) return false;
  }
  Next();  // name | set
  const Token& v = Peek();
  const bool key = v.kind == Tok::kWord &&
                   (IsPayloadProto(v.text) || v.text == "meta" || v.text == "ct" ||
                    IsUnqualifiedMeta(v.text));
  if (!key) {
    s.name_loc = v.loc;
    if (!ExpectName(&s.name, "object name")) return false;
    *out = std::move(s);
    return true;
  }
  Lhs k;
  if (!ParseLhs(&k)) return false;
  if (!AtWord("map")) return ErrorUnexpected("'map'");
  s.map.emplace();
  s.map->loc = Next().loc;
  s.map->key = k;
  s.map->type.fields = SetKeyFields(k.fields);
  s.map->type.is_map = true;
  s.map->type.obj_type = s.type;
  if (Peek().kind == Tok::kSetRef) {
    s.map->named_loc = Peek().loc;
    s.map->named = Next().text;
  } else if (!ParseSetElements(s.map->type, &s.map->elements)) {
    return false;
  }
  *out = std::move(s);
  return true;
}

}  // namespace rulejit::frontends::nft
