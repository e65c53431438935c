// `--host FILE|local` of the subcommands that run packets: the host model
// fib and addrtype ask about (rulejit/host.h). FILE holds the JSON of
// ParseHostJson; `local` reads the running machine. A ruleset that asks
// the host needs the flag: the answer is never a silent default.
#ifndef RULEJIT_TOOLS_HOST_OPTION_H_
#define RULEJIT_TOOLS_HOST_OPTION_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "rulejit/host.h"

namespace rulejit::tools {

// The model `--host` names; null when the flag is absent.
absl::StatusOr<std::shared_ptr<const HostModel>> LoadHostOption(
    const std::optional<std::string>& value);

// The first expression of `ruleset` whose answer depends on the host, or
// null.
const ir::Node* FirstHostRead(const ir::Ruleset& ruleset);

// Whether `e` looks up the host's sockets (socket, tproxy).
bool ReadsSockets(const ir::Expr& e);

// The ifindex of device `name` on `host`, or an error naming the devices
// the host has.
absl::StatusOr<uint32_t> HostDeviceIndex(const HostModel& host, const std::string& name);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_HOST_OPTION_H_
