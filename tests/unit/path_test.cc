// A packet's whole path (runtime/path.h): marks set early and tested late,
// the routing decision on the host model after a DNAT, NAT bindings over a
// connection's packets in both directions, nat chains only while a
// connection has no binding, conntrack's priority (invalid before it,
// untracked after a notrack), TTL before forwarding, on every tier. The
// kernel differential (tests/kernel/path_kernel_test.cc) checks the same
// against Linux.
#include "runtime/path.h"

#include <arpa/inet.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"

namespace rulejit::runtime {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;

// A router: eth0 (10.0.0.1/24, MAC 02:00:00:00:00:02, which FrameSpec's
// frames are sent to) to the clients, eth1 (192.168.1.1/24, MAC
// 02:00:00:00:01:02) to the servers, no default route.
constexpr char kRouter[] = R"({"addr": [
  {"ifindex":1,"ifname":"lo","link_type":"loopback","flags":["LOOPBACK","UP"],"addr_info":[
    {"family":"inet","local":"127.0.0.1","prefixlen":8}]},
  {"ifindex":2,"ifname":"eth0","link_type":"ether","address":"02:00:00:00:00:02",
   "addr_info":[{"family":"inet","local":"10.0.0.1","prefixlen":24}]},
  {"ifindex":3,"ifname":"eth1","link_type":"ether","address":"02:00:00:00:01:02","addr_info":[
    {"family":"inet","local":"192.168.1.1","prefixlen":24}]}]})";

constexpr char kEth1Mac[] = "02:00:00:00:01:02";

const Backend kTiers[] = {Backend::kInterp, Backend::kJit, Backend::kLlvm};

struct Fixture {
  HostModel host;
  std::unique_ptr<const Program> program;
  Conntrack conntrack;
  RunState state;
};

std::unique_ptr<Fixture> Make(const std::string& nft, Backend backend) {
  auto f = std::make_unique<Fixture>();
  absl::StatusOr<HostModel> host = ParseHostJson(kRouter);
  EXPECT_TRUE(host.ok()) << host.status();
  f->host = *host;
  absl::StatusOr<Ruleset> rs = ParseRuleset(nft, "path.nft", InputFormat::kNft);
  EXPECT_TRUE(rs.ok()) << rs.status();
  CompileOptions options{.backend = backend};
  options.host = std::make_shared<const HostModel>(f->host);
  absl::StatusOr<std::unique_ptr<const Program>> p = Program::Compile(*std::move(rs), options);
  EXPECT_TRUE(p.ok()) << p.status();
  f->program = *std::move(p);
  return f;
}

// FrameSpec's default source, 10.0.0.1, is the router's own address, a
// martian source to ip_route_input_slow: frames come from a client
// (10.0.0.9) unless the spec names a source.
PathResult Arrive(Fixture& f, FrameSpec spec, const std::string& iif = "eth0") {
  if (spec.src == FrameSpec{}.src) spec.src = "10.0.0.9";
  std::vector<uint8_t> frame = BuildFrame(spec);
  PathRunner runner(*f.program, f.host, f.conntrack);
  PathOptions options{.start = PathStart::kArrives, .route = RouteChoice::kHost, .iif = iif};
  return runner.Run(options, frame.data(), static_cast<uint32_t>(frame.size()), PacketMeta{},
                    &f.state);
}

std::string Ipv4Dst(const std::vector<uint8_t>& frame) {
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &frame[14 + 16], text, sizeof text);
  return text;
}
std::string Ipv4Src(const std::vector<uint8_t>& frame) {
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &frame[14 + 12], text, sizeof text);
  return text;
}
uint16_t Port(const std::vector<uint8_t>& frame, int which) {
  const size_t l4 = 14 + (frame[14] & 0x0f) * 4u + which * 2;
  return static_cast<uint16_t>(frame[l4] << 8 | frame[l4 + 1]);
}

