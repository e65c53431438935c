// `run`'s random inputs (runtime/draws.h): the flow hash is the same for a
// packet and its reply and differs between flows; workers that share the
// keys hash alike and share the jhash seed; the per-packet draw changes.
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/draws.h"
#include "tests/support/frames.h"

namespace rulejit::runtime {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

constexpr RandomInputs kAll{.random = true, .symhash = true, .jhash_seed = true};

uint32_t FlowHash(const FrameSpec& spec, uint64_t key) {
  std::vector<uint8_t> frame = BuildFrame(spec);
  return SymmetricFlowHash(ParseFrame(frame.data(), static_cast<uint32_t>(frame.size())), key);
}

TEST(SymmetricFlowHash, SameBothWaysDifferentAcrossFlows) {
  const FrameSpec request{.src = "10.0.0.1", .dst = "10.0.0.2", .proto = 6, .sport = 40000,
                          .dport = 80};
  const FrameSpec reply{.src = "10.0.0.2", .dst = "10.0.0.1", .proto = 6, .sport = 80,
                        .dport = 40000};
  EXPECT_EQ(FlowHash(request, 7), FlowHash(reply, 7));
  const FrameSpec request6{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17, .sport = 5,
                           .dport = 53};
  const FrameSpec reply6{.src = "2001:db8::2", .dst = "2001:db8::1", .proto = 17, .sport = 53,
                         .dport = 5};
  EXPECT_EQ(FlowHash(request6, 7), FlowHash(reply6, 7));
  // Same addresses both ways: the ports decide the order.
  const FrameSpec self{.src = "10.0.0.1", .dst = "10.0.0.1", .proto = 17, .sport = 1, .dport = 2};
  const FrameSpec self_reply{.src = "10.0.0.1", .dst = "10.0.0.1", .proto = 17, .sport = 2,
                             .dport = 1};
  EXPECT_EQ(FlowHash(self, 7), FlowHash(self_reply, 7));
  std::set<uint32_t> seen;
  for (uint16_t port = 1; port <= 200; ++port) {
    FrameSpec other = request;
    other.sport = port;
    seen.insert(FlowHash(other, 7));
  }
  EXPECT_GT(seen.size(), 195u);
  EXPECT_NE(FlowHash(request, 7), FlowHash(request, 8));  // keyed
}

TEST(PacketDraws, WorkersShareKeysNotDraws) {
  std::vector<uint8_t> frame = BuildFrame(FrameSpec{});
  const PacketView view = ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()));
  PacketDraws a(42, 1), b(42, 2);
  PacketMeta ma, mb;
  a.Fill(view, kAll, &ma);
  b.Fill(view, kAll, &mb);
  EXPECT_EQ(ma.symhash, mb.symhash);
  EXPECT_EQ(ma.jhash_seed, mb.jhash_seed);
  EXPECT_NE(ma.random, mb.random);
  std::set<uint32_t> randoms;
  for (int i = 0; i < 100; ++i) {
    a.Fill(view, kAll, &ma);
    randoms.insert(ma.random);
  }
  EXPECT_EQ(randoms.size(), 100u);
  PacketDraws c(43, 1);
  PacketMeta mc;
  c.Fill(view, kAll, &mc);
  EXPECT_NE(mc.symhash, mb.symhash);
  EXPECT_NE(mc.jhash_seed, mb.jhash_seed);
}

// A packet of a program that reads no draw costs none: the fields it does
// not read stay as they were.
TEST(PacketDraws, DrawsOnlyWhatTheProgramReads) {
  std::vector<uint8_t> frame = BuildFrame(FrameSpec{});
  const PacketView view = ParseFrame(frame.data(), static_cast<uint32_t>(frame.size()));
  PacketDraws draws(42, 1);
  PacketMeta meta;
  meta.random = 11;
  meta.symhash = 12;
  draws.Fill(view, RandomInputs{}, &meta);
  EXPECT_EQ(meta.random, 11u);
  EXPECT_EQ(meta.symhash, 12u);
  draws.Fill(view, RandomInputs{.random = true}, &meta);
  EXPECT_NE(meta.random, 11u);
  EXPECT_EQ(meta.symhash, 12u);
  draws.Fill(view, RandomInputs{.symhash = true}, &meta);
  EXPECT_NE(meta.symhash, 12u);
}

}  // namespace
}  // namespace rulejit::runtime
