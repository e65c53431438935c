// ip6tables -m addrtype: what it lowers to and what is refused (as
// addrtype_mt_checkentry_v1 refuses it for IPv6), and the address classes
// xt_addrtype's match_type6 tests, on a host model. The kernel's verdicts
// are in tests/kernel/fib_kernel_test.cc.
#include <arpa/inet.h>

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/expr_eval.h"
#include "ir/fib_eval.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

// XT_ADDRTYPE_* bits (1 << RTN_*).
constexpr uint32_t kUnspec = 1, kUnicast = 2, kLocal = 4, kAnycast = 16, kMulticast = 32,
                   kUnreachable = 128;

TEST(Ip6tablesAddrtype, LowersToTheClassMaskAndThePassingMasks) {
  // One asked class of the route's: that bit set.
  EXPECT_EQ(Lower("-m addrtype --dst-type LOCAL", IpVersion::kIpv6),
            "[ fib daddr addrclass6 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000004 ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000004 ]");
  // UNICAST and LOCAL: both bits (one of each kind must hold).
  EXPECT_EQ(Lower("-m addrtype ! --src-type UNICAST,LOCAL --limit-iface-in", IpVersion::kIpv6),
            "[ fib saddr . iif addrclass6 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000006 ) ^ 0x00000000 ]\n"
            "[ cmp neq reg 1 0x00000006 ]");
  // LOCAL or ANYCAST: any of the three non-empty masks, a set.
  const std::string any = Lower("-m addrtype --dst-type LOCAL,ANYCAST", IpVersion::kIpv6);
  EXPECT_NE(any.find("[ lookup reg 1 set __set%d ]"), std::string::npos) << any;
  // UNSPEC with UNICAST: both bits, which no address has.
  EXPECT_EQ(Lower("-m addrtype --dst-type UNSPEC,UNICAST", IpVersion::kIpv6),
            "[ fib daddr addrclass6 => reg 1 ]\n"
            "[ bitwise reg 1 = ( reg 1 & 0x00000003 ) ^ 0x00000000 ]\n"
            "[ cmp eq reg 1 0x00000003 ]");
  // iptables' stays nft's fib type.
  EXPECT_EQ(Lower("-m addrtype --dst-type LOCAL", IpVersion::kIpv4),
            "[ fib daddr type => reg 1 ]\n[ cmp eq reg 1 0x00000002 ]");
}

TEST(Ip6tablesAddrtype, RefusedAsTheKernelRefusesIt) {
  EXPECT_TRUE(Refused(Lower("-m addrtype --dst-type BLACKHOLE", IpVersion::kIpv6),
                      "ipv6 BLACKHOLE matching not supported"));
  EXPECT_TRUE(Refused(Lower("-m addrtype --src-type LOCAL,PROHIBIT", IpVersion::kIpv6),
                      "ipv6 PROHIBIT (THROW, NAT ..) matching not supported"));
  EXPECT_TRUE(Refused(Lower("-m addrtype --dst-type NAT", IpVersion::kIpv6),
                      "ipv6 PROHIBIT (THROW, NAT ..) matching not supported"));
  EXPECT_TRUE(Refused(Lower("-m addrtype --dst-type BROADCAST", IpVersion::kIpv6),
                      "ipv6 does not support BROADCAST matching"));
  EXPECT_TRUE(Refused(Lower("-m addrtype --dst-type local,bogus", IpVersion::kIpv6),
                      "unknown address type 'bogus'"));
  // The output device is not there at PREROUTING (the same check as IPv4).
  EXPECT_TRUE(Refused(Lower("-m addrtype --dst-type LOCAL --limit-iface-out", IpVersion::kIpv6,
                            "nat", "PREROUTING"),
                      "not valid"));
}

TEST(Ip6tablesAddrtype, ReadsBackAndIsVerified) {
  for (const std::string line : {"[ fib daddr addrclass6 => reg 1 ]",
                                 "[ fib saddr . oif addrclass6 => reg 2 ]"}) {
    absl::StatusOr<ir::Expr> e = ir::ParseExprLine(line);
    ASSERT_TRUE(e.ok()) << line << ": " << e.status();
    EXPECT_EQ(ir::PrintExpr(*e), line);
  }
}

// lo, v0 (2001:db8::1/64) and v1 (2001:db9::1/64), with the routes the
// kernel derives for them (no default route).
HostModel Host() {
  absl::StatusOr<HostModel> host = ParseHostJson(R"({"addr": [
    {"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"link_type":"loopback","addr_info":[
      {"family":"inet6","local":"::1","prefixlen":128}]},
    {"ifindex":3,"ifname":"v0","flags":["UP"],"link_type":"ether","addr_info":[
      {"family":"inet6","local":"2001:db8::1","prefixlen":64}]},
    {"ifindex":4,"ifname":"v1","flags":["UP"],"link_type":"ether","addr_info":[
      {"family":"inet6","local":"2001:db9::1","prefixlen":64}]}]})");
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? *host : HostModel{};
}

// The classes of `addr` as the packet's destination, asked with the
// input device `iif` (0: none).
uint32_t Classes(const HostModel& host, const char* addr, uint32_t iif = 0) {
  std::vector<uint8_t> frame = BuildFrame(
      FrameSpec{.src = "2001:db8::7", .dst = addr, .proto = 17, .payload = {0, 0, 0, 0}});
  const PacketView view = ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()));
  PacketMeta meta;
  meta.has_iif = iif != 0;
  meta.iif = iif;
  const ir::Fib fib{ir::kFibDaddr | (iif != 0 ? ir::kFibIif : 0u), ir::FibResult::kXtAddrClass6,
                    1};
  alignas(8) uint8_t regs[ir::kRegBytes] = {};
  EXPECT_TRUE(ir::EvalFib(fib, ir::Hook::kPrerouting, view, meta, host, regs));
  uint32_t classes = 0;
  std::memcpy(&classes, ir::RegBytes(regs, 1, 4), 4);
  return classes;
}

TEST(XtAddrClasses6, AddressClassAndRoute) {
  const HostModel host = Host();
  EXPECT_EQ(Classes(host, "2001:db8::1"), kUnicast | kLocal);
  EXPECT_EQ(Classes(host, "2001:db8::5"), kUnicast);
  EXPECT_EQ(Classes(host, "2001:db8::"), kUnicast | kAnycast);  // the subnet-router address
  EXPECT_EQ(Classes(host, "2001:dead::1"), kUnicast | kUnreachable);
  EXPECT_EQ(Classes(host, "::"), kUnspec | kUnreachable);
  EXPECT_EQ(Classes(host, "::ffff:10.0.0.1") & (kUnicast | kUnspec | kMulticast), 0u);
  EXPECT_EQ(Classes(host, "ff02::1") & (kMulticast | kUnicast), kMulticast);
  // Asked on a device: LOCAL only for the device's own addresses, and the
  // route bound to the device.
  EXPECT_EQ(Classes(host, "2001:db8::1", 3) & kLocal, kLocal);
  EXPECT_EQ(Classes(host, "2001:db9::1", 3) & kLocal, 0u);
}

TEST(XtAddrClasses6, Ipv4PacketsBreak) {
  std::vector<uint8_t> frame = BuildFrame(FrameSpec{});
  const PacketView view = ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()));
  alignas(8) uint8_t regs[ir::kRegBytes] = {};
  EXPECT_FALSE(ir::EvalFib({ir::kFibDaddr, ir::FibResult::kXtAddrClass6, 1}, ir::Hook::kInput,
                           view, PacketMeta{}, Host(), regs));
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
