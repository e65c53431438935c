// The kernel oracle harness, checked by hand-reasoned verdicts: an accept-all
// control run, an iptables-save FORWARD ruleset, an nft inet forward ruleset
// and an nft netdev ingress ruleset over the same frames; then, when the
// `rulejit` binary can evaluate the ruleset, rulejit eval must equal the
// kernel packet for packet.
//
// Needs root, `ip netns`, iptables-legacy and nft; skips with the reason
// otherwise. Every run uses fresh namespaces; each test checks none leaked.
#include "tests/kernel/kernel_oracle.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ------------------------------------------------------------ frames

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kIcmp6 = 58, kGre = 47;
constexpr uint8_t kSyn = 0x02, kAck = 0x10;

void Put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}

// RFC 1071 sum, to check the harness's checksum updates independently.
uint32_t SumWords(const uint8_t* p, size_t n, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n % 2) sum += static_cast<uint32_t>(p[n - 1] << 8);
  return sum;
}

uint16_t Fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Every frame gets 8 payload bytes: the harness writes the index into the
// first 4.
std::vector<uint8_t> BuildOracleFrame(FrameSpec spec) {
  spec.payload.assign(8, 0);
  return BuildFrame(spec);
}

// ------------------------------------------------------------ cases

// A frame and the verdict a careful reading of the rulesets gives it. The
// IPv4 frames have the same verdict under kIptables and kNftInet (they are
// the same policy); IPv6 frames only go through the nft ruleset.
struct Case {
  FrameSpec frame;
  bool accept;
};

constexpr char kSrc[] = "192.168.1.10";
constexpr char kDst[] = "198.51.100.20";
constexpr char kSrc6[] = "2001:db8:1::5";
constexpr char kDst6[] = "2001:db8:2::9";

// Assignments, not designated initializers: -Wextra flags the omitted ones.
FrameSpec Ip(std::string s, std::string d, uint8_t proto) {
  FrameSpec f;
  f.src = std::move(s);
  f.dst = std::move(d);
  f.proto = proto;
  return f;
}
FrameSpec Tcp(std::string s, std::string d, uint16_t sport, uint16_t dport,
              uint8_t flags = kSyn) {
  FrameSpec f = Ip(std::move(s), std::move(d), kTcp);
  f.sport = sport;
  f.dport = dport;
  f.tcp_flags = flags;
  return f;
}
FrameSpec Udp(std::string s, std::string d, uint16_t sport, uint16_t dport) {
  FrameSpec f = Ip(std::move(s), std::move(d), kUdp);
  f.sport = sport;
  f.dport = dport;
  return f;
}
FrameSpec Icmp(std::string s, std::string d, uint8_t proto, uint8_t type) {
  FrameSpec f = Ip(std::move(s), std::move(d), proto);
  f.icmp_type = type;
  return f;
}

