// Whether the host model answers iptables' rpfilter exactly, as the
// iptables frontend lowers it (frontends/iptables/match_rpfilter.cc: fib
// expressions and boolean maps). That lowering is the kernel's meaning on
// hosts whose routes the file comment there describes; Program::Compile
// refuses, located, a rpfilter rule on a --host model outside them.
#ifndef RULEJIT_API_RPFILTER_HOST_H_
#define RULEJIT_API_RPFILTER_HOST_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "rulejit/host.h"

namespace rulejit {

// OK, or InvalidArgument "FILE:LINE: ..." at the first rpfilter rule
// whose answer the host's routes leave inexact, naming the route.
absl::Status CheckRpfilterHost(const ir::Ruleset& ruleset, const HostModel& host);

}  // namespace rulejit

#endif  // RULEJIT_API_RPFILTER_HOST_H_
