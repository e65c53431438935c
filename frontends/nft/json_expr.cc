// nft JSON expressions (libnftables-json(5), EXPRESSIONS) as nft text:
//
//   "10.0.0.1" | 22 | true              10.0.0.1 | 22 | exists
//   ["syn","ack"]                       syn | ack          (a flag list)
//   {"payload":{"protocol":"tcp","field":"dport"}}   tcp dport
//   {"payload":{"base":"nh","offset":32,"len":8}}    @nh,32,8
//   {"meta":{"key":"l4proto"}}          meta l4proto
//   {"ct":{"key":"saddr","dir":"original","family":"ip"}}  ct original ip saddr
//   {"concat":[a,b]}                    a . b
//   {"set":[a,[k,v]]}                   { a, k : v }
//   {"prefix":{"addr":a,"len":n}}       a/n
//   {"range":[a,b]}                     a-b
//   {"map":{"key":k,"data":d}}          k map d
//   {"&":[a,b]} (| ^ << >>)             a & b  (operands parenthesized when compound)
//   {"elem":{"val":v,"timeout":30}}     v timeout 30s
// plus numgen, fib, exthdr, tcp option, ipsec, rt, osf, socket, jhash,
// symhash and the verdicts. Any other node is an error at its JSON path.
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/nft/json_internal.h"

namespace rulejit::frontends::nftjson {

std::string Writer::Fail(const std::string& path, std::string message) {
  errors_.push_back({path, std::move(message)});
  return "";
}

const Json& Member(const Json& v, const char* key) {
  static const Json kNull;
  if (!v.is_object()) return kNull;
  auto it = v.find(key);
  return it == v.end() ? kNull : *it;
}

std::string Sub(const std::string& path, const std::string& key) {
  return path + "." + key;
}
std::string Sub(const std::string& path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Word(const std::string& s) {
  if (s.empty()) return Quoted(s);
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '_' && c != '.' && c != ':' && c != '/' && c != '-') {
      return Quoted(s);
    }
  }
  return s;
}

std::string Scalar(Writer& w, const Json& j, const std::string& path) {
  if (j.is_number_unsigned()) return absl::StrCat(j.get<uint64_t>());
  if (j.is_number_integer()) return absl::StrCat(j.get<int64_t>());
  if (j.is_string()) return Word(j.get<std::string>());
  return w.Fail(path, "expected a number or a string");
}

std::string FlagList(Writer& w, const Json& j, const std::string& path,
                     const char* separator) {
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_array()) return w.Fail(path, "expected a string or a list of strings");
  std::vector<std::string> parts;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) return w.Fail(Sub(path, i), "expected a string");
    parts.push_back(j[i].get<std::string>());
  }
  return absl::StrJoin(parts, separator);
}

namespace {

bool IsBinop(const std::string& key) {
  return key == "&" || key == "|" || key == "^" || key == "<<" || key == ">>";
}

// The single key of an object node, or "" when it has not exactly one.
std::string OnlyKey(const Json& j) {
  return j.is_object() && j.size() == 1 ? j.begin().key() : "";
}

// Optional numeric member as " WORD value", or "".
std::string OptionalNumber(Writer& w, const Json& v, const char* key,
                           const char* word, const std::string& path) {
  if (!v.contains(key)) return "";
  return absl::StrCat(" ", word, " ", Scalar(w, v[key], Sub(path, key)));
}

}  // namespace

std::string Writer::Operand(const Json& j, const std::string& path) {
  if (j.is_array()) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < j.size(); ++i) parts.push_back(Expr(j[i], Sub(path, i)));
    return absl::StrJoin(parts, " | ");
  }
  return Expr(j, path);
}

std::string Writer::Expr(const Json& j, const std::string& path) {
  if (j.is_boolean()) return j.get<bool>() ? "exists" : "missing";
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    // "@name" refers to a set; "*" is the catch-all element.
    return (!s.empty() && s[0] == '@') || s == "*" ? s : Word(s);
  }
  if (j.is_number()) return Scalar(*this, j, path);
  if (j.is_array()) return Operand(j, path);
  const std::string key = OnlyKey(j);
  if (key.empty()) return Fail(path, "expected an expression (an object of one key)");
  return Object(key, j[key], Sub(path, key));
}

std::string Writer::Object(const std::string& key, const Json& v, const std::string& path) {
  if (IsBinop(key)) {
    if (!v.is_array() || v.size() != 2) return Fail(path, "expected two operands");
    auto side = [&](size_t i) {
      const std::string k = OnlyKey(v[i]);
      std::string text = Expr(v[i], Sub(path, i));
      // a | b | c needs no parentheses (nft prints set elements so)
      bool compound = v[i].is_array() || (IsBinop(k) && !(key == "|" && k == "|"));
      return compound ? "(" + text + ")" : text;
    };
    return absl::StrCat(side(0), " ", key, " ", side(1));
  }
  if (key == "concat") {
    if (!v.is_array()) return Fail(path, "expected a list");
    std::vector<std::string> parts;
    for (size_t i = 0; i < v.size(); ++i) parts.push_back(Expr(v[i], Sub(path, i)));
    return absl::StrJoin(parts, " . ");
  }
  if (key == "set") return SetLiteral(v, path);
  if (key == "elem") return Element(v, path);
  if (key == "prefix") {
    return absl::StrCat(Expr(Member(v, "addr"), Sub(path, "addr")), "/",
                        Scalar(*this, Member(v, "len"), Sub(path, "len")));
  }
  if (key == "range") {
    if (!v.is_array() || v.size() != 2) return Fail(path, "expected two bounds");
    return absl::StrCat(Expr(v[0], Sub(path, 0)), "-", Expr(v[1], Sub(path, 1)));
  }
  if (key == "map") {
    return absl::StrCat(Expr(Member(v, "key"), Sub(path, "key")), " map ",
                        Expr(Member(v, "data"), Sub(path, "data")));
  }
  if (key == "accept" || key == "drop" || key == "continue" || key == "return") return key;
  if (key == "jump" || key == "goto") {
    return absl::StrCat(key, " ", Word(v.value("target", std::string())));
  }
  return Selector(key, v, path);
}

