// `diff` at one hook on pairs of rulesets that differ only in a mark write
// that a later rule reads (meta mark set, MARK, CONNMARK --save-mark with a
// connmark test, ct mark set), against the kernel: the diff (forward hook,
// fwin to fwout) must be exact, and every witness it reports is sent
// through fw (kernel_oracle.h) with each ruleset loaded; the kernel's
// verdicts must be the diff's sides. The kernel's arriving packets carry
// mark 0 and, at forward, a new conntrack entry: the rules confine the
// differences to such packets (ct state new, fixed addresses), and a
// witness outside them fails the test.
//
// Needs root, `ip netns`, nft and iptables-legacy-restore; skips with the
// reason otherwise. Witnesses are UDP: the harness writes its index into
// the payload, which a model TCP packet (20 bytes of header) has none of.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/diff.h"
#include "frontends/iptables/iptables.h"
#include "frontends/nft/nft.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/kernel/kernel_oracle.h"

namespace rulejit::testing {
namespace {

namespace an = rulejit::analysis;

struct MarkCase {
  std::string name;
  OracleSyntax syntax;
  std::string old_text, new_text;
};

absl::StatusOr<ir::Ruleset> Parse(const MarkCase& c, const std::string& text) {
  ir::Diagnostics diags;
  const int file = diags.AddFile(c.name, text);
  return c.syntax == OracleSyntax::kNft ? frontends::ParseNft(text, file, diags)
                                        : frontends::ParseIptablesSave(text, file, diags);
}

// The packets the harness can send: 192.0.2.1 to 198.51.100.1, new.
constexpr char kNftMatch[] = "ip saddr 192.0.2.1 ip daddr 198.51.100.1 ct state new";
constexpr char kIptMatch[] = "-s 192.0.2.1/32 -d 198.51.100.1/32 -m conntrack --ctstate NEW";

std::string NftForward(const std::string& rules) {
  return absl::StrCat("table ip t {\n  chain fw {\n"
                      "    type filter hook forward priority 0; policy accept;\n",
                      rules, "  }\n}\n");
}

std::string IptForward(const std::string& rules) {
  return absl::StrCat("*filter\n:FORWARD ACCEPT [0:0]\n", rules, "COMMIT\n");
}

std::vector<MarkCase> Cases() {
  std::vector<MarkCase> out;
  auto nft_set = [](const char* v) {
    return NftForward(absl::StrCat("    ", kNftMatch, " udp dport 1000 meta mark set ", v,
                                   "\n    meta mark 7 drop\n"));
  };
  out.push_back({"meta mark set", OracleSyntax::kNft, nft_set("7"), nft_set("8")});
  auto nft_or = [](const char* v) {
    return NftForward(absl::StrCat("    ", kNftMatch, " udp dport 80 meta mark set mark or ", v,
                                   "\n    meta mark and 0x4000 == 0x4000 drop\n"));
  };
  out.push_back({"meta mark set mark or", OracleSyntax::kNft, nft_or("0x4000"), nft_or("0x2000")});
  auto nft_ct = [](const char* v) {
    return NftForward(absl::StrCat("    ", kNftMatch, " udp dport 53 ct mark set ", v,
                                   "\n    ct mark 5 drop\n"));
  };
  out.push_back({"ct mark set", OracleSyntax::kNft, nft_ct("5"), nft_ct("6")});
  auto ipt = [](const char* v) {
    return IptForward(absl::StrCat("-A FORWARD ", kIptMatch, " -p udp --dport 53 -j MARK --set-xmark ",
                                   v, "/0xffffffff\n"
                                   "-A FORWARD -j CONNMARK --save-mark --nfmask 0xffffffff "
                                   "--ctmask 0xffffffff\n"
                                   "-A FORWARD -m connmark --mark 0x2 -j DROP\n"));
  };
  out.push_back({"MARK and CONNMARK --save-mark", OracleSyntax::kIptablesSave, ipt("0x2"),
                 ipt("0x3")});
  return out;
}

TEST(DiffMarksKernel, WitnessesAreTheKernelsVerdicts) {
  for (const MarkCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    absl::Status available = OracleAvailable(c.syntax);
    if (!available.ok()) GTEST_SKIP() << available.message();
    absl::StatusOr<ir::Ruleset> old_rs = Parse(c, c.old_text), new_rs = Parse(c, c.new_text);
    ASSERT_TRUE(old_rs.ok() && new_rs.ok());
    const an::SpaceOptions options{.hook = ir::Hook::kForward, .iif = kFwInputIf,
                                   .oif = kFwOutputIf};
    an::DiffResult d = an::DiffRulesets(*old_rs, *new_rs, options);
    ASSERT_TRUE(d.exact());
    ASSERT_FALSE(d.regions.empty());
    std::vector<std::vector<uint8_t>> frames;
    std::vector<bool> old_accepts, new_accepts;
    for (const an::DiffRegion& r : d.regions) {
      // What the kernel's arriving packets are (mark 0, a new entry).
      const auto mark = static_cast<uint32_t>(r.witness[static_cast<int>(an::Dim::kMark)]);
      const auto state = static_cast<uint32_t>(r.witness[static_cast<int>(an::Dim::kCtState)]);
      ASSERT_EQ(mark, 0u) << an::DescribePoint(r.witness, d.space);
      ASSERT_EQ(an::kCtStateDomain[state], 1u << 3) << an::DescribePoint(r.witness, d.space);
      frames.push_back(an::BuildPathWitness(r.witness, d.space, ir::Hook::kForward).frame);
      old_accepts.push_back(r.old_side.verdict == ir::VerdictCode::kAccept);
      new_accepts.push_back(r.new_side.verdict == ir::VerdictCode::kAccept);
    }
    absl::StatusOr<std::vector<bool>> k_old =
        KernelVerdicts({.syntax = c.syntax, .text = c.old_text}, frames);
    absl::StatusOr<std::vector<bool>> k_new =
        KernelVerdicts({.syntax = c.syntax, .text = c.new_text}, frames);
    ASSERT_TRUE(k_old.ok()) << k_old.status();
    ASSERT_TRUE(k_new.ok()) << k_new.status();
    EXPECT_EQ(*k_old, old_accepts);
    EXPECT_EQ(*k_new, new_accepts);
  }
}

}  // namespace
}  // namespace rulejit::testing
