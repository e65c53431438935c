// Frame parser: offsets, VLAN tags, IPv4 options and fragments, the IPv6
// extension-header walk, and truncated frames at every length.
#include "packet/parse.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/frames.h"

namespace rulejit::packet {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

PacketView Parse(const std::vector<uint8_t>& f) {
  return ParseEthernet(f.data(), static_cast<uint32_t>(f.size()));
}

TEST(PacketParseTest, Ipv4Tcp) {
  FrameSpec spec{.proto = 6, .payload = {1, 2, 3, 4}};
  auto f = BuildFrame(spec);
  PacketView v = Parse(f);
  EXPECT_EQ(v.link_off, 0u);
  EXPECT_EQ(v.network_off, 14u);
  EXPECT_EQ(v.transport_off, 34u);
  EXPECT_EQ(v.inner_off, 54u);
  EXPECT_EQ(v.protocol, 0x0800);
  EXPECT_EQ(v.nfproto, kNfProtoIpv4);
  EXPECT_EQ(v.l4proto, 6);
  EXPECT_TRUE(v.l4proto_valid);
  EXPECT_FALSE(v.is_fragment);
  EXPECT_EQ(v.len, f.size());
}

TEST(PacketParseTest, InnerOffsetPerProtocol) {
  struct Case { uint8_t proto; uint32_t l4len; };
  for (Case c : {Case{17, 8}, Case{136, 8}, Case{1, 8}, Case{132, 12}}) {
    auto f = BuildFrame(FrameSpec{.proto = c.proto, .payload = {9}});
    PacketView v = Parse(f);
    EXPECT_EQ(v.transport_off, 34u) << int(c.proto);
    EXPECT_EQ(v.inner_off, 34u + c.l4len) << int(c.proto);
  }
  // An unknown L4 protocol has a transport header but no known inner one.
  auto gre = BuildFrame(FrameSpec{.proto = 47, .payload = {0, 0, 8, 0}});
  PacketView v = Parse(gre);
  EXPECT_EQ(v.transport_off, 34u);
  EXPECT_EQ(v.inner_off, kAbsent);
}

TEST(PacketParseTest, TcpDataOffsetSetsInner) {
  FrameSpec spec{.proto = 6, .payload = {1, 1, 1, 1, 9, 9}};
  auto f = BuildFrame(spec);
  f[34 + 12] = 6 << 4;  // data offset 6: 4 bytes of options
  EXPECT_EQ(Parse(f).inner_off, 34u + 24u);
  f[34 + 12] = 4 << 4;  // below the minimum: malformed, no inner header
  EXPECT_EQ(Parse(f).inner_off, kAbsent);
  f[34 + 12] = 15 << 4;  // 60 bytes claimed, frame too short
  EXPECT_EQ(Parse(f).inner_off, kAbsent);
  EXPECT_EQ(Parse(f).transport_off, 34u);
}

TEST(PacketParseTest, VlanAndQinQ) {
  auto one = BuildFrame(FrameSpec{.proto = 17, .vlans = {{0x8100, 100}}});
  PacketView v = Parse(one);
  EXPECT_EQ(v.network_off, 18u);
  EXPECT_EQ(v.transport_off, 38u);
  EXPECT_EQ(v.protocol, 0x0800);

  auto qinq = BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2",
                                   .proto = 17,
                                   .vlans = {{0x88a8, 10}, {0x8100, 20}}});
  v = Parse(qinq);
  EXPECT_EQ(v.network_off, 22u);
  EXPECT_EQ(v.transport_off, 62u);
  EXPECT_EQ(v.protocol, 0x86dd);
  EXPECT_EQ(v.nfproto, kNfProtoIpv6);
}

TEST(PacketParseTest, Ipv4Options) {
  FrameSpec spec{.proto = 6, .ip_options = {1, 1, 1, 1, 1, 1, 1, 0}};
  auto f = BuildFrame(spec);
  PacketView v = Parse(f);
  EXPECT_EQ(v.transport_off, 14u + 28u);
  EXPECT_EQ(testing::TransportOffset(spec), 42u);
}

TEST(PacketParseTest, Ipv4BadHeaderHasNoTransport) {
  auto f = BuildFrame(FrameSpec{.proto = 6});
  f[14] = 0x44;  // IHL 4 < 5
  PacketView v = Parse(f);
  EXPECT_EQ(v.network_off, 14u);  // the network header position is known
  EXPECT_EQ(v.nfproto, 0);
  EXPECT_FALSE(v.l4proto_valid);
  EXPECT_EQ(v.transport_off, kAbsent);
  f[14] = 0x55;  // version 5
  EXPECT_EQ(Parse(f).nfproto, 0);
}

