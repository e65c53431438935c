// nft JSON statements (libnftables-json(5), STATEMENTS) as nft text:
//
//   {"match":{"op":"==","left":l,"right":r}}   l == r   ("in": l r)
//   {"counter":null} | {"counter":"c"}         counter | counter name "c"
//   {"log":{"prefix":"p","level":"info"}}       log prefix "p" level info
//   {"limit":{"rate":10,"per":"second","burst":5}}  limit rate 10/second burst 5 packets
//   {"dnat":{"family":"ip","addr":a,"port":p}}  dnat ip to a:p
//   {"reject":{"type":"icmpx","expr":"port-unreachable"}}  reject with icmpx port-unreachable
//   {"mangle":{"key":k,"value":v}}             k set v
//   {"set":{"op":"add","elem":e,"set":"@s"}}   add @s { e }
//   {"vmap":{"key":k,"data":d}}                k vmap d
// plus quota, masquerade, redirect, notrack, queue, tproxy, synproxy, the
// ct helper/expectation/timeout references, and the verdicts. Counter
// values are state, not meaning: not carried over.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/nft/json_internal.h"

namespace rulejit::frontends::nftjson {
namespace {

std::string Str(const Json& v, const char* key) {
  return v.is_object() ? v.value(key, std::string()) : "";
}

bool Flag(const Json& v, const char* key) {
  return v.is_object() && v.contains(key) && v[key].is_boolean() && v[key].get<bool>();
}

}  // namespace

std::string Writer::Stmt(const Json& j, const std::string& path) {
  // nft lists a statement it has no JSON form for as its text.
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_object() || j.size() != 1) return Fail(path, "expected a statement (an object of one key)");
  const std::string key = j.begin().key();
  const Json& v = j.begin().value();
  const std::string p = Sub(path, key);
  if (key == "match") return Match(v, p);
  if (key == "accept" || key == "drop" || key == "continue" || key == "return" ||
      key == "jump" || key == "goto") {
    return Expr(j, path);
  }
  if (key == "counter" || key == "quota" || key == "limit" || key == "ct helper" ||
      key == "ct expectation" || key == "ct timeout" || key == "synproxy" || key == "secmark") {
    if (v.is_string() || (v.is_object() && v.contains("map"))) return ObjectRef(key, v, p);
  }
  if (key == "counter") return "counter";
  if (key == "log") return Log(v, p);
  if (key == "limit") return Limit(v, p);
  if (key == "quota") return Quota(v, p);
  if (key == "reject") return Reject(v, p);
  if (key == "dnat" || key == "snat" || key == "masquerade" || key == "redirect" || key == "tproxy") {
    return Nat(key, v, p);
  }
  if (key == "mangle") {
    return absl::StrCat(Expr(Member(v, "key"), Sub(p, "key")), " set ",
                        Expr(Member(v, "value"), Sub(p, "value")));
  }
  if (key == "vmap") {
    return absl::StrCat(Expr(Member(v, "key"), Sub(p, "key")), " vmap ",
                        Expr(Member(v, "data"), Sub(p, "data")));
  }
  if (key == "set" || key == "map") return SetUpdate(key, v, p);
  if (key == "notrack") return "notrack";
  if (key == "synproxy") {
    std::string out = "synproxy";
    if (v.is_object() && v.contains("mss")) absl::StrAppend(&out, " mss ", Scalar(*this, v["mss"], Sub(p, "mss")));
    if (v.is_object() && v.contains("wscale")) absl::StrAppend(&out, " wscale ", Scalar(*this, v["wscale"], Sub(p, "wscale")));
    if (v.is_object() && v.contains("flags")) absl::StrAppend(&out, " ", FlagList(*this, v["flags"], Sub(p, "flags"), " "));
    return out;
  }
  if (key == "queue") {
    std::string out = "queue";
    if (v.is_object() && v.contains("flags")) absl::StrAppend(&out, " flags ", FlagList(*this, v["flags"], Sub(p, "flags")));
    if (v.is_object() && v.contains("num")) absl::StrAppend(&out, " to ", Expr(v["num"], Sub(p, "num")));
    return out;
  }
  if (key == "xt") return Fail(p, "an iptables-nft compat match (xt) has no nft text form");
  return Fail(p, absl::StrCat("unsupported statement '", key, "'"));
}

// `l op r`; "in" is nft's implicit operator (a set lookup or a flag test),
// written without an operator as nft lists it.
std::string Writer::Match(const Json& v, const std::string& path) {
  if (!v.is_object()) return Fail(path, "expected an object");
  const std::string op = Str(v, "op");
  const std::string left = Expr(Member(v, "left"), Sub(path, "left"));
  const Json& r = Member(v, "right");
  std::string right = r.is_array() && op == "in"
                          ? FlagList(*this, r, Sub(path, "right"))
                          : Expr(r, Sub(path, "right"));
  if (op == "in") return absl::StrCat(left, " ", right);
  for (const char* known : {"==", "!=", "<", ">", "<=", ">="}) {
    if (op == known) return absl::StrCat(left, " ", op, " ", right);
  }
  return Fail(Sub(path, "op"), absl::StrCat("unsupported match operator '", op, "'"));
}

std::string Writer::ObjectRef(const std::string& key, const Json& v, const std::string& path) {
  const bool set_form = key == "ct helper" || key == "ct expectation" || key == "ct timeout";
  std::string head = set_form ? key + " set" : key == "secmark" ? "meta secmark set" : key + " name";
  if (v.is_string()) return absl::StrCat(head, " ", Quoted(v.get<std::string>()));
  return absl::StrCat(head, " ", Expr(Json{{"map", v["map"]}}, path));
}