std::vector<Case> Ipv4Cases() {
  FrameSpec low_ttl = Tcp(kSrc, kDst, 40004, 80);
  low_ttl.ttl = 2;  // the lowest TTL fw still forwards
  // Without conntrack nothing reassembles: fw forwards fragments as they are.
  FrameSpec first_fragment = Udp(kSrc, kDst, 40032, 1500);
  first_fragment.ip_id = 77;
  first_fragment.more_fragments = true;
  FrameSpec later_fragment = Udp(kSrc, kDst, 40033, 1500);
  later_fragment.ip_id = 78;
  later_fragment.frag_offset = 2;
  return {
      {Tcp("10.1.2.3", kDst, 40000, 22), false},         // 10/8 to ssh: drop
      {Tcp(kSrc, kDst, 40001, 22), true},                // other ssh: accept
      {Tcp("10.255.255.254", kDst, 40002, 22), false},   // 10/8 edge
      {Tcp("11.0.0.1", kDst, 40003, 22), true},          // just outside 10/8
      {low_ttl, true},                                   // web: 80
      {Tcp(kSrc, kDst, 40005, 443), true},               // web: 443
      {Tcp("203.0.113.7", kDst, 40006, 80), false},      // web returns, policy
      {Tcp("203.0.113.7", kDst, 5555, 80), true},        // returns, sport 5555 fwin->fwout
      {Tcp(kSrc, kDst, 40008, 8080, kSyn), true},        // SYN only
      {Tcp(kSrc, kDst, 40009, 8080, kSyn | kAck), false},
      {Tcp(kSrc, kDst, 40010, 8080, kAck), false},
      {Tcp(kSrc, kDst, 40011, 8081, kSyn), false},
      {Udp(kSrc, "192.0.2.10", 40012, 53), true},        // dns to 192.0.2/24
      {Udp(kSrc, kDst, 40013, 53), false},               // dns elsewhere
      {Udp(kSrc, kDst, 40014, 1000), true},              // range low edge
      {Udp(kSrc, kDst, 40015, 2000), true},              // range high edge
      {Udp(kSrc, kDst, 40016, 2001), false},
      {Udp(kSrc, kDst, 40017, 999), false},
      {Udp("172.16.0.1", kDst, 40018, 1500), false},     // negated 172.16/12
      {Udp("172.31.255.254", kDst, 40019, 1500), false},
      {Udp("172.32.0.1", kDst, 40020, 1500), true},
      {Udp("10.1.1.1", "192.0.2.200", 40021, 53), true},
      {Icmp(kSrc, kDst, kIcmp, 8), true},                // echo request
      {Icmp(kSrc, kDst, kIcmp, 0), false},               // echo reply
      {Icmp(kSrc, kDst, kIcmp, 13), false},              // timestamp
      {Udp(kSrc, kDst, 5555, 54), false},                // sport rule is tcp only
      {Tcp("10.1.2.3", kDst, 5555, 22), false},          // the drop comes first
      {Tcp("10.1.2.3", kDst, 5555, 23), true},
      {Tcp(kSrc, "10.9.9.9", 40028, 443), true},
      {Tcp("203.0.113.7", kDst, 40029, 443), false},
      {Ip(kSrc, kDst, kGre), false},                     // GRE: policy
      {Tcp("172.16.1.1", kDst, 40031, 80), true},
      {first_fragment, true},  // ports are there: the udp 1000:2000 rule
      {later_fragment, false}, // no ports: no port rule matches, policy
  };
}

std::vector<Case> Ipv6Cases() {
  FrameSpec with_ext_headers = Udp(kSrc6, kDst6, 41009, 1600);
  with_ext_headers.ext_headers = {0, 60};
  return {
      {Tcp(kSrc6, kDst6, 41000, 22), true},  // ip saddr 10/8 needs IPv4
      {Tcp(kSrc6, kDst6, 41001, 80), true},
      {Tcp(kSrc6, kDst6, 41002, 8080, kSyn), true},
      {Tcp(kSrc6, kDst6, 41003, 25), false},
      {Udp(kSrc6, kDst6, 41004, 1500), true},             // ip6 saddr 2001:db8:1::/48
      {Udp("2001:db8:3::5", kDst6, 41005, 1500), false},  // ip saddr != ... needs IPv4
      {Icmp(kSrc6, kDst6, kIcmp6, 128), true},            // echo request
      {Icmp(kSrc6, kDst6, kIcmp6, 129), false},           // echo reply
      {Udp(kSrc6, kDst6, 41008, 53), false},              // ip daddr rule needs IPv4
      {with_ext_headers, true},  // udp dport found past hop-by-hop + dest options
  };
}

