// The connection's counters and tuples: nft's `ct packets|bytes|avgpkt`
// and `ct original|reply saddr ...`, iptables' connbytes and conntrack
// --ctorig*/--ctrepl* options, read from PacketMeta (ct_packets,
// ct_bytes, ct_tuple, which runtime::Conntrack fills) on every tier; the
// ct keys the model has no value for, refused where written. The kernel's
// verdicts are in tests/kernel/conntrack_kernel_test.cc
// (CountersAndTuples).
#include <arpa/inet.h>

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/iptables_test_util.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using frontends::iptables_test::Lower;
using frontends::iptables_test::Refused;
using testing::BuildFrame;
using testing::FrameSpec;

TEST(IptablesConnbytes, LowersAsIptablesTranslateWritesIt) {
  EXPECT_EQ(Lower("-m connbytes --connbytes 200 --connbytes-dir original --connbytes-mode packets"),
            "[ ct load packets => reg 1 , dir original ]\n"
            "[ byteorder reg 1 = hton(reg 1, 8, 8) ]\n"
            "[ cmp gte reg 1 0x00000000 0xc8000000 ]");
  EXPECT_EQ(Lower("-m connbytes ! --connbytes 200 --connbytes-dir reply --connbytes-mode packets"),
            "[ ct load packets => reg 1 , dir reply ]\n"
            "[ byteorder reg 1 = hton(reg 1, 8, 8) ]\n"
            "[ cmp lt reg 1 0x00000000 0xc8000000 ]");
  EXPECT_EQ(Lower("-m connbytes ! --connbytes 200:600 --connbytes-dir both --connbytes-mode bytes"),
            "[ ct load bytes => reg 1 ]\n"
            "[ byteorder reg 1 = hton(reg 1, 8, 8) ]\n"
            "[ range neq reg 1 0x00000000 0xc8000000 0x00000000 0x58020000 ]");
}

TEST(IptablesConnbytes, RefusedAsLibxtConnbytesRefusesIt) {
  EXPECT_TRUE(Refused(Lower("-m connbytes --connbytes 5:4 --connbytes-dir both --connbytes-mode bytes"),
                      "invalid connbytes range '5:4'"));
  EXPECT_TRUE(Refused(Lower("-m connbytes --connbytes 5 --connbytes-dir up --connbytes-mode bytes"),
                      "invalid --connbytes-dir 'up'"));
  EXPECT_TRUE(Refused(Lower("-m connbytes --connbytes 5 --connbytes-dir both --connbytes-mode kb"),
                      "invalid --connbytes-mode 'kb'"));
  EXPECT_TRUE(Refused(Lower("-m connbytes --connbytes 5 --connbytes-mode bytes"),
                      "needs --connbytes, --connbytes-dir and --connbytes-mode"));
}

// A flow with 3 packets of 100 bytes sent and 1 of 40 received.
PacketMeta CountedFlow() {
  PacketMeta meta;
  meta.ct_valid = true;
  meta.ct_state = kCtStateEstablished;
  meta.ct_packets[0] = 3;
  meta.ct_bytes[0] = 300;
  meta.ct_packets[1] = 1;
  meta.ct_bytes[1] = 40;
  return meta;
}

Verdict Classify(const Program& program, const PacketMeta& meta) {
  return nft_test::VerdictOf(program, Hook::kForward,
                             BuildFrame(FrameSpec{.proto = 17, .dport = 53}), meta);
}

// One rule that drops what `match` matches.
std::string DropIf(const std::string& match) {
  return "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD " + match + " -j DROP\nCOMMIT\n";
}

TEST(IptablesConnbytes, EveryBackendCountsAsXtConnbytes) {
  struct Case {
    std::string match;
    bool drops;
  };
  const Case cases[] = {
      {"-m connbytes --connbytes 3:3 --connbytes-dir original --connbytes-mode packets", true},
      {"-m connbytes --connbytes 4 --connbytes-dir both --connbytes-mode packets", true},
      {"-m connbytes --connbytes 5 --connbytes-dir both --connbytes-mode packets", false},
      {"-m connbytes --connbytes 41 --connbytes-dir reply --connbytes-mode bytes", false},
      // (300 + 40) / 4 = 85
      {"-m connbytes --connbytes 85:85 --connbytes-dir both --connbytes-mode avgpkt", true},
      {"-m connbytes --connbytes 100:100 --connbytes-dir original --connbytes-mode avgpkt", true},
      // KERNEL: `!` of a single value still matches it.
      {"-m connbytes ! --connbytes 3:3 --connbytes-dir original --connbytes-mode packets", true},
      {"-m connbytes ! --connbytes 2:4 --connbytes-dir original --connbytes-mode packets", false},
      {"-m connbytes ! --connbytes 4 --connbytes-dir original --connbytes-mode packets", true},
  };
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    for (const Case& c : cases) {
      std::unique_ptr<const Program> program = nft_test::CompileFor(DropIf(c.match), backend);
      ASSERT_NE(program, nullptr) << c.match;
      EXPECT_EQ(Classify(*program, CountedFlow()), c.drops ? Verdict::kDrop : Verdict::kAccept)
          << c.match << " on " << BackendName(backend);
      // Without a conntrack entry it matches neither way.
      EXPECT_EQ(Classify(*program, PacketMeta{}), Verdict::kAccept) << c.match;
    }
  }
}

