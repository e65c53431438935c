// The nft script of a ruleset: tables with their objects, flowtables,
// named sets and chains (see nft_print.h). A table's rules are
// decompiled first, since they tell the named sets' key types.
//
//   flush ruleset
//   table inet filter {
//     set blocked { type ipv4_addr; flags interval; elements = { ... } }
//     chain input { type filter hook input priority 0; policy drop;
//       ct state established,related accept ... }
//   }
#include "emit/nft_print.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "emit/nft_json.h"
#include "emit/nft_rule.h"
#include "ir/printer.h"

namespace rulejit::emit {
namespace {

absl::Status Located(const ir::Ruleset& rs, const ir::SourceLoc& loc, const std::string& what,
                     absl::string_view why) {
  std::string where = rs.Where(loc);
  return absl::InvalidArgumentError(
      absl::StrCat(where.empty() ? "" : where + ": ", what, ": ", why));
}

std::string SetType(const std::vector<Value>& keys) {
  std::vector<std::string> types;
  bool all = true;
  for (const Value& k : keys) {
    types.push_back(k.type);
    all = all && !k.type.empty();
  }
  if (all) return "type " + absl::StrJoin(types, " . ");
  std::vector<std::string> texts;
  for (const Value& k : keys) texts.push_back(k.text);
  return "typeof " + absl::StrJoin(texts, " . ");
}

const char* ObjName(uint32_t type) {
  switch (type) {
    case ir::kObjCounter: return "counter";
    case ir::kObjQuota: return "quota";
    case ir::kObjLimit: return "limit";
    case ir::kObjSecmark: return "secmark";
    case ir::kObjSynproxy: return "synproxy";
    default: return nullptr;
  }
}

// A type with values of `len` bytes whose literals give back any bytes:
// for a set no rule reads (its elements are only bytes), or map data no
// rule uses.
std::optional<Value> TypeOfLength(uint32_t len) {
  Value v;
  v.len = len;
  switch (len) {
    case 1: v.type = "inet_proto"; v.lit = Lit::kBeDec; return v;
    case 2: v.type = "inet_service"; v.lit = Lit::kBeDec; return v;
    case 4: v.type = "ipv4_addr"; v.lit = Lit::kIpv4; return v;
    case 6: v.type = "ether_addr"; v.lit = Lit::kEther; return v;
    case 16: v.type = "ipv6_addr"; v.lit = Lit::kIpv6; return v;
    default: return std::nullopt;
  }
}

// The set's shape as its users show it, or by its lengths where none does.
std::optional<SetShape> ShapeOf(const ir::Set& set, const SetShapes& shapes) {
  SetShape shape;
  if (auto it = shapes.find(set.name); it != shapes.end()) shape = it->second;
  if (shape.keys.empty()) {
    std::vector<uint32_t> lens = set.field_lens;
    if (lens.empty()) lens.push_back(set.key_len);
    for (uint32_t len : lens) {
      std::optional<Value> v = TypeOfLength(len);
      if (!v) return std::nullopt;
      shape.keys.push_back(*v);
    }
  }
  if (!shape.data && (set.flags & ir::kSetMap) && !set.verdict_map && !(set.flags & ir::kSetObject)) {
    shape.data = TypeOfLength(set.data_len);
  }
  return shape;
}

absl::StatusOr<std::string> PrintSet(const ir::Ruleset& rs, const ir::Set& set,
                                     const SetShapes& shapes) {
  std::optional<SetShape> found = ShapeOf(set, shapes);
  if (!found) return Located(rs, set.loc, "set " + set.name, "no rule shows its key type");
  const SetShape& shape = *found;
  const bool map = set.flags & (ir::kSetMap | ir::kSetObject);
  std::string decl = SetType(shape.keys);
  if (map) {
    if (set.verdict_map) {
      absl::StrAppend(&decl, " : verdict");
    } else if (set.flags & ir::kSetObject) {
      const char* o = ObjName(set.obj_type);
      if (!o) return Located(rs, set.loc, "map " + set.name, "an object map of a type nft cannot name");
      absl::StrAppend(&decl, " : ", o);
    } else if (shape.data && !shape.data->type.empty() && decl.rfind("type ", 0) == 0) {
      absl::StrAppend(&decl, " : ", shape.data->type);
    } else {
      return Located(rs, set.loc, "map " + set.name, "no rule shows its data type");
    }
  }
  std::string out = absl::StrCat("\t", map ? "map " : "set ", Ident(set.name), " {\n\t\t", decl, "\n");
  std::vector<std::string> flags;
  if (set.flags & ir::kSetConstant) flags.push_back("constant");
  if (set.flags & ir::kSetInterval) flags.push_back("interval");
  if (set.flags & ir::kSetTimeout) flags.push_back("timeout");
  if (set.flags & ir::kSetEval) flags.push_back("dynamic");
  if (!flags.empty()) absl::StrAppend(&out, "\t\tflags ", absl::StrJoin(flags, ","), "\n");
  if (set.timeout_ms) absl::StrAppend(&out, "\t\ttimeout ", Duration(set.timeout_ms), "\n");
  if (set.size) absl::StrAppend(&out, "\t\tsize ", set.size, "\n");
  if (!set.elements.empty()) {
    absl::StatusOr<std::string> elems = PrintElements(set, shape);
    if (!elems.ok()) return Located(rs, set.loc, "set " + set.name, elems.status().message());
    absl::StrAppend(&out, "\t\telements = { ", *elems, " }\n");
  }
  return out + "\t}\n";
}

// "protocol tcp; l3proto ip;" of the ct objects.
std::string CtProtocols(const ir::Object& o) {
  std::string out;
  if (o.l4proto) {
    absl::StrAppend(&out, "protocol ", o.l4proto == 6 ? "tcp" : o.l4proto == 17 ? "udp"
                                                                  : absl::StrCat(o.l4proto), "; ");
  }
  if (o.l3proto == 2) absl::StrAppend(&out, "l3proto ip; ");
  if (o.l3proto == 10) absl::StrAppend(&out, "l3proto ip6; ");
  return out;
}

absl::StatusOr<std::string> PrintObject(const ir::Ruleset& rs, const ir::Object& o) {
  std::string name = Ident(o.name);
  switch (o.type) {
    case ir::kObjCounter:
      return absl::StrCat("\tcounter ", name, " { packets ", o.counter.packets, " bytes ",
                          o.counter.bytes, " }\n");
    case ir::kObjQuota:
      return absl::StrCat("\tquota ", name, " { ", o.quota.over ? "over " : "", o.quota.bytes,
                          " bytes used ", o.quota.consumed, " bytes }\n");
    case ir::kObjSecmark:
      return absl::StrCat("\tsecmark ", name, " { ", Quote(o.text), " }\n");
    case ir::kObjLimit: {
      const char* unit = ir::LimitUnitName(o.limit.unit_seconds);
      if (!unit) break;
      const ir::Limit& l = o.limit;
      return absl::StrCat("\tlimit ", name, " { rate ", l.over ? "over " : "", l.rate,
                          l.bytes ? " bytes/" : "/", unit, " burst ", l.burst,
                          l.bytes ? " bytes" : " packets", " }\n");
    }
    case ir::kObjSynproxy:
      return absl::StrCat("\tsynproxy ", name, " { mss ", o.synproxy.mss, " wscale ",
                          o.synproxy.wscale, " }\n");
    case ir::kObjCtHelper:
      return absl::StrCat("\tct helper ", name, " { type ", Quote(o.text), " ", CtProtocols(o),
                          "}\n");
    case ir::kObjCtExpect:
      return absl::StrCat("\tct expectation ", name, " { ", CtProtocols(o), "dport ", o.dport,
                          "; timeout ", Duration(o.timeout_ms), "; size ", o.size, "; }\n");
    case ir::kObjCtTimeout: {
      // "established 100 close 4" (or "a : 1s, b : 2s") → policy = { established: 100, ... }
      std::vector<std::string> words = absl::StrSplit(o.text, absl::ByAnyChar(" :,"), absl::SkipEmpty());
      if (words.size() % 2) break;
      std::vector<std::string> pairs;
      for (size_t i = 0; i < words.size(); i += 2) {
        // nft 1.0.6 reads the timeouts as plain seconds ("15s" from a listing: 15).
        std::string secs = words[i + 1];
        if (!secs.empty() && secs.back() == 's') secs.pop_back();
        if (secs.empty() || secs.find_first_not_of("0123456789") != std::string::npos) {
          return Located(rs, o.loc, "object " + o.name, "a ct timeout policy nft cannot write");
        }
        pairs.push_back(words[i] + " : " + secs);
      }
      return absl::StrCat("\tct timeout ", name, " {\n\t\t", CtProtocols(o), "\n\t\tpolicy = { ",
                          absl::StrJoin(pairs, ", "), " }\n\t}\n");
    }
    default:
      break;
  }
  return Located(rs, o.loc, "object " + o.name, "an object type the nft printer does not write yet");
}

std::string ChainHead(const ir::Chain& c) {
  std::string out = absl::StrCat("\tchain ", Ident(c.name), " {\n");
  if (!c.base) return out;
  const ir::BaseChain& b = *c.base;
  absl::StrAppend(&out, "\t\ttype ", b.type, " hook ", ir::HookName(b.hook));
  if (b.devices.size() == 1) absl::StrAppend(&out, " device ", Quote(b.devices[0]));
  if (b.devices.size() > 1) {
    std::vector<std::string> devs;
    for (const std::string& d : b.devices) devs.push_back(Quote(d));
    absl::StrAppend(&out, " devices = { ", absl::StrJoin(devs, ", "), " }");
  }
  absl::StrAppend(&out, " priority ", b.priority, "; policy ",
                  b.policy == ir::VerdictCode::kDrop ? "drop" : "accept", ";\n");
  return out;
}

// {"rule": {"family", "table", "chain", "expr": [...], "comment"}}
Json RuleJson(const ir::Table& t, const ir::Chain& c, const ir::Rule& r, const RuleText& line) {
  Json j = TableRef(t);
  j["chain"] = JsonName(c.name);
  j["expr"] = line.expr;
  // As the text: a comment nft would cut (or a multi-line one) is left out.
  if (!r.comment.empty() && r.comment.size() <= 128 && r.comment.find('\n') == std::string::npos) {
    j["comment"] = r.comment;
  }
  return Json{{"rule", j}};
}

// The table as nft text; with `json`, also its objects as libnftables
// JSON appended there (table, objects, flowtables, chains, sets, rules).
// The table's declarations as JSON, appended to `out`, or a located error.
absl::Status DeclarationsJson(const ir::Ruleset& rs, const ir::Table& t, const SetShapes& shapes,
                              Json& out) {
  out.push_back(Json{{"table", {{"family", ir::FamilyName(t.family)}, {"name", t.name}}}});
  std::string why;
  for (const ir::Object& o : t.objects) {
    Json j = ObjectJson(t, o, why);
    if (j.is_null()) return Located(rs, o.loc, "object " + o.name, why);
    out.push_back(std::move(j));
  }
  for (const ir::Flowtable& f : t.flowtables) {
    Json j = FlowtableJson(t, f, why);
    if (j.is_null()) return Located(rs, f.loc, "flowtable " + f.name, why);
    out.push_back(std::move(j));
  }
  // Chains before sets: nft reads JSON commands in order, and a verdict
  // map's `jump` needs its chain.
  for (const ir::Chain& c : t.chains) out.push_back(ChainJson(t, c));
  for (const ir::Set& s : t.sets) {
    if (s.anonymous()) continue;
    std::optional<SetShape> shape = ShapeOf(s, shapes);
    if (!shape) return Located(rs, s.loc, "set " + s.name, "no rule shows its key type");
    Json j = SetJson(t, s, *shape, why);
    if (j.is_null()) return Located(rs, s.loc, "set " + s.name, why);
    out.push_back(std::move(j));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PrintTable(const ir::Ruleset& rs, const ir::Table& t, Json* json) {
  SetShapes shapes;
  std::vector<std::string> chains;
  Json rules = Json::array();
  for (const ir::Chain& c : t.chains) {
    std::string text = ChainHead(c);
    for (const ir::Rule& r : c.rules) {
      absl::StatusOr<RuleText> line = PrintRule(t, r, shapes);
      const std::string what = absl::StrCat("rule in chain ", c.name);
      if (!line.ok()) return Located(rs, r.loc, what, line.status().message());
      if (json && !line->json_gap.empty()) return Located(rs, r.loc, what, line->json_gap);
      if (json) rules.push_back(RuleJson(t, c, r, *line));
      absl::StrAppend(&text, "\t\t", line->text, "\n");
    }
    chains.push_back(text + "\t}\n");
  }
  if (json) {
    if (absl::Status s = DeclarationsJson(rs, t, shapes, *json); !s.ok()) return s;
    for (Json& r : rules) json->push_back(std::move(r));
  }
  std::string out = absl::StrCat("table ", ir::FamilyName(t.family), " ", Ident(t.name), " {\n");
  for (const ir::Object& o : t.objects) {
    absl::StatusOr<std::string> s = PrintObject(rs, o);
    if (!s.ok()) return s.status();
    out += *s;
  }
  for (const ir::Flowtable& f : t.flowtables) {
    std::vector<std::string> devs;
    for (const std::string& d : f.devices) devs.push_back(Quote(d));
    absl::StrAppend(&out, "\tflowtable ", Ident(f.name), " {\n\t\thook ingress priority ", f.priority,
                    "\n", devs.empty() ? "" : absl::StrCat("\t\tdevices = { ", absl::StrJoin(devs, ", "), " }\n"),
                    f.flags & 1 ? "\t\tflags offload\n" : "", f.flags & 2 ? "\t\tcounter\n" : "", "\t}\n");
  }
  for (const ir::Set& s : t.sets) {
    if (s.anonymous()) continue;
    absl::StatusOr<std::string> text = PrintSet(rs, s, shapes);
    if (!text.ok()) return text.status();
    out += *text;
  }
  for (const std::string& c : chains) out += c;
  return out + "}\n";
}

}  // namespace

absl::StatusOr<std::string> PrintNft(const ir::Ruleset& ruleset) {
  std::string out = "flush ruleset\n\n";
  for (const ir::Table& t : ruleset.tables) {
    absl::StatusOr<std::string> text = PrintTable(ruleset, t, nullptr);
    if (!text.ok()) return text.status();
    out += *text;
  }
  return out;
}

absl::StatusOr<std::string> PrintNftJson(const ir::Ruleset& ruleset) {
  Json objects = Json::array();
  objects.push_back(Json{{"metainfo", {{"json_schema_version", 1}}}});
  // As the text's `flush ruleset`: `nft -j -f` replaces the ruleset
  // rather than adding to it.
  objects.push_back(Json{{"flush", {{"ruleset", nullptr}}}});
  for (const ir::Table& t : ruleset.tables) {
    // The text is made too: the JSON printer refuses whatever it refuses.
    absl::StatusOr<std::string> text = PrintTable(ruleset, t, &objects);
    if (!text.ok()) return text.status();
  }
  return Json{{"nftables", objects}}.dump() + "\n";
}

}  // namespace rulejit::emit
