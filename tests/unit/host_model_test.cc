// The host model: reading iproute2's JSON, the routes the kernel derives
// for addresses, and the lookups fib and addrtype make on it. The kernel
// differential (tests/kernel/fib_kernel_test.cc) checks the same answers
// against the kernel on a real namespace.
#include <arpa/inet.h>

#include "gtest/gtest.h"
#include "host/route_lookup.h"
#include "rulejit/host.h"

namespace rulejit {
namespace {

std::array<uint8_t, 16> Addr(const char* text) {
  std::array<uint8_t, 16> a{};
  if (inet_pton(AF_INET, text, a.data()) != 1) inet_pton(AF_INET6, text, a.data());
  return a;
}

// `ip -j addr show` and `ip -j route show table all` of a namespace with
// lo and v0 (10.9.0.1/24, 2001:db8::1/64), a gateway route and a
// blackhole (trimmed to the fields the model reads, plus a few it skips).
constexpr char kHost[] = R"({
 "addr": [
  {"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"group":"default","addr_info":[
    {"family":"inet","local":"127.0.0.1","prefixlen":8,"scope":"host"},
    {"family":"inet6","local":"::1","prefixlen":128}]},
  {"ifindex":3,"ifname":"v0","flags":["BROADCAST","UP"],"group":"7","addr_info":[
    {"family":"inet","local":"10.9.0.1","prefixlen":24},
    {"family":"inet6","local":"2001:db8::1","prefixlen":64}]}],
 "route": [
  {"dst":"10.9.0.0/24","dev":"v0","protocol":"kernel","scope":"link","prefsrc":"10.9.0.1"},
  {"dst":"192.0.2.0/24","gateway":"10.9.0.5","dev":"v0"},
  {"type":"blackhole","dst":"198.51.100.0/24"},
  {"type":"local","dst":"10.9.0.1","dev":"v0","table":"local"},
  {"type":"broadcast","dst":"10.9.0.255","dev":"v0","table":"local"},
  {"type":"local","dst":"127.0.0.0/8","dev":"lo","table":"local"},
  {"dst":"2001:db8::/64","dev":"v0","metric":256,"pref":"medium"},
  {"dst":"default","gateway":"fe80::1","dev":"v0","metric":1024,"pref":"medium"},
  {"type":"local","dst":"2001:db8::1","dev":"v0","table":"local","metric":0}]
})";

TEST(HostJson, ReadsInterfacesAddressesAndRoutes) {
  absl::StatusOr<HostModel> host = ParseHostJson(kHost);
  ASSERT_TRUE(host.ok()) << host.status();
  ASSERT_EQ(host->interfaces.size(), 2u);
  EXPECT_TRUE(host->interfaces[0].loopback);
  EXPECT_EQ(host->FindInterface("v0")->index, 3u);
  EXPECT_EQ(host->FindInterface(3)->group, 7u);
  ASSERT_EQ(host->routes.size(), 9u);
  const HostRoute& def6 = host->routes[7];
  EXPECT_EQ(def6.family, 6);  // "default" with an IPv6 gateway
  EXPECT_EQ(def6.prefix_len, 0);
  EXPECT_TRUE(def6.gateway);
  EXPECT_EQ(host->routes[2].type, RouteType::kBlackhole);
  EXPECT_EQ(host->routes[3].table, kRouteTableLocal);
}

TEST(HostJson, ErrorsNameTheEntry) {
  EXPECT_FALSE(ParseHostJson("[]").ok());
  EXPECT_FALSE(ParseHostJson("{\"route\": []}").ok());
  absl::StatusOr<HostModel> bad_dev =
      ParseHostJson(R"({"addr":[],"route":[{"dst":"10.0.0.0/8","dev":"eth9"}]})");
  ASSERT_FALSE(bad_dev.ok());
  EXPECT_EQ(bad_dev.status().message(), "host: route[0]: device 'eth9' is not in 'addr'");
  absl::StatusOr<HostModel> bad_prefix = ParseHostJson(
      R"({"addr":[{"ifindex":2,"ifname":"x","addr_info":[{"family":"inet","local":"1.2.3.4","prefixlen":40}]}]})");
  ASSERT_FALSE(bad_prefix.ok());
  EXPECT_NE(bad_prefix.status().message().find("addr[0] (x)"), std::string::npos);
}

// link_type as `ip -j addr` prints it: iproute2's names, "[N]" for the
// types it has no name for; none given leaves the type unknown.
TEST(HostJson, LinkTypesAreTheKernelsDeviceTypes) {
  absl::StatusOr<HostModel> host = ParseHostJson(R"({"addr":[
    {"ifindex":1,"ifname":"lo","link_type":"loopback"},
    {"ifindex":2,"ifname":"v0","link_type":"ether","address":"02:00:00:00:00:07"},
    {"ifindex":3,"ifname":"wg0","link_type":"none"},
    {"ifindex":4,"ifname":"x0","link_type":"[280]"},
    {"ifindex":5,"ifname":"y0"}]})");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->FindInterface("lo")->link_type, 772);
  EXPECT_EQ(host->FindInterface("v0")->link_type, 1);
  EXPECT_TRUE(host->FindInterface("v0")->has_mac);
  EXPECT_EQ(host->FindInterface("wg0")->link_type, 65534);
  EXPECT_EQ(host->FindInterface("x0")->link_type, 280);
  EXPECT_FALSE(host->FindInterface("y0")->link_type.has_value());
  absl::StatusOr<HostModel> bad =
      ParseHostJson(R"({"addr":[{"ifindex":2,"ifname":"q0","link_type":"quantum"}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("addr[0] (q0): link_type 'quantum'"), std::string::npos)
      << bad.status();
}

