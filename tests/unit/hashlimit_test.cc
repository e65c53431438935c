// The hashlimit match: what -m hashlimit lowers to (libxt_hashlimit
// revision 3's units and defaults), what is refused, the IR line read back,
// and the clock-dependent answers of ir/hashlimit_eval.cc that the kernel
// differential (tests/kernel/hashlimit_kernel_test.cc) cannot reach
// without waiting: refill over time, expiry, the full table, rate windows.
#include <string>

#include "gtest/gtest.h"
#include "ir/hashlimit_eval.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "packet/parse.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"

namespace rulejit::frontends::iptables_test {
namespace {

using ir::EvalHashlimit;
using ir::Hashlimit;
using ir::HashlimitResult;
using ir::HashlimitTables;
using testing::BuildFrame;
using testing::FrameSpec;

constexpr uint64_t kSecond = 1000000000;

TEST(IptablesHashlimit, LowersWithRevision3UnitsAndDefaults) {
  // 1/min: avg = 1000000 x 60; expire defaults to the unit (60 s).
  EXPECT_EQ(Lower("-m hashlimit --hashlimit-upto 1/min --hashlimit-burst 3 "
                  "--hashlimit-mode srcip,dstport --hashlimit-name ssh"),
            "[ hashlimit name ssh mode srcip,dstport avg 60000000 burst 3 srcmask 32 "
            "dstmask 32 size 0 max 0 gcinterval 1000 expire 60000 ]");
  // above = inverted; ! above = upto; masks; /s prefix of second.
  EXPECT_EQ(Lower("-m hashlimit --hashlimit-above 10/s --hashlimit-name a "
                  "--hashlimit-srcmask 24 --hashlimit-htable-max 2 --hashlimit-htable-expire 500"),
            "[ hashlimit name a mode none avg 100000 burst 5 invert srcmask 24 dstmask 32 "
            "size 0 max 2 gcinterval 1000 expire 500 ]");
  EXPECT_NE(Lower("-m hashlimit ! --hashlimit-above 10 --hashlimit-name a").find("burst 5 srcmask"),
            std::string::npos);
  // Byte rate: avg = 0xffffffff / (1024/16 + 1); a 2kb burst is 2 seconds of
  // it; the expiry 60 s.
  EXPECT_EQ(Lower("-m hashlimit --hashlimit-upto 1kb/s --hashlimit-burst 2kb --hashlimit-name b"),
            "[ hashlimit name b mode none avg 66076419 burst 2 bytes srcmask 32 dstmask 32 "
            "size 0 max 0 gcinterval 1000 expire 60000 ]");
  // Rate match: avg per unit, interval the unit.
  EXPECT_EQ(Lower("-m hashlimit --hashlimit-upto 120/min --hashlimit-rate-match "
                  "--hashlimit-name r --hashlimit-mode dstip"),
            "[ hashlimit name r mode dstip avg 8333 burst 5 rate-match interval 60 srcmask 32 "
            "dstmask 32 size 0 max 0 gcinterval 1000 expire 60000 ]");
  EXPECT_NE(Lower("-m hashlimit --hashlimit-upto 1/s --hashlimit-name six", IpVersion::kIpv6)
                .find("srcmask 128 dstmask 128"),
            std::string::npos);
}

TEST(IptablesHashlimit, RefusedAsIptablesAndTheKernelRefuseThem) {
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/s"), "--hashlimit-name"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-name a"), "-upto or -above"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/fortnight --hashlimit-name a"),
                      "invalid hashlimit rate"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 0 --hashlimit-name a"),
                      "invalid hashlimit rate"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 2000000/s --hashlimit-name a"),
                      "rate too fast"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/s --hashlimit-above 1/s "
                            "--hashlimit-name a"), "one of"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/s --hashlimit-burst 1000001 "
                            "--hashlimit-name a"), "invalid hashlimit burst"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/s --hashlimit-mode srcip,proto "
                            "--hashlimit-name a"), "invalid hashlimit mode"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/s --hashlimit-srcmask 33 "
                            "--hashlimit-name a"), "invalid value"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/s --hashlimit-name a/b"),
                      "invalid hashlimit name"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/s --hashlimit-htable-expire 0 "
                            "--hashlimit-name a"), "zero hashlimit expiry"));
  // avg x burst x credits per unit wraps 64 bits (the kernel refuses it: ERANGE).
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1/day --hashlimit-burst 4 "
                            "--hashlimit-name a"), "overflow"));
  EXPECT_TRUE(Refused(Lower("-m hashlimit --hashlimit-upto 1kb/s --hashlimit-burst 100 "
                            "--hashlimit-name a"), "burst cannot be smaller than 1024b"));
}