uint32_t Sum16(const uint8_t* p, size_t n, uint32_t acc = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) acc += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n % 2) acc += static_cast<uint32_t>(p[n - 1] << 8);
  return acc;
}
bool SumsToOnes(uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return acc == 0xffff;
}

// The IPv4 header and TCP/UDP checksums verify.
bool ChecksumsValid(const std::vector<uint8_t>& f) {
  const size_t ip = 14, ihl = (f[ip] & 0x0f) * 4u;
  if (!SumsToOnes(Sum16(&f[ip], ihl))) return false;
  const size_t l4 = ip + ihl, len = (f[ip + 2] << 8 | f[ip + 3]) - ihl;
  const uint32_t pseudo = Sum16(&f[ip + 12], 8) + f[ip + 9] + static_cast<uint32_t>(len);
  return SumsToOnes(Sum16(&f[l4], len, pseudo));
}

TEST(Path, MarkSetAtPreroutingDecidesAtForward) {
  const std::string nft = R"(table ip t {
  chain pre { type filter hook prerouting priority -150; ip saddr 10.0.0.7 meta mark set 7; }
  chain forwarding { type filter hook forward priority 0; policy drop; meta mark 7 accept; }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    PathResult marked = Arrive(*f, {.src = "10.0.0.7", .dst = "192.168.1.10", .sport = 1000});
    EXPECT_EQ(marked.fate, Fate::kForwarded) << int(tier);
    EXPECT_EQ(marked.oif, 3u);
    PathResult other = Arrive(*f, {.src = "10.0.0.8", .dst = "192.168.1.10", .sport = 1001});
    EXPECT_EQ(other.fate, Fate::kDropped);
    ASSERT_FALSE(other.hooks.empty());
    EXPECT_EQ(other.hooks.back().hook, Hook::kForward);
    EXPECT_EQ(other.hooks.back().result.decided_by.rule, -1);  // the policy
  }
}

// meta iiftype reads the host model's type of the device: lo is
// loopback (772), not Ethernet, for a packet this host sends itself.
TEST(Path, DeviceTypesComeFromTheHostModel) {
  const std::string nft = R"(table ip t {
  chain in { type filter hook input priority 0; policy drop; meta iiftype loopback accept; }
  chain out { type filter hook output priority 0; policy drop; meta oiftype loopback accept; }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    std::vector<uint8_t> frame = BuildFrame({.src = "10.0.0.1", .dst = "10.0.0.1", .sport = 1000});
    PathRunner runner(*f->program, f->host, f->conntrack);
    PathResult self = runner.Run({.start = PathStart::kLocalOut, .route = RouteChoice::kHost},
                                 frame.data(), static_cast<uint32_t>(frame.size()), PacketMeta{},
                                 &f->state);
    EXPECT_EQ(self.fate, Fate::kDelivered) << int(tier);
    PathResult from_eth0 = Arrive(*f, {.dst = "10.0.0.1", .sport = 1001});
    EXPECT_EQ(from_eth0.fate, Fate::kDropped) << int(tier);
  }
}

// Where the host model leaves a device's type out, a ruleset that reads
// device types (here through `ether saddr`, which depends on `meta iiftype
// ether`) is refused at its rule, not run with a guessed type.
TEST(Path, ReadingADeviceTypeTheHostLeavesOutIsALocatedError) {
  absl::StatusOr<HostModel> host = ParseHostJson(
      R"({"addr":[{"ifindex":1,"ifname":"lo"},{"ifindex":2,"ifname":"eth0","link_type":"ether"}]})");
  ASSERT_TRUE(host.ok()) << host.status();
  CompileOptions options;
  options.host = std::make_shared<const HostModel>(*host);
  const std::string mac = "table ip t {\n  chain in { type filter hook input priority 0;\n"
                          "    ether saddr 02:00:00:00:00:09 drop; }\n}\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(mac, "mac.nft", InputFormat::kNft);
  ASSERT_TRUE(rs.ok()) << rs.status();
  absl::StatusOr<std::unique_ptr<const Program>> p = Program::Compile(*rs, options);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("mac.nft:3:"), std::string::npos) << p.status();
  EXPECT_NE(p.status().message().find("interface 'lo' no link_type"), std::string::npos)
      << p.status();
  // Without --host the documented default holds (Ethernet); with every
  // type given it compiles.
  EXPECT_TRUE(Program::Compile(*rs, CompileOptions{}).ok());
  host->interfaces[0].link_type = 772;
  options.host = std::make_shared<const HostModel>(*host);
  EXPECT_TRUE(Program::Compile(*rs, options).ok());
}

