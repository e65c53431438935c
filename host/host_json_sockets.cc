// See host_json_sockets.h.
#include "host/host_json_sockets.h"

#include <arpa/inet.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace rulejit::host {
namespace {

using Json = nlohmann::json;

absl::Status Bad(size_t n, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("sockets[", n, "]: ", why));
}

// An address field: its family (4 or 6), 0 when absent, -1 when wrong.
int AddressField(const Json& j, const char* key, std::array<uint8_t, 16>& out) {
  out = {};
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (!it->is_string()) return -1;
  const std::string text = it->get<std::string>();
  if (inet_pton(AF_INET, text.c_str(), out.data()) == 1) return 4;
  if (inet_pton(AF_INET6, text.c_str(), out.data()) == 1) return 6;
  return -1;
}

// An unsigned field no larger than `max`; `fallback` when absent.
bool NumberField(const Json& j, const char* key, uint64_t max, uint64_t fallback, uint64_t& out) {
  auto it = j.find(key);
  out = fallback;
  if (it == j.end()) return true;
  if (!it->is_number_unsigned()) return false;
  out = it->get<uint64_t>();
  return out <= max;
}

bool BoolField(const Json& j, const char* key, bool& out) {
  auto it = j.find(key);
  out = false;
  if (it == j.end()) return true;
  if (!it->is_boolean()) return false;
  out = it->get<bool>();
  return true;
}

absl::Status ProtocolAndState(const Json& j, size_t n, HostSocket& s) {
  auto proto = j.find("proto");
  const std::string p = proto != j.end() && proto->is_string() ? proto->get<std::string>() : "";
  if (p != "tcp" && p != "udp") return Bad(n, "\"proto\" must be \"tcp\" or \"udp\"");
  s.protocol = p == "tcp" ? 6 : 17;
  auto state = j.find("state");
  const std::string st = state != j.end() && state->is_string() ? state->get<std::string>() : "";
  if (st != "listen" && st != "established") {
    return Bad(n, "\"state\" must be \"listen\" or \"established\"");
  }
  s.state = st == "listen" ? SocketState::kListen : SocketState::kEstablished;
  return absl::OkStatus();
}

absl::Status Addresses(const Json& j, size_t n, HostSocket& s) {
  const int local = AddressField(j, "local", s.local_addr);
  const int remote = AddressField(j, "remote", s.remote_addr);
  uint64_t lport = 0, rport = 0;
  if (local <= 0) return Bad(n, "needs \"local\", an IPv4 or IPv6 address");
  if (remote < 0 || (remote > 0 && remote != local)) {
    return Bad(n, "\"remote\" must be an address of the family of \"local\"");
  }
  if (!NumberField(j, "lport", 65535, 0, lport) || lport == 0) {
    return Bad(n, "needs \"lport\", a port from 1 to 65535");
  }
  if (!NumberField(j, "rport", 65535, 0, rport)) return Bad(n, "\"rport\" is not a port");
  const bool established = s.state == SocketState::kEstablished;
  if (established != (remote > 0 && rport != 0) && s.protocol == 6) {
    return Bad(n, "a TCP socket has \"remote\" and \"rport\" exactly when established");
  }
  if (!established && (remote > 0 || rport != 0)) {
    return Bad(n, "only an established (connected) socket has \"remote\" or \"rport\"");
  }
  s.family = static_cast<uint8_t>(local);
  s.local_port = static_cast<uint16_t>(lport);
  s.remote_port = static_cast<uint16_t>(rport);
  return absl::OkStatus();
}

absl::Status Options(const Json& j, size_t n, const HostModel& host, HostSocket& s) {
  uint64_t mark = 0, uid = 0, gid = 0;
  if (!NumberField(j, "mark", 0xffffffff, 0, mark) || !NumberField(j, "uid", 0xffffffff, 0, uid) ||
      !NumberField(j, "gid", 0xffffffff, 0, gid)) {
    return Bad(n, "\"mark\", \"uid\" and \"gid\" are 32-bit unsigned numbers");
  }
  if (!BoolField(j, "v6only", s.v6only) || !BoolField(j, "transparent", s.transparent)) {
    return Bad(n, "\"v6only\" and \"transparent\" are true or false");
  }
  if (s.v6only && s.family != 6) return Bad(n, "\"v6only\" is for IPv6 sockets");
  s.mark = static_cast<uint32_t>(mark);
  s.uid = static_cast<uint32_t>(uid);
  s.gid = static_cast<uint32_t>(gid);
  auto dev = j.find("dev");
  if (dev == j.end()) return absl::OkStatus();
  const HostInterface* i = dev->is_string() ? host.FindInterface(dev->get<std::string>()) : nullptr;
  if (i == nullptr) return Bad(n, "\"dev\" names no interface of \"addr\"");
  s.bound_dev = i->index;
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseHostSockets(const Json& list, HostModel& host) {
  if (!list.is_array()) return absl::InvalidArgumentError("'sockets' is not a list");
  for (size_t n = 0; n < list.size(); ++n) {
    const Json& j = list[n];
    if (!j.is_object()) return Bad(n, "not an object");
    HostSocket s;
    if (absl::Status st = ProtocolAndState(j, n, s); !st.ok()) return st;
    if (absl::Status st = Addresses(j, n, s); !st.ok()) return st;
    if (absl::Status st = Options(j, n, host, s); !st.ok()) return st;
    host.sockets.push_back(s);
  }
  host.sockets_listed = true;
  return absl::OkStatus();
}

}  // namespace rulejit::host
