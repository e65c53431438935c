// Set elements, verdicts and names in nft syntax (see nft_rule.h).
//
// A set element's key is its fields' register bytes side by side, each
// padded to 4 bytes; each field prints in the literal form of the
// expression the rules look it up with (`ip saddr` → 10.0.0.1,
// `tcp dport` → 22), intervals as `from-to`, map data after ` : `.
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emit/nft_rule.h"

namespace rulejit::emit {
namespace {

absl::Status Refuse(std::string why) { return absl::InvalidArgumentError(std::move(why)); }

// Field `i`'s bytes of an element key.
ir::Bytes FieldBytes(const ir::Bytes& key, const std::vector<Value>& keys, size_t i) {
  size_t at = 0;
  for (size_t j = 0; j < i; ++j) at += (keys[j].len + 3) / 4 * 4;
  ir::Bytes out;
  for (size_t k = at; k < at + keys[i].len && k < key.size(); ++k) out.push_back(key[k]);
  return out;
}

// One field's JSON, or {"concat": [...]} of several.
Json Joined(Json parts) { return parts.size() == 1 ? parts[0] : Json{{"concat", std::move(parts)}}; }

absl::StatusOr<std::string> KeyLiteral(const ir::Bytes& key, const std::vector<Value>& keys,
                                       Json& json) {
  std::vector<std::string> parts;
  Json jparts = Json::array();
  for (size_t i = 0; i < keys.size(); ++i) {
    ir::Bytes b = FieldBytes(key, keys, i);
    std::optional<std::string> s = b.size() == keys[i].len ? Literal(keys[i], b) : std::nullopt;
    if (!s) return Refuse(absl::StrCat("set element ", HexLiteral(key), " has no ", keys[i].text, " literal"));
    parts.push_back(*s);
    jparts.push_back(*JsonLiteral(keys[i], b));
  }
  json = Joined(std::move(jparts));
  return absl::StrJoin(parts, " . ");
}

}  // namespace

// Words nft 1.0.6's scanner takes as keywords where a chain or set name
// goes; it has no quoting for such names, so they print with a leading
// underscore (a renaming that changes nothing a packet sees).
bool IsKeyword(const std::string& name) {
  static constexpr const char* kWords[] = {
      "accept", "drop", "reject", "queue", "continue", "return", "jump", "goto", "counter",
      "log", "limit", "quota", "meta", "ct", "ip", "ip6", "tcp", "udp", "icmp", "inet",
      "snat", "dnat", "masquerade", "redirect", "notrack", "flow", "set", "map", "table",
      "chain", "element", "type", "hook", "priority", "policy", "comment", "define",
      "include", "flush", "add", "delete", "insert", "synproxy", "vmap", "dup", "fwd"};
  for (const char* w : kWords) {
    if (name == w) return true;
  }
  return false;
}

std::string Ident(const std::string& name) {
  auto first_ok = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  bool plain = !name.empty() && first_ok(name[0]);
  for (char c : name) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                      c == '.' || c == '/');
  }
  if (plain && IsKeyword(name)) return "_" + name;
  return plain ? name : Quote(name);
}

std::string VerdictText(const ir::Verdict& v) {
  switch (v.code) {
    case ir::VerdictCode::kAccept: return "accept";
    case ir::VerdictCode::kDrop: return "drop";
    case ir::VerdictCode::kReturn: return "return";
    case ir::VerdictCode::kContinue: return "continue";
    case ir::VerdictCode::kJump: return "jump " + Ident(v.chain);
    case ir::VerdictCode::kGoto: return "goto " + Ident(v.chain);
    case ir::VerdictCode::kQueue: return "queue";
    case ir::VerdictCode::kBreak: return "break";
  }
  return "?";
}

absl::StatusOr<std::string> PrintElements(const ir::Set& set, const SetShape& shape, Json* json) {
  if (shape.keys.empty()) return Refuse(absl::StrCat("set ", set.name, " whose key type no rule shows"));
  std::vector<std::string> out;
  Json jout = Json::array();
  for (const ir::SetElement& e : set.elements) {
    // The catch-all element (no key) of nft 1.0.x: `*`.
    Json jkey = "*";
    absl::StatusOr<std::string> k = e.key.empty() ? absl::StatusOr<std::string>("*")
                                                  : KeyLiteral(e.key, shape.keys, jkey);
    if (!k.ok()) return k.status();
    std::string text = *k;
    if (e.key_end && *e.key_end != e.key) {
      Json jend;
      absl::StatusOr<std::string> end = KeyLiteral(*e.key_end, shape.keys, jend);
      if (!end.ok()) return end.status();
      if (shape.keys.size() == 1) {
        absl::StrAppend(&text, "-", *end);
        jkey = Json{{"range", Json::array({jkey, jend})}};
      } else {  // a range per field: a-b . c-d
        std::vector<std::string> parts;
        Json jparts = Json::array();
        for (size_t i = 0; i < shape.keys.size(); ++i) {
          ir::Bytes lo = FieldBytes(e.key, shape.keys, i), hi = FieldBytes(*e.key_end, shape.keys, i);
          std::optional<std::string> a = Literal(shape.keys[i], lo), b = Literal(shape.keys[i], hi);
          if (!a || !b) return Refuse("an interval element with no literal");
          parts.push_back(lo == hi ? *a : *a + "-" + *b);
          Json ja = *JsonLiteral(shape.keys[i], lo);
          jparts.push_back(lo == hi ? ja : Json{{"range", Json::array({ja, *JsonLiteral(shape.keys[i], hi)})}});
        }
        text = absl::StrJoin(parts, " . ");
        jkey = Joined(std::move(jparts));
      }
    }
    if (e.verdict) {
      absl::StrAppend(&text, " : ", VerdictText(*e.verdict));
      jkey = Json::array({jkey, VerdictJson(*e.verdict)});
    } else if (e.object) {
      absl::StrAppend(&text, " : ", Quote(*e.object));
      jkey = Json::array({jkey, *e.object});
    } else if (set.flags & ir::kSetMap) {
      if (!shape.data) return Refuse(absl::StrCat("map ", set.name, " whose data type no rule shows"));
      std::optional<std::string> d = Literal(*shape.data, e.data);
      if (!d) return Refuse(absl::StrCat("map data ", HexLiteral(e.data), " has no ", shape.data->text, " literal"));
      absl::StrAppend(&text, " : ", *d);
      jkey = Json::array({jkey, *JsonLiteral(*shape.data, e.data)});
    }
    out.push_back(text);
    jout.push_back(std::move(jkey));
  }
  if (json) *json = std::move(jout);
  return absl::StrJoin(out, ", ");
}

Json VerdictJson(const ir::Verdict& v) {
  switch (v.code) {
    case ir::VerdictCode::kJump: return Json{{"jump", {{"target", JsonName(v.chain)}}}};
    case ir::VerdictCode::kGoto: return Json{{"goto", {{"target", JsonName(v.chain)}}}};
    case ir::VerdictCode::kBreak: return nullptr;  // nft has no such verdict
    default: return Json{{VerdictText(v), nullptr}};
  }
}

std::string JsonName(const std::string& name) {
  std::string id = Ident(name);
  return id == "_" + name ? id : name;
}

}  // namespace rulejit::emit
