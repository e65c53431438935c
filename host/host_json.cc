// Reads the host model from the JSON that iproute2 prints (`ip -j addr
// show`, `ip -j route show table all`), and from the running machine by
// running those commands. Only the fields the model keeps are read; an
// entry whose fields are there but wrong is an error naming the entry.
#include <arpa/inet.h>
#include <linux/if_arp.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "host/host_json_sockets.h"
#include "nlohmann/json.hpp"
#include "rulejit/host.h"

namespace rulejit {
namespace {

using Json = nlohmann::json;

// "a.b.c.d" or an IPv6 address into `out`; the family, or 0.
uint8_t ParseAddress(const std::string& text, std::array<uint8_t, 16>& out) {
  out = {};
  if (inet_pton(AF_INET, text.c_str(), out.data()) == 1) return 4;
  if (inet_pton(AF_INET6, text.c_str(), out.data()) == 1) return 6;
  return 0;
}

std::string StringField(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// `group`: a number, or "default" (0); names of /etc/iproute2/group are not
// resolved.
absl::StatusOr<uint32_t> GroupOf(const Json& j, const std::string& where) {
  auto it = j.find("group");
  if (it == j.end()) return 0u;
  if (it->is_number_unsigned()) return it->get<uint32_t>();
  const std::string text = it->is_string() ? it->get<std::string>() : "";
  uint32_t n = 0;
  if (text == "default") return 0u;
  if (absl::SimpleAtoi(text, &n)) return n;
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": interface group '", text, "' is not a number or 'default'"));
}

// "02:52:4a:00:00:02" into six bytes; false for anything else.
bool ParseMac(const std::string& text, std::array<uint8_t, 6>& mac) {
  unsigned b[6];
  char tail = 0;
  if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
                  &b[5], &tail) != 6) {
    return false;
  }
  for (int i = 0; i < 6; ++i) mac[i] = static_cast<uint8_t>(b[i]);
  return true;
}

// iproute2's `link_type` names (lib/ll_types.c) of the device types a
// firewall host has, as ARPHRD_* numbers; iproute2 prints any other type
// as "[N]".
std::optional<uint16_t> LinkTypeNamed(std::string_view name) {
  static constexpr struct {
    std::string_view name;
    uint16_t type;
  } kTypes[] = {
      {"ether", ARPHRD_ETHER},        {"loopback", ARPHRD_LOOPBACK},
      {"none", ARPHRD_NONE},          {"void", ARPHRD_VOID},
      {"ipip", ARPHRD_TUNNEL},        {"tunnel6", ARPHRD_TUNNEL6},
      {"sit", ARPHRD_SIT},            {"gre", ARPHRD_IPGRE},
      {"gre6", ARPHRD_IP6GRE},        {"ppp", ARPHRD_PPP},
      {"infiniband", ARPHRD_INFINIBAND}, {"ieee802.11", ARPHRD_IEEE80211},
      {"ieee802.11/radiotap", ARPHRD_IEEE80211_RADIOTAP},
      {"ieee802.15.4", ARPHRD_IEEE802154}, {"can", ARPHRD_CAN},
      {"slip", ARPHRD_SLIP},          {"hdlc", ARPHRD_HDLC},
      {"rawhdlc", ARPHRD_RAWHDLC},    {"fddi", ARPHRD_FDDI},
      {"ieee802", ARPHRD_IEEE802},    {"netlink", ARPHRD_NETLINK},
  };
  for (const auto& t : kTypes) {
    if (t.name == name) return t.type;
  }
  uint32_t n = 0;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']' &&
      absl::SimpleAtoi(absl::string_view(name.data() + 1, name.size() - 2), &n) && n <= 0xffff) {
    return static_cast<uint16_t>(n);
  }
  return std::nullopt;
}

