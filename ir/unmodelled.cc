// Reads the model has no value for (see unmodelled.h).
#include "ir/unmodelled.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "ir/walk.h"

namespace rulejit::ir {

const char* UnmodelledMetaKey(MetaKey key) {
  switch (key) {
    case MetaKey::kCgroup: return "the socket's cgroup is not in the host model";
    case MetaKey::kRtClassId: return "route realms are not in the host model";
    case MetaKey::kSecMark: return "security marks (SELinux) are not modelled";
    case MetaKey::kNfTrace: return "the packet's trace flag is not modelled";
    case MetaKey::kIifKind:
    case MetaKey::kOifKind: return "device kinds are not in the host model";
    case MetaKey::kSdif:
    case MetaKey::kSdifName: return "VRF devices are not in the host model";
    case MetaKey::kBriIifName:
    case MetaKey::kBriOifName:
    case MetaKey::kBriIifPvid:
    case MetaKey::kBriIifVproto:
    case MetaKey::kBriBroute: return "bridge ports are not in the host model";
    default: return nullptr;
  }
}

bool CheckModelled(const Ruleset& ruleset, Diagnostics& diags) {
  bool ok = true;
  ForEachNode(ruleset, [&](const Node& n) {
    const auto* load = std::get_if<MetaLoad>(&n.expr);
    const char* why = load != nullptr ? UnmodelledMetaKey(load->key) : nullptr;
    if (why == nullptr) return;
    diags.Error(n.loc, absl::StrCat("meta ", MetaKeyName(load->key), " is not supported"), why);
    ok = false;
  });
  return ok;
}

}  // namespace rulejit::ir