constexpr char kIptablesRuleset[] = R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:web - [0:0]
-A FORWARD -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP
-A FORWARD -p tcp -m tcp --dport 22 -j ACCEPT
-A FORWARD -p tcp -j web
-A FORWARD -d 192.0.2.0/24 -p udp -m udp --dport 53 -j ACCEPT
-A FORWARD -p icmp -m icmp --icmp-type 8 -j ACCEPT
-A FORWARD ! -s 172.16.0.0/12 -p udp -m udp --dport 1000:2000 -j ACCEPT
-A FORWARD -i fwin -o fwout -p tcp -m tcp --sport 5555 -j ACCEPT
-A FORWARD -i fwin -o eth9 -j ACCEPT
-A FORWARD -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -j ACCEPT
-A web -s 203.0.113.0/24 -j RETURN
-A web -p tcp -m tcp --dport 80 -j ACCEPT
-A web -p tcp -m tcp --dport 443 -j ACCEPT
COMMIT
)";

constexpr char kIp6tablesRuleset[] = R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -p tcp -m tcp --dport 80 -j ACCEPT
-A FORWARD -p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT
COMMIT
)";

constexpr char kNftRuleset[] = R"(table inet filter {
  chain web {
    ip saddr 203.0.113.0/24 return
    tcp dport { 80, 443 } accept
  }
  chain forward {
    type filter hook forward priority 0; policy drop;
    ip saddr 10.0.0.0/8 tcp dport 22 drop
    tcp dport 22 accept
    meta l4proto tcp jump web
    ip daddr 192.0.2.0/24 udp dport 53 accept
    icmp type echo-request accept
    icmpv6 type echo-request accept
    ip saddr != 172.16.0.0/12 udp dport 1000-2000 accept
    ip6 saddr 2001:db8:1::/48 udp dport 1000-2000 accept
    iifname "fwin" oifname "fwout" tcp sport 5555 accept
    iifname "fwin" oifname "eth9" accept
    tcp flags & (syn | ack) == syn tcp dport 8080 accept
  }
}
)";

// Drops sources in 10/8 and UDP from 2001:db8:1::/48 before routing.
constexpr char kNetdevRuleset[] = R"(table netdev filter {
  chain ingress {
    type filter hook ingress device "fwin" priority 0; policy accept;
    ip saddr 10.0.0.0/8 drop
    ip6 saddr 2001:db8:1::/48 meta l4proto udp drop
  }
}
)";

// The same chain on two devices, fwin the second: packets arriving on
// fwin pass it as they pass the one-device chain.
constexpr char kTwoDeviceNetdevRuleset[] = R"(table netdev filter {
  chain ingress {
    type filter hook ingress devices = { "lo", "fwin" } priority 0; policy accept;
    ip saddr 10.0.0.0/8 drop
    ip6 saddr 2001:db8:1::/48 meta l4proto udp drop
  }
}
)";

std::vector<std::vector<uint8_t>> Frames(const std::vector<Case>& cases) {
  std::vector<std::vector<uint8_t>> out;
  for (const Case& c : cases) out.push_back(BuildOracleFrame(c.frame));
  return out;
}

std::vector<bool> Expected(const std::vector<Case>& cases) {
  std::vector<bool> out;
  for (const Case& c : cases) out.push_back(c.accept);
  return out;
}

std::vector<Case> AllCases() {
  std::vector<Case> all = Ipv4Cases();
  for (const Case& c : Ipv6Cases()) all.push_back(c);
  return all;
}

#define SKIP_UNLESS_AVAILABLE(syntax)                                  \
  do {                                                                 \
    absl::Status available = OracleAvailable(syntax);                  \
    if (!available.ok()) GTEST_SKIP() << available.message();          \
  } while (0)

// Fails the test if this process left a namespace behind.
class KernelOracleTest : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_THAT(OwnOracleNamespaces(), IsEmpty()); }
};

TEST(KernelOracleFrames, RejectsFramesWithoutRoomForTheIndex) {
  std::vector<uint8_t> frame = BuildOracleFrame(Tcp(kSrc, kDst, 1, 2));
  frame.resize(frame.size() - 8);  // drop the payload
  Put16(frame, 14 + 2, static_cast<uint16_t>(frame.size() - 14));
  absl::StatusOr<std::vector<std::vector<uint8_t>>> prepared =
      PrepareOracleFrames({BuildOracleFrame(Tcp(kSrc, kDst, 1, 2)), frame});
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr("frame 1"));
}

