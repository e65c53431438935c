// nft's jhash against the kernel (nft_jhash_eval): a ruleset whose
// verdicts depend on jhash of 4, 8 and 20 key bytes (one field, a
// concatenation padded to words, more than the 12 bytes of one round) with
// explicit seeds and offsets, through a set of numbers, a verdict map and
// a mark tested later; frames differing in the hashed fields, sent through
// a forwarding namespace, and every rulejit backend given the same frames.
// Without `seed` the kernel draws one (an input in rulejit,
// PacketMeta::jhash_seed), and symhash is keyed with a secret drawn at
// boot: neither can be compared with a kernel, so only explicit seeds are.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

// The kernel's and each backend's verdicts (true = accepted) for `frames`
// through the forward hook of `nft`; each list must be the kernel's, and
// the kernel's must hold both verdicts.
void ExpectEveryBackendAgrees(const std::string& nft,
                              const std::vector<std::vector<uint8_t>>& frames) {
  if (absl::Status ok = OracleAvailable(OracleSyntax::kNft); !ok.ok()) GTEST_SKIP() << ok;
  absl::StatusOr<std::vector<std::vector<uint8_t>>> sent = PrepareOracleFrames(frames);
  ASSERT_TRUE(sent.ok()) << sent.status();
  absl::StatusOr<std::vector<bool>> kernel =
      KernelVerdicts(OracleRuleset{.syntax = OracleSyntax::kNft, .text = nft}, *sent);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_NE(std::count(kernel->begin(), kernel->end(), true), 0);
  EXPECT_NE(std::count(kernel->begin(), kernel->end(), false), 0);
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    absl::StatusOr<Ruleset> rs = ParseRuleset(nft, "hash.nft");
    ASSERT_TRUE(rs.ok()) << rs.status();
    auto program = Program::Compile(*std::move(rs), CompileOptions{.backend = backend});
    ASSERT_TRUE(program.ok()) << program.status();
    std::vector<bool> ours;
    for (const std::vector<uint8_t>& f : *sent) {
      RunState state;
      Result r = (*program)->Classify(Hook::kForward, f.data(), static_cast<uint32_t>(f.size()),
                                      PacketMeta{}, &state);
      ours.push_back(r.verdict == Verdict::kAccept);
    }
    EXPECT_EQ(ours, *kernel) << BackendName(backend) << "\n" << nft;
  }
}

std::vector<uint8_t> Frame(const std::string& src, uint8_t proto, uint16_t sport,
                           uint16_t dport) {
  return BuildFrame(FrameSpec{.src = src, .dst = "10.0.1.1", .proto = proto, .sport = sport,
                              .dport = dport, .payload = std::vector<uint8_t>(20, 0)});
}

// 4 bytes: `jhash ip saddr` into an anonymous set of numbers.
TEST(KernelNftHash, OneFieldIntoASet) {
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 1; i <= 24; ++i) frames.push_back(Frame(absl::StrCat("10.0.0.", i), 17, 5000, 53));
  ExpectEveryBackendAgrees(
      "table ip t {\n chain f {\n  type filter hook forward priority 0; policy accept;\n"
      "  jhash ip saddr mod 10 seed 0x1 { 1, 3, 4, 8 } drop\n }\n}\n",
      frames);
}

// 8 bytes: a concatenation with a 2-byte port padded to a word, a verdict
// map, a seed and an offset.
TEST(KernelNftHash, ConcatenationIntoAVerdictMap) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t sport = 1000; sport < 1024; ++sport) frames.push_back(Frame("10.0.0.7", 17, sport, 53));
  ExpectEveryBackendAgrees(
      "table ip t {\n chain f {\n  type filter hook forward priority 0; policy accept;\n"
      "  jhash ip saddr . udp sport mod 3 seed 0xdeadbeef offset 100 vmap "
      "{ 100 : accept, 101 : drop, 102 : accept }\n }\n}\n",
      frames);
}

// 20 bytes (more than one 12-byte round), into the mark that a later rule
// tests; TCP and UDP frames both.
TEST(KernelNftHash, TwentyBytesIntoTheMark) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < 12; ++i) frames.push_back(Frame("10.0.0.9", 17, 3000 + i, 4000 - i));
  for (uint16_t i = 0; i < 12; ++i) frames.push_back(Frame("10.0.0.9", 6, 3000 + i, 4000 - i));
  ExpectEveryBackendAgrees(
      "table inet t {\n chain f {\n  type filter hook forward priority 0; policy accept;\n"
      "  meta l4proto { tcp, udp } meta mark set jhash ip saddr . ip daddr . th sport . "
      "th dport . meta l4proto mod 4 seed 0xa5a5a5a5 offset 1\n"
      "  meta mark { 1, 4 } drop\n }\n}\n",
      frames);
}

}  // namespace
}  // namespace rulejit::testing
