// See json.h. The listing is a flat array of objects (table, chain, set,
// map, rule, named objects), each naming its family and table; this file
// groups them per table, in the order they come, and writes one
//   table FAMILY NAME { set ... { } counter ... { } chain ... { rules } }
// block per table, remembering each generated line's JSON path. The text
// then goes through the nft frontend; its errors are re-issued with the
// JSON path of the object the line came from.
#include "frontends/nft/json.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/nft/json_internal.h"
#include "frontends/nft/nft.h"

namespace rulejit::frontends {
namespace {

using nftjson::Json;
using nftjson::kMaxJsonDepth;
using nftjson::Member;
using nftjson::Quoted;
using nftjson::Scalar;
using nftjson::Sub;
using nftjson::Word;
using nftjson::Writer;

// One table's text lines, with the JSON path of each.
struct TableText {
  std::string head;
  std::string head_path;
  std::vector<std::pair<std::string, std::string>> decls;  // line, path
  std::vector<std::string> chain_order;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> chains;
};

std::string Str(const Json& v, const char* key) { return v.value(key, std::string()); }

// `type a . b` of a set or the data part of a map.
std::string TypeText(Writer& w, const Json& t, const std::string& path) {
  return nftjson::FlagList(w, t, path, " . ");
}

// A chain's base-chain line: type T hook H [device D] priority P; policy X;
std::string BaseChainLine(Writer& w, const Json& c, const std::string& path) {
  std::string out = absl::StrCat("type ", Str(c, "type"), " hook ", Str(c, "hook"));
  if (c.contains("dev")) {
    const Json& dev = c["dev"];
    if (dev.is_string()) {
      absl::StrAppend(&out, " device ", Quoted(dev.get<std::string>()));
    } else {
      std::vector<std::string> names;
      for (const Json& d : dev) names.push_back(Quoted(d.get<std::string>()));
      absl::StrAppend(&out, " devices = { ", absl::StrJoin(names, ", "), " }");
    }
  }
  absl::StrAppend(&out, " priority ", Scalar(w, Member(c, "prio"), Sub(path, "prio")), ";");
  if (c.contains("policy")) absl::StrAppend(&out, " policy ", Str(c, "policy"), ";");
  return out;
}

// Whether a map's data (the second of each [key, data] element) holds a
// range or a prefix.
bool DataHasIntervals(const Json& map) {
  if (!map.contains("elem")) return false;
  for (const Json& e : map["elem"]) {
    if (!e.is_array() || e.size() != 2) continue;
    const std::string data = e[1].dump();
    if (data.find("\"range\"") != std::string::npos || data.find("\"prefix\"") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// `set NAME { type ...; flags ...; elements = { ... } }` on one line.
std::string SetDecl(Writer& w, const std::string& kind, const Json& s, const std::string& path) {
  if (Member(s, "type").dump().find("\"integer\"") != std::string::npos) {
    return w.Fail(Sub(path, "type"),
                  "type 'integer' has no width: the JSON listing (schema 1) drops a typeof "
                  "set's key expressions");
  }
  std::string out = absl::StrCat(kind, " ", Word(Str(s, "name")), " { type ",
                                 TypeText(w, Member(s, "type"), Sub(path, "type")));
  if (kind == "map") {
    // nft 1.0.6's JSON drops `interval` from the data type; data that are
    // ranges or prefixes say it.
    absl::StrAppend(&out, " : ", DataHasIntervals(s) ? "interval " : "",
                    TypeText(w, Member(s, "map"), Sub(path, "map")));
  }
  absl::StrAppend(&out, ";");
  if (s.contains("flags")) absl::StrAppend(&out, " flags ", nftjson::FlagList(w, s["flags"], Sub(path, "flags")), ";");
  if (s.contains("timeout")) absl::StrAppend(&out, " timeout ", Scalar(w, s["timeout"], Sub(path, "timeout")), "s;");
  if (s.contains("gc-interval")) absl::StrAppend(&out, " gc-interval ", Scalar(w, s["gc-interval"], Sub(path, "gc-interval")), "s;");
  if (s.contains("size")) absl::StrAppend(&out, " size ", Scalar(w, s["size"], Sub(path, "size")), ";");
  if (s.contains("policy")) absl::StrAppend(&out, " policy ", Str(s, "policy"), ";");
  if (s.value("auto-merge", false)) absl::StrAppend(&out, " auto-merge;");
  if (s.contains("comment")) absl::StrAppend(&out, " comment ", Quoted(Str(s, "comment")), ";");
  if (s.contains("stmt")) {
    for (size_t i = 0; i < s["stmt"].size(); ++i) {
      absl::StrAppend(&out, " ", w.Stmt(s["stmt"][i], Sub(Sub(path, "stmt"), i)), ";");
    }
  }
  if (s.contains("elem")) {
    const Json& elems = s["elem"];
    std::vector<std::string> parts;
    for (size_t i = 0; i < elems.size(); ++i) {
      parts.push_back(w.Expr(Json{{"set", Json::array({elems[i]})}}, Sub(Sub(path, "elem"), i)));
    }
    std::string joined;
    for (std::string& p : parts) {  // each "{ e }": keep the inside
      absl::StrAppend(&joined, joined.empty() ? "" : ", ", p.substr(2, p.size() - 4));
    }
    absl::StrAppend(&out, " elements = { ", joined, " };");
  }
  return out + " }";
}

// Named stateful objects: counter, quota, limit, ct helper/expectation/
// timeout, synproxy, secmark, flowtable.
std::string ObjectDecl(Writer& w, const std::string& kind, const Json& o, const std::string& path) {
  const std::string head = absl::StrCat(kind, " ", Word(Str(o, "name")), " { ");
  auto num = [&](const char* k) { return Scalar(w, Member(o, k), Sub(path, k)); };
  auto inv = [&] { return o.value("inv", false) ? "over " : ""; };
  if (kind == "counter") return head + "}";
  if (kind == "quota") {
    std::string used = o.value("used", 0) != 0 ? absl::StrCat(" used ", num("used"), " bytes") : "";
    return absl::StrCat(head, inv(), num("bytes"), " bytes", used, " }");
  }
  if (kind == "limit") {
    Json stmt = o;
    if (o.contains("unit")) stmt["rate_unit"] = o["unit"];
    if (o.contains("unit") && o["unit"] != "packets") stmt["burst_unit"] = "bytes";
    std::string text = w.Stmt(Json{{"limit", stmt}}, path);
    return absl::StrCat(head, text.empty() ? "" : text.substr(6), " }");  // drop "limit "
  }
  // nft sends no l3proto where the JSON has none, and the kernel takes the
  // table's family (nft's parser_json.c; the text says the same without it).
  const std::string l3proto = o.contains("l3proto") ? absl::StrCat("l3proto ", Str(o, "l3proto"), "; ") : "";
  if (kind == "ct helper") {
    return absl::StrCat(head, "type ", Quoted(Str(o, "type")), " protocol ", Str(o, "protocol"), "; ",
                        l3proto, "}");
  }
  if (kind == "ct expectation") {
    return absl::StrCat(head, "protocol ", Str(o, "protocol"), "; dport ", num("dport"),
                        "; timeout ", num("timeout"), "ms; size ", num("size"), "; ", l3proto, "}");
  }
  if (kind == "synproxy") {
    std::string text = w.Stmt(Json{{"synproxy", o}}, path);
    return absl::StrCat(head, text.size() > 9 ? text.substr(9) : "", " }");
  }
  if (kind == "secmark") return absl::StrCat(head, Quoted(Str(o, "context")), " }");
  return w.Fail(path, absl::StrCat("unsupported object '", kind, "'"));
}

// The members each object kind may have; any other is an error rather
// than silently left out. Handles and comments carry no meaning for
// packets: read and dropped.
bool KnownMembers(Writer& w, const std::string& kind, const Json& v, const std::string& path) {
  static const std::map<std::string, std::vector<std::string>> kKnown = {
      {"table", {"family", "name", "handle", "flags", "comment"}},
      {"chain", {"family", "table", "name", "handle", "type", "hook", "prio", "policy", "dev", "comment"}},
      {"rule", {"family", "table", "chain", "handle", "expr", "comment", "index"}},
      {"set", {"family", "table", "name", "handle", "type", "flags", "elem", "size", "timeout",
               "gc-interval", "policy", "auto-merge", "comment", "stmt"}},
  };
  auto it = kKnown.find(kind == "map" ? "set" : kind);
  if (it == kKnown.end()) return true;
  bool ok = true;
  for (const auto& [member, value] : v.items()) {
    const auto& known = it->second;
    if (std::find(known.begin(), known.end(), member) != known.end()) continue;
    if (kind == "map" && member == "map") continue;
    w.Fail(Sub(path, member), absl::StrCat("unknown ", kind, " member '", member, "'"));
    ok = false;
  }
  return ok;
}

class Reader {
 public:
  explicit Reader(Writer& w) : w_(w) {}

  void Add(const std::string& kind, const Json& v, const std::string& path) {
    if (kind == "metainfo") return;
    if (!v.is_object()) {
      w_.Fail(path, "expected an object");
      return;
    }
    if (!KnownMembers(w_, kind, v, path)) return;
    const std::string key = Str(v, "family") + " " + Word(kind == "table" ? Str(v, "name") : Str(v, "table"));
    if (kind == "table") {
      if (tables_.count(key)) return;
      order_.push_back(key);
      TableText& t = tables_[key];
      t.head = "table " + key + " {";
      t.head_path = path;
      if (v.contains("flags")) t.decls.push_back({"flags " + nftjson::FlagList(w_, v["flags"], Sub(path, "flags")), path});
      return;
    }
    auto it = tables_.find(key);
    if (it == tables_.end()) {
      w_.Fail(path, "names table '" + key + "', which no earlier table object declares");
      return;
    }
    TableText& t = it->second;
    if (kind == "chain") return AddChain(t, v, path);
    if (kind == "rule") return AddRule(t, v, path);
    if (kind == "set" || kind == "map") {
      t.decls.push_back({SetDecl(w_, kind, v, path), path});
      return;
    }
    t.decls.push_back({ObjectDecl(w_, kind, v, path), path});
  }

  // {"flush": {"ruleset": null}}: what came before is gone, as `flush
  // ruleset` in a text file (nft -j -f runs the commands in order);
  // {"ruleset": {"family": F}} flushes that family's tables only.
  void FlushRuleset(const std::string& family) {
    std::erase_if(order_, [&](const std::string& key) {
      if (!family.empty() && key.substr(0, key.find(' ')) != family) return false;
      tables_.erase(key);
      return true;
    });
  }

  NftJsonText Text() const {
    NftJsonText out;
    auto line = [&](const std::string& text, const std::string& path) {
      absl::StrAppend(&out.text, text, "\n");
      out.paths.push_back(path);
    };
    for (const std::string& key : order_) {
      const TableText& t = tables_.at(key);
      line(t.head, t.head_path);
      for (const auto& [text, path] : t.decls) line("\t" + text, path);
      for (const std::string& chain : t.chain_order) {
        for (const auto& [text, path] : t.chains.at(chain)) line(text, path);
        line("\t}", "");
      }
      line("}", t.head_path);
    }
    return out;
  }

 private:
  void AddChain(TableText& t, const Json& c, const std::string& path) {
    const std::string name = Word(Str(c, "name"));
    if (t.chains.count(name)) return;
    t.chain_order.push_back(name);
    auto& lines = t.chains[name];
    lines.push_back({"\tchain " + name + " {", path});
    if (c.contains("hook")) lines.push_back({"\t\t" + BaseChainLine(w_, c, path), path});
  }

  void AddRule(TableText& t, const Json& r, const std::string& path) {
    const std::string chain = Word(Str(r, "chain"));
    auto it = t.chains.find(chain);
    if (it == t.chains.end()) {
      w_.Fail(Sub(path, "chain"), "rule of chain '" + chain + "', which no earlier chain object declares");
      return;
    }
    if (!r.contains("expr") || !r["expr"].is_array()) {
      w_.Fail(path, "rule without an expr list");
      return;
    }
    std::vector<std::string> stmts;
    for (size_t i = 0; i < r["expr"].size(); ++i) {
      stmts.push_back(w_.Stmt(r["expr"][i], Sub(Sub(path, "expr"), i)));
    }
    if (r.contains("comment")) stmts.push_back("comment " + Quoted(Str(r, "comment")));
    it->second.push_back({"\t\t" + absl::StrJoin(stmts, " "), path});
  }

  Writer& w_;
  std::vector<std::string> order_;
  std::map<std::string, TableText> tables_;
};

}  // namespace

bool LooksLikeNftJson(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (text[i] == '{' || text[i] == '[');
}

absl::StatusOr<NftJsonText> NftJsonToText(std::string_view json, int file, ir::Diagnostics& diags) {
  // The input decides how deep the document nests, and copying, printing
  // and walking a JSON value recurse: values nested deeper than
  // kMaxJsonDepth are discarded as they are parsed (nlohmann's parser
  // itself keeps an explicit stack) and the document refused.
  bool too_deep = false;
  Json::parser_callback_t bound_depth = [&too_deep](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) too_deep = true;
    return depth <= kMaxJsonDepth;
  };
  Json doc = Json::parse(json.begin(), json.end(), bound_depth, /*allow_exceptions=*/false);
  if (too_deep) {
    diags.Error({file, 1, 1}, absl::StrCat("JSON nested deeper than ", kMaxJsonDepth, " levels"));
    return absl::InvalidArgumentError("JSON nested too deeply");
  }
  if (doc.is_discarded()) {
    diags.Error({file, 1, 1}, "not valid JSON");
    return absl::InvalidArgumentError("not valid JSON");
  }
  if (!doc.is_object() || !doc.contains("nftables") || !doc["nftables"].is_array()) {
    diags.Error({file, 1, 1}, "expected an object {\"nftables\": [...]} (nft -j list ruleset)");
    return absl::InvalidArgumentError("not an nft JSON listing");
  }
  Writer w;
  Reader reader(w);
  const Json& objects = doc["nftables"];
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string path = Sub(std::string("nftables"), i);
    if (!objects[i].is_object() || objects[i].size() != 1) {
      w.Fail(path, "expected an object of one key");
      continue;
    }
    const std::string kind = objects[i].begin().key();
    const Json& value = objects[i][kind];
    if (kind == "flush") {
      const Json* ruleset = value.is_object() && value.size() == 1 && value.contains("ruleset") ? &value["ruleset"] : nullptr;
      if (ruleset && (ruleset->is_null() || ruleset->is_object())) {
        if (w.ok()) reader.FlushRuleset(ruleset->is_object() ? Str(*ruleset, "family") : "");
      } else {
        w.Fail(Sub(path, kind), "a flush of something other than the ruleset; only "
                                "{\"flush\": {\"ruleset\": null}} and `nft -j list ruleset` output are read");
      }
      continue;
    }
    for (const char* cmd : {"add", "create", "insert", "replace", "delete", "destroy", "list", "reset", "rename"}) {
      if (kind == cmd) w.Fail(Sub(path, kind), "a command object; only `nft -j list ruleset` output is read");
    }
    if (w.ok()) reader.Add(kind, value, Sub(path, kind));
  }
  for (const nftjson::PathError& e : w.errors()) diags.Error({file, 1, 1}, e.path + ": " + e.message);
  if (!w.ok()) return absl::InvalidArgumentError("cannot read the nft JSON listing");
  return reader.Text();
}

absl::StatusOr<ir::Ruleset> ParseNftJson(std::string_view json, int file, ir::Diagnostics& diags) {
  absl::StatusOr<NftJsonText> text = NftJsonToText(json, file, diags);
  if (!text.ok()) return text.status();
  // The generated text is a file of its own, at the same index in both
  // sinks, so the ruleset's locations and the diagnostics agree.
  const std::string name = diags.file_names()[file] + " (as nft)";
  ir::Diagnostics inner;
  for (const std::string& earlier : diags.file_names()) inner.AddFile(earlier, "");
  const int text_file = diags.AddFile(name, text->text);
  inner.AddFile(name, text->text);
  absl::StatusOr<ir::Ruleset> rs = ParseNft(text->text, text_file, inner);
  for (const ir::Diagnostic& d : inner.all()) {
    std::string where;
    if (d.loc.file == text_file && d.loc.line >= 1 && d.loc.line <= text->paths.size()) {
      where = text->paths[d.loc.line - 1] + ": ";
    }
    const ir::SourceLoc loc = d.loc;
    if (d.severity == ir::Severity::kError) {
      diags.Error(loc, where + d.message, d.hint);
    } else {
      diags.Warning(loc, where + d.message, d.hint);
    }
  }
  if (!rs.ok()) return rs.status();
  rs->files = diags.file_names();
  return rs;
}

}  // namespace rulejit::frontends