TEST(Path, RoutingDecisionDeliversOrForwards) {
  const std::string nft = R"(table ip t {
  chain in { type filter hook input priority 0; policy drop; tcp dport 22 accept; }
})";
  auto f = Make(nft, Backend::kInterp);
  EXPECT_EQ(Arrive(*f, {.dst = "192.168.1.1", .dport = 22}).fate, Fate::kDelivered);
  EXPECT_EQ(Arrive(*f, {.dst = "10.0.0.1", .dport = 23}).fate, Fate::kDropped);
  EXPECT_EQ(Arrive(*f, {.dst = "192.168.1.9", .dport = 23}).fate, Fate::kForwarded);
  PathResult nowhere = Arrive(*f, {.dst = "172.16.0.1", .dport = 23});
  EXPECT_EQ(nowhere.fate, Fate::kDropped);
  EXPECT_EQ(nowhere.stack_drop, "no route to the destination");
}

// rulejit/route_input.h's special addresses (checked against the kernel in
// tests/kernel/path_addresses_kernel_test.cc).
TEST(Path, SpecialAddressesAreRoutedAsTheKernelRoutesThem) {
  auto f = Make("table ip t {\n  chain in { type filter hook input priority 0; }\n}\n", Backend::kInterp);
  auto fate = [&](const char* src, const char* dst) {
    PathResult r = Arrive(*f, {.src = src, .dst = dst, .proto = 17});
    return absl::StrCat(static_cast<int>(r.fate), " ", r.stack_drop);
  };
  const std::string delivered = "0 ", forwarded = "1 ";
  EXPECT_EQ(fate("10.0.0.9", "255.255.255.255"), delivered);
  EXPECT_EQ(fate("0.0.0.0", "255.255.255.255"), delivered);
  EXPECT_EQ(fate("10.0.0.9", "10.0.0.255"), delivered);  // eth0's subnet broadcast
  EXPECT_EQ(fate("10.0.0.9", "224.0.0.1"), delivered);
  EXPECT_EQ(fate("10.0.0.9", "224.0.0.251"), "3 multicast group not joined");
  EXPECT_EQ(fate("10.0.0.9", "0.0.0.0"), "3 martian destination");
  EXPECT_EQ(fate("10.0.0.9", "0.1.2.3"), "3 no route to the destination");
  EXPECT_EQ(fate("0.0.0.0", "192.168.1.9"), "3 martian source");
  EXPECT_EQ(fate("0.1.2.3", "192.168.1.9"), forwarded);
  EXPECT_EQ(fate("192.168.1.1", "192.168.1.9"), "3 martian source");  // its own address
  EXPECT_EQ(fate("127.0.0.1", "192.168.1.9"), "3 martian source");
  EXPECT_EQ(fate("10.0.0.9", "127.0.0.1"), "3 martian destination");
}

TEST(Path, TtlIsCheckedAndDecrementedBeforeForward) {
  const std::string nft = R"(table ip t {
  chain forwarding { type filter hook forward priority 0; policy drop; ip ttl 63 accept; }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    PathResult r = Arrive(*f, {.dst = "192.168.1.9", .sport = 1, .ttl = 64});
    EXPECT_EQ(r.fate, Fate::kForwarded);
    EXPECT_EQ(r.packet[14 + 8], 63);
    EXPECT_TRUE(ChecksumsValid(r.packet));
    PathResult dying = Arrive(*f, {.dst = "192.168.1.9", .sport = 2, .ttl = 1});
    EXPECT_EQ(dying.stack_drop, "ttl exceeded");
  }
}

