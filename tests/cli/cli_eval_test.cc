// End-to-end tests of `rulejit eval`: verdicts of the example and of every
// backend, explain and JSON output, hooks, paths, conntrack and host flags,
// and malformed, truncated or random captures that must not crash it
// (cli_fixture.h runs the built binary).
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"
#include "tests/cli/pcap_writer.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

// ---------------------------------------------------------------------------
// eval

TEST_F(CliTest, EvalExampleMatchesExpectedVerdicts) {
  ToolResult r = Run({"eval", "examples/firewall.ipt", "examples/firewall.pcap",
                      "--hook", "input", "--iif", "eth0", "--explain"},
                     kSourceDir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ReadAll(kSourceDir + "/examples/expected_verdicts.txt"));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST_F(CliTest, EvalEveryBackendGivesTheExpectedVerdicts) {
  for (const char* backend : {"interp", "jit", "llvm", "auto"}) {
    ToolResult r = Run({"eval", "examples/firewall.ipt", "examples/firewall.pcap", "--hook",
                        "input", "--iif", "eth0", "--explain", "--backend", backend},
                       kSourceDir);
    EXPECT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(r.out, ReadAll(kSourceDir + "/examples/expected_verdicts.txt")) << backend;
  }
}

TEST_F(CliTest, QueueIsAVerdictAndInterpreterFallbackIsVisible) {
  std::string rules = Write("q.nft",
                            "table ip t {\n  chain c {\n    type filter hook input priority 0;\n"
                            "    ip protocol tcp quota 1 mbytes\n"
                            "    ip protocol tcp queue num 3 bypass\n  }\n}\n");
  ToolResult c = Run({"compile", rules, "--emit", "opt-ir"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("q.nft:4: quota statement"));
  EXPECT_THAT(c.err, HasSubstr("runs in the interpreter"));
  EXPECT_THAT(c.out, HasSubstr("[ queue num 3 bypass ]"));
  for (const char* backend : {"interp", "jit"}) {
    ToolResult r = Run({"eval", rules, kExamplePcap, "--iif", "eth0", "--backend", backend});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int queued = 0;
    for (const std::string& line : Lines(r.out)) queued += line.ends_with(" queue");
    EXPECT_GT(queued, 0) << backend << "\n" << r.out;
  }
}

// examples/expected_verdicts.txt without the third word (the deciding
// rule): "<index> <verdict>".
std::vector<std::string> ExpectedVerdicts() {
  std::vector<std::string> lines = Lines(ReadAll(kSourceDir + "/examples/expected_verdicts.txt"));
  for (std::string& line : lines) line = line.substr(0, line.rfind(' '));
  return lines;
}

TEST_F(CliTest, EvalWithoutExplainPrintsIndexAndVerdict) {
  ToolResult r = Run({"eval", kExampleRules, kExamplePcap, "--iif", "eth0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), ExpectedVerdicts());
}

// The example is an INPUT ruleset: along the input path (prerouting, then
// input) every frame ends as at the input hook alone, accepted ones
// delivered.
TEST_F(CliTest, EvalAlongTheInputPathAgreesWithTheInputHook) {
  ToolResult r = Run({"eval", kExampleRules, kExamplePcap, "--path", "input", "--iif", "eth0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected = ExpectedVerdicts();
  for (std::string& line : expected) {
    if (absl::EndsWith(line, " accept")) line += " delivered";
  }
  EXPECT_EQ(Lines(r.out), expected);
}

TEST_F(CliTest, PathFlagsAreChecked) {
  EXPECT_EQ(Run({"eval", kExampleRules, kExamplePcap, "--path", "input", "--hook", "input"})
                .exit_code, 2);
  EXPECT_EQ(Run({"eval", kExampleRules, kExamplePcap, "--path", "sideways"}).exit_code, 2);
  EXPECT_EQ(Run({"eval", kExampleRules, kExamplePcap, "--write-pcap", "/dev/null"}).exit_code, 2);
  ToolResult bench = Run({"bench", kExampleRules, "--trace", kExamplePcap, "--path", "input",
                          "--iif", "eth0", "--backend", "interp"});
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_THAT(bench.out, HasSubstr("(not checked along the path)"));
}

TEST_F(CliTest, EvalJsonLinesParseAndAgreeWithExplain) {
  ToolResult r = Run({"eval", "examples/firewall.ipt", "examples/firewall.pcap",
                      "--iif", "eth0", "--json"},
                     kSourceDir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected =
      Lines(ReadAll(kSourceDir + "/examples/expected_verdicts.txt"));
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), expected.size());
  const std::regex object(
      R"re(\{"index":([0-9]+),"verdict":"(accept|drop)","rule":"([^"\\]*)"\})re");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, object)) << lines[i];
    EXPECT_EQ(m[1].str() + " " + m[2].str() + " " + m[3].str(), expected[i]);
  }
}

// A host with eth0 (10.0.0.1/24) and lo: `fib daddr type local` drops what
// is addressed to the host itself, on every tier; without --host the rule
// has no answer and eval says so.
TEST_F(CliTest, EvalFibAsksTheHostGivenWithHost) {
  std::string rules = Write("fib.nft",
                            "table ip t {\n  chain c {\n    type filter hook input priority 0;\n"
                            "    fib daddr type local drop\n  }\n}\n");
  std::string host = Write(
      "host.json",
      R"({"addr":[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],)"
      R"("addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8}]},)"
      R"({"ifindex":2,"ifname":"eth0","flags":["UP"],)"
      R"("addr_info":[{"family":"inet","local":"10.0.0.1","prefixlen":24}]}]})");
  std::string pcap = Write(
      "two.pcap",
      PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{.src = "10.0.0.9", .dst = "10.0.0.1"}),
                                BuildFrame(FrameSpec{.src = "10.0.0.9", .dst = "10.0.0.2"})}));
  for (const char* backend : {"interp", "jit", "llvm"}) {
    ToolResult r = Run({"eval", rules, pcap, "--iif", "eth0", "--host", host, "--backend",
                        backend});
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(r.out, "0 drop\n1 accept\n") << backend;
  }
  ToolResult none = Run({"eval", rules, pcap, "--iif", "eth0"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("fib.nft:4: error: this rule asks the host"));
  EXPECT_THAT(none.out, IsEmpty());
  ToolResult unknown = Run({"eval", rules, pcap, "--iif", "wlan0", "--host", host});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("device 'wlan0' is not on the host (it has lo, eth0)"));
}