TEST(KernelOracleFrames, WritesIndexAndKeepsChecksumsValid) {
  std::vector<Case> cases = AllCases();
  absl::StatusOr<std::vector<std::vector<uint8_t>>> prepared =
      PrepareOracleFrames(Frames(cases));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  for (size_t i = 0; i < cases.size(); ++i) {
    const FrameSpec& spec = cases[i].frame;
    const std::vector<uint8_t>& got = (*prepared)[i];
    ASSERT_EQ(got.size(), BuildOracleFrame(spec).size());
    size_t payload = got.size() - 8;
    EXPECT_EQ((got[payload] << 24 | got[payload + 1] << 16 | got[payload + 2] << 8 |
               got[payload + 3]),
              static_cast<int>(i));
    // Sum over the L4 part including pseudo header must fold to 0 (valid).
    const bool v6 = spec.src.find(':') != std::string::npos;
    // frames.h gives each of these extension headers an 8-byte body.
    const size_t l3 = 14, l4 = l3 + (v6 ? 40 + 8 * spec.ext_headers.size() : 20);
    if (spec.proto == kGre || spec.frag_offset != 0) continue;  // no L4 checksum
    uint32_t sum = 0;
    if (spec.proto != kIcmp) {
      sum = SumWords(&got[l3 + (v6 ? 8 : 12)], v6 ? 32 : 8);
      sum += spec.proto + static_cast<uint32_t>(got.size() - l4);
    }
    EXPECT_EQ(Fold(SumWords(&got[l4], got.size() - l4, sum)), 0) << "frame " << i;
    EXPECT_EQ(got[0], 0x02);
    EXPECT_EQ(got[5], 0x02) << "destination MAC must be fwin's";
  }
}

TEST_F(KernelOracleTest, ControlRulesetDeliversEveryFrame) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kIptablesSave);
  std::vector<Case> cases = AllCases();
  OracleRuleset rs{.syntax = OracleSyntax::kIptablesSave,
                   .text = "*filter\n:FORWARD ACCEPT [0:0]\nCOMMIT\n"};
  absl::StatusOr<std::vector<bool>> arrived =
      KernelVerdicts(rs, Frames(cases), {.control_run = false});
  ASSERT_TRUE(arrived.ok()) << arrived.status();
  EXPECT_THAT(*arrived, ElementsAreArray(std::vector<bool>(cases.size(), true)));
}

TEST_F(KernelOracleTest, ControlRunRejectsFramesTheKernelDropsBeforeTheHook) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kNft);
  FrameSpec ttl1 = Tcp(kSrc, kDst, 1234, 80);
  ttl1.ttl = 1;  // fw would answer time-exceeded instead of forwarding
  std::vector<std::vector<uint8_t>> frames = {BuildOracleFrame(Tcp(kSrc, kDst, 1, 80)),
                                              BuildOracleFrame(ttl1)};
  OracleRuleset rs{.syntax = OracleSyntax::kNft, .text = kNftRuleset};
  absl::StatusOr<std::vector<bool>> arrived = KernelVerdicts(rs, frames);
  ASSERT_FALSE(arrived.ok());
  EXPECT_THAT(arrived.status().message(), HasSubstr("control run"));
  EXPECT_THAT(arrived.status().message(), HasSubstr("indexes 1"));
}

TEST_F(KernelOracleTest, RulesetTheToolRejectsIsAnErrorAndLeavesNothing) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kNft);
  OracleRuleset rs{.syntax = OracleSyntax::kNft,
                   .text = "table inet t {\n  chain c {\n"
                           "    type filter hook forward priority 0; policy accept;\n"
                           "    tcp dport 22 frobnicate\n  }\n}\n"};
  absl::StatusOr<std::vector<bool>> arrived =
      KernelVerdicts(rs, Frames(Ipv4Cases()), {.control_run = false});
  ASSERT_FALSE(arrived.ok());
  EXPECT_THAT(arrived.status().message(), HasSubstr("rejected"));
  EXPECT_THAT(arrived.status().message(), HasSubstr("/dev/stdin:4:"));  // nft's own error
}

