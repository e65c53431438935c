// See link_type_host.h.
#include "api/link_type_host.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "ir/walk.h"

namespace rulejit {
namespace {

bool ReadsDeviceType(const ir::Expr& expr) {
  const auto* load = std::get_if<ir::MetaLoad>(&expr);
  return load != nullptr &&
         (load->key == ir::MetaKey::kIifType || load->key == ir::MetaKey::kOifType);
}

const HostInterface* UntypedInterface(const HostModel& host) {
  for (const HostInterface& dev : host.interfaces) {
    if (!dev.link_type) return &dev;
  }
  return nullptr;
}

}  // namespace

absl::Status CheckLinkTypeHost(const ir::Ruleset& ruleset, const HostModel& host) {
  const HostInterface* untyped = UntypedInterface(host);
  if (untyped == nullptr) return absl::OkStatus();
  const ir::Node* read = ir::FirstNode(ruleset, ReadsDeviceType);
  if (read == nullptr) return absl::OkStatus();
  const std::string where = ruleset.Where(read->loc);
  return absl::InvalidArgumentError(absl::StrCat(
      where.empty() ? "" : where + ": ", "reads the device type (meta iiftype/oiftype), "
      "but the host model gives interface '", untyped->name,
      "' no link_type (`ip -j addr show` prints it)"));
}

}  // namespace rulejit