TEST(CtTuple, EveryBackendReadsTheEntrysTuples) {
  PacketMeta meta = CountedFlow();
  for (int dir = 0; dir < 2; ++dir) {
    CtTuple& t = meta.ct_tuple[dir];
    t.family = kNfProtoIpv4;
    t.proto = 6;
    inet_pton(AF_INET, dir == 0 ? "10.1.0.1" : "10.30.0.1", t.src);
    inet_pton(AF_INET, dir == 0 ? "10.30.0.1" : "192.0.2.1", t.dst);  // DNAT's reply
    const uint16_t sport = htons(dir == 0 ? 40000 : 80), dport = htons(dir == 0 ? 80 : 40000);
    std::memcpy(t.proto_src, &sport, 2);
    std::memcpy(t.proto_dst, &dport, 2);
  }
  const char nft[] =
      "table ip t {\n chain f {\n  type filter hook forward priority 0; policy drop;\n"
      "  ct l3proto ipv4 ct protocol tcp ct original saddr 10.1.0.1 ct reply daddr 192.0.2.1"
      " ct original proto-dst 80 ct reply proto-src 80 ct original ip daddr 10.30.0.1"
      " accept\n }\n}\n";
  const std::string iptables = DropIf(
      "-m conntrack ! --ctorigsrc 10.1.0.1 --ctrepldst 192.0.2.1 --ctorigdstport 80");
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(nft, backend);
    ASSERT_NE(program, nullptr);
    EXPECT_EQ(Classify(*program, meta), Verdict::kAccept) << BackendName(backend);
    PacketMeta other = meta;
    other.ct_tuple[1].dst[3] = 2;
    EXPECT_EQ(Classify(*program, other), Verdict::kDrop) << BackendName(backend);
    // An IPv6 entry has no `ct original ip daddr`.
    other = meta;
    other.ct_tuple[0].family = other.ct_tuple[1].family = kNfProtoIpv6;
    EXPECT_EQ(Classify(*program, other), Verdict::kDrop) << BackendName(backend);

    std::unique_ptr<const Program> ipt = nft_test::CompileFor(iptables, backend);
    ASSERT_NE(ipt, nullptr);
    EXPECT_EQ(Classify(*ipt, meta), Verdict::kAccept) << BackendName(backend);
    other = meta;
    other.ct_tuple[0].src[3] = 9;
    EXPECT_EQ(Classify(*ipt, other), Verdict::kDrop) << BackendName(backend);
  }
}

// xt_helper reads the master's helper; no connection has a master.
TEST(IptablesHelper, MatchesNothingAndWithNotEverything) {
  EXPECT_EQ(Lower("-m helper --helper ftp"),
            "[ ct load helper => reg 1 ]\n"
            "[ cmp eq reg 1 0x00707466 0x00000000 0x00000000 0x00000000 ]");
  EXPECT_EQ(Lower("-m helper ! --helper ftp"), "");
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    std::unique_ptr<const Program> plain =
        nft_test::CompileFor(DropIf("-m helper --helper ftp"), backend);
    std::unique_ptr<const Program> inverted =
        nft_test::CompileFor(DropIf("-m helper ! --helper ftp"), backend);
    ASSERT_NE(plain, nullptr);
    ASSERT_NE(inverted, nullptr);
    for (const PacketMeta& meta : {CountedFlow(), PacketMeta{}}) {
      EXPECT_EQ(Classify(*plain, meta), Verdict::kAccept) << BackendName(backend);
      EXPECT_EQ(Classify(*inverted, meta), Verdict::kDrop) << BackendName(backend);
    }
  }
  EXPECT_TRUE(Refused(Lower("-m helper --helper " + std::string(30, 'x')), "is too long"));
  // Under CT --helper, masters exist: refused.
  EXPECT_THAT(frontends::iptables_test::FirstError(
                  "*raw\n:PREROUTING ACCEPT [0:0]\n"
                  "-A PREROUTING -p tcp --dport 21 -j CT --helper ftp\nCOMMIT\n"
                  "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -m helper ! --helper ftp -j DROP\n"
                  "COMMIT\n"),
              ::testing::HasSubstr("7:15: match 'helper' is not supported where the dump assigns"));
}