std::string Writer::Log(const Json& v, const std::string& path) {
  std::string out = "log";
  if (v.is_null()) return out;
  if (v.contains("prefix")) absl::StrAppend(&out, " prefix ", Quoted(Str(v, "prefix")));
  if (v.contains("level")) absl::StrAppend(&out, " level ", Str(v, "level"));
  for (const char* k : {"group", "snaplen", "queue-threshold"}) {
    if (v.contains(k)) absl::StrAppend(&out, " ", k, " ", Scalar(*this, v[k], Sub(path, k)));
  }
  if (v.contains("flags")) {
    const Json& f = v["flags"];
    for (size_t i = 0; i < (f.is_array() ? f.size() : 1); ++i) {
      const Json& one = f.is_array() ? f[i] : f;
      if (!one.is_string()) return Fail(Sub(path, "flags"), "expected log flag names");
      absl::StrAppend(&out, " flags ", one.get<std::string>());
    }
  }
  return out;
}

// limit rate [over] N [UNIT]/PER [burst B UNIT]
std::string Writer::Limit(const Json& v, const std::string& path) {
  if (!v.is_object()) return Fail(path, "expected an object");
  const std::string unit = v.value("rate_unit", std::string("packets"));
  const bool bytes = unit != "packets";
  std::string out = absl::StrCat("limit rate ", Flag(v, "inv") ? "over " : "",
                                 Scalar(*this, Member(v, "rate"), Sub(path, "rate")),
                                 bytes ? " " + unit : "", "/", Str(v, "per"));
  if (v.contains("burst") && (!bytes || v.value("burst", 0) != 0)) {
    absl::StrAppend(&out, " burst ", Scalar(*this, v["burst"], Sub(path, "burst")), " ",
                    bytes ? v.value("burst_unit", std::string("bytes")) : "packets");
  }
  return out;
}

// quota [over] N UNIT [used M UNIT]
std::string Writer::Quota(const Json& v, const std::string& path) {
  if (!v.is_object()) return Fail(path, "expected an object");
  std::string out = absl::StrCat("quota ", Flag(v, "inv") ? "over " : "",
                                 Scalar(*this, Member(v, "val"), Sub(path, "val")), " ",
                                 v.value("val_unit", std::string("bytes")));
  if (v.contains("used") && v.value("used", 0) != 0) {
    absl::StrAppend(&out, " used ", Scalar(*this, v["used"], Sub(path, "used")), " ",
                    v.value("used_unit", std::string("bytes")));
  }
  return out;
}

std::string Writer::Reject(const Json& v, const std::string& path) {
  if (v.is_null()) return "reject";
  const std::string type = Str(v, "type");
  if (type == "tcp reset") return "reject with tcp reset";
  if (type.empty()) return Fail(path, "reject without a type");
  if (!v.contains("expr")) return absl::StrCat("reject with ", type);
  return absl::StrCat("reject with ", type, " ", Expr(v["expr"], Sub(path, "expr")));
}

// dnat/snat [FAMILY] [prefix|addr . port] to ADDR[:PORT] [FLAGS];
// masquerade/redirect [to :PORT] [FLAGS]; tproxy [FAMILY] to [ADDR][:PORT].
std::string Writer::Nat(const std::string& key, const Json& v, const std::string& path) {
  std::string out = key;
  if (v.is_null()) return out;
  if (!v.is_object()) return Fail(path, "expected an object");
  if (v.contains("family")) absl::StrAppend(&out, " ", Str(v, "family"));
  if (v.contains("type_flags")) {
    std::string tf = FlagList(*this, v["type_flags"], Sub(path, "type_flags"));
    if (tf == "prefix") {
      absl::StrAppend(&out, " prefix");
    } else if (tf == "concat" || tf == "interval,concat" || tf == "concat,interval") {
      absl::StrAppend(&out, " addr . port");
    } else if (tf != "interval") {
      return Fail(Sub(path, "type_flags"), "unsupported nat type flags '" + tf + "'");
    }
  }
  std::string target;
  if (v.contains("addr")) {
    target = Expr(v["addr"], Sub(path, "addr"));
    if (v.contains("port") && target.find(':') != std::string::npos) target = "[" + target + "]";
  }
  if (v.contains("port")) absl::StrAppend(&target, ":", Expr(v["port"], Sub(path, "port")));
  if (!target.empty()) absl::StrAppend(&out, " to ", target);
  if (v.contains("flags")) {
    // "netmap" is what `prefix` sets in the kernel; the text has no word for it.
    Json flags = Json::array();
    for (const Json& f : v["flags"].is_array() ? v["flags"] : Json::array({v["flags"]})) {
      if (f != "netmap") flags.push_back(f);
    }
    if (!flags.empty()) absl::StrAppend(&out, " ", FlagList(*this, flags, Sub(path, "flags")));
  }
  return out;
}

// add|update|delete @s { e [stmts] }   (a map: @m { e : d })
std::string Writer::SetUpdate(const std::string& key, const Json& v, const std::string& path) {
  if (!v.is_object()) return Fail(path, "expected an object");
  std::string target = Str(v, key == "map" ? "map" : "set");
  if (target.empty() || target[0] != '@') return Fail(path, "expected a set reference \"@name\"");
  std::string elem = Element(Member(v, "elem"), Sub(path, "elem"));
  if (key == "map") absl::StrAppend(&elem, " : ", Expr(Member(v, "data"), Sub(path, "data")));
  if (v.contains("stmt")) {
    const Json& stmts = v["stmt"];
    for (size_t i = 0; i < stmts.size(); ++i) {
      absl::StrAppend(&elem, " ", Stmt(stmts[i], Sub(Sub(path, "stmt"), i)));
    }
  }
  return absl::StrCat(Str(v, "op"), " ", target, " { ", elem, " }");
}

}  // namespace rulejit::frontends::nftjson