TEST_F(KernelOracleTest, IptablesForwardVerdictsMatchHandReasoning) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kIptablesSave);
  std::vector<Case> cases = Ipv4Cases();
  OracleRuleset rs{.syntax = OracleSyntax::kIptablesSave, .text = kIptablesRuleset};
  absl::StatusOr<std::vector<bool>> arrived = KernelVerdicts(rs, Frames(cases));
  ASSERT_TRUE(arrived.ok()) << arrived.status();
  EXPECT_THAT(*arrived, ElementsAreArray(Expected(cases)));
}

// A ruleset altered by one rule must change exactly the frames it decides:
// the harness can tell rulesets apart.
TEST_F(KernelOracleTest, OneChangedRuleChangesExactlyItsFrames) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kIptablesSave);
  std::vector<Case> cases = Ipv4Cases();
  std::string altered = kIptablesRuleset;
  const std::string rule = "-s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP";
  altered.replace(altered.find(rule), rule.size(),
                  "-s 10.0.0.0/8 -p tcp -m tcp --dport 23 -j DROP");
  std::vector<bool> expected = Expected(cases);
  // 10/8 to ssh (also from sport 5555) now reaches "--dport 22 -j ACCEPT".
  expected[0] = expected[2] = expected[26] = true;
  expected[27] = false;              // 10.1.2.3:5555 -> 23 now dropped
  OracleRuleset rs{.syntax = OracleSyntax::kIptablesSave, .text = altered};
  absl::StatusOr<std::vector<bool>> arrived =
      KernelVerdicts(rs, Frames(cases), {.control_run = false});
  ASSERT_TRUE(arrived.ok()) << arrived.status();
  EXPECT_THAT(*arrived, ElementsAreArray(expected));
}

// Only the IPv6 tables are loaded: IPv4 frames pass untouched.
TEST_F(KernelOracleTest, Ip6tablesForwardVerdictsMatchHandReasoning) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kIp6tablesSave);
  std::vector<Case> cases = AllCases();
  std::vector<bool> expected;
  for (const Case& c : cases) {
    const bool v6 = c.frame.src.find(':') != std::string::npos;
    const bool web = c.frame.proto == kTcp && c.frame.dport == 80;
    const bool ping = c.frame.proto == kIcmp6 && c.frame.icmp_type == 128;
    expected.push_back(!v6 || web || ping);
  }
  OracleRuleset rs{.syntax = OracleSyntax::kIp6tablesSave, .text = kIp6tablesRuleset};
  absl::StatusOr<std::vector<bool>> arrived = KernelVerdicts(rs, Frames(cases));
  ASSERT_TRUE(arrived.ok()) << arrived.status();
  EXPECT_THAT(*arrived, ElementsAreArray(expected));
}

TEST_F(KernelOracleTest, NftForwardVerdictsMatchHandReasoning) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kNft);
  std::vector<Case> cases = AllCases();
  OracleRuleset rs{.syntax = OracleSyntax::kNft, .text = kNftRuleset};
  absl::StatusOr<std::vector<bool>> arrived = KernelVerdicts(rs, Frames(cases));
  ASSERT_TRUE(arrived.ok()) << arrived.status();
  EXPECT_THAT(*arrived, ElementsAreArray(Expected(cases)));
}

