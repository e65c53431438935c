// NAT maps whose data is an address and a port (`map m { type ipv4_addr :
// ipv4_addr . inet_service }`, `dnat ip to ip daddr map @m`, anonymous
// maps, typeof, ip6 and inet tables): the bytecode nft 1.0.6 sends (the
// port in the register after the address: reg 9 after IPv4, reg 2 after
// IPv6; no flags, the kernel sets the proto-specified one itself), and the
// NAT binding the interpreter records: both the address and the port.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::Parse;
using testing::BuildFrame;
using testing::FrameSpec;

TEST(NftNatConcat, LowersAsNftSendsIt) {
  EXPECT_EQ(nft_test::PrintedRules(
                "table ip t {\n map y {\n  type ipv4_addr : ipv4_addr . inet_service\n"
                "  elements = { 192.168.7.2 : 10.1.1.1 . 4242 }\n }\n"
                " map t2 {\n  typeof numgen inc mod 2 : ip daddr . tcp dport\n }\n"
                " chain c {\n  type nat hook prerouting priority dstnat;\n"
                "  meta l4proto tcp dnat ip to ip saddr map @y\n"
                "  meta l4proto tcp dnat ip to numgen inc mod 2 map @t2\n"
                "  meta l4proto udp dnat ip to udp dport map { 53 : 10.0.0.1 . 5353 }\n"
                " }\n}\n"),
            "ip t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ lookup reg 1 set y dreg 1 ]\n"
            "  [ nat dnat ip addr_min reg 1 proto_min reg 9 ]\n"
            "ip t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ numgen reg 1 = inc mod 2 ]\n"
            "  [ lookup reg 1 set t2 dreg 1 ]\n"
            "  [ nat dnat ip addr_min reg 1 proto_min reg 9 ]\n"
            "ip t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000011 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ lookup reg 1 set __map%d dreg 1 ]\n"
            "  [ nat dnat ip addr_min reg 1 proto_min reg 9 ]\n");
  EXPECT_EQ(nft_test::PrintedRules(
                "table inet t {\n map z6 {\n  type ipv6_addr . inet_service : ipv6_addr . inet_service\n"
                " }\n chain c {\n  type nat hook prerouting priority dstnat;\n"
                "  dnat ip6 to ip6 saddr . tcp dport map @z6\n }\n}\n"),
            "inet t c\n"
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000000a ]\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 16b @ network header + 8 => reg 1 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 2 ]\n"
            "  [ lookup reg 1 set z6 dreg 1 ]\n"
            "  [ nat dnat ip6 addr_min reg 1 proto_min reg 2 ]\n");
}