TEST(IptablesHashlimit, TheIrLineReadsBack) {
  for (const char* rule :
       {"-m hashlimit --hashlimit-upto 1/min --hashlimit-mode srcip,srcport,dstip,dstport "
        "--hashlimit-name x --hashlimit-htable-size 64 --hashlimit-htable-gcinterval 50",
        "-m hashlimit --hashlimit-above 3mb/s --hashlimit-burst 5mb --hashlimit-name y "
        "--hashlimit-rate-match --hashlimit-rate-interval 7"}) {
    const std::string line = Lower(rule);
    ASSERT_EQ(line.rfind("[ hashlimit", 0), 0u) << line;
    absl::StatusOr<ir::Expr> back = ir::ParseExprLine(line);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << line;
    EXPECT_EQ(ir::PrintExpr(*back), line);
  }
}

// The hashlimit matches of `text`, in chain order, as the IR prints them.
std::vector<std::string> HashlimitsOf(const Parsed& p) {
  std::vector<std::string> out;
  if (!p.rs.ok()) return {"ERROR: " + p.diags};
  for (const ir::Table& t : p.rs->tables) {
    for (const ir::Chain& c : t.chains) {
      for (const ir::Rule& r : c.rules) {
        for (const ir::Node& n : r.exprs) {
          if (std::holds_alternative<Hashlimit>(n.expr)) out.push_back(c.name + ": " + ir::PrintExpr(n.expr));
        }
      }
    }
  }
  return out;
}

// A shared name is one kernel table with the settings of the rule checked
// first: iptables-legacy checks the blob's order (built-in chains, then user
// chains by name), iptables-nft the lines' order. Each rule keeps its own
// direction (upto or above).
TEST(IptablesHashlimit, ASharedNameTakesTheFirstCheckedRulesTableSettings) {
  const std::string dump =
      "*filter\n:INPUT ACCEPT [0:0]\n:zz - [0:0]\n:aa - [0:0]\n"
      "-A INPUT -j zz\n"
      "-A zz -m hashlimit --hashlimit-upto 1/min --hashlimit-burst 5 --hashlimit-mode dstip "
      "--hashlimit-name s -j ACCEPT\n"
      "-A aa -m hashlimit --hashlimit-above 1/hour --hashlimit-burst 2 --hashlimit-mode srcip "
      "--hashlimit-name s -j DROP\n"
      "COMMIT\n";
  const std::string zz_text_first =
      "zz: [ hashlimit name s mode dstip avg 60000000 burst 5 srcmask 32 dstmask 32 size 0 "
      "max 0 gcinterval 1000 expire 60000 ]";
  const std::string aa_blob_first =
      "aa: [ hashlimit name s mode srcip avg 3600000000 burst 2 invert srcmask 32 dstmask 32 "
      "size 0 max 0 gcinterval 1000 expire 3600000 ]";
  EXPECT_EQ(HashlimitsOf(Parse(dump, IpVersion::kAuto, IptablesFlavor::kLegacy)),
            (std::vector<std::string>{
                "zz: [ hashlimit name s mode srcip avg 3600000000 burst 2 srcmask 32 dstmask 32 "
                "size 0 max 0 gcinterval 1000 expire 3600000 ]",
                aa_blob_first}));
  EXPECT_EQ(HashlimitsOf(Parse(dump, IpVersion::kAuto, IptablesFlavor::kNft)),
            (std::vector<std::string>{
                zz_text_first,
                "aa: [ hashlimit name s mode dstip avg 60000000 burst 5 invert srcmask 32 "
                "dstmask 32 size 0 max 0 gcinterval 1000 expire 60000 ]"}));
}

TEST(IptablesHashlimit, ASharedNameMixingByteOrRateMatchModesIsRefused) {
  const std::string dump =
      "*filter\n:INPUT ACCEPT [0:0]\n"
      "-A INPUT -m hashlimit --hashlimit-upto 1/min --hashlimit-name s -j ACCEPT\n"
      "-A INPUT -m hashlimit --hashlimit-upto 1kb/s --hashlimit-name s -j ACCEPT\n"
      "COMMIT\n";
  const Parsed p = Parse(dump);
  ASSERT_FALSE(p.rs.ok());
  EXPECT_NE(p.diags.find("3:"), std::string::npos) << p.diags;
  EXPECT_NE(p.diags.find("shared with a rule that counts packets"), std::string::npos) << p.diags;
}

