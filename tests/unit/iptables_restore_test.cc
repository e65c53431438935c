// What iptables-restore takes beyond a plain dump: the nat and security
// tables, nat targets, the rule and chain commands (-I, -R, -D, -F, -X, -Z,
// -P), service names and line ends: chains at the kernel's hooks and priorities, the IR of each
// target (iptables_nat_txlate_test.cc checks it against iptables-translate
// on iptables' own files), and the errors iptables-legacy-restore --test
// gives for the same input (each was checked with it).
#include <string>
#include <variant>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "ir/ir.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

TEST(IptablesNat, BuiltinChainsAreNatChainsAtTheKernelsPriorities) {
  Parsed p = Parse(
      "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
      ":POSTROUTING ACCEPT [0:0]\nCOMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  const ir::Table& nat = p.rs->tables.at(0);
  EXPECT_EQ(nat.name, "nat");
  ASSERT_EQ(nat.chains.size(), 4u);
  const struct {
    ir::Hook hook;
    int32_t priority;
  } want[] = {{ir::Hook::kPrerouting, -100},
              {ir::Hook::kInput, 100},
              {ir::Hook::kOutput, -100},
              {ir::Hook::kPostrouting, 100}};
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(nat.chains[i].base) << i;
    EXPECT_EQ(nat.chains[i].base->type, "nat");
    EXPECT_EQ(nat.chains[i].base->hook, want[i].hook);
    EXPECT_EQ(nat.chains[i].base->priority, want[i].priority);
  }
}

TEST(IptablesNat, SecurityTableChainsAtPriority50) {
  Parsed p = Parse("*security\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n"
                   ":OUTPUT ACCEPT [0:0]\n-A FORWARD -p tcp --dport 22 -j ACCEPT\nCOMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  for (const ir::Chain& chain : p.rs->tables.at(0).chains) {
    ASSERT_TRUE(chain.base);
    EXPECT_EQ(chain.base->type, "filter");
    EXPECT_EQ(chain.base->priority, 50);
  }
  EXPECT_EQ(p.rs->tables[0].chains[1].base->policy, ir::VerdictCode::kDrop);
  EXPECT_EQ(FirstError("*security\n-A PREROUTING -j ACCEPT\nCOMMIT\n"),
            "2:4: unknown chain 'PREROUTING'");
}

TEST(IptablesNat, TargetsLowerToNatExpressions) {
  EXPECT_EQ(Lower("-p tcp -j DNAT --to-destination 10.0.0.1:8080", IpVersion::kIpv4, "nat",
                  "PREROUTING"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000006 ]\n"
            "[ immediate reg 1 0x0100000a ]\n[ immediate reg 2 0x0000901f ]\n"
            "[ nat dnat ip addr_min reg 1 proto_min reg 2 flags 0x2 ]");
  EXPECT_EQ(Lower("-o eth0 -j MASQUERADE", IpVersion::kIpv4, "nat", "POSTROUTING"),
            "[ meta load oifname => reg 1 ]\n[ cmp eq reg 1 0x30687465 0x00000000 ]\n"
            "[ masq ]");
  EXPECT_EQ(Lower("-j SNAT --to-source 1.2.3.4-1.2.3.6 --persistent", IpVersion::kIpv4,
                  "nat", "POSTROUTING"),
            "[ immediate reg 1 0x04030201 ]\n[ immediate reg 2 0x06030201 ]\n"
            "[ nat snat ip addr_min reg 1 addr_max reg 2 flags 0x8 ]");
  EXPECT_EQ(Lower("-p udp -j REDIRECT --to-ports 53", IpVersion::kIpv4, "nat", "OUTPUT"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000011 ]\n"
            "[ immediate reg 1 0x00003500 ]\n[ redir proto_min reg 1 flags 0x2 ]");
  EXPECT_EQ(Lower("-j DNAT --to-destination [2001:db8::1]", IpVersion::kIpv6, "nat",
                  "PREROUTING"),
            "[ immediate reg 1 0xb80d0120 0x00000000 0x00000000 0x01000000 ]\n"
            "[ nat dnat ip6 addr_min reg 1 ]");
}

