// Table declarations as libnftables JSON (see nft_json.h).
//
//   {"set": {"family": "inet", "table": "filter", "name": "blocked",
//            "type": "ipv4_addr", "flags": ["interval"],
//            "elem": [{"prefix": {"addr": "10.0.0.0", "len": 8}}]}}
#include "emit/nft_json.h"

#include "absl/strings/str_split.h"
#include "ir/printer.h"

namespace rulejit::emit {
namespace {

Json Named(const ir::Table& t, const std::string& name) {
  Json j = TableRef(t);
  j["name"] = JsonName(name);
  return j;
}

const char* ProtoName(uint8_t p) { return p == 6 ? "tcp" : p == 17 ? "udp" : nullptr; }

// "protocol" and "l3proto" of the ct objects, the l3proto the table's
// family where none is given (as nft lists them); false when nft cannot
// name them.
bool CtProtocols(const ir::Table& t, const ir::Object& o, Json& j) {
  if (o.l4proto) {
    if (!ProtoName(o.l4proto)) return false;
    j["protocol"] = ProtoName(o.l4proto);
  }
  j["l3proto"] = o.l3proto == 2 ? "ip" : o.l3proto == 10 ? "ip6" : ir::FamilyName(t.family);
  return true;
}

bool UpdatedByRule(const ir::Table& t, const std::string& set) {
  for (const ir::Chain& c : t.chains) {
    for (const ir::Rule& r : c.rules) {
      for (const ir::Node& n : r.exprs) {
        const auto* d = std::get_if<ir::Dynset>(&n.expr);
        if (d && d->set == set) return true;
      }
    }
  }
  return false;
}

}  // namespace

Json TableRef(const ir::Table& t) {
  return Json{{"family", ir::FamilyName(t.family)}, {"table", t.name}};
}

Json SetJson(const ir::Table& t, const ir::Set& set, const SetShape& shape, std::string& why) {
  Json j = Named(t, set.name);
  Json types = Json::array();
  for (const Value& k : shape.keys) {
    if (k.type.empty()) {
      why = "a set declared by `typeof " + k.text + "`, which nft 1.0.6's JSON cannot say";
      return nullptr;
    }
    types.push_back(k.type);
  }
  j["type"] = types.size() == 1 ? types[0] : types;
  const bool map = set.flags & (ir::kSetMap | ir::kSetObject);
  if (map) {
    if (set.verdict_map) {
      j["map"] = "verdict";
    } else if (set.flags & ir::kSetObject) {
      static constexpr std::pair<uint32_t, const char*> kObjs[] = {
          {ir::kObjCounter, "counter"}, {ir::kObjQuota, "quota"}, {ir::kObjLimit, "limit"},
          {ir::kObjSecmark, "secmark"}, {ir::kObjSynproxy, "synproxy"}};
      for (const auto& [type, name] : kObjs) {
        if (type == set.obj_type) j["map"] = name;
      }
    } else if (shape.data && !shape.data->type.empty()) {
      j["map"] = shape.data->type;
    }
    if (!j.contains("map")) {
      why = "a map whose data type nft 1.0.6's JSON cannot name (it names a data type only)";
      return nullptr;
    }
  }
  Json flags = Json::array();
  if (set.flags & ir::kSetConstant) flags.push_back("constant");
  if (set.flags & ir::kSetInterval) flags.push_back("interval");
  if (set.flags & ir::kSetTimeout) flags.push_back("timeout");
  // nft 1.0.6's JSON has no "dynamic"; nft sets it itself on a set a
  // rule updates.
  if ((set.flags & ir::kSetEval) && !UpdatedByRule(t, set.name)) {
    why = "flags dynamic on a set no rule updates, which nft 1.0.6's JSON cannot say";
    return nullptr;
  }
  if (!flags.empty()) j["flags"] = flags;
  if (set.timeout_ms) {
    if (set.timeout_ms % 1000) {
      why = "a timeout of a fraction of a second, which nft 1.0.6's JSON cannot say (it reads whole seconds)";
      return nullptr;
    }
    j["timeout"] = set.timeout_ms / 1000;
  }
  if (set.size) j["size"] = set.size;
  if (!set.elements.empty()) {
    Json elems;
    absl::StatusOr<std::string> text = PrintElements(set, shape, &elems);
    if (!text.ok()) {
      why = std::string(text.status().message());
      return nullptr;
    }
    j["elem"] = elems;
  }
  return Json{{map ? "map" : "set", j}};
}

Json ObjectJson(const ir::Table& t, const ir::Object& o, std::string& why) {
  Json j = Named(t, o.name);
  switch (o.type) {
    case ir::kObjCounter:
      j["packets"] = o.counter.packets;
      j["bytes"] = o.counter.bytes;
      return Json{{"counter", j}};
    case ir::kObjQuota:
      j["bytes"] = o.quota.bytes;
      j["used"] = o.quota.consumed;
      if (o.quota.over) j["inv"] = true;
      return Json{{"quota", j}};
    case ir::kObjSecmark:
      j["context"] = o.text;
      return Json{{"secmark", j}};
    case ir::kObjLimit: {
      const char* unit = ir::LimitUnitName(o.limit.unit_seconds);
      if (!unit) break;
      j["rate"] = o.limit.rate;
      j["per"] = unit;
      j["burst"] = o.limit.burst;
      j["unit"] = o.limit.bytes ? "bytes" : "packets";
      if (o.limit.over) j["inv"] = true;
      return Json{{"limit", j}};
    }
    case ir::kObjSynproxy:
      why = "a synproxy object, which nft 1.0.6 does not read from JSON";
      return nullptr;
    case ir::kObjCtHelper:
      j["type"] = o.text;
      if (!CtProtocols(t, o, j)) break;
      return Json{{"ct helper", j}};
    case ir::kObjCtExpect:
      // nft 1.0.6 fails on its own listing of one ("missing options").
      why = "a ct expectation object, which nft 1.0.6 does not read from JSON";
      return nullptr;
    case ir::kObjCtTimeout: {
      if (!CtProtocols(t, o, j)) break;
      std::vector<std::string> words = absl::StrSplit(o.text, absl::ByAnyChar(" :,"), absl::SkipEmpty());
      if (words.size() % 2) break;
      Json policy = Json::object();
      for (size_t i = 0; i < words.size(); i += 2) {
        std::string secs = words[i + 1];
        if (!secs.empty() && secs.back() == 's') secs.pop_back();
        if (secs.empty() || secs.find_first_not_of("0123456789") != std::string::npos) break;
        policy[words[i]] = std::stoull(secs);
      }
      if (policy.size() * 2 != words.size()) break;
      j["policy"] = policy;
      return Json{{"ct timeout", j}};
    }
    default:
      break;
  }
  why = "an object nft 1.0.6's JSON cannot say";
  return nullptr;
}

Json FlowtableJson(const ir::Table& t, const ir::Flowtable& f, std::string& why) {
  if (f.flags) {
    why = "flowtable flags (offload, counter), which nft 1.0.6 does not read from JSON";
    return nullptr;
  }
  Json j = Named(t, f.name);
  j["hook"] = "ingress";
  j["prio"] = f.priority;
  if (!f.devices.empty()) j["dev"] = f.devices;
  return Json{{"flowtable", j}};
}

Json ChainJson(const ir::Table& t, const ir::Chain& c) {
  Json j = Named(t, c.name);
  if (c.base) {
    const ir::BaseChain& b = *c.base;
    j["type"] = b.type;
    j["hook"] = ir::HookName(b.hook);
    j["prio"] = b.priority;
    if (b.devices.size() == 1) j["dev"] = b.devices[0];
    if (b.devices.size() > 1) j["dev"] = b.devices;
    j["policy"] = b.policy == ir::VerdictCode::kDrop ? "drop" : "accept";
  }
  return Json{{"chain", j}};
}

}  // namespace rulejit::emit