// nft types a value of `ct proto-src|dst` by the transport protocol the
// rule matched before it, and refuses one without (as nft -c does).
TEST(CtTuple, PortValuesNeedATransportProtocol) {
  const auto check = [](const std::string& family, const std::string& rule) {
    absl::StatusOr<Ruleset> rs = ParseRuleset(
        "table " + family + " t {\n chain c {\n  " + rule + " accept\n }\n}\n", "t.nft");
    return rs.ok() ? std::string("OK") : std::string(rs.status().message());
  };
  EXPECT_THAT(check("inet", "ct original proto-dst 80"),
              ::testing::HasSubstr("t.nft:3:25: error: a value of ct proto-src/proto-dst needs"));
  EXPECT_EQ(check("inet", "meta l4proto tcp ct original proto-dst 80"), "OK");
  EXPECT_EQ(check("inet", "udp dport 53 ct reply proto-src 53"), "OK");
  EXPECT_EQ(check("inet", "meta l4proto { tcp, udp } ct original proto-dst 80"), "OK");
  // `ct protocol` gives the context where the network protocol is known.
  EXPECT_EQ(check("ip", "ct protocol tcp ct original proto-src 443"), "OK");
  EXPECT_EQ(check("inet", "meta nfproto ipv4 ct protocol tcp ct original proto-src 443"), "OK");
  EXPECT_NE(check("inet", "ct protocol tcp ct original proto-src 443"), "OK");
  EXPECT_NE(check("ip", "meta l4proto != tcp ct original proto-dst 80"), "OK");
}

// xt_CT's options combine in one template; --notrack wins.
TEST(IptablesCt, OptionsCombineAsXtCtDoes) {
  EXPECT_EQ(Lower("-p udp -j CT --zone 1 --ctevents new,destroy", frontends::IpVersion::kAuto,
                  "raw", "PREROUTING"),
            "[ meta load l4proto => reg 1 ]\n[ cmp eq reg 1 0x00000011 ]\n"
            "[ immediate reg 1 0x00000001 ]\n[ ct set zone with reg 1 ]\n"
            "[ immediate reg 1 0x00000005 ]\n[ ct set event with reg 1 ]");
  EXPECT_EQ(Lower("-j CT --notrack --zone 2", frontends::IpVersion::kAuto, "raw", "PREROUTING"),
            "[ notrack ]");
  EXPECT_EQ(Lower("-j CT", frontends::IpVersion::kAuto, "raw", "PREROUTING"), "");
  EXPECT_TRUE(Refused(Lower("-j CT --ctevents new,bogus", frontends::IpVersion::kAuto, "raw",
                            "PREROUTING"),
                      "unknown conntrack event 'bogus'"));
  EXPECT_TRUE(Refused(Lower("-j CT --expevents new", frontends::IpVersion::kAuto, "raw",
                            "PREROUTING"),
                      "unsupported CT option '--expevents'"));
}

TEST(CtKeys, UnmodelledKeysAreLocatedErrors) {
  const auto error_of = [](const std::string& body) {
    absl::StatusOr<Ruleset> rs = ParseRuleset(
        "table ip t {\n ct helper h { type \"ftp\" protocol tcp; }\n chain c {\n" + body +
            "\n }\n}\n",
        "t.nft");
    return rs.ok() ? std::string("OK") : std::string(rs.status().message());
  };
  EXPECT_THAT(error_of("  ct id 1 drop"), ::testing::HasSubstr("t.nft:4:3: error: ct id is not supported"));
  EXPECT_THAT(error_of("  ct secmark 1 drop"),
              ::testing::HasSubstr("t.nft:4:3: error: ct secmark is not supported"));
  // A helper load is modelled (no helper) until the ruleset assigns one.
  EXPECT_EQ(error_of("  ct helper \"ftp\" drop"), "OK");
  EXPECT_THAT(error_of("  tcp dport 21 ct helper set \"h\"\n  ct helper \"ftp\" drop"),
              ::testing::HasSubstr("t.nft:5:3: error: ct helper is not supported"));
  EXPECT_EQ(error_of("  ct label 40 drop"), "OK");
}

}  // namespace
}  // namespace rulejit
