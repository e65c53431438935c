// iptables' CT --helper: a ct helper object made in the table and
// referenced, as nft's `ct helper set` does, and the kernel's refusals
// (checked with iptables-legacy-restore on Linux 6.18: amanda exists for
// UDP only; the rule needs its protocol).
#include <string>

#include "absl/strings/str_cat.h"
#include "api/internal.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"

namespace rulejit {
namespace {

absl::StatusOr<Ruleset> Raw(const std::string& rules) {
  return ParseRuleset(absl::StrCat("*raw\n:PREROUTING ACCEPT [0:0]\n", rules, "COMMIT\n"), "ct.ipt");
}

TEST(IptablesCt, HelperIsAnObjectReference) {
  absl::StatusOr<Ruleset> rs = Raw(
      "-A PREROUTING -p udp --dport 10080 -j CT --helper amanda\n"
      "-A PREROUTING -p udp --dport 10081 -j CT --helper amanda\n"
      "-A PREROUTING -p tcp --dport 21 -j CT --helper ftp\n");
  ASSERT_TRUE(rs.ok()) << rs.status();
  const ir::Table& raw = IrOf(*rs).tables.at(0);
  ASSERT_EQ(raw.objects.size(), 2u);  // one per helper and protocol
  EXPECT_NE(raw.FindObject(ir::kObjCtHelper, "amanda/17"), nullptr);
  const ir::Rule& rule = raw.chains.at(0).rules.at(1);
  const auto* ref = std::get_if<ir::Objref>(&rule.exprs.back().expr);
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->name, "amanda/17");
}

TEST(IptablesCt, RefusedWhereTheKernelRefuses) {
  EXPECT_FALSE(Raw("-A PREROUTING -p tcp -j CT --helper amanda\n").ok());
  EXPECT_FALSE(Raw("-A PREROUTING -j CT --helper ftp\n").ok());
  EXPECT_FALSE(Raw("-A PREROUTING -p udp -j CT --helper nosuch\n").ok());
  EXPECT_FALSE(ParseRuleset("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp -j CT --helper ftp\nCOMMIT\n",
                            "f.ipt")
                   .ok());
}

}  // namespace
}  // namespace rulejit
