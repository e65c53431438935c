// runtime/reject: the replies nf_reject builds, field by field, and the
// offending packets the kernel sends none for. (tests/kernel/
// reject_kernel_test.cc compares the bytes with the kernel's own replies.)
#include "runtime/reject.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/packet.h"
#include "tests/support/frames.h"

namespace rulejit::runtime {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;
using Bytes = std::vector<uint8_t>;

uint32_t Get16(const Bytes& b, size_t at) { return b[at] << 8 | b[at + 1]; }
uint32_t Get32(const Bytes& b, size_t at) { return Get16(b, at) << 16 | Get16(b, at + 2); }

Bytes Reply(const Bytes& frame, RejectType type, uint8_t code,
            RejectFlavor flavor = RejectFlavor::kIpStack, RejectOptions options = {}) {
  Bytes reply;
  const bool built = BuildRejectReply(frame.data(), static_cast<uint32_t>(frame.size()), type,
                                      code, flavor, options, &reply);
  EXPECT_EQ(built, !reply.empty());
  return reply;
}

// The reply's checksums verify and its MACs are the frame's, swapped.
void ExpectWellFormed(const Bytes& frame, const Bytes& reply) {
  ASSERT_GE(reply.size(), 54u);
  EXPECT_EQ(Bytes(reply.begin(), reply.begin() + 6), Bytes(frame.begin() + 6, frame.begin() + 12));
  EXPECT_EQ(Bytes(reply.begin() + 6, reply.begin() + 12), Bytes(frame.begin(), frame.begin() + 6));
  const PacketView v = ParseFrame(reply.data(), static_cast<uint32_t>(reply.size()));
  EXPECT_TRUE(TransportChecksumValid(v));
  if (v.nfproto == kNfProtoIpv4) {
    uint32_t sum = 0;
    for (size_t i = 14; i < 34; i += 2) sum += Get16(reply, i);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    EXPECT_EQ(sum, 0xffffu) << "IPv4 header checksum";
  }
}

TEST(Reject, SynGetsRstAckAckingTheSyn) {
  const Bytes syn = BuildFrame(FrameSpec{.sport = 40000, .dport = 8081, .tcp_flags = 0x02,
                                         .tcp_seq = 1000, .tcp_options = {2, 4, 5, 0xb4}});
  const Bytes rst = Reply(syn, RejectType::kTcpReset, 0);
  ASSERT_EQ(rst.size(), 54u);
  ExpectWellFormed(syn, rst);
  EXPECT_EQ(Get16(rst, 12), 0x0800u);
  EXPECT_EQ(rst[15], 0);              // tos
  EXPECT_EQ(Get16(rst, 16), 40u);     // total length
  EXPECT_EQ(Get16(rst, 18), 0u);      // id
  EXPECT_EQ(Get16(rst, 20), 0x4000u); // DF
  EXPECT_EQ(rst[22], 64);             // ttl
  EXPECT_EQ(Get32(rst, 26), Get32(syn, 30));  // from its destination
  EXPECT_EQ(Get32(rst, 30), Get32(syn, 26));
  EXPECT_EQ(Get16(rst, 34), 8081u);
  EXPECT_EQ(Get16(rst, 36), 40000u);
  EXPECT_EQ(Get32(rst, 38), 0u);     // seq
  EXPECT_EQ(Get32(rst, 42), 1001u);  // ack = seq + SYN
  EXPECT_EQ(rst[46], 0x50);
  EXPECT_EQ(rst[47], 0x14);  // RST|ACK
  EXPECT_EQ(Get16(rst, 48), 0u);  // window
}

TEST(Reject, AckedSegmentGetsRstAtItsAck) {
  const Bytes seg = BuildFrame(FrameSpec{.tcp_flags = 0x18, .payload = Bytes(100, 'x'),
                                         .tcp_seq = 5, .tcp_ack = 0x12345678});
  const Bytes rst = Reply(seg, RejectType::kTcpReset, 0);
  ExpectWellFormed(seg, rst);
  EXPECT_EQ(Get32(rst, 38), 0x12345678u);
  EXPECT_EQ(Get32(rst, 42), 0u);
  EXPECT_EQ(rst[47], 0x04);  // RST alone
}

TEST(Reject, FinWithDataIsAckedWhole) {
  const Bytes fin =
      BuildFrame(FrameSpec{.tcp_flags = 0x01, .payload = Bytes(10, 'x'), .tcp_seq = 100});
  EXPECT_EQ(Get32(Reply(fin, RejectType::kTcpReset, 0), 42), 111u);
}

TEST(Reject, NoResetForResetsNonTcpBadChecksumsOrBroadcast) {
  EXPECT_TRUE(Reply(BuildFrame(FrameSpec{.tcp_flags = 0x04}), RejectType::kTcpReset, 0).empty());
  EXPECT_TRUE(Reply(BuildFrame(FrameSpec{.proto = 17}), RejectType::kTcpReset, 0).empty());
  const Bytes bad = BuildFrame(FrameSpec{.bad_l4_checksum = true});
  EXPECT_TRUE(Reply(bad, RejectType::kTcpReset, 0).empty());
  // A partial checksum (offload) is not a bad one.
  EXPECT_FALSE(Reply(bad, RejectType::kTcpReset, 0, RejectFlavor::kIpStack,
                     RejectOptions{.csum_partial = true})
                   .empty());
  EXPECT_TRUE(Reply(BuildFrame(FrameSpec{.dst = "255.255.255.255"}), RejectType::kTcpReset, 0)
                  .empty());
  EXPECT_TRUE(Reply(BuildFrame(FrameSpec{.dst = "224.0.0.9"}), RejectType::kTcpReset, 0).empty());
}

TEST(Reject, UdpGetsPortUnreachableQuoting548Bytes) {
  const Bytes dgram = BuildFrame(
      FrameSpec{.proto = 17, .dport = 9999, .payload = Bytes(700, 'u'), .tos = 0xb9});
  const Bytes icmp = Reply(dgram, RejectType::kIcmpUnreach, 3);
  ASSERT_EQ(icmp.size(), 14u + 576);
  ExpectWellFormed(dgram, icmp);
  EXPECT_EQ(icmp[15], 0xd8);        // (tos & 0x1e) | 0xc0, as Linux sends it for 0xb9
  EXPECT_EQ(Get16(icmp, 16), 576u);
  EXPECT_EQ(Get16(icmp, 20), 0u);   // no DF
  EXPECT_EQ(icmp[22], 64);
  EXPECT_EQ(icmp[23], 1);
  EXPECT_EQ(icmp[34], 3);           // destination unreachable
  EXPECT_EQ(icmp[35], 3);           // port
  EXPECT_EQ(Bytes(icmp.begin() + 42, icmp.end()),
            Bytes(dgram.begin() + 14, dgram.begin() + 14 + 548));
}

TEST(Reject, ShortPacketIsQuotedWholeWithoutPadding) {
  const Bytes dgram = BuildFrame(FrameSpec{.proto = 17, .payload = Bytes(2, 'u')});
  Bytes padded = dgram;
  padded.resize(60, 0);  // Ethernet minimum
  const Bytes icmp = Reply(padded, RejectType::kIcmpUnreach, 1);
  EXPECT_EQ(icmp.size(), 14u + 20 + 8 + 30);
  // nf_reject_skb_v4_unreach (netdev) quotes skb->len: the padding too.
  EXPECT_EQ(Reply(padded, RejectType::kIcmpUnreach, 1, RejectFlavor::kNetdev).size(),
            14u + 20 + 8 + 46);
}

TEST(Reject, NetdevFlavorHasDfNoTosAnd536Bytes) {
  const Bytes dgram = BuildFrame(
      FrameSpec{.proto = 17, .dport = 9999, .payload = Bytes(700, 'u'), .tos = 0xb9});
  const Bytes icmp = Reply(dgram, RejectType::kIcmpUnreach, 13, RejectFlavor::kNetdev);
  ASSERT_EQ(icmp.size(), 14u + 28 + 536);
  ExpectWellFormed(dgram, icmp);
  EXPECT_EQ(icmp[15], 0);
  EXPECT_EQ(Get16(icmp, 20), 0x4000u);
  EXPECT_EQ(icmp[35], 13);
}

TEST(Reject, IcmpxCodesMapPerFamily) {
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 0, false), 0);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 1, false), 3);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 2, false), 1);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 3, false), 13);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 0, true), 0);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 1, true), 4);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 2, true), 3);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpxUnreach, 3, true), 1);
  EXPECT_EQ(RejectIcmpCode(RejectType::kIcmpUnreach, 10, false), 10);
  const Bytes v6 = BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .proto = 17});
  EXPECT_EQ(Reply(v6, RejectType::kIcmpxUnreach, 3)[55], 1);
}