// Expressions that read a packet, metadata or state.
std::string Writer::Selector(const std::string& key, const Json& v, const std::string& path) {
  if (!v.is_object()) return Fail(path, "expected an object");
  auto str = [&](const char* k) { return v.value(k, std::string()); };
  if (key == "payload") {
    if (v.contains("protocol")) return absl::StrCat(str("protocol"), " ", str("field"));
    return absl::StrCat("@", str("base"), ",", Scalar(*this, Member(v, "offset"), Sub(path, "offset")),
                        ",", Scalar(*this, Member(v, "len"), Sub(path, "len")));
  }
  if (key == "meta") return "meta " + str("key");
  if (key == "ct") {
    std::string out = "ct";
    if (v.contains("dir")) absl::StrAppend(&out, " ", str("dir"));
    if (v.contains("family")) absl::StrAppend(&out, " ", str("family"));
    return absl::StrCat(out, " ", str("key"));
  }
  if (key == "rt") return absl::StrCat("rt", v.contains("family") ? " " + str("family") : "", " ", str("key"));
  if (key == "socket") return "socket " + str("key");
  if (key == "osf") return absl::StrCat("osf", v.contains("ttl") ? " ttl " + str("ttl") : "", " ", str("key"));
  if (key == "ipsec") {
    std::string out = absl::StrCat("ipsec ", str("dir"));
    if (v.value("spnum", 0) != 0) absl::StrAppend(&out, " spnum ", v.value("spnum", 0));
    if (v.contains("family")) absl::StrAppend(&out, " ", str("family"));
    return absl::StrCat(out, " ", str("key"));
  }
  if (key == "numgen") {
    return absl::StrCat("numgen ", str("mode"), OptionalNumber(*this, v, "mod", "mod", path),
                        OptionalNumber(*this, v, "offset", "offset", path));
  }
  if (key == "jhash" || key == "symhash") {
    std::string out = key;
    if (v.contains("expr")) absl::StrAppend(&out, " ", Expr(v["expr"], Sub(path, "expr")));
    return absl::StrCat(out, OptionalNumber(*this, v, "mod", "mod", path),
                        OptionalNumber(*this, v, "seed", "seed", path),
                        OptionalNumber(*this, v, "offset", "offset", path));
  }
  if (key == "fib") {
    return absl::StrCat("fib ", FlagList(*this, v.value("flags", Json::array()), Sub(path, "flags"), " . "),
                        " ", str("result"));
  }
  if (key == "exthdr") {
    if (v.contains("offset")) return Fail(path, "exthdr with an offset is not read");
    return v.contains("field") ? absl::StrCat(str("name"), " ", str("field")) : "exthdr " + str("name");
  }
  if (key == "tcp option") {
    return absl::StrCat("tcp option ", str("name"), v.contains("field") ? " " + str("field") : "");
  }
  return Fail(path, absl::StrCat("unsupported expression '", key, "'"));
}

// {"set": [...]} or a single element: `{ a, b, k : v }`.
std::string Writer::SetLiteral(const Json& v, const std::string& path) {
  std::vector<std::string> parts;
  if (!v.is_array()) return absl::StrCat("{ ", Element(v, path), " }");
  for (size_t i = 0; i < v.size(); ++i) parts.push_back(Element(v[i], Sub(path, i)));
  return absl::StrCat("{ ", absl::StrJoin(parts, ", "), " }");
}

// A set element: a value, a [key, data] pair, or {"elem": {...}} with
// options (counters and expiry times are state, not meaning: dropped).
std::string Writer::Element(const Json& v, const std::string& path) {
  if (v.is_array() && v.size() == 2) {
    return absl::StrCat(Element(v[0], Sub(path, 0)), " : ", Expr(v[1], Sub(path, 1)));
  }
  const Json* e = &v;
  std::string p = path;
  if (OnlyKey(v) == "elem") {
    e = &v["elem"];
    p = Sub(path, "elem");
  }
  if (!e->is_object() || !e->contains("val")) return Expr(v, path);
  std::string out = Expr((*e)["val"], Sub(p, "val"));
  if (e->contains("timeout")) absl::StrAppend(&out, " timeout ", Scalar(*this, (*e)["timeout"], Sub(p, "timeout")), "s");
  if (e->contains("comment")) absl::StrAppend(&out, " comment ", Quoted(e->value("comment", "")));
  return out;
}

}  // namespace rulejit::frontends::nftjson
