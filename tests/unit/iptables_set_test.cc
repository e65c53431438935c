// -m set with the ipsets given beside the dump (frontends/iptables/ipset.h,
// match_set.cc): what is refused, located, in the dump or in the ipset
// file, and the IR sets the contents become. Their meaning against the
// kernel is tests/kernel/ipset_kernel_test.cc.
#include <string>
#include <vector>

#include "frontends/frontend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "ir/printer.h"
#include "ir/reader.h"

namespace rulejit::frontends {
namespace {

using ::testing::HasSubstr;

struct Result {
  std::optional<ir::Ruleset> rs;
  std::string diags;
};

Result Parse(const std::string& rule, const std::string& ipsets, bool give = true) {
  const std::string dump =
      "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD " + rule + " -j DROP\nCOMMIT\n";
  ir::Diagnostics diags;
  IpsetInput input{"sets.ipset", ipsets};
  Result r;
  r.rs = ParseRuleset(dump, "t.ipt", std::nullopt, diags, nullptr, give ? &input : nullptr);
  r.diags = diags.Format();
  return r;
}

constexpr char kSets[] =
    "create a hash:ip family inet hashsize 1024 maxelem 65536\n"
    "add a 10.0.0.1\n"
    "create n hash:net family inet\n"
    "add n 10.0.0.0/8\n"
    "add n 10.1.0.0/16 nomatch\n"
    "create six hash:ip family inet6\n"
    "add six 2001:db8::1\n"
    "create p hash:ip,port family inet\n"
    "add p 10.0.0.1,udp:53\n";

TEST(IptablesSet, LowersToANamedSet) {
  Result r = Parse("-m set --match-set n src", kSets);
  ASSERT_TRUE(r.rs) << r.diags;
  const ir::Set* set = r.rs->tables[0].FindSet("ipset_ns");
  ASSERT_NE(set, nullptr);
  EXPECT_TRUE(set->interval());
  // 10.0.0.0-10.0.255.255 and 10.2.0.0-10.255.255.255: the nomatch net cut out.
  ASSERT_EQ(set->elements.size(), 2u);
  EXPECT_EQ(set->elements[0].key_end, (ir::Bytes{10, 0, 255, 255}));
  EXPECT_EQ(set->elements[1].key, (ir::Bytes{10, 2, 0, 0}));
}

// The rule's expressions print and read back as they were (the concatenated
// key's loads into registers 1, 9, 10, 11 and the lookup of the named set).
TEST(IptablesSet, RuleRoundTripsThroughTheIrText) {
  Result r = Parse("-m set ! --match-set p src,dst", kSets);
  ASSERT_TRUE(r.rs) << r.diags;
  const ir::Rule& rule = r.rs->tables[0].chains[0].rules[0];
  ASSERT_GE(rule.exprs.size(), 6u);
  for (const ir::Node& n : rule.exprs) {
    const std::string line = ir::PrintExpr(n.expr);
    absl::StatusOr<ir::Expr> back = ir::ParseExprLine(line);
    ASSERT_TRUE(back.ok()) << line << ": " << back.status();
    EXPECT_EQ(ir::PrintExpr(*back), line);
  }
  EXPECT_EQ(ir::PrintExpr(rule.exprs[5].expr), "[ lookup reg 1 set ipset_psd 0x1 ]");
}

TEST(IptablesSet, ReturnNomatchKeepsOnlyTheNomatchNets) {
  Result r = Parse("-m set --match-set n src --return-nomatch", kSets);
  ASSERT_TRUE(r.rs) << r.diags;
  const ir::Set* set = r.rs->tables[0].FindSet("ipset_ns_nomatch");
  ASSERT_NE(set, nullptr);
  ASSERT_EQ(set->elements.size(), 1u);
  EXPECT_EQ(set->elements[0].key, (ir::Bytes{10, 1, 0, 0}));
}

// A dump with no address and no ICMPv6 in it says it is an ip6tables dump
// only by the family of the sets it names.
TEST(IptablesSet, AnInet6SetMakesADumpWithoutAddressesIpv6) {
  Result r = Parse("-m set --match-set six src", kSets);
  ASSERT_TRUE(r.rs) << r.diags;
  EXPECT_EQ(r.rs->tables[0].family, ir::Family::kIp6);
  EXPECT_NE(r.rs->tables[0].FindSet("ipset_six_ip"), nullptr);
  r = Parse("-m set --match-set a src", kSets);
  ASSERT_TRUE(r.rs) << r.diags;
  EXPECT_EQ(r.rs->tables[0].family, ir::Family::kIp);
}

TEST(IptablesSet, RefusalsAreLocated) {
  EXPECT_THAT(Parse("-m set --match-set a src", "", false).diags,
              HasSubstr("t.ipt:3:31: error: ipset 'a' is not given"));
  EXPECT_THAT(Parse("-m set --match-set zz src", kSets).diags,
              HasSubstr("t.ipt:3:31: error: ipset 'zz' is not given"));
  EXPECT_THAT(Parse("-s 10.0.0.1 -m set --match-set six src", kSets).diags,
              HasSubstr("ipset 'six' is of family inet6"));
  EXPECT_THAT(Parse("-m set --match-set a src,up", kSets).diags,
              HasSubstr("invalid --match-set flag 'up'"));
  EXPECT_THAT(Parse("-m set --match-set a src --packets-gt 3", kSets).diags,
              HasSubstr("--packets-gt is not modelled"));
  EXPECT_THAT(Parse("-m set --match-set a src", "create a hash:mac\n").diags,
              HasSubstr("sets.ipset:1:10: error: ipset type 'hash:mac' is not modelled"));
  EXPECT_THAT(Parse("-m set --match-set a src", "create a hash:ip,port\nadd a 1.2.3.4,icmp:8/0\n").diags,
              HasSubstr("sets.ipset:2:7: error: ipset element of protocol 'icmp' is not modelled"));
  EXPECT_THAT(Parse("-m set --match-set l src,dst,dst",
                    "create m hash:ip,port,net\nadd m 1.2.3.4,tcp:80,10.0.0.0/8\n"
                    "create l list:set\nadd l m\n").diags,
              HasSubstr("list:set 'l' has a member of type hash:ip,port,net; not modelled"));
  EXPECT_THAT(Parse("-m set --match-set m src,dst,dst", "create m hash:ip,port,ip\nadd m 1.2.3.4,tcp:80\n").diags,
              HasSubstr("sets.ipset:2:7: error: invalid hash:ip,port,ip element '1.2.3.4,tcp:80'"));
  EXPECT_THAT(Parse("-m set --match-set f src,src", "create f hash:net,iface\nadd f 10.0.0.0/8,physdev:eth0\n").diags,
              HasSubstr("sets.ipset:2:7: error: physdev: interface elements are not modelled"));
  EXPECT_THAT(Parse("-m set --match-set a src", "add a 1.2.3.4\n").diags,
              HasSubstr("sets.ipset:1:5: error: ipset 'a' was not created"));
  EXPECT_THAT(Parse("-m set --match-set a src", "create a hash:ip timeout 5\nadd a 1.2.3.4 timeout 3\n").diags,
              HasSubstr("sets.ipset:2:15: error: ipset elements with a timeout are not modelled"));
  // ipset itself refuses a list inside a list ("Sets with list:set type
  // cannot be added to the set"); a reader that took it would walk lists
  // of lists.
  EXPECT_THAT(Parse("-m set --match-set l2 src",
                    "create a hash:ip\ncreate l1 list:set\nadd l1 a\n"
                    "create l2 list:set\nadd l2 l1\n").diags,
              HasSubstr("sets.ipset:5:8: error: list:set member 'l1' is itself a list:set"));
}

std::string DumpDiags(const std::string& dump, const std::string& ipsets,
                      std::optional<ir::Ruleset>* out = nullptr) {
  ir::Diagnostics diags;
  IpsetInput input{"sets.ipset", ipsets};
  std::optional<ir::Ruleset> rs =
      ParseRuleset(dump, "t.ipt", std::nullopt, diags, nullptr, &input);
  if (out != nullptr) *out = std::move(rs);
  return diags.Format();
}

constexpr char kTimed[] =
    "create a hash:ip family inet maxelem 3 timeout 60\n"
    "add a 10.0.0.1\n"
    "create m hash:ip family inet netmask 24\n"
    "add m 10.2.0.0/23\n"
    "create n hash:net family inet\n"
    "create np hash:net,port family inet\n"
    "create l list:set\n"
    "add l a\n";

// A dump of one table with a FORWARD chain holding `rules`.
std::string TableDump(const std::string& table, const std::string& rules) {
  return "*" + table + "\n:FORWARD ACCEPT [0:0]\n" + rules + "COMMIT\n";
}

// The printed expressions of rule `rule` of the first chain.
std::string RuleText(const ir::Table& t, size_t rule) {
  std::string out;
  for (const ir::Node& n : t.chains[0].rules[rule].exprs) out += ir::PrintExpr(n.expr) + "\n";
  return out;
}

// The SET target and -m set share one IR set per hash:ip ipset, which the
// target makes dynamic with the ipset's timeout and maxelem.
TEST(IptablesSet, SetTargetChangesTheSetTheMatchReads) {
  std::optional<ir::Ruleset> rs;
  const std::string diags = DumpDiags(
      "*filter\n:FORWARD ACCEPT [0:0]\n"
      "-A FORWARD -m set --match-set a dst -j DROP\n"
      "-A FORWARD -j SET --add-set a src,dst --exist --timeout 5 --del-set m dst\n"
      "COMMIT\n",
      kTimed, &rs);
  ASSERT_TRUE(rs) << diags;
  const ir::Set* a = rs->tables[0].FindSet("ipset_a_ip");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->flags, ir::kSetEval | ir::kSetTimeout);
  EXPECT_EQ(a->timeout_ms, 60000u);
  EXPECT_EQ(a->size, 3u);
  // m is changed too: its /23 stands for two /24 blocks.
  const ir::Set* m = rs->tables[0].FindSet("ipset_m_ip");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->flags, ir::kSetEval);
  ASSERT_EQ(m->elements.size(), 2u);
  EXPECT_EQ(m->elements[1].key, (ir::Bytes{10, 2, 1, 0}));
  std::string text;
  for (const ir::Node& n : rs->tables[0].chains[0].rules[1].exprs) {
    text += ir::PrintExpr(n.expr) + "\n";
  }
  EXPECT_THAT(text, HasSubstr("[ bitwise reg 1 = ( reg 1 & 0x00ffffff ) ^ 0x00000000 ]\n"
                              "[ dynset delete reg_key 1 set ipset_m_ip ]"));
  EXPECT_THAT(text, HasSubstr("[ payload load 4b @ network header + 12 => reg 1 ]\n"
                              "[ cmp neq reg 1 0x00000000 ]\n"
                              "[ dynset update reg_key 1 set ipset_a_ip timeout 5000ms ]"));
}

