// Forms that OpenWrt fw4 rulesets write and the per-rule bytecode corpus
// lacks: snat/dnat without `to` (`dnat 192.168.26.100:22`, `dnat ::99`) and
// `type route` chains. The expected bytecode is what nft 1.0.6 sends
// (`nft --debug=netlink -f` in a namespace); the refused cases are what the
// kernel refuses (route chains hook output only: EOPNOTSUPP elsewhere).
#include <memory>
#include <string>

#include "frontends/nft/nft.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/printer.h"

namespace rulejit {
namespace {

using ::testing::HasSubstr;

// The printed expressions of the one rule of `rule` in a chain of `family`
// hooked at `hook` with `type`, or "ERROR: " and the diagnostics.
std::string Lower(const std::string& family, const std::string& type, const std::string& hook,
                  const std::string& rule) {
  const std::string text = "table " + family + " t {\n chain c {\n  type " + type + " hook " +
                           hook + " priority 0;\n  " + rule + "\n }\n}\n";
  ir::Diagnostics diags;
  const int file = diags.AddFile("t.nft", text);
  absl::StatusOr<ir::Ruleset> rs = frontends::ParseNft(text, file, diags);
  if (!rs.ok()) return "ERROR: " + diags.Format();
  const ir::Table& t = rs->tables.at(0);
  std::string out;
  for (const ir::Rule& r : t.chains.at(0).rules) {
    for (const ir::Node& n : r.exprs) out += "  " + ir::PrintExpr(n.expr) + "\n";
  }
  return out;
}

TEST(NftFw4Forms, SnatAndDnatWithoutTo) {
  EXPECT_EQ(Lower("ip", "nat", "postrouting", "ip saddr 1.1.1.1 snat 10.1.1.1-10.1.1.5"),
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x01010101 ]\n"
            "  [ immediate reg 1 0x0101010a ]\n"
            "  [ immediate reg 2 0x0501010a ]\n"
            "  [ nat snat ip addr_min reg 1 addr_max reg 2 ]\n");
  EXPECT_EQ(Lower("ip", "nat", "prerouting", "tcp dport 22 dnat 1.2.3.4:22 comment \"x\""),
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00001600 ]\n"
            "  [ immediate reg 1 0x04030201 ]\n"
            "  [ immediate reg 2 0x00001600 ]\n"
            "  [ nat dnat ip addr_min reg 1 proto_min reg 2 flags 0x2 ]\n");
}

TEST(NftFw4Forms, DnatToAnIpv6AddressStartingWithTwoColons) {
  EXPECT_EQ(Lower("inet", "nat", "prerouting", "ip6 daddr & ::ffff == ::9 dnat ::99"),
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0000000a ]\n"
            "  [ payload load 16b @ network header + 24 => reg 1 ]\n"
            "  [ bitwise reg 1 = ( reg 1 & 0x00000000 0x00000000 0x00000000 0xffff0000 ) ^ "
            "0x00000000 0x00000000 0x00000000 0x00000000 ]\n"
            "  [ cmp eq reg 1 0x00000000 0x00000000 0x00000000 0x09000000 ]\n"
            "  [ immediate reg 1 0x00000000 0x00000000 0x00000000 0x99000000 ]\n"
            "  [ nat dnat ip6 addr_min reg 1 ]\n");
}

TEST(NftFw4Forms, RouteChainsHookOutputOnly) {
  EXPECT_EQ(Lower("inet", "route", "output", "meta mark set 0x10"),
            "  [ immediate reg 1 0x00000010 ]\n"
            "  [ meta set mark with reg 1 ]\n");
  EXPECT_THAT(Lower("inet", "route", "prerouting", "accept"),
              HasSubstr("t.nft:3:19: error: route chains hook output of ip, ip6 or inet tables"));
  EXPECT_THAT(Lower("ip", "route", "input", "accept"), HasSubstr("route chains hook output"));
}

}  // namespace
}  // namespace rulejit