TEST(HostJson, WithoutRoutesTheKernelsOwnAreDerived) {
  absl::StatusOr<HostModel> host = ParseHostJson(
      R"({"addr":[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK"],"addr_info":[
           {"family":"inet","local":"127.0.0.1","prefixlen":8}]},
         {"ifindex":2,"ifname":"v0","addr_info":[
           {"family":"inet","local":"10.9.0.1","prefixlen":24},
           {"family":"inet","local":"10.8.0.2","prefixlen":31},
           {"family":"inet6","local":"2001:db8::1","prefixlen":64}]}]})");
  ASSERT_TRUE(host.ok()) << host.status();
  auto has = [&](const char* dst, uint8_t len, RouteType type, uint32_t table) {
    for (const HostRoute& r : host->routes) {
      if (r.dst == Addr(dst) && r.prefix_len == len && r.type == type && r.table == table) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(has("127.0.0.0", 8, RouteType::kLocal, kRouteTableLocal));
  EXPECT_TRUE(has("10.9.0.1", 32, RouteType::kLocal, kRouteTableLocal));
  EXPECT_TRUE(has("10.9.0.255", 32, RouteType::kBroadcast, kRouteTableLocal));
  EXPECT_TRUE(has("10.9.0.0", 24, RouteType::kUnicast, kRouteTableMain));
  EXPECT_FALSE(has("10.8.0.3", 32, RouteType::kBroadcast, kRouteTableLocal));  // /31
  EXPECT_TRUE(has("2001:db8::", 64, RouteType::kUnicast, kRouteTableMain));
  EXPECT_TRUE(has("ff00::", 8, RouteType::kMulticast, kRouteTableLocal));
  // lo 3 (127.0.0.1, its broadcast, 127.0.0.0/8), 10.9.0.1/24 3, the /31
  // 2 (no broadcast), 2001:db8::1/64 2, ff00::/8.
  EXPECT_EQ(host->routes.size(), 11u);
}

TEST(RouteLookup, AddrType4FollowsTheLocalTable) {
  absl::StatusOr<HostModel> host = ParseHostJson(kHost);
  ASSERT_TRUE(host.ok());
  auto type = [&](const char* a, uint32_t dev = 0) {
    return host::AddrType4(*host, Addr(a).data(), dev);
  };
  EXPECT_EQ(type("10.9.0.1"), RouteType::kLocal);
  EXPECT_EQ(type("10.9.0.1", 3), RouteType::kLocal);
  EXPECT_EQ(type("10.9.0.1", 1), RouteType::kUnicast);  // asked from lo
  EXPECT_EQ(type("10.9.0.255"), RouteType::kBroadcast);
  EXPECT_EQ(type("127.3.4.5"), RouteType::kLocal);
  EXPECT_EQ(type("0.0.0.0"), RouteType::kBroadcast);
  EXPECT_EQ(type("0.1.2.3"), RouteType::kUnicast);  // zeronet is 0.0.0.0 alone
  EXPECT_EQ(type("255.255.255.255"), RouteType::kBroadcast);
  EXPECT_EQ(type("239.1.1.1"), RouteType::kMulticast);
  EXPECT_EQ(type("8.8.8.8"), RouteType::kUnicast);
}

TEST(RouteLookup, LongestPrefixThenTablesInRuleOrder) {
  absl::StatusOr<HostModel> host = ParseHostJson(kHost);
  ASSERT_TRUE(host.ok());
  auto route = [&](const char* a, uint8_t family = 4) {
    return host::LookupRoute(*host, family, Addr(a).data());
  };
  ASSERT_NE(route("10.9.0.1"), nullptr);
  EXPECT_EQ(route("10.9.0.1")->type, RouteType::kLocal);  // local table first
  EXPECT_EQ(route("10.9.0.7")->oifs, std::vector<uint32_t>{3});
  EXPECT_EQ(route("198.51.100.4")->type, RouteType::kBlackhole);
  EXPECT_EQ(route("8.8.8.8"), nullptr);  // no IPv4 default route
  EXPECT_EQ(route("2001:db8:5::1", 6)->prefix_len, 0);
  EXPECT_EQ(route("2001:db8::9", 6)->prefix_len, 64);
  EXPECT_TRUE(host::AddressOnDevice(*host, 6, Addr("2001:db8::1").data(), 3));
  EXPECT_FALSE(host::AddressOnDevice(*host, 6, Addr("2001:db8::1").data(), 1));
}

TEST(LoopbackHost, IsWhatAFreshNamespaceHas) {
  const HostModel lo = LoopbackHost();
  ASSERT_EQ(lo.interfaces.size(), 1u);
  EXPECT_EQ(lo.interfaces[0].name, "lo");
  EXPECT_EQ(host::AddrType4(lo, Addr("127.0.0.1").data(), 0), RouteType::kLocal);
  EXPECT_EQ(host::AddrType4(lo, Addr("10.0.0.1").data(), 0), RouteType::kUnicast);
}

}  // namespace
}  // namespace rulejit