TEST_F(CliTest, EvalMalformedPcapIsAnError) {
  std::string pcap = Write("bad.pcap", "this is not a pcap file at all, sorry");
  ToolResult r = Run({"eval", kExampleRules, pcap});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith(pcap + ": error: "));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CliTest, EvalTruncatedPcapReportsAfterTheGoodFrames) {
  std::string whole = ReadAll(kExamplePcap);
  ASSERT_GT(whole.size(), 200u);
  // File header (24) + frame 0 (16 + its bytes) + half of frame 1's header.
  uint32_t frame0 = static_cast<uint8_t>(whole[24 + 8]) |
                    static_cast<uint8_t>(whole[24 + 9]) << 8;
  std::string pcap = Write("cut.pcap", whole.substr(0, 24 + 16 + frame0 + 20));
  ToolResult r = Run({"eval", kExampleRules, pcap, "--iif", "eth0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "0 accept\n");
  EXPECT_THAT(r.err, StartsWith(pcap + ": error: frame 1: "));
}

TEST_F(CliTest, EvalUnsupportedLinkType) {
  std::string pcap = Write("wifi.pcap", PcapBytes(kLinkIeee80211, {{1, 2, 3}}));
  ToolResult r = Run({"eval", kExampleRules, pcap});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unsupported link type 105"));
}

TEST_F(CliTest, EvalShortFramesDoNotCrash) {
  // Frames cut inside the Ethernet, IP and TCP headers: parsed as far as
  // they go; loads past the end never match.
  std::vector<uint8_t> syn = BuildFrame(FrameSpec{.src = "198.51.100.7",
                                                  .dst = "10.0.0.1",
                                                  .proto = 6,
                                                  .sport = 1,
                                                  .dport = 80});
  std::vector<std::vector<uint8_t>> frames;
  for (size_t len : {0, 5, 14, 20, 33, 34}) {
    frames.emplace_back(syn.begin(), syn.begin() + len);
  }
  std::string pcap = Write("short.pcap", PcapBytes(kLinkEthernet, frames));
  ToolResult r =
      Run({"eval", kExampleRules, pcap, "--iif", "eth0", "--explain"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Without a whole IPv4 header the ip table never sees the frame (no
  // base chain runs: the kernel's default accept); with the IP header but
  // no TCP bytes conntrack has no ports, calls it INVALID, and line 14 drops.
  EXPECT_EQ(r.out,
            "0 accept policy\n1 accept policy\n2 accept policy\n"
            "3 accept policy\n4 accept policy\n5 drop " +
                kExampleRules + ":14\n");
}

TEST_F(CliTest, EvalRandomFramesDoNotCrash) {
  // Random bytes behind a valid IPv4 or IPv6 Ethernet header, fixed seed.
  std::mt19937 rng(20261202);
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> frame = BuildFrame(FrameSpec{});
    frame.resize(14);
    frame[12] = i % 2 ? 0x86 : 0x08;
    frame[13] = i % 2 ? 0xdd : 0x00;
    size_t len = rng() % 120;
    for (size_t j = 0; j < len; ++j)
      frame.push_back(static_cast<uint8_t>(rng()));
    if (len > 0) frame[14] = i % 2 ? 0x60 : 0x45;  // plausible version/IHL
    frames.push_back(frame);
  }
  std::string pcap = Write("random.pcap", PcapBytes(kLinkEthernet, frames));
  for (const char* hook : {"input", "output", "forward"}) {
    ToolResult r = Run({"eval", kExampleRules, pcap, "--hook", hook, "--json"});
    EXPECT_EQ(r.exit_code, 0) << hook << r.err;
    EXPECT_EQ(Lines(r.out).size(), frames.size()) << hook;
  }
}

TEST_F(CliTest, EvalInterfaceNameDecides) {
  std::string rules = Write("t.ipt", Dump("-A INPUT -i eth1 -j DROP\n"));
  std::string pcap =
      Write("one.pcap", PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{})}));
  EXPECT_EQ(Run({"eval", rules, pcap, "--iif", "eth1", "--explain"}).out,
            "0 drop " + rules + ":5\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--iif", "eth0", "--explain"}).out,
            "0 accept policy\n");
}