TEST(Path, DnatTurnsALocalPacketIntoAForwardedOneAndRepliesComeBack) {
  const std::string nft = R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; tcp dport 80 dnat to 192.168.1.10:8080; }
}
table ip filter {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established accept
    ip daddr 192.168.1.10 tcp dport 8080 accept
  }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    PathResult syn = Arrive(*f, {.src = "10.0.0.5", .dst = "10.0.0.1", .sport = 40000, .dport = 80});
    ASSERT_EQ(syn.fate, Fate::kForwarded) << int(tier);
    EXPECT_EQ(syn.oif, 3u);
    EXPECT_EQ(Ipv4Dst(syn.packet), "192.168.1.10");
    EXPECT_EQ(Port(syn.packet, 1), 8080);
    EXPECT_TRUE(ChecksumsValid(syn.packet));
    // The server's answer arrives on eth1 and leaves translated back.
    PathResult reply = Arrive(*f,
                              {.src = "192.168.1.10", .dst = "10.0.0.5", .sport = 8080,
                               .dport = 40000, .tcp_flags = 0x12, .dst_mac = kEth1Mac},
                              "eth1");
    ASSERT_EQ(reply.fate, Fate::kForwarded);
    EXPECT_EQ(reply.oif, 2u);
    EXPECT_EQ(Ipv4Src(reply.packet), "10.0.0.1");
    EXPECT_EQ(Port(reply.packet, 0), 80);
    EXPECT_TRUE(ChecksumsValid(reply.packet));
    // Without the DNAT's port the packet is for the router itself.
    PathResult local = Arrive(*f, {.src = "10.0.0.5", .dst = "10.0.0.1", .sport = 40001, .dport = 81});
    EXPECT_EQ(local.fate, Fate::kDelivered);
  }
}

TEST(Path, MasqueradeTakesTheOutputDevicesAddress) {
  const std::string nft = R"(table ip nat {
  chain post { type nat hook postrouting priority srcnat; oifname "eth1" masquerade; }
})";
  auto f = Make(nft, Backend::kInterp);
  PathResult out = Arrive(*f, {.src = "10.0.0.5", .dst = "192.168.1.10", .proto = 17,
                               .sport = 5353, .dport = 53});
  ASSERT_EQ(out.fate, Fate::kForwarded);
  EXPECT_EQ(Ipv4Src(out.packet), "192.168.1.1");
  EXPECT_EQ(Port(out.packet, 0), 5353);  // kept: in range and unused
  EXPECT_TRUE(ChecksumsValid(out.packet));
  PathResult back = Arrive(*f,
                           {.src = "192.168.1.10", .dst = "192.168.1.1", .proto = 17,
                            .sport = 53, .dport = 5353, .dst_mac = kEth1Mac},
                           "eth1");
  ASSERT_EQ(back.fate, Fate::kForwarded);  // de-NATed: for the client, not the router
  EXPECT_EQ(Ipv4Dst(back.packet), "10.0.0.5");
  EXPECT_TRUE(ChecksumsValid(back.packet));
}

// The IP and L4 checksums of the IPv4 packet at `ip` (UDP/TCP with their
// pseudo-header, ICMP without) verify.
bool PacketChecksumsValid(const std::vector<uint8_t>& f, size_t ip) {
  const size_t ihl = (f[ip] & 0x0f) * 4u, l4 = ip + ihl, len = (f[ip + 2] << 8 | f[ip + 3]) - ihl;
  if (!SumsToOnes(Sum16(&f[ip], ihl))) return false;
  const uint32_t pseudo =
      f[ip + 9] == 1 ? 0 : Sum16(&f[ip + 12], 8) + f[ip + 9] + static_cast<uint32_t>(len);
  return SumsToOnes(Sum16(&f[l4], len, pseudo));
}