absl::StatusOr<HostInterface> InterfaceOf(const Json& j, size_t n) {
  const std::string where = absl::StrCat("addr[", n, "]");
  HostInterface dev;
  dev.name = StringField(j, "ifname");
  auto index = j.find("ifindex");
  if (dev.name.empty() || index == j.end() || !index->is_number_unsigned()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": needs 'ifname' and 'ifindex'"));
  }
  dev.index = index->get<uint32_t>();
  if (auto mtu = j.find("mtu"); mtu != j.end() && mtu->is_number_unsigned()) {
    dev.mtu = mtu->get<uint32_t>();
  }
  absl::StatusOr<uint32_t> group = GroupOf(j, where);
  if (!group.ok()) return group.status();
  dev.group = *group;
  if (auto flags = j.find("flags"); flags != j.end() && flags->is_array()) {
    for (const Json& f : *flags) dev.loopback |= f.is_string() && f.get<std::string>() == "LOOPBACK";
  }
  if (auto type = j.find("link_type"); type != j.end()) {
    const std::string name = type->is_string() ? type->get<std::string>() : type->dump();
    dev.link_type = LinkTypeNamed(name);
    if (!dev.link_type) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " (", dev.name, "): link_type '", name,
                       "' is not a device type rulejit knows; give its ARPHRD number as \"[N]\""));
    }
  }
  if (dev.link_type == ARPHRD_ETHER) {
    dev.has_mac = ParseMac(StringField(j, "address"), dev.mac);
  }
  if (auto infos = j.find("addr_info"); infos != j.end() && infos->is_array()) {
    for (const Json& info : *infos) {
      const std::string family = StringField(info, "family");
      if (family != "inet" && family != "inet6") continue;
      HostAddress a;
      auto prefix = info.find("prefixlen");
      a.family = ParseAddress(StringField(info, "local"), a.addr);
      const uint8_t full = a.family == 4 ? 32 : 128;
      if (a.family == 0 || prefix == info.end() || !prefix->is_number_unsigned() ||
          prefix->get<uint32_t>() > full) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, " (", dev.name, "): an address needs 'local' and 'prefixlen'"));
      }
      a.prefix_len = static_cast<uint8_t>(prefix->get<uint32_t>());
      dev.addresses.push_back(a);
    }
  }
  return dev;
}

absl::StatusOr<RouteType> RouteTypeOf(const std::string& name) {
  static constexpr const char* kNames[] = {"unspec", "unicast", "local", "broadcast",
                                           "anycast", "multicast", "blackhole", "unreachable",
                                           "prohibit", "throw", "nat", "xresolve"};
  if (name.empty()) return RouteType::kUnicast;
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (name == kNames[i]) return static_cast<RouteType>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown route type '", name, "'"));
}

absl::StatusOr<uint32_t> TableOf(const Json& j) {
  auto it = j.find("table");
  if (it == j.end()) return kRouteTableMain;
  if (it->is_number_unsigned()) return it->get<uint32_t>();
  const std::string name = it->is_string() ? it->get<std::string>() : "";
  if (name == "main") return kRouteTableMain;
  if (name == "local") return kRouteTableLocal;
  if (name == "default") return kRouteTableDefault;
  uint32_t n = 0;
  if (absl::SimpleAtoi(name, &n)) return n;
  return absl::InvalidArgumentError(absl::StrCat("unknown route table '", name, "'"));
}

// A device named by a route, as its index.
absl::Status AddDevice(const HostModel& host, const std::string& name, HostRoute& r) {
  if (name.empty()) return absl::OkStatus();
  const HostInterface* dev = host.FindInterface(name);
  if (dev == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("device '", name, "' is not in 'addr'"));
  }
  r.oifs.push_back(dev->index);
  return absl::OkStatus();
}

// The family of a route whose dst is "default": its gateway's, or IPv6
// when it carries `pref` (ip prints it for IPv6 routes only), or the
// family the list was given as.
uint8_t DefaultRouteFamily(const Json& j, uint8_t given) {
  if (given != 0) return given;
  std::array<uint8_t, 16> unused;
  if (uint8_t f = ParseAddress(StringField(j, "gateway"), unused)) return f;
  return j.contains("pref") ? 6 : 4;
}