// The conntrack sysctls are explicit: a bare ACK starts a flow under
// nf_conntrack_tcp_loose=1 (the kernel's default) and is INVALID under 0.
TEST_F(CliTest, EvalConntrackSysctlsAreFlags) {
  std::string rules = Write("t.ipt", Dump("-A INPUT -m conntrack --ctstate INVALID -j DROP\n"));
  std::string pcap = Write(
      "ack.pcap", PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{.tcp_flags = 0x10})}));
  EXPECT_EQ(Run({"eval", rules, pcap}).out, "0 accept\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--sysctl", "nf_conntrack_tcp_loose=0"}).out, "0 drop\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--path", "input", "--sysctl",
                 "net.netfilter.nf_conntrack_tcp_loose=0,nf_conntrack_udp_timeout=5"})
                .out,
            "0 drop\n");
  ToolResult bad = Run({"eval", rules, pcap, "--sysctl", "nf_conntrack_frobnicate=1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown 'nf_conntrack_frobnicate'"));
  EXPECT_EQ(Run({"eval", rules, pcap, "--sysctl", "nf_conntrack_tcp_loose=yes"}).exit_code, 2);
}

// --ct shows what conntrack made of each packet, at one hook and along
// the path: a query is new, its answer established in the reply direction,
// an unasked answer new in its own right.
TEST_F(CliTest, EvalCtShowsEachPacketsConntrackState) {
  std::string rules = Write("ct.nft", R"(table inet f {
  chain forwarding { type filter hook forward priority 0; policy drop;
    ct state established accept
    ct state new udp dport 53 accept
  }
}
)");
  const FrameSpec query{.proto = 17, .sport = 4000, .dport = 53};
  const FrameSpec answer{.src = "10.0.0.2", .dst = "10.0.0.1", .proto = 17, .sport = 53,
                         .dport = 4000};
  const FrameSpec stray{.src = "10.0.0.2", .dst = "10.0.0.1", .proto = 17, .sport = 53,
                        .dport = 4001};
  std::string pcap = Write("ct.pcap", PcapBytes(kLinkEthernet, {BuildFrame(query), BuildFrame(answer),
                                                                BuildFrame(stray)}));
  EXPECT_EQ(Run({"eval", rules, pcap, "--hook", "forward", "--ct"}).out,
            "0 accept ct=new\n1 accept ct=established,reply\n2 drop ct=new\n");
  EXPECT_EQ(Run({"eval", rules, pcap, "--path", "forward", "--oif", "eth1", "--ct"}).out,
            "0 accept forwarded ct=new\n1 accept forwarded ct=established,reply\n"
            "2 drop ct=new\n");
  EXPECT_THAT(Run({"eval", rules, pcap, "--hook", "forward", "--ct", "--json"}).out,
              HasSubstr(R"("ct":"established,reply")"));
}

