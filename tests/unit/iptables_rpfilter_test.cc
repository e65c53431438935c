// -m rpfilter lowered onto fib and boolean maps (frontends/iptables/
// match_rpfilter.cc): the shape of each option's lowering and the checks
// the kernel makes at load time. Its meaning is compared with the kernel in
// tests/kernel/rpfilter_kernel_test.cc.
#include <string>

#include "emit/ipt_print.h"
#include "gtest/gtest.h"
#include "ir/reader.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

std::string Rpf(const std::string& rule, IpVersion v = IpVersion::kIpv4,
                const std::string& table = "raw", const std::string& chain = "PREROUTING") {
  return Lower(rule, v, table, chain);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(IptablesRpfilter, StrictIpv4AsksTheInputDeviceAndTheSourcesType) {
  const std::string out = Rpf("-m rpfilter -j DROP");
  ASSERT_EQ(out.find("ERROR"), std::string::npos) << out;
  EXPECT_NE(out.find("fib saddr . iif oif present => reg 1"), std::string::npos) << out;
  EXPECT_NE(out.find("fib saddr type => reg 2"), std::string::npos) << out;
  EXPECT_NE(out.find("meta load pkttype"), std::string::npos) << out;
  EXPECT_NE(out.find("meta load iif"), std::string::npos) << out;
  EXPECT_NE(out.find("cmp eq reg 1 0x00000001"), std::string::npos) << out;
  EXPECT_EQ(Count(out, "[ fib "), 2) << out;
}

TEST(IptablesRpfilter, OptionsChangeTheLookup) {
  const std::string loose = Rpf("-m rpfilter --loose --validmark -j DROP");
  EXPECT_NE(loose.find("fib saddr . mark oif present => reg 1"), std::string::npos) << loose;
  const std::string local = Rpf("-m rpfilter --accept-local -j DROP");
  EXPECT_NE(local.find("fib saddr . iif type => reg 2"), std::string::npos) << local;
  EXPECT_EQ(Count(local, "[ fib "), 3) << local;
  const std::string loose_local = Rpf("-m rpfilter --loose --accept-local -j DROP");
  EXPECT_EQ(Count(loose_local, "fib saddr type => reg 2"), 2) << loose_local;
  const std::string invert = Rpf("-m rpfilter --invert -j DROP");
  EXPECT_NE(invert.find("cmp neq reg 1 0x00000001"), std::string::npos) << invert;
}

TEST(IptablesRpfilter, Ipv6HasNoTypeTestWithoutAcceptLocal) {
  const std::string out = Rpf("-m rpfilter -j DROP", IpVersion::kIpv6);
  ASSERT_EQ(out.find("ERROR"), std::string::npos) << out;
  EXPECT_NE(out.find("fib saddr . iif oif present => reg 1"), std::string::npos) << out;
  EXPECT_EQ(Count(out, "[ fib "), 1) << out;
  EXPECT_NE(out.find("payload load 16b @ network header + 8 => reg 2"), std::string::npos) << out;
  const std::string local = Rpf("-m rpfilter --loose --accept-local -j DROP", IpVersion::kIpv6);
  EXPECT_NE(local.find("fib saddr oif present"), std::string::npos) << local;
  EXPECT_NE(local.find("fib saddr type => reg 2"), std::string::npos) << local;
}

TEST(IptablesRpfilter, ValidInRawAndManglePreroutingOnly) {
  EXPECT_EQ(Rpf("-m rpfilter -j DROP", IpVersion::kIpv4, "mangle").find("ERROR"),
            std::string::npos);
  EXPECT_TRUE(Refused(Rpf("-m rpfilter -j DROP", IpVersion::kIpv4, "filter", "INPUT"),
                      "not valid in table 'filter'"));
  EXPECT_TRUE(Refused(Rpf("-m rpfilter -j DROP", IpVersion::kIpv4, "raw", "OUTPUT"),
                      "not valid in chain 'OUTPUT'"));
  // A user chain reached from OUTPUT: refused at COMMIT.
  Parsed p = Parse("*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:rpf - [0:0]\n"
                   "-A OUTPUT -j rpf\n-A rpf -m rpfilter -j DROP\nCOMMIT\n");
  EXPECT_FALSE(p.rs.ok());
  EXPECT_NE(p.diags.find("reached from the output hook"), std::string::npos) << p.diags;
  Parsed ok = Parse("*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:rpf - [0:0]\n"
                    "-A PREROUTING -j rpf\n-A rpf -m rpfilter --invert -j DROP\nCOMMIT\n");
  EXPECT_TRUE(ok.rs.ok()) << ok.diags;
}

TEST(IptablesRpfilter, OptionsTakeNoNegation) {
  EXPECT_NE(Rpf("-m rpfilter ! --loose -j DROP").find("ERROR"), std::string::npos);
}

// Every expression of the lowering reads back from its printed form.
TEST(IptablesRpfilter, ExpressionsReadBack) {
  for (IpVersion v : {IpVersion::kIpv4, IpVersion::kIpv6}) {
    Parsed p = Parse(Wrap("-m rpfilter --validmark --accept-local -j DROP", "raw", "PREROUTING"),
                     v);
    ASSERT_TRUE(p.rs.ok()) << p.diags;
    for (const ir::Node& n : p.rs->tables.at(0).chains.at(0).rules.at(0).exprs) {
      const std::string printed = ir::PrintExpr(n.expr);
      absl::StatusOr<ir::Expr> back = ir::ParseExprLine(printed);
      ASSERT_TRUE(back.ok()) << printed << ": " << back.status();
      EXPECT_EQ(ir::PrintExpr(*back), printed);
    }
  }
}

// `--emit iptables` prints the match back as iptables-save wrote it.
TEST(IptablesRpfilter, PrintedBack) {
  for (const char* options : {"", " --loose", " --validmark --invert", " --accept-local",
                              " --loose --validmark --accept-local --invert"}) {
    for (bool ipv6 : {false, true}) {
      const std::string rule = absl::StrCat("-A PREROUTING -m rpfilter", options, " -j DROP");
      Parsed p = Parse(absl::StrCat("*raw\n:PREROUTING ACCEPT [0:0]\n", rule, "\nCOMMIT\n"),
                       ipv6 ? IpVersion::kIpv6 : IpVersion::kIpv4);
      ASSERT_TRUE(p.rs.ok()) << p.diags;
      absl::StatusOr<std::string> out = emit::PrintIptables(*p.rs);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_NE(out->find(rule + "\n"), std::string::npos) << *out;
    }
  }
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