// An ICMP error quoting the whole packet `quoted` (as a server sent it).
FrameSpec IcmpError(const char* src, const char* dst, FrameSpec quoted) {
  quoted.ethernet = false;
  return {.src = src, .dst = dst, .proto = 1, .payload = BuildFrame(quoted), .icmp_type = 3,
          .icmp_code = 3, .dst_mac = kEth1Mac};
}

// nf_nat_icmp_reply_translation: the error a server sends about a packet
// it got translated reaches the client as if the client's own packet had
// been quoted: the outer address and the quoted packet's other side are
// rewritten, every checksum stays right.
TEST(Path, IcmpErrorsOfANatedFlowQuoteTheClientsPacket) {
  const std::string nft = R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; tcp dport 80 dnat to 192.168.1.10:8080; }
  chain post { type nat hook postrouting priority srcnat; oifname "eth1" meta l4proto udp masquerade; }
}
table ip filter {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established,related accept
    ct state new iifname "eth0" accept
  }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    // Masquerade: the server answers 192.168.1.1's datagram with an error.
    PathResult out = Arrive(*f, {.src = "10.0.0.5", .dst = "192.168.1.10", .proto = 17,
                                 .sport = 5353, .dport = 53, .payload = {1, 2, 3, 4}});
    ASSERT_EQ(out.fate, Fate::kForwarded);
    PathResult error = Arrive(*f,
                              IcmpError("192.168.1.10", "192.168.1.1",
                                        {.src = "192.168.1.1", .dst = "192.168.1.10", .proto = 17,
                                         .sport = 5353, .dport = 53, .payload = {1, 2, 3, 4}}),
                              "eth1");
    ASSERT_EQ(error.fate, Fate::kForwarded) << error.stack_drop;
    EXPECT_EQ(error.ct_state, kCtStateRelated);
    const std::vector<uint8_t>& e = error.packet;
    const size_t quoted = 14 + 20 + 8;
    EXPECT_EQ(Ipv4Dst(e), "10.0.0.5");
    EXPECT_EQ(Ipv4Src(e), "192.168.1.10");
    char text[INET_ADDRSTRLEN];
    EXPECT_STREQ(inet_ntop(AF_INET, &e[quoted + 12], text, sizeof text), "10.0.0.5");
    EXPECT_TRUE(PacketChecksumsValid(e, 14));      // outer IP and ICMP
    EXPECT_TRUE(PacketChecksumsValid(e, quoted));  // the quoted IP and UDP
    // DNAT: the error about the translated SYN names the address the client used.
    PathResult syn = Arrive(*f, {.src = "10.0.0.5", .dst = "10.0.0.1", .sport = 40000,
                                 .dport = 80});
    ASSERT_EQ(syn.fate, Fate::kForwarded);
    PathResult refused = Arrive(*f,
                                IcmpError("192.168.1.10", "10.0.0.5",
                                          {.src = "10.0.0.5", .dst = "192.168.1.10",
                                           .sport = 40000, .dport = 8080}),
                                "eth1");
    ASSERT_EQ(refused.fate, Fate::kForwarded) << refused.stack_drop;
    const std::vector<uint8_t>& r = refused.packet;
    EXPECT_EQ(Ipv4Src(r), "10.0.0.1");
    EXPECT_EQ(Ipv4Dst(r), "10.0.0.5");
    EXPECT_STREQ(inet_ntop(AF_INET, &r[quoted + 16], text, sizeof text), "10.0.0.1");
    EXPECT_EQ(r[quoted + 20 + 2] << 8 | r[quoted + 20 + 3], 80);  // the quoted dport
    EXPECT_TRUE(PacketChecksumsValid(r, 14));
    EXPECT_TRUE(PacketChecksumsValid(r, quoted));
    // An error about no flow of the table is not related: dropped.
    PathResult stray = Arrive(*f,
                              IcmpError("192.168.1.10", "10.0.0.5",
                                        {.src = "10.0.0.5", .dst = "192.168.1.10",
                                         .sport = 40009, .dport = 8080}),
                              "eth1");
    EXPECT_EQ(stray.fate, Fate::kDropped);
  }
}

