// Whether the host model says what `meta iiftype`/`oiftype` read. A rule
// that reads them (nft `meta iiftype`, and the `meta iiftype ether` every
// `ether saddr` and iptables `-m mac` depend on) runs on a --host model
// only when each of its interfaces has a link_type; else Program::Compile
// refuses it, located, rather than guess Ethernet.
#ifndef RULEJIT_API_LINK_TYPE_HOST_H_
#define RULEJIT_API_LINK_TYPE_HOST_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "rulejit/host.h"

namespace rulejit {

// OK, or InvalidArgument "FILE:LINE: ..." at the first rule that reads a
// device type while an interface of `host` has none, naming it.
absl::Status CheckLinkTypeHost(const ir::Ruleset& ruleset, const HostModel& host);

}  // namespace rulejit

#endif  // RULEJIT_API_LINK_TYPE_HOST_H_