TEST_F(KernelOracleTest, NftNetdevIngressVerdictsMatchHandReasoning) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kNft);
  std::vector<Case> cases = AllCases();
  std::vector<bool> expected;
  for (const Case& c : cases) {
    const bool from_10 = c.frame.src.rfind("10.", 0) == 0;
    const bool udp_from_db8_1 =
        c.frame.src.rfind("2001:db8:1:", 0) == 0 && c.frame.proto == kUdp;
    expected.push_back(!from_10 && !udp_from_db8_1);
  }
  OracleRuleset rs{.syntax = OracleSyntax::kNft,
                   .text = kNetdevRuleset,
                   .hook = OracleHook::kNetdevIngress};
  absl::StatusOr<std::vector<bool>> arrived = KernelVerdicts(rs, Frames(cases));
  ASSERT_TRUE(arrived.ok()) << arrived.status();
  EXPECT_THAT(*arrived, ElementsAreArray(expected));
}

// ------------------------------------------------------------ rulejit eval

// One kernel-vs-rulejit comparison: the disagreeing frames ("i: kernel X,
// rulejit Y") and where its files are.
struct Comparison {
  std::vector<std::string> mismatches;
  std::string dir;     // ruleset, frames.pcap, kernel.txt, rulejit.txt
  std::string replay;  // the command that replays rulejit's side
};

// Runs the frames through the kernel with `kernel_rs` and through
// `rulejit eval` with `rulejit_text` (the same text, except in the test that
// plants a difference). Unavailable when rulejit cannot take part: no binary,
// or `rulejit check` rejects the ruleset (frontend not there yet).
absl::StatusOr<Comparison> CompareWithRulejit(const OracleRuleset& kernel_rs,
                                              const std::string& rulejit_text,
                                              const std::vector<Case>& cases,
                                              const std::string& file_name,
                                              const std::string& hook_args) {
  if (access(RULEJIT_TOOL, X_OK) != 0) {
    return absl::UnavailableError(absl::StrCat("no rulejit binary at ", RULEJIT_TOOL));
  }
  char dir_template[] = "/tmp/rulejit-kernel-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
  Comparison cmp;
  cmp.dir = dir_template;
  const std::string rules = absl::StrCat(cmp.dir, "/", file_name);
  const std::string pcap = absl::StrCat(cmp.dir, "/frames.pcap");
  std::ofstream(rules) << rulejit_text;
  absl::StatusOr<std::vector<std::vector<uint8_t>>> prepared =
      PrepareOracleFrames(Frames(cases));
  if (!prepared.ok()) return prepared.status();
  if (!WritePcap(pcap, *prepared)) return absl::InternalError("cannot write " + pcap);

  ToolOutput check = RunTool(absl::StrCat("check ", rules));
  if (check.exit_code != 0) {
    std::filesystem::remove_all(cmp.dir);
    return absl::UnavailableError(
        absl::StrCat("rulejit check does not accept this ruleset yet: ", check.out));
  }
  absl::StatusOr<std::vector<bool>> kernel = KernelVerdicts(kernel_rs, Frames(cases));
  if (!kernel.ok()) return kernel.status();
  const std::string eval_args = absl::StrCat("eval ", rules, " ", pcap, " ", hook_args);
  cmp.replay = absl::StrCat(RULEJIT_TOOL, " ", eval_args);
  ToolOutput eval = RunTool(eval_args);
  if (eval.exit_code != 0) {
    return absl::InternalError(absl::StrCat("`", cmp.replay, "` failed: ", eval.out));
  }
  absl::StatusOr<std::vector<bool>> ours = ParseEval(eval.out, cases.size());
  if (!ours.ok()) return ours.status();
  std::ofstream(absl::StrCat(cmp.dir, "/kernel.txt")) << VerdictLines(*kernel);
  std::ofstream(absl::StrCat(cmp.dir, "/rulejit.txt")) << eval.out;
  for (size_t i = 0; i < cases.size(); ++i) {
    if ((*ours)[i] != (*kernel)[i]) {
      cmp.mismatches.push_back(absl::StrCat(i, ": kernel ", (*kernel)[i] ? "accept" : "drop",
                                            ", rulejit ", (*ours)[i] ? "accept" : "drop"));
    }
  }
  return cmp;
}

