// nft's TCP option writes (`tcp option maxseg size set 1360`, `... set rt
// mtu`: MSS clamping): the bytecode nft 1.0.6 sends (`nft --debug=netlink`),
// the reader round trip, and the meaning of nft_exthdr_tcp_set_eval and
// nft_rt's tcpmss (ir/tcpopt_eval.cc): an MSS is only lowered, the TCP
// checksum stays right, no option means no change and the rule goes on, a
// short TCP header ends the rule; rt mtu from the host model's routes.
// Refused where the kernel refuses (lengths other than 2 and 4, rt mtu at
// input). Every backend gives the same verdicts (the writes run in the
// interpreter).
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/expr_eval.h"
#include "ir/tcpopt_eval.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using testing::BuildFrame;
using testing::FrameSpec;
using Bytes = std::vector<uint8_t>;

constexpr size_t kOpt4 = 14 + 20 + 20;  // the first TCP option byte, IPv4

std::string Rules(const std::string& text) { return nft_test::PrintedRules(text); }

std::string Chain(const std::string& hook, const std::string& body) {
  return "table inet t {\n chain c {\n  type filter hook " + hook + " priority 0;\n" + body +
         "\n }\n}\n";
}

uint16_t Get16(const Bytes& b, size_t at) { return static_cast<uint16_t>(b[at] << 8 | b[at + 1]); }

Bytes Syn(const Bytes& options, const std::string& dst = "10.0.0.2") {
  return BuildFrame(FrameSpec{.dst = dst, .tcp_options = options});
}

// EvalExthdrWrite of `value` (2 or 4 bytes, network order) into option
// `type` at `offset`, on a copy of `frame`: the bytes after, and whether
// the rule goes on.
std::pair<Bytes, bool> Write(const Bytes& frame, uint8_t type, uint32_t offset, Bytes value,
                             const PacketMeta& meta = {}) {
  Bytes bytes = frame;
  const PacketView pkt = ParseFrame(bytes.data(), static_cast<uint32_t>(bytes.size()));
  alignas(8) uint8_t regs[ir::kRegBytes] = {};
  std::memcpy(ir::RegBytes(regs, 1, 4), value.data(), value.size());
  ir::ExthdrWrite e;
  e.type = type;
  e.offset = offset;
  e.len = static_cast<uint32_t>(value.size());
  const bool goes_on = ir::EvalExthdrWrite(e, pkt, meta, bytes.data(), regs);
  return {bytes, goes_on};
}

bool ChecksumOk(const Bytes& frame) {
  return TransportChecksumValid(ParseFrame(frame.data(), static_cast<uint32_t>(frame.size())));
}

TEST(NftTcpOption, LowersAsNftSendsIt) {
  EXPECT_EQ(Rules(Chain("forward", "  tcp option maxseg size set 1360\n"
                                   "  tcp flags syn tcp option maxseg size set rt mtu\n"
                                   "  tcp option timestamp tsval set 7")),
            "inet t c\n"
            "  [ immediate reg 1 0x00005005 ]\n"
            "  [ exthdr write tcpopt reg 1 => 2b @ 2 + 2 ]\n"
            "inet t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 1b @ transport header + 13 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x00000002 ) ^ 0x00000000 ]\n"
            "  [ cmp neq reg 1 0x00000000 ]\n"
            "  [ rt load tcpmss => reg 1 ]\n"
            "  [ byteorder reg 1 = hton(reg 1, 2, 2) ]\n"
            "  [ exthdr write tcpopt reg 1 => 2b @ 2 + 2 ]\n"
            "inet t c\n"
            "  [ immediate reg 1 0x07000000 ]\n"
            "  [ exthdr write tcpopt reg 1 => 4b @ 8 + 2 ]\n");
  EXPECT_EQ(Rules(Chain("output", "  rt mtu 1400 accept")),
            "inet t c\n"
            "  [ rt load tcpmss => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000578 ]\n"
            "  [ immediate reg 0 accept ]\n");
}

TEST(NftTcpOption, ReadsBack) {
  nft_test::ExpectReadsBack({"[ exthdr write tcpopt reg 1 => 2b @ 2 + 2 ]",
                             "[ exthdr write tcpopt reg 9 => 4b @ 8 + 6 ]",
                             "[ rt load tcpmss => reg 1 ]"});
}

TEST(NftTcpOption, RefusedWhereTheKernelRefusesIt) {
  // nft_exthdr_tcp_set_init: 2 or 4 bytes, after the kind and length.
  ExpectError(Chain("forward", "  tcp option window count set 5"), 4, 3,
              "cannot set this TCP option field");
  ExpectError(Chain("forward", "  tcp option maxseg length set 4"), 4, 3,
              "cannot set this TCP option field");
  ExpectError(Chain("forward", "  tcp option maxseg size set 70000"), 4, 30,
              "exceeds the 16-bit field");
  // nft_rt_validate: tcpmss at forward, output and postrouting only.
  ExpectError(Chain("input", "  tcp option maxseg size set rt mtu"), 4, 33,
              "rt mtu is not valid at hook input");
  ExpectError(Chain("prerouting", "  rt mtu 1400 accept"), 4, 6,
              "rt mtu is not valid at hook prerouting");
  ExpectError(Chain("forward", "  rt classid 1 accept"), 4, 6, "unsupported expression 'rt classid'");
}