TEST(Reject, NoIcmpForIcmpErrorsFragmentsOrLinkBroadcast) {
  const Bytes quoted = BuildFrame(FrameSpec{.proto = 17, .ethernet = false});
  const Bytes error = BuildFrame(FrameSpec{.proto = 1, .payload = quoted, .icmp_type = 3});
  EXPECT_TRUE(Reply(error, RejectType::kIcmpUnreach, 3).empty());
  const Bytes echo = BuildFrame(FrameSpec{.proto = 1, .icmp_type = 8});
  EXPECT_FALSE(Reply(echo, RejectType::kIcmpUnreach, 3).empty());
  const Bytes later = BuildFrame(FrameSpec{.proto = 17, .payload = Bytes(16, 'f'),
                                           .frag_offset = 4});
  EXPECT_TRUE(Reply(later, RejectType::kIcmpUnreach, 3).empty());
  const Bytes first = BuildFrame(FrameSpec{.proto = 17, .more_fragments = true});
  EXPECT_FALSE(Reply(first, RejectType::kIcmpUnreach, 3).empty());
  const Bytes bcast = BuildFrame(FrameSpec{.proto = 17, .dst_mac = "ff:ff:ff:ff:ff:ff"});
  EXPECT_TRUE(Reply(bcast, RejectType::kIcmpUnreach, 3).empty());
  const Bytes bad = BuildFrame(FrameSpec{.proto = 17, .bad_l4_checksum = true});
  EXPECT_TRUE(Reply(bad, RejectType::kIcmpUnreach, 3).empty());
}