TEST(IptablesSet, SetTargetRefusalsAreLocated) {
  auto dump = [](const std::string& rules) {
    return "*filter\n:FORWARD ACCEPT [0:0]\n" + rules + "COMMIT\n";
  };
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --add-set np src,dst\n"), kTimed),
              HasSubstr("t.ipt:3:29: error: SET on ipset 'np' of type hash:net,port is not "
                        "modelled"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --add-set zz src\n"), kTimed),
              HasSubstr("t.ipt:3:29: error: ipset 'zz' is not given"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --map-set a src --map-mark\n"), kTimed),
              HasSubstr("t.ipt:3:19: error: --map-set is only usable from the mangle table"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --add-set a src --del-set a dst\n"), kTimed),
              HasSubstr("--add-set and --del-set of one ipset are not modelled"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --add-set a src --timeout 0\n"), kTimed),
              HasSubstr("--timeout 0"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -m set --match-set l src -j DROP\n"
                             "-A FORWARD -j SET --add-set a src\n"),
                        kTimed),
              HasSubstr("t.ipt:3:31: error: ipset 'a', which a SET target changes, read through "
                        "a list:set"));
  EXPECT_THAT(DumpDiags("*mangle\n:PREROUTING ACCEPT [0:0]\n"
                        "-A PREROUTING -j SET --add-set a src\nCOMMIT\n" +
                            dump("-A FORWARD -m set --match-set a src -j DROP\n"),
                        kTimed),
              HasSubstr("t.ipt:7:31: error: ipset 'a' is changed by a SET target in table "
                        "'mangle' and used in table 'filter'"));
  // A deleted rule changes nothing.
  EXPECT_EQ(DumpDiags(dump("-A FORWARD -m set --match-set l src -j DROP\n"
                           "-A FORWARD -j SET --add-set a src\n"
                           "-D FORWARD -j SET --add-set a src\n"),
                      kTimed),
            "");
}

// hash:ip,port: -m set's per-flag-order sets become the one set the SET
// target changes; its key is -m set's, loaded only from a whole transport
// header of a first fragment.
TEST(IptablesSet, SetTargetOnIpPortSharesTheSetOfEveryFlagOrder) {
  std::optional<ir::Ruleset> rs;
  const std::string diags = DumpDiags(
      TableDump("filter",
                "-A FORWARD -m set --match-set p src,dst -j DROP\n"
                "-A FORWARD -m set --match-set p dst,dst -j DROP\n"
                "-A FORWARD -m set --match-set p src -j DROP\n"
                "-A FORWARD -p tcp -j SET --add-set p dst,src\n"
                "-A FORWARD -p udp -j SET --add-set p src\n"),
      "create p hash:ip,port family inet maxelem 7\nadd p 10.0.0.1,udp:53\n", &rs);
  ASSERT_TRUE(rs) << diags;
  const ir::Table& t = rs->tables[0];
  const ir::Set* p = t.FindSet("ipset_p_ipport");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->flags, ir::kSetEval);
  EXPECT_EQ(p->field_lens, (std::vector<uint32_t>{4, 1, 2, 2}));
  EXPECT_EQ(p->size, 7u);
  ASSERT_EQ(p->elements.size(), 1u);
  EXPECT_EQ(p->elements[0].key, (ir::Bytes{10, 0, 0, 1, 17, 0, 0, 0, 0, 53, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(t.FindSet("ipset_psd"), nullptr);
  EXPECT_EQ(t.FindSet("ipset_pdd"), nullptr);
  EXPECT_NE(t.FindSet("ipset_ps"), nullptr);  // one flag: never matches, stays apart
  auto text = [&](size_t rule) { return RuleText(t, rule); };
  EXPECT_THAT(text(0), HasSubstr("set ipset_p_ipport"));
  EXPECT_THAT(text(1), HasSubstr("set ipset_p_ipport"));
  EXPECT_THAT(text(3), HasSubstr("[ payload load 1b @ transport header + 19 => reg 1 ]\n"
                                 "[ payload load 4b @ network header + 16 => reg 1 ]\n"));
  // dst,src: the destination address, the source port.
  EXPECT_THAT(text(3), HasSubstr("[ payload load 2b @ transport header + 0 => reg 10 ]\n"));
  EXPECT_THAT(text(3), HasSubstr("[ cmp eq reg 11 0x00000000 ]\n"
                                 "[ dynset add reg_key 1 set ipset_p_ipport ]"));
  EXPECT_THAT(text(4), ::testing::Not(HasSubstr("dynset")));  // one flag: nothing added
}

// hash:ip,port,ip: the third address after the port, frag-off after it.
TEST(IptablesSet, SetTargetOnIpPortIpKeysTheThirdAddress) {
  std::optional<ir::Ruleset> rs;
  const std::string diags =
      DumpDiags(TableDump("filter", "-A FORWARD -m set --match-set q dst,dst,src -j DROP\n"
                                    "-A FORWARD -p tcp -j SET --add-set q src,dst,dst\n"),
                "create q hash:ip,port,ip family inet\nadd q 10.0.0.1,udp:53,10.0.0.2\n", &rs);
  ASSERT_TRUE(rs) << diags;
  const ir::Table& t = rs->tables[0];
  EXPECT_EQ(t.sets.size(), 1u);
  EXPECT_THAT(RuleText(t, 0), HasSubstr("set ipset_q_ipportip"));
  EXPECT_THAT(RuleText(t, 1), HasSubstr("[ payload load 4b @ network header + 16 => reg 11 ]\n"
                                        "[ payload load 2b @ network header + 6 => reg 2 ]\n"));
  EXPECT_THAT(RuleText(t, 1), HasSubstr("[ cmp eq reg 2 0x00000000 ]\n"
                                        "[ dynset add reg_key 1 set ipset_q_ipportip ]"));
}

TEST(IptablesSet, SetTargetOnIpPortNeedsAPortProtocol) {
  const std::string sets = "create p hash:ip,port family inet\n";
  EXPECT_THAT(DumpDiags(TableDump("filter", "-A FORWARD -j SET --add-set p src,dst\n"), sets),
              HasSubstr("t.ipt:3:29: error: SET on hash:ip,port ipset 'p' in a rule without -p "
                        "tcp, udp, sctp or udplite is not modelled"));
  EXPECT_THAT(DumpDiags(TableDump("filter", "-A FORWARD -p icmp -j SET --add-set p src,dst\n"),
                        sets),
              HasSubstr("not modelled"));
  EXPECT_THAT(DumpDiags(TableDump("filter", "-A FORWARD ! -p tcp -j SET --add-set p src,dst\n"),
                        sets),
              HasSubstr("not modelled"));
}

// hash:net: an exact set of the addresses masked to its nets' length,
// which -m set's lookups then mask to too.
TEST(IptablesSet, SetTargetOnHashNetMasksToItsNetsLength) {
  const std::string sets =
      "create n hash:net family inet\nadd n 10.0.0.0/24\nadd n 10.0.1.0/24\n"
      "create mixed hash:net family inet\nadd mixed 10.0.0.0/24\nadd mixed 10.1.0.0/16\n"
      "create nm hash:net family inet\nadd nm 10.0.0.0/24 nomatch\n";
  auto dump = [](const std::string& rules) { return TableDump("filter", rules); };
  std::optional<ir::Ruleset> rs;
  const std::string diags = DumpDiags(dump("-A FORWARD -m set --match-set n dst -j DROP\n"
                                           "-A FORWARD -j SET --add-set n src\n"),
                                      sets, &rs);
  ASSERT_TRUE(rs) << diags;
  const ir::Table& t = rs->tables[0];
  const ir::Set* n = t.FindSet("ipset_n_net");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->flags, ir::kSetEval);
  ASSERT_EQ(n->elements.size(), 2u);
  EXPECT_EQ(n->elements[1].key, (ir::Bytes{10, 0, 1, 0}));
  EXPECT_EQ(t.FindSet("ipset_nd"), nullptr);
  EXPECT_EQ(t.sets.size(), 1u);
  EXPECT_THAT(RuleText(t, 0), HasSubstr("[ payload load 4b @ network header + 16 => reg 1 ]\n"
                              "[ bitwise reg 1 = ( reg 1 & 0x00ffffff ) ^ 0x00000000 ]\n"
                              "[ lookup reg 1 set ipset_n_net ]"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --add-set mixed src\n"), sets),
              HasSubstr("t.ipt:3:29: error: SET on hash:net ipset 'mixed' with nets of different "
                        "lengths is not modelled"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --add-set nm src\n"), sets),
              HasSubstr("with nomatch nets is not modelled"));
  EXPECT_THAT(DumpDiags(dump("-A FORWARD -j SET --del-set n src\n"), sets),
              HasSubstr("SET --del-set on hash:net ipset 'n' of /24 nets is not modelled"));
}

// --map-set --map-mark: a map from -m set's key to `~mask . value`, and
// meta mark = (meta mark & reg) ^ reg.
TEST(IptablesSet, MapMarkIsAMapOfTheElementsSkbmark) {
  const std::string sets =
      "create m hash:ip family inet skbinfo\nadd m 10.0.0.1 skbmark 0x5\n"
      "add m 10.0.0.2 skbmark 0x100/0xf00\nadd m 10.0.0.3\n"
      "create n hash:net family inet\n";
  auto mangle = [](const std::string& rules) { return TableDump("mangle", rules); };
  std::optional<ir::Ruleset> rs;
  const std::string diags =
      DumpDiags(mangle("-A FORWARD -j SET --map-set m dst --map-mark\n"), sets, &rs);
  ASSERT_TRUE(rs) << diags;
  const ir::Set* m = rs->tables[0].FindSet("ipset_m_map");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->data_len, 8u);
  ASSERT_EQ(m->elements.size(), 3u);
  // Host order (x86-64): ~0xffffffff, 0x5; ~0xf00, 0x100; 0/0 keeps the mark.
  EXPECT_EQ(m->elements[0].data, (ir::Bytes{0, 0, 0, 0, 5, 0, 0, 0}));
  EXPECT_EQ(m->elements[1].data, (ir::Bytes{0xff, 0xf0, 0xff, 0xff, 0, 1, 0, 0}));
  EXPECT_EQ(m->elements[2].data, (ir::Bytes{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}));
  const std::string text = RuleText(rs->tables[0], 0);
  EXPECT_THAT(text, HasSubstr("[ payload load 4b @ network header + 16 => reg 1 ]\n"
                              "[ lookup reg 1 set ipset_m_map dreg 3 ]\n"
                              "[ meta load mark => reg 1 ]\n"));
  EXPECT_THAT(text, HasSubstr("[ meta set mark with reg 1 ]"));
  EXPECT_THAT(DumpDiags(mangle("-A FORWARD -j SET --map-set n dst --map-mark\n"), sets),
              HasSubstr("--map-set on ipset 'n' of type hash:net is not modelled"));
  EXPECT_THAT(DumpDiags(mangle("-A FORWARD -j SET --map-set m dst --map-prio\n"), sets),
              HasSubstr("--map-prio is not modelled"));
  EXPECT_THAT(DumpDiags(mangle("-A FORWARD -j SET --map-set m dst --map-mark\n"
                               "-A FORWARD -j SET --add-set m src\n"),
                        sets),
              HasSubstr("t.ipt:3:29: error: ipset 'm', which a SET target changes, read by "
                        "--map-set"));
  EXPECT_THAT(DumpDiags(TableDump("mangle", "-A FORWARD -j SET --add-set m src\n"),
                        "create m hash:ip family inet\nadd m 1.2.3.4 skbmark 0x1/zz\n"),
              HasSubstr("sets.ipset:2:23: error: invalid skbmark"));
}

TEST(IptablesSet, NftRulesetsTakeNoIpsets) {
  ir::Diagnostics diags;
  IpsetInput input{"sets.ipset", kSets};
  EXPECT_FALSE(ParseRuleset("table ip t {}\n", "t.nft", std::nullopt, diags, nullptr, &input));
  EXPECT_THAT(diags.Format(), HasSubstr("not an iptables dump"));
}

}  // namespace
}  // namespace rulejit::frontends