// NETMAP keeps the host part: the range is the whole network, and the hook
// says which address (nf_nat_netmap).
TEST(IptablesNat, NetmapMapsTheNetworkByHook) {
  EXPECT_EQ(Lower("-d 10.0.0.0/24 -j NETMAP --to 192.168.1.0/24", IpVersion::kIpv4, "nat",
                  "PREROUTING"),
            "[ payload load 3b @ network header + 16 => reg 1 ]\n"
            "[ cmp eq reg 1 0x0000000a ]\n"
            "[ immediate reg 1 0x0001a8c0 ]\n[ immediate reg 2 0xff01a8c0 ]\n"
            "[ nat dnat ip addr_min reg 1 addr_max reg 2 flags 0x40 ]");
  EXPECT_EQ(Lower("-j NETMAP --to 192.168.1.0/24", IpVersion::kIpv4, "nat", "POSTROUTING"),
            "[ immediate reg 1 0x0001a8c0 ]\n[ immediate reg 2 0xff01a8c0 ]\n"
            "[ nat snat ip addr_min reg 1 addr_max reg 2 flags 0x40 ]");
}

// iptables-restore's getopt takes a unique prefix of a long option.
TEST(IptablesNat, AbbreviatedOptionsAsGetoptTakesThem) {
  EXPECT_EQ(Lower("-j SNAT --to 1.2.3.4", IpVersion::kIpv4, "nat", "POSTROUTING"),
            Lower("-j SNAT --to-source 1.2.3.4", IpVersion::kIpv4, "nat", "POSTROUTING"));
  // --random is a whole option name, not an ambiguous prefix of --random-fully.
  EXPECT_EQ(Lower("-j MASQUERADE --random", IpVersion::kIpv4, "nat", "POSTROUTING"),
            "[ masq flags 0x4 ]");
}

TEST(IptablesNat, TargetsOnlyWhereTheKernelRegistersThem) {
  EXPECT_EQ(FirstError(Wrap("-j DNAT --to-destination 1.2.3.4")),
            "3:13: target 'DNAT' is only valid in the nat table");
  EXPECT_EQ(FirstError(Wrap("-j DNAT --to-destination 1.2.3.4", "nat", "POSTROUTING")),
            "3:19: target 'DNAT' is not valid in chain 'POSTROUTING'");
  EXPECT_EQ(FirstError(Wrap("-j MASQUERADE", "nat", "INPUT")),
            "3:13: target 'MASQUERADE' is not valid in chain 'INPUT'");
  EXPECT_EQ(FirstError(Wrap("-j SNAT --to-source 1.2.3.4:80", "nat", "POSTROUTING")),
            "3:19: target 'SNAT' with ports needs -p tcp, udp, sctp or dccp");
  EXPECT_EQ(FirstError(Wrap("-j SNAT", "nat", "POSTROUTING")),
            "3:19: target 'SNAT' needs --to-source");
  // A user chain is checked against every hook that reaches it.
  EXPECT_EQ(FirstError("*nat\n:PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n"
                       ":out - [0:0]\n:via - [0:0]\n-A out -j MASQUERADE\n-A via -j out\n"
                       "-A POSTROUTING -j via\n-A PREROUTING -j via\nCOMMIT\n"),
            "6:11: target 'MASQUERADE' in chain 'out' is reached from the prerouting hook");
  EXPECT_EQ(FirstError("*nat\n:POSTROUTING ACCEPT [0:0]\n:out - [0:0]\n-A out -j MASQUERADE\n"
                       "-A POSTROUTING -j out\nCOMMIT\n"),
            "OK");
}

TEST(IptablesLineEnds, AsIptablesRestoreReadsThem) {
  EXPECT_EQ(FirstError("*filter\nCOMMIT"), "2:1: COMMIT without a newline after it");
  EXPECT_EQ(FirstError("*filter\r\nCOMMIT\r\n"), "1:8: line ends with a carriage return (CRLF)");
  EXPECT_EQ(FirstError("*filter\nCOMMIT \n"), "2:1: text after COMMIT");
  EXPECT_EQ(FirstError("*filter\n COMMIT\n"), "2:1: blank before COMMIT");
  // Comments and chain declarations may end in CR (iptables-restore scans
  // their counters loosely).
  EXPECT_EQ(FirstError("# x\r\n*filter\n:INPUT ACCEPT [0:0]\r\n:a - [0:0]\r\nCOMMIT\n"), "OK");
}

