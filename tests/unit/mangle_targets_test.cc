// The mangle targets. TCPMSS (ir/tcpmss_eval.cc): the bytes xt_TCPMSS
// leaves, with every checksum recomputed in full to prove the incremental
// updates, and the drops it makes, through the iptables frontend and the
// interpreter. CHECKSUM --checksum-fill (ir::EvalChecksumFill).
#include <arpa/inet.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "gtest/gtest.h"
#include "ir/expr_eval.h"
#include "ir/tcpmss_eval.h"
#include "packet/parse.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"

namespace rulejit {
namespace {

using testing::BuildFrame;
using testing::FrameSpec;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kEth = 14;

uint16_t Get16(const Bytes& b, size_t at) { return static_cast<uint16_t>(b[at] << 8 | b[at + 1]); }
void Put16(Bytes& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}

uint32_t Sum(const uint8_t* p, size_t len, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1]) << 8;
  return sum;
}
uint16_t Fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// The IPv4 frame's TCP checksum computed in full (pseudo-header included).
uint16_t TcpChecksum4(Bytes f) {
  const size_t ip = kEth, ihl = (f[ip] & 0xf) * 4u, tcp = ip + ihl;
  const size_t tcp_len = Get16(f, ip + 2) - ihl;
  Put16(f, tcp + 16, 0);
  uint32_t sum = Sum(&f[ip + 12], 8) + 6 + static_cast<uint32_t>(tcp_len);
  return Fold(Sum(&f[tcp], tcp_len, sum));
}
uint16_t IpChecksum(Bytes f) {
  Put16(f, kEth + 10, 0);
  return Fold(Sum(&f[kEth], 20));
}

// A SYN of 10.0.0.1 -> 10.0.0.2 with `options` after the TCP header and
// `payload`, checksums right.
Bytes Syn4(const Bytes& options, const Bytes& payload = {}) {
  Bytes f = BuildFrame(FrameSpec{.payload = payload});
  const size_t tcp = kEth + 20;
  f.insert(f.begin() + static_cast<long>(tcp + 20), options.begin(), options.end());
  f[tcp + 12] = static_cast<uint8_t>((20 + options.size()) / 4 << 4);
  Put16(f, kEth + 2, static_cast<uint16_t>(Get16(f, kEth + 2) + options.size()));
  Put16(f, kEth + 10, IpChecksum(f));
  Put16(f, tcp + 16, TcpChecksum4(f));
  return f;
}

// EvalTcpMss on a copy of `frame`: the bytes after, and whether it passed.
std::pair<Bytes, bool> Mangle(const Bytes& frame, const ir::TcpMss& e,
                              const HostModel& host = LoopbackHost()) {
  Bytes bytes = frame;
  PacketView pkt = packet::ParseEthernet(bytes.data(), static_cast<uint32_t>(bytes.size()));
  const bool pass = ir::EvalTcpMss(e, host, pkt, bytes);
  EXPECT_EQ(pkt.len, bytes.size());
  return {bytes, pass};
}

constexpr size_t kOpt = kEth + 40;  // the first option byte

TEST(TcpMss, LowersAnExistingOptionNeverRaisesIt) {
  const Bytes syn = Syn4({2, 4, 0x05, 0xb4});  // MSS 1460
  auto [lowered, pass] = Mangle(syn, {.mss = 1000});
  ASSERT_TRUE(pass);
  EXPECT_EQ(Get16(lowered, kOpt + 2), 1000);
  EXPECT_EQ(Get16(lowered, kEth + 36), TcpChecksum4(lowered));
  auto [kept, pass2] = Mangle(syn, {.mss = 1500});
  EXPECT_TRUE(pass2);
  EXPECT_EQ(kept, syn);
}

TEST(TcpMss, FindsTheOptionAfterOthers) {
  const Bytes syn = Syn4({1, 1, 4, 2, 2, 4, 0x05, 0xb4});  // NOP NOP SACK-perm MSS
  auto [out, pass] = Mangle(syn, {.mss = 1200});
  ASSERT_TRUE(pass);
  EXPECT_EQ(Get16(out, kOpt + 6), 1200);
  EXPECT_EQ(Get16(out, kEth + 36), TcpChecksum4(out));
}

TEST(TcpMss, AddsTheOptionToABareSynCappedAt536) {
  const Bytes syn = Syn4({});
  auto [out, pass] = Mangle(syn, {.mss = 1000});
  ASSERT_TRUE(pass);
  ASSERT_EQ(out.size(), syn.size() + 4);
  EXPECT_EQ((out[kEth + 32] >> 4), 6);  // data offset 24 bytes
  EXPECT_EQ(out[kOpt], 2);
  EXPECT_EQ(out[kOpt + 1], 4);
  EXPECT_EQ(Get16(out, kOpt + 2), 536);
  EXPECT_EQ(Get16(out, kEth + 2), Get16(syn, kEth + 2) + 4);
  EXPECT_EQ(Get16(out, kEth + 10), IpChecksum(out));
  EXPECT_EQ(Get16(out, kEth + 36), TcpChecksum4(out));
}

