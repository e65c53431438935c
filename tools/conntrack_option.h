// `--sysctl NAME=VALUE[,NAME=VALUE...]` of the subcommands that track
// connections: the net.netfilter.nf_conntrack_* sysctls the offline
// tracker reads (runtime/conntrack.h), named as the kernel names them
// (with or without the "net.netfilter." prefix). Without the flag, Linux
// 6.18's defaults: the kernel's own, stated in ConntrackOptions.
#ifndef RULEJIT_TOOLS_CONNTRACK_OPTION_H_
#define RULEJIT_TOOLS_CONNTRACK_OPTION_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/conntrack.h"

namespace rulejit::tools {

absl::StatusOr<runtime::ConntrackOptions> ParseConntrackSysctls(
    const std::optional<std::string>& value);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_CONNTRACK_OPTION_H_