// The source addresses of a dump's INPUT rules, in order (`-s A.B.C.D`
// lowers to one 4-byte compare).
std::string InputSources(const std::string& dump) {
  Parsed p = Parse(dump);
  if (!p.rs.ok()) return "ERROR: " + p.diags;
  std::string out;
  for (const ir::Chain& chain : p.rs->tables.at(0).chains) {
    if (chain.name != "INPUT") continue;
    for (const ir::Rule& rule : chain.rules) {
      for (const ir::Node& node : rule.exprs) {
        if (const auto* cmp = std::get_if<ir::Cmp>(&node.expr); cmp && cmp->data.size() == 4) {
          absl::StrAppend(&out, out.empty() ? "" : " ", cmp->data[0]);
        }
      }
    }
  }
  return out;
}

// Each order below is what iptables-legacy-save printed after loading the
// same lines with iptables-legacy-restore.
TEST(IptablesRestoreCommands, InsertReplaceDeleteInOrder) {
  EXPECT_EQ(InputSources("*filter\n-A INPUT -s 1.1.1.1 -j DROP\n-I INPUT -s 2.2.2.2 -j DROP\n"
                         "-I INPUT 3 -s 3.3.3.3 -j DROP\n-I INPUT 2 -s 4.4.4.4 -j ACCEPT\n"
                         "COMMIT\n"),
            "2 4 1 3");
  EXPECT_EQ(InputSources("*filter\n-A INPUT -s 1.1.1.1 -j DROP\n-A INPUT -s 2.2.2.2 -j DROP\n"
                         "-D INPUT -s 1.1.1.1 -j DROP\n-R INPUT 1 -s 5.5.5.5 -j ACCEPT\nCOMMIT\n"),
            "5");
  EXPECT_EQ(InputSources("*filter\n-A INPUT -s 1.1.1.1 -j DROP\n-A INPUT -s 2.2.2.2 -j DROP\n"
                         "-D INPUT 1\nCOMMIT\n"),
            "2");
  EXPECT_EQ(FirstError("*filter\n-A INPUT -s 1.1.1.1 -j DROP\n-I INPUT 3 -s 3.3.3.3 -j DROP\n"
                       "COMMIT\n"),
            "3:4: index of insertion too big");
  EXPECT_EQ(FirstError("*filter\n-D INPUT -s 9.9.9.9 -j DROP\nCOMMIT\n"),
            "2:4: no such rule to delete");
  EXPECT_EQ(FirstError("*filter\n-A INPUT -s 1.1.1.1 -j DROP\n-D INPUT 2\nCOMMIT\n"),
            "3:4: index of deletion too big");
}

TEST(IptablesRestoreCommands, FlushDeleteChainZeroPolicy) {
  Parsed p = Parse("*filter\n:x - [0:0]\n[5:300] -A INPUT -j x\n[7:400] -A FORWARD -j ACCEPT\n"
                   "-F INPUT\n-X x\n-Z\n-P FORWARD DROP\nCOMMIT\n");
  ASSERT_TRUE(p.rs.ok()) << p.diags;
  const ir::Table& t = p.rs->tables.at(0);
  for (const ir::Chain& chain : t.chains) {
    EXPECT_NE(chain.name, "x");
    if (chain.name == "INPUT") EXPECT_TRUE(chain.rules.empty());
    if (chain.name != "FORWARD") continue;
    EXPECT_EQ(chain.base->policy, ir::VerdictCode::kDrop);
    ASSERT_EQ(chain.rules.size(), 1u);
    for (const ir::Node& node : chain.rules[0].exprs) {
      if (const auto* c = std::get_if<ir::Counter>(&node.expr)) EXPECT_EQ(c->packets, 0u);
    }
  }
  EXPECT_EQ(FirstError("*filter\n:x - [0:0]\n-A INPUT -j x\n-X x\nCOMMIT\n"),
            "4:1: chain 'x' is not empty or is referenced");
  EXPECT_EQ(FirstError("*filter\n-P INPUT REJECT\nCOMMIT\n"), "2:10: invalid policy 'REJECT'");
}