// A DNAT that changes an SCTP port computes the CRC32c anew, as
// sctp_manip_pkt does; the answer's source port goes back.
TEST(Path, SctpPortNatKeepsTheCrcRight) {
  const std::string nft = R"(table ip nat {
  chain pre { type nat hook prerouting priority dstnat; sctp dport 5000 dnat to 192.168.1.10:6000; }
})";
  auto f = Make(nft, Backend::kInterp);
  PathResult out = Arrive(*f, {.src = "10.0.0.5", .dst = "192.168.1.10", .proto = 132,
                               .sport = 7000, .dport = 5000,
                               .payload = testing::SctpChunk(1, 0, testing::SctpInitBody(0x1234)),
                               .sctp_vtag = 0});
  ASSERT_EQ(out.fate, Fate::kForwarded) << out.stack_drop;
  EXPECT_EQ(Port(out.packet, 1), 6000);
  EXPECT_TRUE(TransportChecksumValid(
      ParseFrame(out.packet.data(), static_cast<uint32_t>(out.packet.size()))));
}

TEST(Path, NatChainsRunOnlyWhileTheConnectionHasNoBinding) {
  const std::string nft = R"(table ip t {
  chain pre { type nat hook prerouting priority dstnat; meta mark set 5; }
  chain forwarding { type filter hook forward priority 0; policy drop; meta mark 5 accept; }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    FrameSpec first{.src = "10.0.0.5", .dst = "192.168.1.10", .proto = 17, .sport = 7, .dport = 9};
    EXPECT_EQ(Arrive(*f, first).fate, Fate::kForwarded);
    // The same flow again: bound (null binding), so the nat chain is skipped.
    EXPECT_EQ(Arrive(*f, first).fate, Fate::kDropped) << int(tier);
  }
}

TEST(Path, ConntrackRunsAtItsPriority) {
  const std::string nft = R"(table ip t {
  chain raw { type filter hook prerouting priority -300;
    ct state invalid meta mark set 1
    udp dport 9 notrack
  }
  chain forwarding { type filter hook forward priority 0; policy drop;
    meta mark 1 ct state untracked accept
    meta mark 1 udp dport 10 ct state new accept
  }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    EXPECT_EQ(Arrive(*f, {.dst = "192.168.1.10", .proto = 17, .sport = 1, .dport = 9}).fate,
              Fate::kForwarded) << int(tier);
    EXPECT_EQ(Arrive(*f, {.dst = "192.168.1.10", .proto = 17, .sport = 1, .dport = 10}).fate,
              Fate::kForwarded);
    EXPECT_EQ(f->conntrack.flows(), 1u);  // the untracked packet made none
  }
}

TEST(Path, WithoutIifTheFrameArrivesOnTheDeviceOfItsMac) {
  const std::string nft = R"(table ip t {
  chain forwarding { type filter hook forward priority 0; policy drop; iifname "eth1" accept; }
})";
  auto f = Make(nft, Backend::kJit);
  FrameSpec to_eth1{.src = "192.168.1.10", .dst = "10.0.0.5", .dst_mac = kEth1Mac};
  EXPECT_EQ(Arrive(*f, to_eth1, "").fate, Fate::kForwarded);
  EXPECT_EQ(Arrive(*f, to_eth1, "").oif, 2u);
  FrameSpec to_eth0{.src = "192.168.1.10", .dst = "10.0.0.5"};
  EXPECT_EQ(Arrive(*f, to_eth0, "").fate, Fate::kDropped);  // arrived on eth0
  FrameSpec elsewhere{.dst = "192.168.1.10", .dst_mac = "02:00:00:00:09:09"};
  EXPECT_EQ(Arrive(*f, elsewhere, "").stack_drop,
            "no device of the host has the frame's destination MAC (give --iif)");
  // Named, the device's own MAC decides the packet type: another host's frame.
  EXPECT_EQ(Arrive(*f, elsewhere, "eth0").stack_drop, "not addressed to this host's MAC");
}