// Kernel and rulejit must agree on every frame; on a mismatch the files stay
// in the printed directory for replay with --explain.
void ExpectRulejitAgrees(const OracleRuleset& rs, const std::vector<Case>& cases,
                         const std::string& file_name, const std::string& hook_args) {
  absl::StatusOr<Comparison> cmp = CompareWithRulejit(rs, rs.text, cases, file_name, hook_args);
  if (absl::IsUnavailable(cmp.status())) GTEST_SKIP() << cmp.status().message();
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  EXPECT_THAT(cmp->mismatches, IsEmpty())
      << "files kept in " << cmp->dir << "; replay: " << cmp->replay << " --explain";
  if (cmp->mismatches.empty()) std::filesystem::remove_all(cmp->dir);
}

// The comparison can fail: rulejit evaluates the ruleset with one rule
// changed, the kernel the original; exactly that rule's frames disagree.
TEST_F(KernelOracleTest, PlantedDifferenceIsReported) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kIptablesSave);
  std::string altered = kIptablesRuleset;
  const std::string rule = "-s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP";
  altered.replace(altered.find(rule), rule.size(),
                  "-s 10.0.0.0/8 -p tcp -m tcp --dport 23 -j DROP");
  absl::StatusOr<Comparison> cmp =
      CompareWithRulejit({.syntax = OracleSyntax::kIptablesSave, .text = kIptablesRuleset},
                         altered, Ipv4Cases(), "planted.ipt",
                         "--hook forward --iif fwin --oif fwout");
  if (absl::IsUnavailable(cmp.status())) GTEST_SKIP() << cmp.status().message();
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  std::filesystem::remove_all(cmp->dir);
  EXPECT_THAT(cmp->mismatches,
              ElementsAre("0: kernel drop, rulejit accept", "2: kernel drop, rulejit accept",
                          "26: kernel drop, rulejit accept",
                          "27: kernel accept, rulejit drop"));
}

TEST_F(KernelOracleTest, RulejitEvalAgreesOnIptablesRuleset) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kIptablesSave);
  ExpectRulejitAgrees({.syntax = OracleSyntax::kIptablesSave, .text = kIptablesRuleset},
                     Ipv4Cases(), "forward.ipt", "--hook forward --iif fwin --oif fwout");
}

TEST_F(KernelOracleTest, RulejitEvalAgreesOnIp6tablesRuleset) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kIp6tablesSave);
  ExpectRulejitAgrees({.syntax = OracleSyntax::kIp6tablesSave, .text = kIp6tablesRuleset},
                     Ipv6Cases(), "forward6.ipt", "--hook forward --iif fwin --oif fwout");
}

TEST_F(KernelOracleTest, RulejitEvalAgreesOnNftRuleset) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kNft);
  ExpectRulejitAgrees({.syntax = OracleSyntax::kNft, .text = kNftRuleset}, AllCases(),
                     "forward.nft", "--hook forward --iif fwin --oif fwout");
}

TEST_F(KernelOracleTest, RulejitEvalAgreesOnNetdevIngressRuleset) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kNft);
  ExpectRulejitAgrees({.syntax = OracleSyntax::kNft,
                      .text = kNetdevRuleset,
                      .hook = OracleHook::kNetdevIngress},
                     AllCases(), "ingress.nft", "--hook ingress --iif fwin");
}

TEST_F(KernelOracleTest, RulejitEvalAgreesOnTwoDeviceNetdevIngressRuleset) {
  SKIP_UNLESS_AVAILABLE(OracleSyntax::kNft);
  ExpectRulejitAgrees({.syntax = OracleSyntax::kNft,
                      .text = kTwoDeviceNetdevRuleset,
                      .hook = OracleHook::kNetdevIngress},
                     AllCases(), "ingress2.nft", "--hook ingress --iif fwin");
}

}  // namespace
}  // namespace rulejit::testing