// Port names resolve through the services database, as iptables-restore
// resolves them (netbase's /etc/services: domain 53, ssh 22, ftp-data 20).
TEST(IptablesRestoreCommands, ServiceNamesAsPorts) {
  EXPECT_EQ(Lower("-p udp --dport domain -j ACCEPT"), Lower("-p udp --dport 53 -j ACCEPT"));
  EXPECT_EQ(Lower("-p tcp -m multiport --dports ssh,80 -j ACCEPT"),
            Lower("-p tcp -m multiport --dports 22,80 -j ACCEPT"));
  EXPECT_EQ(Lower("-p tcp -j DNAT --to-destination 10.0.0.1:ftp-data", IpVersion::kIpv4, "nat",
                  "PREROUTING"),
            Lower("-p tcp -j DNAT --to-destination 10.0.0.1:20", IpVersion::kIpv4, "nat",
                  "PREROUTING"));
  EXPECT_EQ(FirstError(Wrap("-p tcp --dport nosuchservice")),
            "3:25: invalid port 'nosuchservice'");
}

TEST(IptablesOwner, UidAndGidOfTheLocalSocket) {
  EXPECT_EQ(Lower("-m owner --uid-owner 1000 -j ACCEPT", IpVersion::kIpv4, "filter", "OUTPUT"),
            "[ meta load skuid => reg 1 ]\n[ cmp eq reg 1 0x000003e8 ]\n"
            "[ immediate reg 0 accept ]");
  EXPECT_EQ(Lower("-m owner --gid-owner 10-20 -j ACCEPT", IpVersion::kIpv4, "filter", "OUTPUT"),
            "[ meta load skgid => reg 1 ]\n[ byteorder reg 1 = hton(reg 1, 4, 4) ]\n"
            "[ range eq reg 1 0x0a000000 0x14000000 ]\n[ immediate reg 0 accept ]");
  EXPECT_EQ(FirstError(Wrap("-m owner --uid-owner 0 -j ACCEPT")),
            "3:13: match 'owner' is not valid in chain 'INPUT'");
  EXPECT_EQ(FirstError(Wrap("-m owner ! --uid-owner 0 -j ACCEPT", "filter", "OUTPUT")),
            "3:22: '! --uid-owner' is not supported");
  EXPECT_EQ(FirstError("*filter\n:u - [0:0]\n-A u -m owner --uid-owner 0 -j ACCEPT\n"
                       "-A INPUT -j u\nCOMMIT\n"),
            "3:9: match 'owner' in chain 'u' is reached from the input hook");
}

// CT --zone N as nft's `ct zone set N` (a 16-bit host-order value).
TEST(IptablesCt, ZoneAsCtZoneSet) {
  EXPECT_EQ(Lower("-j CT --zone 258", IpVersion::kIpv4, "raw", "PREROUTING"),
            "[ immediate reg 1 0x00000102 ]\n[ ct set zone with reg 1 ]");
  EXPECT_EQ(FirstError(Wrap("-j CT --zone 65536", "raw", "PREROUTING")),
            "3:28: invalid zone '65536'");
  // --notrack wins over the zone (xt_ct_tg_check).
  EXPECT_EQ(Lower("-j CT --zone 1 --notrack", IpVersion::kIpv4, "raw", "PREROUTING"),
            "[ notrack ]");
}

// Every tier reads the socket from PacketMeta: no socket, no match.
TEST(IptablesOwner, EveryTierMatchesOnlyWithASocket) {
  auto rs = ParseRuleset("*filter\n:OUTPUT DROP [0:0]\n"
                         "-A OUTPUT -m owner --uid-owner 1000 -j ACCEPT\nCOMMIT\n",
                         "owner.ipt");
  ASSERT_TRUE(rs.ok()) << rs.status();
  const std::vector<uint8_t> frame = testing::BuildFrame({});
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    auto program = Program::Compile(*rs, {.backend = backend});
    ASSERT_TRUE(program.ok()) << program.status();
    PacketMeta meta;
    meta.has_oif = true;
    EXPECT_EQ((*program)->Classify(Hook::kOutput, frame.data(), frame.size(), meta).verdict,
              Verdict::kDrop);
    meta.has_socket = true;
    meta.sk_uid = 1000;
    EXPECT_EQ((*program)->Classify(Hook::kOutput, frame.data(), frame.size(), meta).verdict,
              Verdict::kAccept);
    meta.sk_uid = 1001;
    EXPECT_EQ((*program)->Classify(Hook::kOutput, frame.data(), frame.size(), meta).verdict,
              Verdict::kDrop);
  }
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
