// End-to-end tests of `rulejit compile --emit nft` and `rulejit translate`:
// the nft a small iptables dump prints as (field names only where nft adds
// no check of its own, `!=` on neighbouring payload fields masked so nft
// cannot merge them), the located refusal of a rule with no nft form, and
// translate printing only what diff proved (cli_fixture.h runs the binary).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"

namespace rulejit::testing {
namespace {

constexpr const char* kSmall =
    "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:WEB - [0:0]\n"
    "-A INPUT -s 10.0.0.0/10 -p tcp -m tcp --dport 22 -j ACCEPT\n"
    "-A INPUT -p tcp -m tcp ! --sport 1 ! --dport 2 -j WEB\n"
    "-A WEB -p tcp -m tcp --dport 443 -m comment --comment \"web\" -j ACCEPT\n"
    "COMMIT\n";

// `compile small.ipt --emit WHAT`.
class EmitTest : public CliTest {
 protected:
  ToolResult EmitSmall(const char* what) {
    path_ = Write("small.ipt", kSmall);
    return Run({"compile", path_, "--emit", what});
  }
  std::string path_;
};

TEST_F(EmitTest, CompileEmitNftPrintsAnNftScript) {
  ToolResult r = EmitSmall("nft");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "flush ruleset\n\n"
            "table ip filter {\n"
            "\tchain INPUT {\n"
            "\t\ttype filter hook input priority 0; policy drop;\n"
            "\t\tmeta l4proto 6 ip saddr 10.0.0.0/10 @nh,48,16 & 0x1fff == 0x0000 tcp dport 22 "
            "counter packets 0 bytes 0 accept\n"
            // nft would merge `tcp sport != 1 tcp dport != 2` into one 32-bit
            // compare ("not both"): the masks keep them apart.
            "\t\tmeta l4proto 6 @nh,48,16 & 0x1fff == 0x0000 tcp sport & 65535 != 1 "
            "tcp dport & 65535 != 2 counter packets 0 bytes 0 jump WEB\n"
            "\t}\n"
            "\tchain FORWARD {\n\t\ttype filter hook forward priority 0; policy accept;\n\t}\n"
            "\tchain OUTPUT {\n\t\ttype filter hook output priority 0; policy accept;\n\t}\n"
            "\tchain WEB {\n"
            "\t\tmeta l4proto 6 @nh,48,16 & 0x1fff == 0x0000 tcp dport 443 counter packets 0 "
            "bytes 0 accept comment \"web\"\n"
            "\t}\n"
            "}\n");
}

// The same decompilation as libnftables JSON: the listing's schema, the
// masked `!=` and the comment as in the text.
TEST_F(EmitTest, CompileEmitNftJsonPrintsTheSameRulesetAsJson) {
  ToolResult r = EmitSmall("nft-json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("{\"nftables\":[{\"metainfo\":{\"json_schema_version\":1}},"
                                "{\"flush\":{\"ruleset\":null}},{\"table\":{\"family\":\"ip\",\"name\":\"filter\"}},"));
  EXPECT_THAT(r.out, HasSubstr("{\"chain\":{\"family\":\"ip\",\"hook\":\"input\",\"name\":\"INPUT\","
                               "\"policy\":\"drop\",\"prio\":0,\"table\":\"filter\",\"type\":\"filter\"}}"));
  EXPECT_THAT(r.out, HasSubstr("{\"match\":{\"left\":{\"payload\":{\"field\":\"saddr\",\"protocol\":\"ip\"}},"
                               "\"op\":\"==\",\"right\":{\"prefix\":{\"addr\":\"10.0.0.0\",\"len\":10}}}}"));
  EXPECT_THAT(r.out, HasSubstr("{\"match\":{\"left\":{\"&\":[{\"payload\":{\"field\":\"sport\",\"protocol\":"
                               "\"tcp\"}},65535]},\"op\":\"!=\",\"right\":1}}"));
  EXPECT_THAT(r.out, HasSubstr("{\"jump\":{\"target\":\"WEB\"}}]"));
  EXPECT_THAT(r.out, HasSubstr("\"chain\":\"WEB\",\"comment\":\"web\""));

  std::string recent = Write("recent.ipt", "*filter\n:INPUT ACCEPT [0:0]\n"
                                           "-A INPUT -m recent --name x --rcheck -j DROP\nCOMMIT\n");
  r = Run({"compile", recent, "--emit", "nft-json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(recent + ":3: rule in chain INPUT: iptables' recent match has no nft equivalent"));
  EXPECT_THAT(r.out, IsEmpty());
}

// iptables-save text back from the IR, and translate --to iptables
// printing it only once proved; a shape the printer does not know is a
// located refusal.
TEST_F(EmitTest, CompileEmitIptablesPrintsAnIptablesSaveDump) {
  ToolResult r = EmitSmall("iptables");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:WEB - [0:0]\n"
            "-A INPUT -p tcp -s 10.0.0.0/10 -m tcp --dport 22 -j ACCEPT\n"
            "-A INPUT -p tcp -m tcp ! --sport 1 -m tcp ! --dport 2 -j WEB\n"
            "-A WEB -p tcp -m tcp --dport 443 -m comment --comment \"web\" -j ACCEPT\n"
            "COMMIT\n");
  ToolResult t = Run({"translate", path_, "--to", "iptables"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, r.out);

  std::string nth = Write("nth.ipt", "*filter\n:INPUT ACCEPT [0:0]\n"
                                     "-A INPUT -m statistic --mode nth --every 2 --packet 0 -j DROP\nCOMMIT\n");
  r = Run({"compile", nth, "--emit", "iptables"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(nth + ":3: rule in chain INPUT: [ numgen reg 1 = inc mod 2 ] has no iptables form"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, EmitNftRefusesARuleWithNoNftFormAtItsLine) {
  std::string path = Write("recent.ipt",
                           "*filter\n:INPUT ACCEPT [0:0]\n"
                           "-A INPUT -m recent --name x --rcheck -j DROP\nCOMMIT\n");
  for (const char* cmd : {"compile", "translate"}) {
    std::vector<std::string> args = {cmd, path};
    if (std::string(cmd) == "compile") args.insert(args.end(), {"--emit", "nft"});
    ToolResult r = Run(args);
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_THAT(r.err, HasSubstr(path + ":3: rule in chain INPUT: iptables' recent match has no "
                                        "nft equivalent"));
    EXPECT_THAT(r.out, IsEmpty());
  }
}

TEST_F(CliTest, TranslatePrintsWhatDiffProvedEquivalent) {
  std::string path = Write("small.ipt", kSmall);
  ToolResult r = Run({"translate", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ToolResult emitted = Run({"compile", path, "--emit", "nft"});
  EXPECT_EQ(r.out, emitted.out);
  std::string nft = Write("small.nft", r.out);
  ToolResult d = Run({"diff", path, nft});
  EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
  // --to nft-json: the JSON compile prints, proved the same way.
  ToolResult json = Run({"translate", path, "--to", "nft-json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out, Run({"compile", path, "--emit", "nft-json"}).out);
  ToolResult usage = Run({"translate", path, "--to", "pf"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("unknown --to 'pf'"));
}

// diff answers "not reasoned about exactly" for nat chains; the
// translation loads as the same bytecode, which proves it all the same.
// With -i/-o too: iptables compares the name's bytes up to its NUL, nft
// all 16, which the proof takes in one width (ir/ifname_cmp.h).
TEST_F(CliTest, TranslateProvesNatBySameBytecode) {
  std::string path = Write("nat.ipt",
                           "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n"
                           ":OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n"
                           "-A PREROUTING -p tcp -m tcp --dport 80 -j DNAT "
                           "--to-destination 192.168.1.1:8080\n"
                           "-A POSTROUTING -s 10.0.0.0/8 -o eth0 -j MASQUERADE\n"
                           "-A POSTROUTING -o wg+ -j MASQUERADE\nCOMMIT\n");
  ToolResult d = Run({"diff", path, path, "--hook", "prerouting"});
  ASSERT_EQ(d.exit_code, 2) << "diff now reasons about nat chains: " << d.out;
  ToolResult r = Run({"translate", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tcp dport 80 counter packets 0 bytes 0 dnat to 192.168.1.1:8080"));
  // iptables-nft reads one byte for a /8: nft has no name for that load.
  EXPECT_THAT(r.out,
              HasSubstr("meta oifname \"eth0\" @nh,96,8 0x0a counter packets 0 bytes 0 masquerade"));
  EXPECT_THAT(r.out, HasSubstr("meta oifname \"wg*\" counter packets 0 bytes 0 masquerade"));
}

// A limit stops diff, and nft reads two adjacent port compares back as one
// 4-byte compare (other bytecode): each rule is proved on its own, by the
// same bytecode (the limit) or by its slice (the ports, also at every hook
// for the user chain's rule).
TEST_F(CliTest, TranslateProvesRuleByRule) {
  std::string path = Write("slices.ipt",
                           "*filter\n:INPUT ACCEPT [0:0]\n:user - [0:0]\n"
                           "-A INPUT -p udp -m udp --sport 67 --dport 68 -j ACCEPT\n"
                           "-A INPUT -m limit --limit 5/sec -j user\n"
                           "-A user -i eth0 -p tcp -m tcp --sport 1 --dport 2 -j DROP\nCOMMIT\n");
  ToolResult d = Run({"diff", path, path});
  ASSERT_EQ(d.exit_code, 2) << "diff now reasons about limits: " << d.out;
  ToolResult r = Run({"translate", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("limit rate 5/second burst 5 packets counter packets 0 bytes 0 jump user"));
  EXPECT_THAT(r.out, HasSubstr("udp sport 67 udp dport 68 counter packets 0 bytes 0 accept"));
}

}  // namespace
}  // namespace rulejit::testing