TEST(NftTcpOption, MssIsOnlyLoweredAndTheChecksumFollows) {
  const Bytes syn = Syn({2, 4, 0x05, 0xb4});  // MSS 1460
  ASSERT_TRUE(ChecksumOk(syn));
  auto [lowered, on] = Write(syn, 2, 2, {0x05, 0x50});  // 1360
  EXPECT_TRUE(on);
  EXPECT_EQ(Get16(lowered, kOpt4 + 2), 1360);
  EXPECT_TRUE(ChecksumOk(lowered));
  auto [kept, on2] = Write(syn, 2, 2, {0x05, 0xdc});  // 1500: never raised
  EXPECT_TRUE(on2);
  EXPECT_EQ(kept, syn);
  // A partial checksum (CHECKSUM_PARTIAL) is left for the NIC.
  PacketMeta partial;
  partial.csum_partial = true;
  auto [bytes, on3] = Write(syn, 2, 2, {0x05, 0x50}, partial);
  EXPECT_TRUE(on3);
  EXPECT_EQ(Get16(bytes, kOpt4 + 2), 1360);
  EXPECT_EQ(Get16(bytes, 14 + 20 + 16), Get16(syn, 14 + 20 + 16));
}

TEST(NftTcpOption, OtherOptionsAreWrittenEitherWay) {
  // NOP NOP timestamp(tsval 5, tsecr 0): tsval set to 2 (a 4-byte write).
  const Bytes syn = Syn({1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 0});
  auto [bytes, on] = Write(syn, 8, 2, {0, 0, 0, 2});
  EXPECT_TRUE(on);
  EXPECT_EQ(Get16(bytes, kOpt4 + 6), 2);
  EXPECT_TRUE(ChecksumOk(bytes));
}

TEST(NftTcpOption, MissingOptionGoesOnBrokenHeaderBreaks) {
  const Bytes bare = Syn({});
  auto [same, on] = Write(bare, 2, 2, {0x05, 0x50});
  EXPECT_TRUE(on);
  EXPECT_EQ(same, bare);
  // An option too short for the write (MSS with length 3): NFT_BREAK.
  auto [bytes, on2] = Write(Syn({2, 3, 0x05, 0}), 2, 2, {0x05, 0x50});
  EXPECT_FALSE(on2);
  // UDP has no TCP options: NFT_BREAK.
  auto [udp, on3] = Write(BuildFrame(FrameSpec{.proto = 17}), 2, 2, {0x05, 0x50});
  EXPECT_FALSE(on3);
}

TEST(NftTcpOption, RtMtuReadsTheRoutesOfTheHostModel) {
  // eth1 (mtu 1400) reaches 10.9.0.0/16; the source 10.0.0.1 is behind eth0
  // (mtu 1500, 10.0.0.0/24): the smaller MTU, less 40 bytes of headers.
  HostModel host = LoopbackHost();
  HostInterface eth0{.name = "eth0", .index = 2, .mtu = 1500};
  HostInterface eth1{.name = "eth1", .index = 3, .mtu = 1400};
  host.interfaces.push_back(eth0);
  host.interfaces.push_back(eth1);
  HostRoute to_src{.dst = {10, 0, 0, 0}, .prefix_len = 24, .oifs = {2}};
  HostRoute to_dst{.dst = {10, 9, 0, 0}, .prefix_len = 16, .oifs = {3}};
  host.routes.push_back(to_src);
  host.routes.push_back(to_dst);
  alignas(8) uint8_t regs[ir::kRegBytes] = {};
  const Bytes syn = Syn({2, 4, 0x05, 0xb4}, "10.9.1.1");
  const PacketView pkt = ParseFrame(syn.data(), static_cast<uint32_t>(syn.size()));
  ASSERT_TRUE(ir::EvalRt(ir::Rt{}, pkt, host, regs));
  uint16_t mss = 0;
  std::memcpy(&mss, ir::RegBytes(regs, 1, 2), 2);
  EXPECT_EQ(mss, 1400 - 40);
  // A route mtu metric below the device's wins; no route: NFT_BREAK.
  host.routes.back().mtu = 1300;
  ASSERT_TRUE(ir::EvalRt(ir::Rt{}, pkt, host, regs));
  std::memcpy(&mss, ir::RegBytes(regs, 1, 2), 2);
  EXPECT_EQ(mss, 1300 - 40);
  const Bytes nowhere = Syn({}, "10.77.0.1");
  EXPECT_FALSE(ir::EvalRt(ir::Rt{}, ParseFrame(nowhere.data(), static_cast<uint32_t>(nowhere.size())),
                          host, regs));
}

TEST(NftTcpOption, EveryBackendGivesTheSameVerdicts) {
  // The write goes on to the next statement; a broken option ends the rule.
  const std::string text = Chain("forward", "  policy accept;\n"
                                            "  tcp dport 80 tcp option maxseg size set 1360 drop\n"
                                            "  tcp dport 81 tcp option maxseg size set 1360\n"
                                            "  tcp dport 81 drop");
  const std::vector<std::pair<Bytes, Verdict>> cases = {
      {BuildFrame(FrameSpec{.dport = 80, .tcp_options = {2, 4, 5, 0xb4}}), Verdict::kDrop},
      {BuildFrame(FrameSpec{.dport = 80}), Verdict::kDrop},
      {BuildFrame(FrameSpec{.dport = 80, .tcp_options = {2, 3, 5, 0}}), Verdict::kAccept},
      {BuildFrame(FrameSpec{.dport = 81, .tcp_options = {2, 4, 5, 0xb4}}), Verdict::kDrop},
      {BuildFrame(FrameSpec{.dport = 82}), Verdict::kAccept},
  };
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(nft_test::VerdictOf(*program, Hook::kForward, cases[i].first, PacketMeta{}),
                cases[i].second)
          << BackendName(backend) << " case " << i;
    }
  }
}

}  // namespace
}  // namespace rulejit
