// Flowtables and `flow add @ft` (OpenWrt fw4's default ruleset offloads
// forwarded TCP and UDP): the declaration is recorded, the statement lowers
// to [ flow_offload flowtable ft ] exactly as nft 1.0.6 sends it (checked
// with `nft --debug=netlink`), reads back, and means what
// nft_flow_offload_eval does: offload a confirmed, established (TCP: ct
// assured, no FIN/RST) or UDP connection without a helper, then go on;
// anything else ends the rule (NFT_BREAK). Every backend agrees (the
// compiled ones hand such rulesets to the interpreter).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using nft_test::Parse;
using testing::BuildFrame;
using testing::FrameSpec;

const char kRuleset[] =
    "table inet t {\n"
    " flowtable ft {\n"
    "  hook ingress priority filter + 1; devices = { lo, \"eth0\" }; counter\n"
    " }\n"
    " chain c {\n"
    "  type filter hook forward priority 0; policy drop;\n"
    "  meta l4proto { tcp, udp } flow offload @ft\n"
    "  flow add @ft accept\n"
    " }\n"
    "}\n";

TEST(NftFlowtable, LowersAsNftSendsIt) {
  auto r = Parse(kRuleset);
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  ASSERT_EQ(t.flowtables.size(), 1u);
  EXPECT_EQ(t.flowtables[0].priority, 1);
  EXPECT_EQ(t.flowtables[0].devices, (std::vector<std::string>{"lo", "eth0"}));
  EXPECT_EQ(t.flowtables[0].flags, 0x2u);
  const ir::Chain& c = t.chains.at(0);
  EXPECT_EQ(ir::PrintRule(t, c, c.rules.at(0)),
            "inet t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ lookup reg 1 set __set%d ]\n"
            "  [ flow_offload flowtable ft ]\n");
  EXPECT_EQ(ir::PrintRule(t, c, c.rules.at(1)),
            "inet t c\n"
            "  [ flow_offload flowtable ft ]\n"
            "  [ immediate reg 0 accept ]\n");
  EXPECT_NE(ir::PrintRuleset(*r->rs).find(
                "# flowtable ft hook ingress priority 1 devices lo,eth0 flags 0x2\n"),
            std::string::npos);
}

TEST(NftFlowtable, ExpressionReadsBack) {
  const std::string line = "[ flow_offload flowtable ft ]";
  absl::StatusOr<ir::Expr> e = ir::ParseExprLine(line);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(ir::PrintExpr(*e), line);
  EXPECT_FALSE(ir::ParseExprLine("[ flow_offload table ft ]").ok());
}

TEST(NftFlowtable, WhatTheKernelRefusesIsALocatedError) {
  ExpectError("table inet t {\n chain c {\n  type filter hook forward priority 0;\n"
              "  flow add @nope\n }\n}\n",
              4, 3, "no flowtable 'nope' in table 't'");
  ExpectError("table inet t {\n flowtable ft {\n  hook ingress priority 0; devices = { lo }\n }\n"
              " chain c {\n  type filter hook input priority 0;\n  flow add @ft\n }\n}\n",
              7, 3, "flow offload runs in forward chains only");
  ExpectError("table inet t {\n flowtable ft {\n  hook egress priority 0; devices = { lo }\n }\n}\n",
              3, 8, "flowtables hook ingress only");
  ExpectError("table netdev t {\n chain c {\n  flow add @ft\n }\n}\n", 3, 3,
              "flow offload runs in ip, ip6 and inet tables only");
}

TEST(NftFlowtable, AddFlowtableCommand) {
  auto r = Parse("add table ip t\nadd flowtable ip t f { hook ingress priority 0; devices = { lo }; }\n"
                 "add chain ip t c { type filter hook forward priority 0; }\n"
                 "add rule ip t c flow add @f\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  EXPECT_EQ(r->rs->tables.at(0).flowtables.at(0).name, "f");
}

// What `flow add @ft accept` decides for one packet, on every backend.
struct Case {
  const char* what;
  uint8_t proto;
  uint8_t tcp_flags;
  bool ct_valid;
  uint32_t ct_state;
  uint32_t ct_status;
  Verdict want;
};

TEST(NftFlowtable, OffloadsOnlyWhatTheKernelOffloads) {
  constexpr uint32_t kAssured = 0x4, kConfirmed = 0x8, kHelper = 0x2000, kOffload = 0x4000;
  const Case cases[] = {
      {"tcp established", 6, 0x10, true, kCtStateEstablished, kAssured | kConfirmed,
       Verdict::kAccept},
      {"tcp not assured", 6, 0x10, true, kCtStateEstablished, kConfirmed, Verdict::kDrop},
      {"tcp fin", 6, 0x11, true, kCtStateEstablished, kAssured | kConfirmed, Verdict::kDrop},
      {"tcp rst", 6, 0x04, true, kCtStateEstablished, kAssured | kConfirmed, Verdict::kDrop},
      {"udp new, confirmed", 17, 0, true, kCtStateNew, kConfirmed, Verdict::kAccept},
      {"udp unconfirmed", 17, 0, true, kCtStateNew, 0, Verdict::kDrop},
      {"udp with a helper", 17, 0, true, kCtStateEstablished, kConfirmed | kHelper,
       Verdict::kDrop},
      {"udp already offloaded", 17, 0, true, kCtStateEstablished, kConfirmed | kOffload,
       Verdict::kDrop},
      {"untracked", 17, 0, false, 0, 0, Verdict::kDrop},
      {"icmp", 1, 0, true, kCtStateEstablished, kAssured | kConfirmed, Verdict::kDrop},
  };
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm, Backend::kAuto}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(kRuleset, backend);
    ASSERT_NE(program, nullptr);
    for (const Case& c : cases) {
      PacketMeta meta;
      meta.ct_valid = c.ct_valid;
      meta.ct_state = c.ct_state;
      meta.ct_status = c.ct_status;
      EXPECT_EQ(nft_test::VerdictOf(*program, Hook::kForward,
                                    BuildFrame(FrameSpec{.proto = c.proto,
                                                         .tcp_flags = c.tcp_flags}),
                                    meta),
                c.want)
          << c.what << " on " << BackendName(backend);
    }
  }
}

}  // namespace
}  // namespace rulejit
