// nft's synproxy, statement and object (nft_synproxy.c): the bytecode nft
// 1.0.6 sends, the reader round trip, and what it does to a packet's fate
// (ir/synproxy_eval.cc): a SYN is answered by the kernel and consumed (a
// drop for the path), an ACK without a cookie the kernel issued is
// dropped, other TCP packets go on with the rule, a non-TCP packet ends it;
// a bad checksum drops. Objects declared and never used load; refused at
// hooks other than input and forward. Every backend agrees.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using nft_test::Parse;
using testing::BuildFrame;
using testing::FrameSpec;
using Bytes = std::vector<uint8_t>;

constexpr uint8_t kSyn = 0x02, kRst = 0x04, kAck = 0x10, kFin = 0x01;

TEST(NftSynproxy, LowersAsNftSendsIt) {
  EXPECT_EQ(nft_test::PrintedRules(
                "table inet t {\n synproxy sp {\n  mss 1460\n  wscale 7\n  timestamp sack-perm\n }\n"
                " chain c {\n  type filter hook forward priority 0;\n"
                "  tcp dport 80 synproxy mss 1460 wscale 5 timestamp sack-perm\n"
                "  synproxy\n"
                "  synproxy name sp\n"
                "  synproxy name ip saddr map { 192.168.1.0/24 : \"sp\" }\n }\n}\n"),
            "inet t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00005000 ]\n"
            "  [ synproxy mss 1460 wscale 5 ]\n"
            "inet t c\n"
            "  [ synproxy mss 0 wscale 0 ]\n"
            "inet t c\n"
            "  [ objref type 10 name sp ]\n"
            "inet t c\n"
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ objref sreg 1 set __objmap%d ]\n");
  nft_test::ExpectReadsBack({"[ synproxy mss 1460 wscale 7 ]"});
}

TEST(NftSynproxy, ObjectsLoadAndAreRefusedWhereTheKernelRefusesThem) {
  auto r = Parse("table inet t {\n synproxy a {\n  mss 1460\n  wscale 7\n }\n"
                 " synproxy b { mss 1400 wscale 3 }\n synproxy c {\n }\n"
                 " map m {\n  type ipv4_addr : synproxy\n  flags interval\n"
                 "  elements = { 192.168.1.0/24 : \"a\" }\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  ASSERT_EQ(r->rs->tables[0].objects.size(), 3u);
  EXPECT_EQ(r->rs->tables[0].objects[1].synproxy.mss, 1400);
  EXPECT_EQ(r->rs->tables[0].objects[1].synproxy.wscale, 3);
  // nft_synproxy_validate: input and forward only.
  ExpectError("table inet t {\n chain c {\n  type filter hook prerouting priority 0;\n"
              "  synproxy\n }\n}\n",
              4, 3, "synproxy is not valid at hook prerouting");
  ExpectError("table inet t {\n synproxy a {\n }\n chain c {\n"
              "  type filter hook output priority 0;\n  synproxy name a\n }\n}\n",
              6, 3, "synproxy is not valid at hook output");
  // Also in a chain a base chain of another hook jumps to (directly, or
  // through a verdict map); a chain nothing reaches is not checked.
  ExpectError("table inet t {\n chain pre {\n  type filter hook prerouting priority 0;\n"
              "  tcp dport 1 jump sp\n }\n chain sp {\n  synproxy\n }\n}\n",
              7, 3, "synproxy in chain 'sp', which hook prerouting reaches");
  ExpectError("table inet t {\n chain out {\n  type filter hook output priority 0;\n"
              "  tcp dport vmap { 1 : goto a }\n }\n chain a {\n  jump b\n }\n"
              " chain b {\n  synproxy\n }\n}\n",
              10, 3, "synproxy in chain 'b', which hook output reaches");
  EXPECT_TRUE(Parse("table inet t {\n chain in {\n  type filter hook input priority 0;\n"
                    "  jump sp\n }\n chain sp {\n  synproxy\n }\n chain lone {\n"
                    "  synproxy\n }\n}\n")
                  ->rs.ok());
  ExpectError("table inet t {\n synproxy a { mss 70000 wscale 1 }\n}\n", 2, 19,
              "bad synproxy mss");
  ExpectError("table inet t {\n chain c {\n  synproxy name nope\n }\n}\n", 3, 17,
              "no synproxy 'nope'");
}

TEST(NftSynproxy, SynsAreConsumedAcksWithoutACookieDropOthersGoOn) {
  const char text[] =
      "table inet t {\n synproxy sp { mss 1460 wscale 7 }\n"
      " chain c {\n  type filter hook forward priority 0; policy accept;\n"
      "  tcp dport 80 synproxy mss 1460 wscale 7\n"
      "  meta l4proto udp synproxy\n"
      "  tcp dport 81 synproxy name sp\n"
      "  tcp dport { 80, 81 } drop\n"
      " }\n}\n";
  struct Case {
    Bytes frame;
    Verdict want;
    const char* what;
  };
  const std::vector<Case> cases = {
      {BuildFrame(FrameSpec{.dport = 80, .tcp_flags = kSyn}), Verdict::kDrop, "SYN: stolen"},
      {BuildFrame(FrameSpec{.dport = 80, .tcp_flags = kSyn | kAck}), Verdict::kDrop,
       "SYN-ACK: a SYN too"},
      {BuildFrame(FrameSpec{.dport = 80, .tcp_flags = kAck}), Verdict::kDrop, "ACK: no cookie"},
      {BuildFrame(FrameSpec{.dport = 80, .tcp_flags = kRst}), Verdict::kDrop,
       "RST: goes on to the drop rule"},
      {BuildFrame(FrameSpec{.dport = 80, .tcp_flags = kFin, .bad_l4_checksum = true}),
       Verdict::kDrop, "bad checksum"},
      {BuildFrame(FrameSpec{.dport = 81, .tcp_flags = kSyn}), Verdict::kDrop, "object: SYN"},
      {BuildFrame(FrameSpec{.dport = 82, .tcp_flags = kFin}), Verdict::kAccept, "no rule"},
      {BuildFrame(FrameSpec{.proto = 17, .dport = 80}), Verdict::kAccept, "UDP: NFT_BREAK"},
  };
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    for (const Case& c : cases) {
      EXPECT_EQ(nft_test::VerdictOf(*program, Hook::kForward, c.frame, PacketMeta{}), c.want)
          << BackendName(backend) << ": " << c.what;
    }
  }
  // A partial checksum (a local sender's offload) is not checked: the FIN
  // with a "bad" checksum goes on to the drop rule only because of port 80;
  // at port 82 nothing stops it.
  std::unique_ptr<const Program> program = nft_test::CompileFor(text, Backend::kInterp);
  ASSERT_NE(program, nullptr);
  PacketMeta partial;
  partial.csum_partial = true;
  EXPECT_EQ(nft_test::VerdictOf(*program, Hook::kForward,
                                BuildFrame(FrameSpec{.dport = 82, .tcp_flags = kFin,
                                                     .bad_l4_checksum = true}),
                                partial),
            Verdict::kAccept);
}

}  // namespace
}  // namespace rulejit