absl::StatusOr<HostRoute> RouteOf(const HostModel& host, const Json& j, uint8_t given_family) {
  HostRoute r;
  absl::StatusOr<RouteType> type = RouteTypeOf(StringField(j, "type"));
  if (!type.ok()) return type.status();
  r.type = *type;
  absl::StatusOr<uint32_t> table = TableOf(j);
  if (!table.ok()) return table.status();
  r.table = *table;
  const std::string dst = StringField(j, "dst");
  if (dst == "default") {
    r.family = DefaultRouteFamily(j, given_family);
  } else {
    const size_t slash = dst.find('/');
    r.family = ParseAddress(dst.substr(0, slash), r.dst);
    uint32_t prefix = r.family == 4 ? 32 : 128;
    if (r.family == 0 || (slash != std::string::npos &&
                          !absl::SimpleAtoi(dst.substr(slash + 1), &prefix)) ||
        prefix > (r.family == 4 ? 32u : 128u)) {
      return absl::InvalidArgumentError(absl::StrCat("bad route destination '", dst, "'"));
    }
    r.prefix_len = static_cast<uint8_t>(prefix);
  }
  if (auto metric = j.find("metric"); metric != j.end() && metric->is_number_unsigned()) {
    r.metric = metric->get<uint32_t>();
  }
  r.gateway = j.contains("gateway");
  // "metrics": [{"mtu": 1400}, ...] (a locked one prints as "lock mtu").
  if (auto metrics = j.find("metrics"); metrics != j.end() && metrics->is_array()) {
    for (const Json& m : *metrics) {
      auto mtu = m.find("mtu");
      if (m.is_object() && mtu != m.end() && mtu->is_number_unsigned()) r.mtu = mtu->get<uint32_t>();
    }
  }
  if (absl::Status s = AddDevice(host, StringField(j, "dev"), r); !s.ok()) return s;
  if (auto hops = j.find("nexthops"); hops != j.end() && hops->is_array()) {
    for (const Json& hop : *hops) {
      r.gateway |= hop.contains("gateway");
      if (absl::Status s = AddDevice(host, StringField(hop, "dev"), r); !s.ok()) return s;
    }
  }
  return r;
}

absl::Status AddRoutes(const Json& list, const char* key, uint8_t family, HostModel& host) {
  if (!list.is_array()) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not a list"));
  for (size_t n = 0; n < list.size(); ++n) {
    absl::StatusOr<HostRoute> r = RouteOf(host, list[n], family);
    if (!r.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(key, "[", n, "]: ", r.status().message()));
    }
    host.routes.push_back(*r);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HostModel> ParseHostJson(std::string_view text) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError("host: not a JSON object");
  }
  auto addr = doc.find("addr");
  if (addr == doc.end() || !addr->is_array()) {
    return absl::InvalidArgumentError("host: needs \"addr\", the list `ip -j addr show` prints");
  }
  HostModel host;
  for (size_t n = 0; n < addr->size(); ++n) {
    absl::StatusOr<HostInterface> dev = InterfaceOf((*addr)[n], n);
    if (!dev.ok()) return absl::InvalidArgumentError(absl::StrCat("host: ", dev.status().message()));
    host.interfaces.push_back(*std::move(dev));
  }
  static constexpr struct { const char* key; uint8_t family; } kLists[] = {
      {"route", 0}, {"route4", 4}, {"route6", 6}};
  bool any = false;
  for (const auto& [key, family] : kLists) {
    auto it = doc.find(key);
    if (it == doc.end()) continue;
    any = true;
    if (absl::Status s = AddRoutes(*it, key, family, host); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("host: ", s.message()));
    }
  }
  if (!any) host.routes = DeriveKernelRoutes(host.interfaces);
  if (auto sockets = doc.find("sockets"); sockets != doc.end()) {
    if (absl::Status s = host::ParseHostSockets(*sockets, host); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("host: ", s.message()));
    }
  }
  return host;
}

namespace {

absl::StatusOr<std::string> Run(const char* command) {
  FILE* pipe = popen(command, "r");
  if (pipe == nullptr) return absl::UnavailableError(absl::StrCat("cannot run '", command, "'"));
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  if (pclose(pipe) != 0) return absl::UnavailableError(absl::StrCat("'", command, "' failed"));
  // ip prints nothing, not [], for an empty list.
  if (out.find_first_not_of(" \n") == std::string::npos) return std::string("[]");
  return out;
}

}  // namespace

absl::StatusOr<HostModel> ReadLocalHost() {
  absl::StatusOr<std::string> addr = Run("ip -j addr show");
  if (!addr.ok()) return addr.status();
  absl::StatusOr<std::string> route4 = Run("ip -4 -j route show table all");
  if (!route4.ok()) return route4.status();
  absl::StatusOr<std::string> route6 = Run("ip -6 -j route show table all");
  if (!route6.ok()) return route6.status();
  return ParseHostJson(absl::StrCat("{\"addr\":", *addr, ",\"route4\":", *route4,
                                    ",\"route6\":", *route6, "}"));
}

}  // namespace rulejit