TEST(PacketParseTest, Ipv4Fragments) {
  auto first = BuildFrame(FrameSpec{.proto = 17, .more_fragments = true});
  PacketView v = Parse(first);
  EXPECT_TRUE(v.is_fragment);
  EXPECT_EQ(v.fragoff, 0);
  EXPECT_EQ(v.transport_off, 34u);

  auto later = BuildFrame(
      FrameSpec{.proto = 17, .payload = {1, 2, 3, 4, 5, 6, 7, 8}, .frag_offset = 3});
  v = Parse(later);
  EXPECT_TRUE(v.is_fragment);
  EXPECT_EQ(v.fragoff, 3);
  EXPECT_TRUE(v.l4proto_valid);
  EXPECT_EQ(v.l4proto, 17);
  EXPECT_EQ(v.transport_off, kAbsent);
  EXPECT_EQ(v.inner_off, kAbsent);
  EXPECT_EQ(v.l4_off, 34u);  // pkt->thoff: the fast-path loads read there
}

TEST(PacketParseTest, EthernetPaddingIsTrimmed) {
  auto f = BuildFrame(FrameSpec{.proto = 17});  // 14 + 20 + 8 = 42 bytes
  ASSERT_EQ(f.size(), 42u);
  f.resize(60, 0xee);  // minimum Ethernet frame
  EXPECT_EQ(Parse(f).len, 42u);
}

TEST(PacketParseTest, Ipv6ExtensionHeaderWalk) {
  FrameSpec spec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 6,
                 .ext_headers = {0, 43, 60}};
  auto f = BuildFrame(spec);
  PacketView v = Parse(f);
  EXPECT_EQ(v.l4proto, 6);
  EXPECT_TRUE(v.l4proto_valid);
  EXPECT_EQ(v.transport_off, 14u + 40u + 24u);
  EXPECT_EQ(v.transport_off, testing::TransportOffset(spec));
  EXPECT_EQ(v.inner_off, v.transport_off + 20);
  EXPECT_FALSE(v.is_fragment);
}

TEST(PacketParseTest, Ipv6LongerOptionsHeader) {
  FrameSpec spec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
                 .payload = std::vector<uint8_t>(16, 0), .ext_headers = {60}};
  auto f = BuildFrame(spec);
  // Claim 16 bytes of destination options: the walk must follow the length.
  f[14 + 40 + 1] = 1;
  f[14 + 40] = 17;
  PacketView v = Parse(f);
  EXPECT_EQ(v.transport_off, 14u + 40u + 16u);
}

TEST(PacketParseTest, Ipv6Fragments) {
  FrameSpec first{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
                  .more_fragments = true, .ext_headers = {44}};
  PacketView v = Parse(BuildFrame(first));
  EXPECT_TRUE(v.is_fragment);
  EXPECT_EQ(v.fragoff, 0);
  EXPECT_EQ(v.l4proto, 17);
  EXPECT_EQ(v.transport_off, 14u + 48u);

  FrameSpec later = first;
  later.frag_offset = 5;
  later.payload = {1, 2, 3, 4, 5, 6, 7, 8};
  auto f = BuildFrame(later);
  v = Parse(f);
  EXPECT_TRUE(v.is_fragment);
  EXPECT_EQ(v.fragoff, 5);
  EXPECT_EQ(v.l4proto, 17);
  EXPECT_TRUE(v.l4proto_valid);
  EXPECT_EQ(v.transport_off, kAbsent);
  EXPECT_EQ(v.inner_off, kAbsent);
  // KERNEL: ipv6_find_hdr leaves thoff at 0 (skb->data, the IPv6 header).
  EXPECT_EQ(v.l4_off, 14u);
}

TEST(PacketParseTest, Ipv6LaterFragmentBeforeAnotherExtensionHeader) {
  // ipv6_find_hdr gives up (-ENOENT): no l4proto at all.
  FrameSpec spec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
                 .payload = {1, 2, 3, 4, 5, 6, 7, 8}, .frag_offset = 1,
                 .ext_headers = {44, 60}};
  PacketView v = Parse(BuildFrame(spec));
  EXPECT_TRUE(v.is_fragment);
  EXPECT_FALSE(v.l4proto_valid);
  EXPECT_EQ(v.transport_off, kAbsent);
}

TEST(PacketParseTest, Ipv6StopsAtAhAndNoNextHeader) {
  FrameSpec ah{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 6,
               .ext_headers = {0, 51}};
  PacketView v = Parse(BuildFrame(ah));
  EXPECT_EQ(v.l4proto, 51);  // as nf_tables sees it: `meta l4proto ah`
  EXPECT_EQ(v.transport_off, 14u + 48u);
  EXPECT_EQ(v.inner_off, kAbsent);

  FrameSpec none{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 59};
  v = Parse(BuildFrame(none));
  EXPECT_EQ(v.l4proto, 59);
  EXPECT_TRUE(v.l4proto_valid);
}

