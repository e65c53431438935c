// Whether the host model can answer a ruleset's socket lookups (the
// socket and tproxy expressions, iptables' socket match and TPROXY): only
// when its description lists the host's sockets (HostModel::sockets_listed,
// a "sockets" array in the host JSON). `--host local` reads no sockets
// (iproute2 prints neither IP_TRANSPARENT nor SO_MARK), so such a ruleset
// is refused there too, rather than answered "no socket" by guess.
#ifndef RULEJIT_API_SOCKET_HOST_H_
#define RULEJIT_API_SOCKET_HOST_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "rulejit/host.h"

namespace rulejit {

// OK, or InvalidArgument "FILE:LINE: ..." at the first socket lookup when
// the host lists no sockets.
absl::Status CheckSocketHost(const ir::Ruleset& ruleset, const HostModel& host);

}  // namespace rulejit

#endif  // RULEJIT_API_SOCKET_HOST_H_