TEST(TcpMss, LeavesASynWithDataAlone) {
  const Bytes syn = Syn4({}, {1, 2, 3, 4});
  auto [out, pass] = Mangle(syn, {.mss = 1000});
  EXPECT_TRUE(pass);
  EXPECT_EQ(out, syn);
}

TEST(TcpMss, ClampsToTheSmallerRouteMtu) {
  HostModel host = LoopbackHost();
  HostInterface out_dev{.name = "wan", .index = 2, .mtu = 1400};
  HostInterface in_dev{.name = "lan", .index = 3, .mtu = 1500};
  host.interfaces.push_back(out_dev);
  host.interfaces.push_back(in_dev);
  HostRoute to_dst{.family = 4, .prefix_len = 0, .oifs = {2}};  // default via wan
  HostRoute to_src{.family = 4, .dst = {10, 0, 0, 1}, .prefix_len = 32, .oifs = {3}};
  host.routes.push_back(to_dst);
  host.routes.push_back(to_src);
  auto [out, pass] = Mangle(Syn4({2, 4, 0x05, 0xb4}), {.clamp = true}, host);
  ASSERT_TRUE(pass);
  EXPECT_EQ(Get16(out, kOpt + 2), 1400 - 40);
  HostRoute& back = host.routes.back();
  back.mtu = 1300;  // the reverse route's own mtu metric
  auto [out2, pass2] = Mangle(Syn4({2, 4, 0x05, 0xb4}), {.clamp = true}, host);
  ASSERT_TRUE(pass2);
  EXPECT_EQ(Get16(out2, kOpt + 2), 1300 - 40);
  back.mtu = 40;  // no usable path MTU: the kernel drops
  EXPECT_FALSE(Mangle(Syn4({2, 4, 0x05, 0xb4}), {.clamp = true}, host).second);
}

TEST(TcpMss, DropsTruncatedTcpHeaders) {
  Bytes syn = Syn4({2, 4, 0x05, 0xb4});
  syn[kEth + 32] = 0x90;  // data offset 36 > the 24 bytes there
  EXPECT_FALSE(Mangle(syn, {.mss = 1000}).second);
  syn[kEth + 32] = 0x40;  // data offset 16 < 20
  EXPECT_FALSE(Mangle(syn, {.mss = 1000}).second);
}

TEST(TcpMss, Ipv6CapsAnAddedOptionAt1220) {
  Bytes syn = BuildFrame(FrameSpec{.src = "2001:db8::1", .dst = "2001:db8::2"});
  auto [out, pass] = Mangle(syn, {.mss = 1400});
  ASSERT_TRUE(pass);
  ASSERT_EQ(out.size(), syn.size() + 4);
  EXPECT_EQ(Get16(out, kEth + 4), Get16(syn, kEth + 4) + 4);  // payload length
  EXPECT_EQ(Get16(out, kEth + 40 + 20 + 2), 1220);
}