// What a nat chain writes into the packet, later hooks see (the NAT step
// once dropped a nat chain's written bytes).
TEST(Path, BytesANatChainWritesCarryOn) {
  const std::string nft = R"(table ip t {
  chain pre { type nat hook prerouting priority dstnat; ip dscp set 10; }
  chain forwarding { type filter hook forward priority 0; policy drop; ip dscp 10 accept; }
})";
  auto f = Make(nft, Backend::kInterp);
  PathResult r = Arrive(*f, {.dst = "192.168.1.10", .proto = 17, .sport = 5, .dport = 6});
  EXPECT_EQ(r.fate, Fate::kForwarded);
  EXPECT_EQ(r.packet[14 + 1] >> 2, 10);
}

// A file of sets alone (a real one: chinadns-ng's chnroute list) loads and
// runs on every tier; the asmjit tier once failed on a chain-less ruleset.
TEST(Path, ARulesetWithoutChainsAcceptsOnEveryTier) {
  const std::string nft = R"(add table inet global
add set inet global chnroute { type ipv4_addr; flags interval; }
add element inet global chnroute { 1.0.1.0/24 }
)";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    EXPECT_EQ(Arrive(*f, {.dst = "10.0.0.1"}).fate, Fate::kDelivered) << int(tier);
  }
}

// `rulejit run`'s path: a transparent bridge. Frames for any MAC pass the
// IP hooks with conntrack, keep their TTL (a TTL of 1 too), and leave by
// the fixed device; ARP crosses without the IP hooks.
TEST(Path, ABridgePassesFramesForAnyMacWithTheirTtl) {
  const std::string nft = R"(table inet t {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established accept
    ct state new udp dport 53 accept
  }
})";
  for (Backend tier : kTiers) {
    auto f = Make(nft, tier);
    PathRunner runner(*f->program, f->host, f->conntrack);
    const PathOptions from_eth0{.start = PathStart::kArrives, .route = RouteChoice::kForward,
                                .iif = "eth0", .oif = "eth1", .bridged = true};
    const PathOptions from_eth1{.start = PathStart::kArrives, .route = RouteChoice::kForward,
                                .iif = "eth1", .oif = "eth0", .bridged = true};
    auto run = [&](const PathOptions& o, const FrameSpec& spec) {
      std::vector<uint8_t> frame = BuildFrame(spec);
      return runner.Run(o, frame.data(), static_cast<uint32_t>(frame.size()), PacketMeta{},
                        &f->state);
    };
    // Addressed to another host's MAC, TTL 1: a bridge forwards it untouched.
    PathResult query = run(from_eth0, {.src = "10.9.0.1", .dst = "10.9.0.2", .proto = 17,
                                       .sport = 4000, .dport = 53, .ttl = 1,
                                       .dst_mac = "02:00:00:00:99:99"});
    EXPECT_EQ(query.fate, Fate::kForwarded) << int(tier) << " " << query.stack_drop;
    EXPECT_EQ(query.packet[14 + 8], 1);
    EXPECT_EQ(query.oif, 3u);
    // The answer is established; an unasked one is not.
    EXPECT_EQ(run(from_eth1, {.src = "10.9.0.2", .dst = "10.9.0.1", .proto = 17, .sport = 53,
                              .dport = 4000})
                  .fate,
              Fate::kForwarded);
    EXPECT_EQ(run(from_eth1, {.src = "10.9.0.2", .dst = "10.9.0.1", .proto = 17, .sport = 53,
                              .dport = 4001})
                  .fate,
              Fate::kDropped);
    // ARP crosses.
    std::vector<uint8_t> arp(42, 0);
    std::fill(arp.begin(), arp.begin() + 6, 0xff);
    arp[12] = 0x08;
    arp[13] = 0x06;
    EXPECT_EQ(runner.Run(from_eth0, arp.data(), 42, PacketMeta{}, &f->state).fate,
              Fate::kForwarded);
  }
}

}  // namespace
}  // namespace rulejit::runtime