TEST(Reject, Ipv6ResetAndUnreachable) {
  const Bytes syn = BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .dport = 8081,
                                         .tcp_seq = 7});
  const Bytes rst = Reply(syn, RejectType::kTcpReset, 0);
  ASSERT_EQ(rst.size(), 14u + 40 + 20);
  ExpectWellFormed(syn, rst);
  EXPECT_EQ(Get32(rst, 14), 0x60000000u);  // class 0, flow label 0
  EXPECT_EQ(Get16(rst, 18), 20u);
  EXPECT_EQ(rst[20], 6);
  EXPECT_EQ(rst[21], 64);
  EXPECT_EQ(Get32(rst, 54 + 8), 8u);  // acks the SYN
  EXPECT_EQ(rst[54 + 13], 0x14);

  const Bytes big = BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .proto = 17,
                                         .payload = Bytes(1400, 'u'), .tos = 0xb9});
  const Bytes icmp = Reply(big, RejectType::kIcmpUnreach, 1);
  ASSERT_EQ(icmp.size(), 14u + 40 + 8 + 1232);
  ExpectWellFormed(big, icmp);
  EXPECT_EQ(Get32(icmp, 14), 0x60000000u);
  EXPECT_EQ(icmp[54], 1);
  EXPECT_EQ(icmp[55], 1);
  EXPECT_EQ(Reply(big, RejectType::kIcmpUnreach, 1, RejectFlavor::kNetdev).size(),
            14u + 40 + 8 + 1220);
  const Bytes mcast = BuildFrame(FrameSpec{.src = "fd00::1", .dst = "ff02::1", .proto = 17});
  EXPECT_TRUE(Reply(mcast, RejectType::kIcmpUnreach, 4).empty());
  const Bytes error = BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .proto = 58,
                                           .icmp_type = 1});
  EXPECT_TRUE(Reply(error, RejectType::kIcmpUnreach, 4).empty());
}

// inet_peer_xrlim_allow: six at once to a new destination, then one per
// interval (1 s; 250 ms for IPv6 on a /64), each destination apart; the
// global budget caps them all.
TEST(IcmpRateLimit, SixAtOnceThenOnePerInterval) {
  const Bytes to_a = Reply(BuildFrame(FrameSpec{.src = "10.0.0.1", .proto = 17}),
                           RejectType::kIcmpUnreach, 3);
  const Bytes to_b = Reply(BuildFrame(FrameSpec{.src = "10.0.0.9", .proto = 17}),
                           RejectType::kIcmpUnreach, 3);
  IcmpRateLimit limit;
  constexpr uint64_t kMs = 1'000'000;
  uint64_t now = 5000 * kMs;
  int allowed = 0;
  for (int i = 0; i < 20; ++i) allowed += limit.Allow(to_a, now + i * kMs);
  EXPECT_EQ(allowed, 6);
  EXPECT_TRUE(limit.Allow(to_b, now + 20 * kMs));  // another destination
  EXPECT_FALSE(limit.Allow(to_a, now + 500 * kMs));
  EXPECT_TRUE(limit.Allow(to_a, now + 1020 * kMs));
  EXPECT_FALSE(limit.Allow(to_a, now + 1500 * kMs));

  const Bytes v6 = Reply(BuildFrame(FrameSpec{.src = "fd00::1", .dst = "fd00::2", .proto = 17}),
                         RejectType::kIcmpUnreach, 4);
  IcmpRateLimit six;
  allowed = 0;
  for (int i = 0; i < 1000; ++i) allowed += six.Allow(v6, now + i * kMs);  // one second
  EXPECT_EQ(allowed, 6 + 3);  // then at 255, 505 and 755 ms

  // 1000 destinations in one go: the global burst of 50, then 1000/s.
  IcmpRateLimit global;
  allowed = 0;
  for (int i = 0; i < 1000; ++i) {
    Bytes r = to_a;
    r[30] = static_cast<uint8_t>(i >> 8);
    r[31] = static_cast<uint8_t>(i);
    allowed += global.Allow(r, now);
  }
  EXPECT_EQ(allowed, 50);
}

}  // namespace
}  // namespace rulejit::runtime
