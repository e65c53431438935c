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

namespace {

bool AssignsHelper(const Expr& e) {
  const auto* ref = std::get_if<Objref>(&e);
  return ref != nullptr && ref->type == kObjCtHelper;
}

bool SetsLabels(const Expr& e) {
  const auto* set = std::get_if<CtSet>(&e);
  return set != nullptr && set->key == CtKey::kLabels;
}

}  // namespace

const char* UnmodelledCtKey(CtKey key, bool helpers_assigned, bool labels_set) {
  switch (key) {
    case CtKey::kSecMark: return "security marks (SELinux) are not modelled";
    case CtKey::kId: return "the kernel's conntrack id is a hash keyed with a secret it draws at boot";
    case CtKey::kHelper:
      return helpers_assigned ? "conntrack helpers are not modelled (the ruleset assigns one)"
                              : nullptr;
    case CtKey::kLabels:
      return labels_set ? "conntrack labels are not modelled (the ruleset sets one)" : nullptr;
    default: return nullptr;
  }
}

bool CheckModelled(const Ruleset& ruleset, Diagnostics& diags) {
  const bool helpers_assigned = FirstNode(ruleset, AssignsHelper) != nullptr;
  const bool labels_set = FirstNode(ruleset, SetsLabels) != nullptr;
  bool ok = true;
  ForEachNode(ruleset, [&](const Node& n) {
    if (const auto* load = std::get_if<MetaLoad>(&n.expr)) {
      if (const char* why = UnmodelledMetaKey(load->key)) {
        diags.Error(n.loc, absl::StrCat("meta ", MetaKeyName(load->key), " is not supported"),
                    why);
        ok = false;
      }
    } else if (const auto* ct = std::get_if<CtLoad>(&n.expr)) {
      if (const char* why = UnmodelledCtKey(ct->key, helpers_assigned, labels_set)) {
        diags.Error(n.loc, absl::StrCat("ct ", CtKeyName(ct->key), " is not supported"), why);
        ok = false;
      }
    }
  });
  return ok;
}

}  // namespace rulejit::ir
