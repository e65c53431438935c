// The host model for the C API (rulejit_c.h): a rulejit_host holds a
// HostModel that a C caller reads from `ip -j` JSON or the running
// machine, or builds interface by interface; compile options copy it into
// the program (CompileOptions::host), so it may change or go afterwards.
#include <new>

#include "api/c_internal.h"

using rulejit::c_api::Fail;
using rulejit::c_api::FailStatus;
using rulejit::c_api::ReadSized;

namespace {

rulejit_host* Wrap(absl::StatusOr<rulejit::HostModel> model, rulejit_error** error) {
  if (!model.ok()) {
    FailStatus(error, model.status());
    if (error != nullptr && *error != nullptr) (*error)->code = RULEJIT_EPARSE;
    return nullptr;
  }
  return new (std::nothrow) rulejit_host{*std::move(model)};
}

}  // namespace

extern "C" {

void rulejit_host_interface_init(rulejit_host_interface* interface) {
  if (interface == nullptr) return;
  *interface = rulejit_host_interface{};
  interface->size = sizeof(*interface);
  interface->mtu = rulejit::HostInterface{}.mtu;
}

void rulejit_host_route_init(rulejit_host_route* route) {
  if (route == nullptr) return;
  const rulejit::HostRoute defaults;
  *route = rulejit_host_route{};
  route->size = sizeof(*route);
  route->family = defaults.family;
  route->type = static_cast<uint8_t>(defaults.type);
  route->table = defaults.table;
}

rulejit_host* rulejit_host_new(void) { return new (std::nothrow) rulejit_host(); }

rulejit_host* rulejit_host_loopback(void) {
  return new (std::nothrow) rulejit_host{rulejit::LoopbackHost()};
}

rulejit_host* rulejit_host_parse_json(const char* text, size_t len, rulejit_error** error) {
  if (text == nullptr) {
    Fail(error, RULEJIT_EINVAL, "no text");
    return nullptr;
  }
  return Wrap(rulejit::ParseHostJson(std::string_view(text, len)), error);
}

rulejit_host* rulejit_host_read_local(rulejit_error** error) {
  return Wrap(rulejit::ReadLocalHost(), error);
}

void rulejit_host_free(rulejit_host* host) { delete host; }

int rulejit_host_add_interface(rulejit_host* host, const rulejit_host_interface* interface) {
  rulejit_host_interface in;
  rulejit_host_interface_init(&in);
  if (host == nullptr || !ReadSized(interface, &in) || in.name == nullptr || in.index == 0) {
    return RULEJIT_EINVAL;
  }
  rulejit::HostInterface out;
  out.name = in.name;
  out.index = in.index;
  out.group = in.group;
  out.mtu = in.mtu;
  out.loopback = in.loopback != 0;
  out.has_mac = in.has_mac != 0;
  std::memcpy(out.mac.data(), in.mac, 6);
  host->model.interfaces.push_back(std::move(out));
  return 0;
}

int rulejit_host_add_address(rulejit_host* host, uint32_t ifindex, uint8_t family,
                             const uint8_t* addr, uint8_t prefix_len) {
  if (host == nullptr || addr == nullptr || (family != 4 && family != 6) ||
      prefix_len > (family == 4 ? 32 : 128)) {
    return RULEJIT_EINVAL;
  }
  for (rulejit::HostInterface& interface : host->model.interfaces) {
    if (interface.index != ifindex) continue;
    rulejit::HostAddress a;
    a.family = family;
    std::memcpy(a.addr.data(), addr, family == 4 ? 4 : 16);
    a.prefix_len = prefix_len;
    interface.addresses.push_back(a);
    return 0;
  }
  return RULEJIT_EINVAL;  // no such interface
}

int rulejit_host_add_route(rulejit_host* host, const rulejit_host_route* route) {
  rulejit_host_route in;
  rulejit_host_route_init(&in);
  if (host == nullptr || !ReadSized(route, &in) || (in.family != 4 && in.family != 6) ||
      in.prefix_len > (in.family == 4 ? 32 : 128) || in.type > 11 ||
      (in.oifs == nullptr && in.oif_count != 0)) {
    return RULEJIT_EINVAL;
  }
  rulejit::HostRoute out;
  out.family = in.family;
  std::memcpy(out.dst.data(), in.dst, sizeof(in.dst));
  out.prefix_len = in.prefix_len;
  out.type = static_cast<rulejit::RouteType>(in.type);
  out.table = in.table;
  out.oifs.assign(in.oifs, in.oifs + in.oif_count);
  out.metric = in.metric;
  out.gateway = in.gateway != 0;
  out.mtu = in.mtu;
  host->model.routes.push_back(std::move(out));
  return 0;
}

int rulejit_host_derive_routes(rulejit_host* host) {
  if (host == nullptr) return RULEJIT_EINVAL;
  host->model.routes = rulejit::DeriveKernelRoutes(host->model.interfaces);
  return 0;
}

int rulejit_host_interface_count(const rulejit_host* host) {
  return host == nullptr ? RULEJIT_EINVAL : static_cast<int>(host->model.interfaces.size());
}

int rulejit_host_route_count(const rulejit_host* host) {
  return host == nullptr ? RULEJIT_EINVAL : static_cast<int>(host->model.routes.size());
}

}  // extern "C"