// The same packets as Ethernet frames and as bare IP (DLT_RAW) get the same
// verdicts at the output hook, where the link header is dropped.
TEST_F(CliTest, EvalOutputHookRawAndEthernetAgree) {
  std::string rules = Write(
      "t.ipt", Dump("-A OUTPUT -o eth0 -p tcp -m tcp --dport 25 -j DROP\n"));
  std::vector<std::vector<uint8_t>> eth, raw;
  for (uint16_t port : {80, 25, 443}) {
    FrameSpec spec{.src = "10.0.0.1",
                   .dst = "198.51.100.7",
                   .proto = 6,
                   .sport = 40000,
                   .dport = port};
    eth.push_back(BuildFrame(spec));
    spec.ethernet = false;
    raw.push_back(BuildFrame(spec));
  }
  std::string eth_pcap = Write("eth.pcap", PcapBytes(kLinkEthernet, eth));
  std::string raw_pcap = Write("raw.pcap", PcapBytes(kLinkRaw, raw));
  const std::string expected = "0 accept\n1 drop\n2 accept\n";
  ToolResult from_eth =
      Run({"eval", rules, eth_pcap, "--hook", "output", "--oif", "eth0"});
  ToolResult from_raw =
      Run({"eval", rules, raw_pcap, "--hook", "output", "--oif", "eth0"});
  EXPECT_EQ(from_eth.exit_code, 0) << from_eth.err;
  EXPECT_EQ(from_eth.out, expected);
  EXPECT_EQ(from_raw.out, expected);
}

TEST_F(CliTest, EvalLinuxCookedCapture) {
  std::string rules =
      Write("t.ipt", Dump("-A INPUT -p tcp -m tcp --dport 22 -j DROP\n"));
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t port : {22, 80}) {
    std::vector<uint8_t> frame = {0, 0, 0, 1, 0, 6, 2,    0,
                                  0, 0, 0, 1, 0, 0, 0x08, 0x00};
    std::vector<uint8_t> ip =
        BuildFrame(FrameSpec{.dport = port, .ethernet = false});
    frame.insert(frame.end(), ip.begin(), ip.end());
    frames.push_back(frame);
  }
  std::string pcap = Write("sll.pcap", PcapBytes(113, frames));
  ToolResult r = Run({"eval", rules, pcap});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0 drop\n1 accept\n");
}

TEST_F(CliTest, EvalHookChecks) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--hook", "ingress"}, "hook ingress is not evaluated for iptables dumps"},
           {{"--host", "/nonexistent/host.json"}, "/nonexistent/host.json: error: cannot open"},
           {{"--hook", "sideways"}, "unknown hook 'sideways'"},
           {{"--backend", "tcc"}, "unknown --backend 'tcc' (expected interp, jit, llvm or auto)"},
           {{"--oif", "eth0"}, "--oif has no meaning at hook input"},
           {{"--iif", "a-very-long-interface-name"}, "longer than 15 bytes"},
       }) {
    std::vector<std::string> args = {"eval", kExampleRules, kExamplePcap};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ToolResult r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_THAT(r.out, IsEmpty());
  }
}

TEST_F(CliTest, EvalBadRulesetPrintsNoVerdicts) {
  std::string rules = Write("t.ipt", Dump("-A INPUT -j NOSUCH\n"));
  ToolResult r = Run({"eval", rules, kExamplePcap});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, MatchesRegex(ErrorAt(rules, "5") + "(.|\n)*"));
}

// pkttype comes from the destination MAC: broadcast, multicast, else host.
TEST_F(CliTest, EvalPkttypeFromDestinationMac) {
  std::string rules = Write(
      "t.ipt", Dump("-A INPUT -m pkttype --pkt-type broadcast -j DROP\n"
                    "-A INPUT -m pkttype --pkt-type multicast -j REJECT\n"));
  FrameSpec broadcast{.proto = 17, .dport = 137};
  broadcast.dst_mac = "ff:ff:ff:ff:ff:ff";
  FrameSpec multicast{.dst = "224.0.0.251", .proto = 17, .dport = 5353};
  multicast.dst_mac = "01:00:5e:00:00:fb";
  std::string pcap = Write(
      "m.pcap",
      PcapBytes(kLinkEthernet, {BuildFrame(broadcast), BuildFrame(multicast),
                                BuildFrame(FrameSpec{})}));
  ToolResult r = Run({"eval", rules, pcap, "--explain"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0 drop " + rules + ":5\n1 drop " + rules +
                       ":6\n2 accept policy\n");
}

// nft input: detected from content, any hook (here prerouting).
TEST_F(CliTest, EvalNftRuleset) {
  std::string rules =
      Write("t.nft",
            "table inet t {\n"
            "  chain c {\n"
            "    type filter hook prerouting priority 0; policy accept;\n"
            "    ip saddr 192.0.2.66 drop\n"
            "    tcp dport 22 drop\n"
            "  }\n"
            "}\n");
  std::string pcap = Write(
      "n.pcap",
      PcapBytes(kLinkEthernet, {BuildFrame(FrameSpec{.dport = 22}),
                                BuildFrame(FrameSpec{.dport = 80}),
                                BuildFrame(FrameSpec{.src = "192.0.2.66"})}));
  ToolResult r =
      Run({"eval", rules, pcap, "--hook", "prerouting", "--explain"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0 drop " + rules + ":5\n1 accept policy\n2 drop " + rules +
                       ":4\n");
}

}  // namespace
}  // namespace rulejit::testing