TEST(NftNatConcat, RangesAsData) {
  // Low ends, then high ends (nft 1.0.6's element data, --debug=netlink).
  auto r = Parse("table ip t {\n chain c {\n  type nat hook postrouting priority srcnat;\n"
                 "  snat ip to ip saddr map { 10.141.11.4 : 192.168.2.2-192.168.2.4 }\n"
                 "  meta l4proto tcp snat ip to ip saddr map { 10.141.11.5 : 192.168.2.0/24 . 80-90 }\n"
                 " }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables[0];
  ASSERT_EQ(t.sets.size(), 2u);
  EXPECT_EQ(t.sets[0].elements[0].data, (ir::Bytes{192, 168, 2, 2, 192, 168, 2, 4}));
  EXPECT_EQ(t.sets[1].elements[0].data,
            (ir::Bytes{192, 168, 2, 0, 0, 80, 0, 0, 192, 168, 2, 255, 0, 90, 0, 0}));
  EXPECT_EQ(ir::PrintExpr(t.chains[0].rules[0].exprs.back().expr),
            "[ nat snat ip addr_min reg 1 addr_max reg 9 ]");
  EXPECT_EQ(ir::PrintExpr(t.chains[0].rules[1].exprs.back().expr),
            "[ nat snat ip addr_min reg 1 addr_max reg 10 proto_min reg 9 proto_max reg 11 ]");
  // A named map declared `: interval TYPE . TYPE`.
  EXPECT_EQ(nft_test::PrintedRules(
                "table ip t {\n map r {\n  type ipv4_addr : interval ipv4_addr . inet_service\n"
                "  flags interval\n  elements = { 10.0.0.1 : 10.1.0.1-10.1.0.9 . 80 - 90 }\n }\n"
                " chain c {\n  type nat hook prerouting priority dstnat;\n"
                "  meta l4proto tcp dnat ip to ip daddr map @r\n }\n}\n"),
            "ip t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 4b @ network header + 16 => reg 1 ]\n"
            "  [ lookup reg 1 set r dreg 1 ]\n"
            "  [ nat dnat ip addr_min reg 1 addr_max reg 10 proto_min reg 9 proto_max reg 11 ]\n");
  // nft 1.0.6 sends an element's data without a range short: EINVAL.
  nft_test::ExpectError("table ip t {\n chain c {\n  type nat hook postrouting priority srcnat;\n"
                        "  snat ip to ip saddr map { 10.0.0.0/24 : 10.1.0.1-10.1.0.2, "
                        "10.0.1.0/24 : 10.2.0.1 }\n }\n}\n",
                        4, 76, "map data without a range in an interval map");
  // A port from the map needs a transport protocol (nft's own error).
  nft_test::ExpectError("table ip t {\n chain c {\n  type nat hook postrouting priority srcnat;\n"
                        "  snat ip to ip saddr map { 10.0.0.1 : 10.0.0.2 . 80 }\n }\n}\n",
                        4, 14, "transport protocol mapping is only valid after transport");
}

TEST(NftNatConcat, ElementDataHoldsTheAddressThenThePortPadded) {
  auto r = Parse("table ip t {\n map y {\n  type ipv4_addr : ipv4_addr . inet_service\n"
                 "  elements = { 192.168.7.2 : 10.1.1.1 . 4242 }\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Set& set = r->rs->tables[0].sets[0];
  EXPECT_EQ(set.data_len, 8u);
  ASSERT_EQ(set.elements.size(), 1u);
  EXPECT_EQ(set.elements[0].data, (ir::Bytes{10, 1, 1, 1, 0x10, 0x92, 0, 0}));
}

template <typename V>
std::vector<uint8_t> Vec(const V& v) {
  return std::vector<uint8_t>(v.begin(), v.end());
}

TEST(NftNatConcat, TheBindingHasTheAddressAndThePort) {
  const char text[] =
      "table inet t {\n map m4 {\n  type ipv4_addr : ipv4_addr . inet_service\n"
      "  elements = { 10.20.0.1 : 10.30.0.9 . 8080 }\n }\n"
      " chain c {\n  type nat hook prerouting priority dstnat;\n"
      "  meta l4proto tcp dnat ip to ip daddr map @m4\n"
      "  meta l4proto tcp dnat ip6 to ip6 daddr map { 2001:db8::1 : 2001:db8::9 . 8443 }\n"
      " }\n}\n";
  auto parsed = Parse(text);
  ASSERT_TRUE(parsed->rs.ok()) << parsed->diags.Format();
  const ir::Interpreter interp(*parsed->rs);
  PacketMeta first;  // nat chains see a connection's first packet
  first.ct_state = kCtStateNew;
  first.ct_valid = true;
  auto run = [&](const std::vector<uint8_t>& frame) {
    return interp.Run(ir::Hook::kPrerouting,
                      ParseFrame(frame.data(), static_cast<uint32_t>(frame.size())), first);
  };
  const ir::EvalResult r4 = run(BuildFrame(FrameSpec{.src = "10.1.0.5", .dst = "10.20.0.1"}));
  ASSERT_TRUE(r4.nat.has_value());
  EXPECT_EQ(Vec(r4.nat->addr_min), (std::vector<uint8_t>{10, 30, 0, 9}));
  EXPECT_EQ(Vec(r4.nat->proto_min), (std::vector<uint8_t>{0x1f, 0x90}));
  const ir::EvalResult r6 =
      run(BuildFrame(FrameSpec{.src = "2001:db8:1::5", .dst = "2001:db8::1"}));
  ASSERT_TRUE(r6.nat.has_value());
  EXPECT_EQ(r6.nat->addr_min.size(), 16u);
  EXPECT_EQ(r6.nat->addr_min.back(), 9);
  EXPECT_EQ(Vec(r6.nat->proto_min), (std::vector<uint8_t>{0x20, 0xfb}));
  // An address with no element: no binding, the rule does not match.
  EXPECT_FALSE(run(BuildFrame(FrameSpec{.dst = "10.20.0.2"})).nat.has_value());
}

}  // namespace
}  // namespace rulejit
