// nft expressions whose answer depends on earlier packets, against the
// kernel (a fresh forwarding namespace, frames sent in order): `numgen inc`
// counts per expression, a named quota is one budget for every rule that
// names it. rulejit's interpreter, given one RunState for the sequence,
// must give each frame the kernel's verdict.
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

// The kernel's and rulejit's verdicts (true = accepted) for `frames`, sent
// in order through the forward hook of `nft`.
void ExpectSameSequence(const std::string& nft, const std::vector<std::vector<uint8_t>>& frames) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) GTEST_SKIP() << ok;
  absl::StatusOr<std::vector<std::vector<uint8_t>>> sent = PrepareOracleFrames(frames);
  ASSERT_TRUE(sent.ok()) << sent.status();
  absl::StatusOr<std::vector<bool>> kernel =
      KernelVerdicts(OracleRuleset{.syntax = OracleSyntax::kNft, .text = nft}, *sent);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  absl::StatusOr<Ruleset> rs = ParseRuleset(nft, "state.nft");
  ASSERT_TRUE(rs.ok()) << rs.status();
  auto program = Program::Compile(*std::move(rs), CompileOptions{.backend = Backend::kAuto});
  ASSERT_TRUE(program.ok()) << program.status();
  RunState state;
  std::vector<bool> ours;
  for (const std::vector<uint8_t>& f : *sent) {
    PacketMeta meta;
    Result r = (*program)->Classify(Hook::kForward, f.data(), static_cast<uint32_t>(f.size()),
                                    meta, &state);
    ours.push_back(r.verdict == Verdict::kAccept);
  }
  EXPECT_EQ(ours, *kernel) << nft;
  // Each sequence is chosen to show both verdicts.
  EXPECT_NE(std::count(kernel->begin(), kernel->end(), true), 0);
  EXPECT_NE(std::count(kernel->begin(), kernel->end(), false), 0);
}

std::vector<uint8_t> Udp(uint16_t sport, uint16_t dport) {
  return BuildFrame(FrameSpec{.src = "10.0.0.1", .dst = "10.0.1.1", .proto = 17, .sport = sport,
                              .dport = dport, .payload = std::vector<uint8_t>(20, 0)});
}

TEST(KernelNftState, NumgenIncCountsPerExpression) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < 7; ++i) frames.push_back(Udp(1000 + i, 53));
  ExpectSameSequence(
      "table inet t {\n chain f {\n  type filter hook forward priority 0; policy accept;\n"
      "  numgen inc mod 3 vmap { 0 : accept, 1 : drop, 2 : accept }\n }\n}\n",
      frames);
}

TEST(KernelNftState, NamedQuotaIsSharedByTheRulesNamingIt) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < 8; ++i) frames.push_back(Udp(2000 + i, i % 2 == 0 ? 1 : 2));
  ExpectSameSequence(
      "table inet t {\n quota q {\n  until 300 bytes\n }\n"
      " chain f {\n  type filter hook forward priority 0; policy drop;\n"
      "  udp dport 1 quota name \"q\" accept\n  udp dport 2 quota name \"q\" accept\n }\n}\n",
      frames);
}

}  // namespace
}  // namespace rulejit::testing