struct Packet {
  std::vector<uint8_t> bytes;
  PacketView view;
  Packet(const char* src, uint16_t sport, size_t payload = 4)
      : bytes(BuildFrame(FrameSpec{.src = src, .proto = 17, .sport = sport, .dport = 53,
                                   .payload = std::vector<uint8_t>(payload, 0)})),
        view(packet::ParseEthernet(bytes.data(), static_cast<uint32_t>(bytes.size()))) {}
};

Hashlimit Rule(uint64_t avg, uint64_t burst, uint32_t mode = ir::kHashlimitSrcIp) {
  Hashlimit e;
  e.name = "t";
  e.mode = mode;
  e.avg = avg;
  e.burst = burst;
  e.expire = 10000;
  return e;
}

bool Match(const Hashlimit& e, const Packet& p, uint64_t now, HashlimitTables& t) {
  return EvalHashlimit(e, p.view, now, t) == HashlimitResult::kMatch;
}

TEST(HashlimitEval, BurstThenOnePacketPerPeriodPerKey) {
  HashlimitTables t;
  const Hashlimit e = Rule(1000000, 2);  // 1/s, burst 2
  Packet a("10.0.0.1", 1), b("10.0.0.2", 1);
  const uint64_t t0 = 100 * kSecond;
  EXPECT_TRUE(Match(e, a, t0, t));
  EXPECT_TRUE(Match(e, a, t0, t));
  EXPECT_FALSE(Match(e, a, t0, t));
  EXPECT_TRUE(Match(e, b, t0, t));  // its own bucket
  EXPECT_FALSE(Match(e, a, t0 + kSecond / 2, t));
  EXPECT_TRUE(Match(e, a, t0 + kSecond + kSecond / 2, t));  // one credit back
  EXPECT_FALSE(Match(e, a, t0 + kSecond + kSecond / 2, t));
}

TEST(HashlimitEval, PortsAndMasksMakeTheKey) {
  HashlimitTables t;
  Hashlimit e = Rule(1000000, 1, ir::kHashlimitSrcIp | ir::kHashlimitSrcPort);
  e.srcmask = 24;
  Packet a("10.0.0.1", 1), b("10.0.0.2", 1), c("10.0.0.2", 2);
  EXPECT_TRUE(Match(e, a, kSecond, t));
  EXPECT_FALSE(Match(e, b, kSecond, t));  // same /24, same port
  EXPECT_TRUE(Match(e, c, kSecond, t));   // another port
}

TEST(HashlimitEval, IdleKeysExpireAndAFullTableDrops) {
  HashlimitTables t;
  Hashlimit e = Rule(60000000, 1);  // 1/min, burst 1
  e.size = 1;
  e.max = 2;
  Packet a("10.0.0.1", 1), b("10.0.0.2", 1), c("10.0.0.3", 1);
  EXPECT_TRUE(Match(e, a, kSecond, t));
  EXPECT_FALSE(Match(e, a, 2 * kSecond, t));
  EXPECT_TRUE(Match(e, b, 2 * kSecond, t));
  EXPECT_EQ(EvalHashlimit(e, c.view, 2 * kSecond, t), HashlimitResult::kHotdrop);
  // 10 s after a's last use its entry is gone: a new full bucket.
  EXPECT_TRUE(Match(e, a, 13 * kSecond, t));
}

TEST(HashlimitEval, RateMatchCountsPerIntervalWindow) {
  HashlimitTables t;
  Hashlimit e = Rule(500000, 1);  // 2 per second + burst 1: 3 per window
  e.rate_match = true;
  e.interval = 1;
  Packet a("10.0.0.1", 1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Match(e, a, kSecond, t)) << i;
  EXPECT_FALSE(Match(e, a, kSecond, t));
  // The next window: the last one went over the rate, so none match.
  EXPECT_FALSE(Match(e, a, 2 * kSecond + kSecond / 10, t));
  // And the one after (1 packet in the window before): matches again.
  EXPECT_TRUE(Match(e, a, 3 * kSecond + kSecond / 5, t));
}

TEST(HashlimitEval, ByteRateRefillsTheBucketBurstTimes) {
  HashlimitTables t;
  // 1kb/s, burst 2 (seconds): packets of 1028 bytes cost a whole second.
  Hashlimit e = Rule(66076419, 2);
  e.bytes = true;
  Packet big("10.0.0.1", 1, 1000);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Match(e, big, kSecond, t)) << i;
  EXPECT_FALSE(Match(e, big, kSecond, t));
}

}  // namespace
}  // namespace rulejit::frontends::iptables_test
