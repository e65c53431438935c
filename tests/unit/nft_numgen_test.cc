// numgen (kube-proxy balances endpoints with `numgen random mod N vmap`):
// the bytecode nft 1.0.6 sends (`nft --debug=netlink`), the reader round
// trip, and the meaning: `inc` counts 0, 1, ..., N-1, 0 per expression
// across packets (nft_ng_inc_eval: the counter starts at N-1), `random`
// scales the packet's random draw (an input, PacketMeta::random) with
// reciprocal_scale; every backend agrees. Also kube-proxy's ordering: a rule
// added by command may not jump to a chain added after it.
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

std::string Rules(const std::string& text) { return nft_test::PrintedRules(text); }

TEST(NftNumgen, LowersAsNftSendsIt) {
  EXPECT_EQ(Rules("table ip t {\n chain c {\n  type nat hook prerouting priority 0;\n"
                  "  meta mark set numgen random mod 2\n"
                  "  meta mark set numgen inc mod 10 offset 100\n"
                  "  ct mark set numgen inc mod 2\n"
                  "  dnat to numgen inc mod 2 map { 0 : 192.168.10.100, 1 : 192.168.20.200 }\n"
                  " }\n}\n"),
            "ip t c\n"
            "  [ numgen reg 1 = random mod 2 ]\n"
            "  [ meta set mark with reg 1 ]\n"
            "ip t c\n"
            "  [ numgen reg 1 = inc mod 10 offset 100 ]\n"
            "  [ meta set mark with reg 1 ]\n"
            "ip t c\n"
            "  [ numgen reg 1 = inc mod 2 ]\n"
            "  [ ct set mark with reg 1 ]\n"
            "ip t c\n"
            "  [ numgen reg 1 = inc mod 2 ]\n"
            "  [ lookup reg 1 set __map%d dreg 1 ]\n"
            "  [ nat dnat ip addr_min reg 1 ]\n");
  EXPECT_EQ(Rules("table ip t {\n chain c {\n  numgen random mod 2 vmap { 0 : accept, 1 : drop }\n"
                  " }\n}\n"),
            "ip t c\n"
            "  [ numgen reg 1 = random mod 2 ]\n"
            "  [ lookup reg 1 set __map%d dreg 0 ]\n");
}

TEST(NftNumgen, ReadsBack) {
  nft_test::ExpectReadsBack({"[ numgen reg 1 = random mod 2 ]",
                             "[ numgen reg 3 = inc mod 10 offset 100 ]"});
}

TEST(NftNumgen, Mistakes) {
  ExpectError("table ip t {\n chain c {\n  meta mark set numgen inc mod 0\n }\n}\n", 3, 24,
              "numgen modulus must not be 0");
  ExpectError("table ip t {\n chain c {\n  meta mark set numgen often mod 2\n }\n}\n", 3, 24,
              "unknown numgen mode 'often'");
}

TEST(NftNumgen, IncCountsAndRandomScalesTheDrawOnEveryBackend) {
  const char text[] =
      "table ip t {\n chain c {\n  type filter hook input priority 0; policy drop;\n"
      "  tcp dport 1 numgen inc mod 3 vmap { 0 : accept, 1 : drop, 2 : accept }\n"
      "  tcp dport 2 numgen random mod 4 offset 10 vmap { 10 : drop, 11 : accept, 12 : drop,"
      " 13 : accept }\n"
      " }\n}\n";
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kAuto}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    RunState state;
    std::vector<Verdict> inc;
    for (int i = 0; i < 6; ++i) {
      inc.push_back(nft_test::VerdictOf(*program, Hook::kInput, BuildFrame(FrameSpec{.dport = 1}),
                                        PacketMeta{}, &state));
    }
    EXPECT_EQ(inc, (std::vector<Verdict>{Verdict::kAccept, Verdict::kDrop, Verdict::kAccept,
                                         Verdict::kAccept, Verdict::kDrop, Verdict::kAccept}))
        << BackendName(backend);
    // reciprocal_scale(r, 4) = r * 4 >> 32: the top two bits choose.
    std::vector<Verdict> random;
    for (uint32_t r : {0x00000000u, 0x40000000u, 0x80000000u, 0xffffffffu}) {
      PacketMeta meta;
      meta.random = r;
      random.push_back(nft_test::VerdictOf(*program, Hook::kInput,
                                           BuildFrame(FrameSpec{.dport = 2}), meta, &state));
    }
    EXPECT_EQ(random, (std::vector<Verdict>{Verdict::kDrop, Verdict::kAccept, Verdict::kDrop,
                                            Verdict::kAccept}))
        << BackendName(backend);
  }
}

TEST(NftNumgen, ACommandMayNotJumpToAChainAddedAfterIt) {
  ExpectError("add table ip t\nadd chain ip t a\n"
              "add rule ip t a numgen random mod 1 vmap { 0 : goto b }\nadd chain ip t b\n",
              3, 44, "jump to chain 'b' before it is added");
  ExpectError("add table ip t\nadd chain ip t a\nadd rule ip t a jump b\nadd chain ip t b\n", 3, 17,
              "jump to chain 'b' before it is added");
  // In a table block nft adds the chains first.
  EXPECT_TRUE(Parse("table ip t {\n chain a {\n  jump b\n }\n chain b {\n }\n}\n")->rs.ok());
}

}  // namespace
}  // namespace rulejit