Bytes FromHex(const std::string& hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// Four SYNs sent through a Linux 6.18 namespace router with
// `-t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS
// --set-mss 1000` (iptables-legacy) and captured on the far side: MSS
// 1460 lowered, no option (one added, 536), NOP NOP SACK-perm MSS 1460,
// and MSS 500 left alone. The TCP segments must be the kernel's, byte for
// byte (the IP headers differ by the router's TTL decrement).
TEST(TcpMss, SegmentsAreTheKernels) {
  const std::pair<const char*, const char*> kCaptures[] = {
      {"4500002c00000000400666c60a0100020a02000203e8005000000001000000006002ffff7fe70000020405b4",
       "03e8005000000001000000006002ffff81b30000020403e8"},
      {"4500002800000000400666ca0a0100020a02000203e9005000000001000000005002ffff97a20000",
       "03e9005000000001000000006002ffff838200000204" "0218"},
      {"4500003000000000400666c20a0100020a02000203ea005000000001000000007002ffff6ade000001010402020405b4",
       "03ea005000000001000000007002ffff6caa000001010402020403e8"},
      {"4500002c00000000400666c60a0100020a02000203eb005000000001000000006002ffff83a40000020401f4",
       "03eb005000000001000000006002ffff83a40000020401f4"},
  };
  for (const auto& [sent, captured] : kCaptures) {
    Bytes frame = FromHex("020000000002020000000001" "0800");
    const Bytes ip = FromHex(sent);
    frame.insert(frame.end(), ip.begin(), ip.end());
    auto [out, pass] = Mangle(frame, {.mss = 1000});
    ASSERT_TRUE(pass);
    EXPECT_EQ(Bytes(out.begin() + kEth + 20, out.end()), FromHex(captured)) << sent;
    EXPECT_EQ(Get16(out, kEth + 10), IpChecksum(out));
  }
}

// Through the frontend and the interpreter: the rule goes on after the
// target, and a drop decides the packet.
TEST(TcpMss, TargetGoesOnOrDropsInTheRuleset) {
  const std::string dump =
      "*mangle\n:FORWARD ACCEPT [0:0]\n"
      "-A FORWARD -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1000\n"
      "-A FORWARD -p tcp -j DROP\nCOMMIT\n";
  absl::StatusOr<Ruleset> rs = ParseRuleset(dump, "mss.ipt");
  ASSERT_TRUE(rs.ok()) << rs.status();
  auto program = Program::Compile(*std::move(rs), {.backend = Backend::kInterp});
  ASSERT_TRUE(program.ok());
  PacketMeta meta;
  meta.has_iif = meta.has_oif = true;
  const Bytes syn = Syn4({2, 4, 0x05, 0xb4});
  Result r = (*program)->Classify(Hook::kForward, syn.data(), syn.size(), meta);
  EXPECT_EQ(r.verdict, Verdict::kDrop);
  EXPECT_EQ(r.decided_by.rule, 1);  // TCPMSS went on to the DROP rule
  Bytes bad = syn;
  bad[kEth + 32] = 0x90;
  r = (*program)->Classify(Hook::kForward, bad.data(), bad.size(), meta);
  EXPECT_EQ(r.decided_by.rule, 0);  // dropped by TCPMSS itself
}

TEST(TcpMss, RefusedWhereTheKernelRefusesIt) {
  for (const char* rule : {
           "-A FORWARD -p tcp -j TCPMSS --set-mss 1000",  // no SYN match
           "-A FORWARD -p udp -j TCPMSS --set-mss 1000",
           "-A FORWARD -p tcp --syn -j TCPMSS",
           "-A FORWARD -p tcp --syn -j TCPMSS --set-mss 1 --clamp-mss-to-pmtu",
           "-A INPUT -p tcp --syn -j TCPMSS --clamp-mss-to-pmtu",
       }) {
    const std::string dump = absl::StrCat("*mangle\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n",
                                          rule, "\nCOMMIT\n");
    EXPECT_FALSE(ParseRuleset(dump, "bad.ipt").ok()) << rule;
  }
}

}  // namespace
}  // namespace rulejit

namespace rulejit {
namespace {

// CHECKSUM --checksum-fill: a partial checksum (the pseudo-header sum a
// socket leaves for the NIC) becomes the full one; complete ones stay.
TEST(ChecksumFill, CompletesPartialTcpAndUdpChecksums) {
  for (uint8_t proto : {uint8_t{6}, uint8_t{17}}) {
    for (const char* src : {"10.0.0.1", "2001:db8::1"}) {
      const bool v6 = std::string(src).find(':') != std::string::npos;
      const Bytes frame = BuildFrame(FrameSpec{.src = src, .dst = v6 ? "2001:db8::2" : "10.0.0.2",
                                               .proto = proto, .payload = {1, 2, 3}});
      Bytes partial = frame;
      PacketView pkt = packet::ParseEthernet(partial.data(), static_cast<uint32_t>(partial.size()));
      const uint32_t check = pkt.transport_off + (proto == 6 ? 16 : 6);
      partial[check] = 0x12;  // what the NIC would overwrite
      partial[check + 1] = 0x34;
      Bytes untouched = partial;
      ir::EvalChecksumFill(pkt, PacketMeta{}, untouched.data());
      EXPECT_EQ(untouched, partial) << "complete checksums are left alone";
      PacketMeta meta;
      meta.csum_partial = true;
      ir::EvalChecksumFill(pkt, meta, partial.data());
      EXPECT_EQ(partial, frame) << src << " proto " << int{proto};
    }
  }
}

TEST(ChecksumFill, OnlyInMangleWithChecksumFill) {
  auto parse = [](const char* table, const char* target) {
    return ParseRuleset(absl::StrCat("*", table, "\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -p udp "
                                     "-j ", target, "\nCOMMIT\n"),
                        "c.ipt")
        .ok();
  };
  EXPECT_TRUE(parse("mangle", "CHECKSUM --checksum-fill"));
  EXPECT_FALSE(parse("nat", "CHECKSUM --checksum-fill"));  // kernel: table mangle only
  EXPECT_FALSE(parse("mangle", "CHECKSUM"));
}

}  // namespace
}  // namespace rulejit
