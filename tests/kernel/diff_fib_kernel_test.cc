// `diff --host` at the input hook on a pair that differs only in `fib
// daddr type local` against the addresses it means, against the kernel:
// with fw's own host model (read from the namespaces), the diff must be
// exact, and each witness sent from the client side to fw must be
// delivered (accept) or not (drop) as the diff says for each ruleset.
//
// Needs root, `ip netns` and nft; skips with the reason otherwise.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "rulejit/host.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

namespace an = rulejit::analysis;

ir::Ruleset Parse(const std::string& text) {
  ir::Diagnostics diags;
  const int file = diags.AddFile("t.nft", text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags);
  EXPECT_TRUE(rs.ok()) << diags.Format();
  return rs.ok() ? *std::move(rs) : ir::Ruleset{};
}

std::string Input(const std::string& test) {
  return absl::StrCat("table ip t {\n  chain i {\n    type filter hook input priority 0; "
                      "policy accept;\n    ip saddr 10.1.0.5 ip daddr 198.18.0.0/24 udp sport "
                      "1000 udp dport 9 ",
                      test, " drop\n  }\n}\n");
}

TEST(DiffFibKernel, TypeLocalWitnessesAreDeliveredAsTheDiffSays) {
  if (absl::Status s = OracleAvailable(OracleSyntax::kNft); !s.ok()) GTEST_SKIP() << s.message();
  const std::string old_text = Input("fib daddr type local"), new_text = Input("ip daddr 198.18.0.1");
  std::string host_json;
  const std::vector<std::vector<uint8_t>> probe = {BuildFrame(FrameSpec{
      .src = "10.1.0.5", .dst = "10.20.0.1", .proto = 17, .sport = 1, .dport = 9,
      .payload = {0, 0, 0, 0}})};
  ASSERT_TRUE(KernelPathOutcomes({.syntax = OracleSyntax::kNft, .text = old_text}, probe,
                                 {.fw_host_json = &host_json})
                  .ok());
  absl::StatusOr<HostModel> host = ParseHostJson(host_json);
  ASSERT_TRUE(host.ok()) << host.status();
  const an::DiffResult d = an::DiffRulesets(Parse(old_text), Parse(new_text),
                                            {.hook = ir::Hook::kInput, .host = &*host});
  ASSERT_TRUE(d.exact());
  ASSERT_FALSE(d.regions.empty());
  std::vector<std::vector<uint8_t>> frames;
  for (const an::DiffRegion& r : d.regions) {
    auto at = [&r](an::Dim dim) { return r.witness[static_cast<int>(dim)]; };
    frames.push_back(BuildFrame(FrameSpec{.src = an::AddressText(at(an::Dim::kSaddr), false),
                                          .dst = an::AddressText(at(an::Dim::kDaddr), false),
                                          .proto = 17,
                                          .sport = static_cast<uint16_t>(at(an::Dim::kSport)),
                                          .dport = static_cast<uint16_t>(at(an::Dim::kDport)),
                                          .payload = {0, 0, 0, 0}}));
  }
  for (bool old_side : {true, false}) {
    absl::StatusOr<std::vector<PathOutcome>> kernel = KernelPathOutcomes(
        {.syntax = OracleSyntax::kNft, .text = old_side ? old_text : new_text}, frames);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    for (size_t i = 0; i < frames.size(); ++i) {
      const an::DiffRegion& r = d.regions[i];
      const ir::VerdictCode want = old_side ? r.old_side.verdict : r.new_side.verdict;
      EXPECT_EQ((*kernel)[i].delivered, want == ir::VerdictCode::kAccept)
          << an::DescribeCube(r.cube, d.space) << (old_side ? " OLD" : " NEW");
    }
  }
}

}  // namespace
}  // namespace rulejit::testing
