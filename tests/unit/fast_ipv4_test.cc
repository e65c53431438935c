// classify::FastIpv4FrameKey (packet::FastIpv4FiveTuple as a Key) against
// the full parse: wherever it accepts a
// frame, its key and skb length must be what ExtractKey and ir::SkbLen give
// for packet::ParseEthernet's view of the same bytes; and it must accept
// the plain IPv4 TCP/UDP frames it exists for.
#include <random>
#include <vector>

#include "compiler/headerspace/box.h"
#include "compiler/classify/frame_key.h"
#include "gtest/gtest.h"
#include "ir/expr_eval.h"
#include "packet/parse.h"
#include "tests/support/frames.h"
#include "tests/support/ir_gen.h"

namespace rulejit::classify {
namespace {

// A frame to start from: IPv4 or IPv6, TCP/UDP/ICMP/GRE, fragments,
// options, VLAN tags, padding.
std::vector<uint8_t> SeedFrame(std::mt19937& rng) {
  if (rng() % 4 == 0) return testing::RandomFrame(rng);
  const uint8_t protos[] = {6, 17, 1, 47};
  testing::FrameSpec spec{.src = "10.1.2.3", .dst = "192.168.7.9", .proto = protos[rng() % 4],
                          .sport = static_cast<uint16_t>(rng()),
                          .dport = static_cast<uint16_t>(rng())};
  if (rng() % 8 == 0) spec.vlans = {{0x8100, 7}};
  if (rng() % 8 == 0) spec.ip_options = {1, 1, 1, 0};
  if (rng() % 8 == 0) spec.frag_offset = static_cast<uint16_t>(rng() % 3);
  if (rng() % 8 == 0) spec.more_fragments = true;
  std::vector<uint8_t> frame = testing::BuildFrame(spec);
  if (rng() % 4 == 0) frame.resize(frame.size() + rng() % 20, 0);  // link padding
  return frame;
}

// Changes what the fast path looks at: the ethertype, version/IHL, total
// length, fragment bits, protocol, or the frame's length.
void Mutate(std::mt19937& rng, std::vector<uint8_t>& frame) {
  const size_t at[] = {12, 13, 14, 16, 17, 20, 21, 23};
  switch (rng() % 3) {
    case 0: {
      const size_t i = at[rng() % 8];
      if (i < frame.size()) frame[i] = static_cast<uint8_t>(rng());
      break;
    }
    case 1: {
      const size_t i = at[rng() % 8];
      if (i < frame.size()) frame[i] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    }
    case 2:
      frame.resize(rng() % (frame.size() + 1));
      break;
  }
}

TEST(FrameKey, EqualsTheFullParseWhereItApplies) {
  std::mt19937 rng(20261203);
  int fast = 0, tried = 0;
  for (int i = 0; i < 200000; ++i) {
    std::vector<uint8_t> frame = SeedFrame(rng);
    const int mutations = rng() % 3;
    for (int m = 0; m < mutations; ++m) Mutate(rng, frame);
    const bool skb_at_link = rng() % 2 == 0;
    const auto len = static_cast<uint32_t>(frame.size());
    Key key;
    uint32_t skb_len = 0;
    ++tried;
    if (!FastIpv4FrameKey(frame.data(), len, skb_at_link, &key, &skb_len)) continue;
    ++fast;
    PacketView pkt = packet::ParseEthernet(frame.data(), len);
    if (skb_at_link) pkt.skb_off = pkt.link_off;
    const Key want = ExtractKey(pkt, /*ports_first_fragment_only=*/rng() % 2 == 0);
    for (int d = 0; d < kDims; ++d) {
      ASSERT_EQ(key.v[d], want.v[d]) << "frame " << i << " dim " << d;
    }
    ASSERT_EQ(pkt.nfproto, kNfProtoIpv4) << "frame " << i;
    ASSERT_EQ(skb_len, ir::SkbLen(pkt)) << "frame " << i;
  }
  EXPECT_GT(fast, tried / 8);  // the fast path is taken, not only refused
}

TEST(FrameKey, TakesPlainTcpAndUdpFrames) {
  for (uint8_t proto : {6, 17}) {
    std::vector<uint8_t> frame = testing::BuildFrame(
        {.src = "10.0.0.1", .dst = "10.0.0.2", .proto = proto, .sport = 1000, .dport = 53});
    Key key;
    uint32_t skb_len = 0;
    ASSERT_TRUE(FastIpv4FrameKey(frame.data(), static_cast<uint32_t>(frame.size()), false, &key,
                                 &skb_len));
    EXPECT_EQ(key.v[kSrcAddr], 0x0a000001u);
    EXPECT_EQ(key.v[kDstPort], 53u);
    EXPECT_EQ(key.v[kProto], proto);
    EXPECT_EQ(skb_len, frame.size() - 14);
  }
}

TEST(FrameKey, RefusesFragmentsTagsAndOptions) {
  const std::vector<testing::FrameSpec> specs = {
      {.more_fragments = true}, {.frag_offset = 1}, {.vlans = {{0x8100, 1}}},
      {.ip_options = {1, 1, 1, 0}}, {.src = "2001:db8::1", .dst = "2001:db8::2"}};
  for (const testing::FrameSpec& spec : specs) {
    std::vector<uint8_t> frame = testing::BuildFrame(spec);
    Key key;
    uint32_t skb_len = 0;
    EXPECT_FALSE(FastIpv4FrameKey(frame.data(), static_cast<uint32_t>(frame.size()), false, &key,
                                  &skb_len));
  }
}

}  // namespace
}  // namespace rulejit::classify