// ip6tables-legacy's walk (ip6_packet_match: ipv6_find_hdr without
// IP6_FH_F_AUTH) goes over AH, which counts 4-byte units plus 2; its
// transport header is absent on a non-first fragment, whose protocol it
// still knows; IPv4 packets have none of it.
TEST(PacketParseTest, Ip6tablesWalk) {
  FrameSpec ah{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 6,
               .ext_headers = {0, 51, 60}};
  PacketView v = Parse(BuildFrame(ah));
  EXPECT_EQ(v.l4proto, 51);
  EXPECT_TRUE(v.ip6t_proto_valid);
  EXPECT_EQ(v.ip6t_proto, 6);
  EXPECT_EQ(v.ip6t_off, 14u + 40u + 8u + 16u + 8u);

  FrameSpec plain{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17, .ext_headers = {43}};
  v = Parse(BuildFrame(plain));
  EXPECT_EQ(v.ip6t_proto, 17);
  EXPECT_EQ(v.ip6t_off, v.transport_off);

  FrameSpec later{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 58,
                  .payload = {1, 2, 3, 4, 5, 6, 7, 8}, .frag_offset = 3,
                  .ext_headers = {51, 44}};
  v = Parse(BuildFrame(later));
  EXPECT_TRUE(v.ip6t_proto_valid);
  EXPECT_EQ(v.ip6t_proto, 58);
  EXPECT_EQ(v.ip6t_off, kAbsent);
  EXPECT_EQ(v.l4proto, 51);  // nft stops at AH before the fragment header

  // -ENOENT: a non-first fragment followed by an extension header.
  later.ext_headers = {44, 51};
  v = Parse(BuildFrame(later));
  EXPECT_FALSE(v.ip6t_proto_valid);
  EXPECT_EQ(v.ip6t_off, kAbsent);

  v = Parse(BuildFrame(FrameSpec{.proto = 6}));
  EXPECT_FALSE(v.ip6t_proto_valid);
  EXPECT_EQ(v.ip6t_off, kAbsent);
}

// ipv6_find_hdr reads a routing header as struct ipv6_rt_hdr (4 bytes)
// before using it: with fewer bytes left the walk fails (-EBADMSG).
TEST(PacketParseTest, Ipv6TruncatedRoutingHeader) {
  FrameSpec spec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17, .ext_headers = {43}};
  std::vector<uint8_t> f = BuildFrame(spec);
  f.resize(14 + 40 + 3);
  f[14 + 4] = 0;  // payload length 3
  f[14 + 5] = 3;
  PacketView v = Parse(f);
  EXPECT_FALSE(v.l4proto_valid);
  EXPECT_FALSE(v.ip6t_proto_valid);
  f.push_back(0);
  f[14 + 5] = 4;
  v = Parse(f);  // 4 bytes: the walk passes the header, then runs off the end
  EXPECT_TRUE(v.l4proto_valid);
  EXPECT_EQ(v.transport_off, kAbsent);
}

TEST(PacketParseTest, ParseIpWithoutLinkHeader) {
  auto f = BuildFrame(FrameSpec{.proto = 6, .ethernet = false});
  PacketView v = ParseIp(f.data(), static_cast<uint32_t>(f.size()));
  EXPECT_EQ(v.link_off, kAbsent);
  EXPECT_EQ(v.network_off, 0u);
  EXPECT_EQ(v.transport_off, 20u);
  EXPECT_EQ(v.protocol, 0x0800);

  auto f6 = BuildFrame(FrameSpec{.src = "::1", .dst = "::2", .proto = 58,
                                 .icmp_type = 128, .ethernet = false});
  v = ParseIp(f6.data(), static_cast<uint32_t>(f6.size()));
  EXPECT_EQ(v.protocol, 0x86dd);
  EXPECT_EQ(v.transport_off, 40u);
  EXPECT_EQ(v.inner_off, 48u);

  uint8_t junk[4] = {0x10, 0, 0, 0};
  v = ParseIp(junk, 4);
  EXPECT_EQ(v.network_off, kAbsent);
  EXPECT_EQ(ParseIp(nullptr, 100).len, 0u);
}

