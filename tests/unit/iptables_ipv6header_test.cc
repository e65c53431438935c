// -m ipv6header: what it lowers to and what is refused, as
// libip6t_ipv6header parses it; the kernel's walk (ip6t_ipv6header) on
// crafted chains, cut-short ones among them. The kernel's verdicts are in
// tests/kernel/ext_match_kernel_test.cc.
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/ipv6header_eval.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

TEST(IptablesIpv6header, LowersToTheWalksFlags) {
  // hop 0x80, dst 0x40, route 0x20, frag 0x10, ah 0x08, esp 0x04,
  // none 0x02, prot 0x01.
  EXPECT_EQ(Lower("-m ipv6header --header hop,ipv6-frag,prot", IpVersion::kIpv6),
            "[ ipv6header flags 0x91 ]");
  EXPECT_EQ(Lower("-m ipv6header ! --header hopopt,60,ipv6-route --soft", IpVersion::kIpv6),
            "[ ipv6header flags 0xe0 invert soft ]");
  EXPECT_EQ(Lower("-m ipv6header --header ah,esp,ipv6-nonxt,none,255", IpVersion::kIpv6),
            "[ ipv6header flags 0xf ]");
}

TEST(IptablesIpv6header, RefusedAsIp6tablesRefusesIt) {
  EXPECT_TRUE(Refused(Lower("-m ipv6header --header tcp", IpVersion::kIpv6),
                      "unknown header `6' specified"));
  EXPECT_TRUE(Refused(Lower("-m ipv6header --header hop,bogus", IpVersion::kIpv6),
                      "unknown header `bogus' specified"));
  EXPECT_TRUE(Refused(Lower("-m ipv6header --header ,", IpVersion::kIpv6),
                      "cannot parse header names"));
  EXPECT_TRUE(Refused(Lower("-m ipv6header --soft", IpVersion::kIpv6), "needs --header"));
  EXPECT_TRUE(Refused(Lower("-m ipv6header --header hop", IpVersion::kIpv4), "ip6tables only"));
}

TEST(IptablesIpv6header, ReadsBack) {
  for (const std::string line : {"[ ipv6header flags 0x91 ]", "[ ipv6header flags 0xe0 invert soft ]",
                                 "[ ipv6header flags 0x4 soft ]"}) {
    absl::StatusOr<ir::Expr> e = ir::ParseExprLine(line);
    ASSERT_TRUE(e.ok()) << line << ": " << e.status();
    EXPECT_EQ(ir::PrintExpr(*e), line);
  }
  EXPECT_FALSE(ir::ParseExprLine("[ ipv6header flags 0x01 ]").ok());
  EXPECT_FALSE(ir::ParseExprLine("[ ipv6header flags 0x100 ]").ok());
  EXPECT_FALSE(ir::ParseExprLine("[ ipv6header flags 0xzz ]").ok());
}

std::optional<uint8_t> Bits(std::vector<uint8_t> ext, uint8_t proto, size_t cut = 0) {
  FrameSpec spec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = proto,
                 .payload = std::vector<uint8_t>(8, 0), .ext_headers = std::move(ext)};
  std::vector<uint8_t> frame = BuildFrame(spec);
  frame.resize(frame.size() - cut);
  return ir::Ipv6HeaderBits(ParseFrame(frame.data(), static_cast<uint32_t>(frame.size())));
}

TEST(Ipv6HeaderWalk, CollectsEveryKindAndTheEnd) {
  EXPECT_EQ(Bits({}, 17), ir::kIpv6HdrProto);
  EXPECT_EQ(Bits({0, 43, 44, 51, 60}, 6),
            ir::kIpv6HdrHopOpts | ir::kIpv6HdrRouting | ir::kIpv6HdrFragment | ir::kIpv6HdrAh |
                ir::kIpv6HdrDstOpts | ir::kIpv6HdrProto);
  EXPECT_EQ(Bits({0}, 59), ir::kIpv6HdrHopOpts | ir::kIpv6HdrNone);
  EXPECT_EQ(Bits({60}, 50), ir::kIpv6HdrDstOpts | ir::kIpv6HdrEsp);
  // The walk gives up on a chain cut short: fewer than 2 bytes left where
  // a header should start (the frame cut past the IPv6 payload length).
  FrameSpec bare{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
                 .payload = {}, .ext_headers = {0}};
  std::vector<uint8_t> frame = BuildFrame(bare);
  frame.resize(14 + 40 + 1);
  frame[14 + 4] = 0, frame[14 + 5] = 1;  // payload length 1
  EXPECT_EQ(ir::Ipv6HeaderBits(ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()))),
            std::nullopt);
  // IPv4 is no IPv6.
  std::vector<uint8_t> v4 = BuildFrame(FrameSpec{});
  EXPECT_EQ(ir::Ipv6HeaderBits(ParseFrame(v4.data(), static_cast<uint32_t>(v4.size()))),
            std::nullopt);
}

TEST(Ipv6HeaderWalk, ExactSoftAndInverted) {
  FrameSpec spec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
                 .payload = std::vector<uint8_t>(8, 0), .ext_headers = {0, 44}};
  std::vector<uint8_t> frame = BuildFrame(spec);
  const PacketView view = ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()));
  const uint8_t hop_frag = ir::kIpv6HdrHopOpts | ir::kIpv6HdrFragment;
  EXPECT_FALSE(ir::EvalIpv6Header({.flags = hop_frag}, view));  // the protocol bit too
  EXPECT_TRUE(ir::EvalIpv6Header({.flags = hop_frag | ir::kIpv6HdrProto}, view));
  EXPECT_TRUE(ir::EvalIpv6Header({.flags = hop_frag, .invert = true}, view));
  EXPECT_TRUE(ir::EvalIpv6Header({.flags = ir::kIpv6HdrFragment, .soft = true}, view));
  EXPECT_FALSE(ir::EvalIpv6Header({.flags = ir::kIpv6HdrAh, .soft = true}, view));
  // Inverted soft: none of the kinds is there.
  EXPECT_TRUE(ir::EvalIpv6Header({.flags = ir::kIpv6HdrAh, .invert = true, .soft = true}, view));
  EXPECT_FALSE(ir::EvalIpv6Header(
      {.flags = ir::kIpv6HdrAh | ir::kIpv6HdrHopOpts, .invert = true, .soft = true}, view));
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
