// The "sockets" list of the host JSON (rulejit/host.h, HostSocket): one
// object a socket,
//   {"proto": "tcp"|"udp", "state": "listen"|"established",
//    "local": "ADDR", "lport": N, "remote": "ADDR", "rport": N,
//    "dev": "NAME", "v6only": B, "transparent": B, "mark": N,
//    "uid": N, "gid": N}
// "local" and "lport" are required ("0.0.0.0" or "::": bound to the any
// address, whose form gives the socket's family); "remote" and "rport"
// only for established (UDP: connected) sockets; the rest default to
// false / 0 / no device.
#ifndef RULEJIT_HOST_HOST_JSON_SOCKETS_H_
#define RULEJIT_HOST_HOST_JSON_SOCKETS_H_

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "rulejit/host.h"

namespace rulejit::host {

// Appends the sockets of `list` to host.sockets (the interfaces already
// read, for "dev") and sets host.sockets_listed; errors name the entry.
absl::Status ParseHostSockets(const nlohmann::json& list, HostModel& host);

}  // namespace rulejit::host

#endif  // RULEJIT_HOST_HOST_JSON_SOCKETS_H_