TEST(PacketParseTest, NonIpEthertype) {
  std::vector<uint8_t> arp(42, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  PacketView v = Parse(arp);
  EXPECT_EQ(v.protocol, 0x0806);
  EXPECT_EQ(v.network_off, 14u);
  EXPECT_EQ(v.nfproto, 0);
  EXPECT_EQ(v.transport_off, kAbsent);
}

// Parses every prefix of a frame from a buffer of exactly that size: the
// parser must never claim a header it cannot see.
// `l4_known_at`: the length from which the L4 protocol is known (IPv6: the
// kernel's walk needs only the first two bytes of each extension header).
void CheckPrefixes(const FrameSpec& spec, uint32_t ip_header_end,
                   uint32_t l4_known_at) {
  auto full = BuildFrame(spec);
  PacketView whole = Parse(full);
  for (uint32_t n = 0; n <= full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    PacketView v = ParseEthernet(cut.data(), n);
    SCOPED_TRACE(n);
    EXPECT_LE(v.len, n);
    for (uint32_t off : {v.link_off, v.network_off, v.transport_off, v.inner_off}) {
      if (off != kAbsent) {
        EXPECT_LE(off, n);
      }
    }
    if (n < 14) {
      EXPECT_EQ(v.network_off, kAbsent);
    }
    if (n < ip_header_end) {
      EXPECT_EQ(v.transport_off, kAbsent);
      EXPECT_EQ(v.inner_off, kAbsent);
    }
    if (n < l4_known_at) {
      EXPECT_FALSE(v.l4proto_valid);
    }
    if (n < whole.inner_off) {
      EXPECT_EQ(v.inner_off, kAbsent);
    }
    if (n == full.size()) {
      EXPECT_EQ(v.transport_off, whole.transport_off);
      EXPECT_EQ(v.inner_off, whole.inner_off);
    }
  }
}

TEST(PacketParseTest, TruncatedFramesAtEveryLength) {
  FrameSpec v4{.proto = 6, .payload = {1, 2, 3}, .ip_options = {1, 1, 1, 0},
               .vlans = {{0x8100, 7}}};
  CheckPrefixes(v4, 18 + 24, 18 + 24);
  FrameSpec v6{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
               .payload = {1, 2}, .ext_headers = {0, 60, 44, 43},
               .vlans = {{0x88a8, 1}, {0x8100, 2}}};
  // The transport header needs every extension header (32 bytes) too.
  CheckPrefixes(v6, 22 + 40 + 32, 22 + 40 + 24 + 2);
  FrameSpec sctp{.proto = 132, .payload = {5}};
  CheckPrefixes(sctp, 34, 34);
}

// Random corruptions of valid frames: every offset the parser reports lies
// within the (possibly trimmed) length. Run under ASan this also checks
// that nothing reads past the buffer.
TEST(PacketParseTest, CorruptedFramesKeepOffsetsInBounds) {
  std::vector<std::vector<uint8_t>> seeds = {
      BuildFrame(FrameSpec{.proto = 6, .payload = {1, 2}, .ip_options = {1, 1, 1, 0}}),
      BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2", .proto = 17,
                           .ext_headers = {0, 43, 44, 60, 51}}),
      BuildFrame(FrameSpec{.proto = 132, .vlans = {{0x88a8, 1}, {0x8100, 2}}}),
  };
  uint32_t rng = 12345;
  auto next = [&rng] { return rng = rng * 1103515245u + 12345u; };
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> f = seeds[i % seeds.size()];
    for (int k = 0; k < 3; ++k) f[(next() >> 8) % f.size()] = static_cast<uint8_t>(next() >> 16);
    f.resize((next() >> 8) % (f.size() + 1));
    PacketView v = Parse(f);
    for (uint32_t off : {v.network_off, v.transport_off, v.inner_off, v.ip6t_off}) {
      if (off != kAbsent) {
        ASSERT_LE(off, v.len) << i;
      }
    }
    ASSERT_LE(v.len, f.size());
  }
}

// The builder's checksums: summing a header including its checksum gives
// 0xffff (RFC 1071), with the pseudo-header for TCP/UDP/ICMPv6.
uint32_t Sum16(const uint8_t* p, size_t n, uint32_t acc = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) acc += (p[i] << 8) | p[i + 1];
  if (n % 2) acc += p[n - 1] << 8;
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return acc;
}

TEST(FramesTest, ChecksumsVerify) {
  for (uint8_t proto : {6, 17, 1}) {
    auto f = BuildFrame(FrameSpec{.proto = proto, .payload = {1, 2, 3}});
    SCOPED_TRACE(int(proto));
    EXPECT_EQ(Sum16(f.data() + 14, 20), 0xffffu);
    size_t l4 = f.size() - 34;
    uint32_t pseudo = 0;
    if (proto != 1) {
      pseudo = Sum16(f.data() + 26, 8) + proto + static_cast<uint32_t>(l4);
    }
    EXPECT_EQ(Sum16(f.data() + 34, l4, pseudo), 0xffffu);
  }
  auto f6 = BuildFrame(FrameSpec{.src = "fe80::1", .dst = "ff02::1", .proto = 58,
                                 .payload = {7}, .icmp_type = 128});
  size_t l4 = f6.size() - 54;
  uint32_t pseudo = Sum16(f6.data() + 22, 32) + 58 + static_cast<uint32_t>(l4);
  EXPECT_EQ(Sum16(f6.data() + 54, l4, pseudo), 0xffffu);
}

}  // namespace
}  // namespace rulejit::packet
