// `diff` at the output hook on pairs of rulesets that differ only in a
// socket owner test (nft meta skuid / skgid, iptables' -m owner), against
// the kernel: the diff must be exact, and every witness it reports is sent
// by fw itself from a raw socket whose file has the witness's fsuid and
// fsgid (kernel_oracle.h, `send_from_fw`, `fw_socket_uid`); the kernel's
// fate with each ruleset loaded (sent out = accept) must be the diff's
// verdicts. The rules confine the differences to one UDP flow fw can send
// (198.18.0.5 to 192.0.2.10, port 53), so every witness is one.
//
// Needs root, `ip netns`, nft and iptables-legacy-restore; skips with the
// reason otherwise.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

namespace an = rulejit::analysis;

struct Side {
  OracleSyntax syntax;
  std::string text;
};

ir::Ruleset Parse(const Side& s) {
  ir::Diagnostics diags;
  const int file = diags.AddFile("t", s.text);
  absl::StatusOr<ir::Ruleset> rs = s.syntax == OracleSyntax::kNft
                                       ? frontends::ParseNft(s.text, file, diags)
                                       : frontends::ParseIptablesSave(s.text, file, diags);
  EXPECT_TRUE(rs.ok()) << diags.Format();
  return rs.ok() ? *std::move(rs) : ir::Ruleset{};
}

// The one rule of each syntax's output chain, around the owner `test`.
constexpr char kNftHead[] =
    "table ip t {\n  chain o {\n    type filter hook output priority 0; policy accept;\n"
    "    ip saddr 198.18.0.5 ip daddr 192.0.2.10 udp dport 53 ";
constexpr char kIptHead[] =
    "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
    "-A OUTPUT -s 198.18.0.5/32 -d 192.0.2.10/32 -p udp -m udp --dport 53 -m owner ";

Side NftOutput(const std::string& test) {
  return {OracleSyntax::kNft, absl::StrCat(kNftHead, test, " drop\n  }\n}\n")};
}
Side IptOutput(const std::string& test) {
  return {OracleSyntax::kIptablesSave, absl::StrCat(kIptHead, test, " -j DROP\nCOMMIT\n")};
}

struct OwnerCase {
  std::string name;
  Side old_side, new_side;
  size_t regions;
};

std::vector<OwnerCase> Cases() {
  return {
      {"uid", NftOutput("meta skuid 1000"), IptOutput("--uid-owner 1001"), 2},
      {"root_or_not", NftOutput("meta skuid != 0"), IptOutput("--uid-owner 1-2000"), 1},
      {"gid_range", IptOutput("--gid-owner 100-200"), NftOutput("meta skgid 100-199"), 1},
  };
}

std::vector<uint8_t> WitnessFrame(const an::Point& w, uint16_t id) {
  auto at = [&w](an::Dim d) { return w[static_cast<int>(d)]; };
  return BuildFrame(FrameSpec{.src = an::AddressText(at(an::Dim::kSaddr), false),
                              .dst = an::AddressText(at(an::Dim::kDaddr), false),
                              .proto = 17,
                              .sport = static_cast<uint16_t>(at(an::Dim::kSport)),
                              .dport = static_cast<uint16_t>(at(an::Dim::kDport)),
                              .payload = {0, 0, 0, 0},
                              .ip_id = id});
}

TEST(DiffOwnerKernel, WitnessesSentByTheirOwnerGetTheDiffsVerdicts) {
  for (OracleSyntax syntax : {OracleSyntax::kNft, OracleSyntax::kIptablesSave}) {
    if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  }
  for (const OwnerCase& c : Cases()) {
    const an::DiffResult d =
        an::DiffRulesets(Parse(c.old_side), Parse(c.new_side), {.hook = ir::Hook::kOutput});
    ASSERT_TRUE(d.exact()) << c.name;
    ASSERT_EQ(d.regions.size(), c.regions) << c.name;
    for (const an::DiffRegion& r : d.regions) {
      const std::string what = absl::StrCat(c.name, ": ", an::DescribeCube(r.cube, d.space),
                                            " witness ", an::DescribePoint(r.witness, d.space));
      auto at = [&r](an::Dim dim) { return r.witness[static_cast<int>(dim)]; };
      // Only packets with a socket can differ here, and fw sends from one.
      ASSERT_EQ(at(an::Dim::kSocket), 1u) << what;
      ASSERT_EQ(at(an::Dim::kProto), 17u) << what;
      const std::vector<std::vector<uint8_t>> frames = {WitnessFrame(r.witness, 0x321)};
      for (bool old_side : {true, false}) {
        const Side& side = old_side ? c.old_side : c.new_side;
        absl::StatusOr<std::vector<PathOutcome>> kernel = KernelPathOutcomes(
            {.syntax = side.syntax, .text = side.text}, frames,
            {.send_from_fw = true,
             .fw_socket_uid = static_cast<uint32_t>(at(an::Dim::kSkUid)),
             .fw_socket_gid = static_cast<uint32_t>(at(an::Dim::kSkGid))});
        ASSERT_TRUE(kernel.ok()) << what << ": " << kernel.status();
        const ir::VerdictCode want = old_side ? r.old_side.verdict : r.new_side.verdict;
        EXPECT_EQ((*kernel)[0].forwarded, want == ir::VerdictCode::kAccept)
            << what << (old_side ? " OLD" : " NEW");
      }
    }
  }
}

}  // namespace
}  // namespace rulejit::testing
