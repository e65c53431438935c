// Unit tests of the nft frontend's diagnostics: located errors with
// their line and column, did-you-mean hints, the order errors come in,
// and garbage that never crashes. (Errors of single constructs sit beside
// their lowering cases in nft_parser_test.cc.)
#include <string>

#include "frontends/nft/nft.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/diag.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using ::testing::HasSubstr;

using nft_test::ExpectError;
using nft_test::Parse;

TEST(NftParserErrors, UnknownCommandHasHint) {
  ExpectError("tabel ip filter {\n}\n", 1, 1, "unknown command 'tabel'", "table");
}

TEST(NftParserErrors, UnknownPayloadFieldHasHint) {
  ExpectError("table ip t {\n chain c {\n  tcp dprot 22 accept\n }\n}\n", 3, 7,
              "unknown tcp field 'dprot'", "dport");
}

TEST(NftParserErrors, UnknownStatementHasHint) {
  ExpectError("table ip t {\n chain c {\n  ip saddr 1.2.3.4 acept\n }\n}\n", 3, 20,
              "unknown statement 'acept'", "accept");
}

TEST(NftParserErrors, UnknownMetaKeyHasHint) {
  ExpectError("table inet t {\n chain c {\n  meta iifnme \"eth0\"\n }\n}\n", 3, 8,
              "unknown meta key 'iifnme'", "iifname");
}

TEST(NftParserErrors, UnknownHookHasHint) {
  ExpectError("table ip t {\n chain c {\n  type filter hook inptu priority 0;\n }\n}\n",
              3, 20, "unknown hook 'inptu'", "input");
}

TEST(NftParserErrors, ValueOutOfRange) {
  ExpectError("table ip t {\n chain c {\n  ip protocol 256\n }\n}\n", 3, 15,
              "exceeds the 8-bit field");
}

TEST(NftParserErrors, BadServiceNameHasHint) {
  ExpectError("table ip t {\n chain c {\n  tcp dport shh\n }\n}\n", 3, 13,
              "invalid value 'shh'", "ssh");
}

// arp and bridge tables and their empty base chains load; what would act
// on ARP packets or bridged frames (not modelled) is refused, located.
TEST(NftParserErrors, LinkLayerRulesAndDropPolicyAreLocated) {
  ExpectError("flush ruleset\ntable bridge b {\n chain c {\n  type filter hook input priority 0;\n"
              "  ether type ip drop\n }\n}\n",
              5, 3, "unsupported rule in a bridge table");
  ExpectError("table arp a {\n chain c {\n  type filter hook input priority filter; policy drop;\n"
              " }\n}\n",
              2, 8, "unsupported policy drop in a arp table");
  ExpectError("table arp a {\n chain c {\n  type filter hook forward priority 0;\n }\n}\n", 3, 20,
              "the arp family does not support hook forward");
  ExpectError("table bridge b {\n chain c {\n  type filter hook input priority dstnat;\n }\n}\n",
              3, 35, "priority 'dstnat' is not valid in the bridge family at hook input");
}

// What depends on the host beyond rulejit's inputs is refused with why.
TEST(NftParserErrors, HostDependentExpressionsSayWhy) {
  ExpectError("table ip t {\n chain c {\n  socket cgroupv2 level 1 0\n }\n}\n", 3, 10,
              "socket cgroupv2 is not supported", "cgroup");
  ExpectError("table ip t {\n chain c {\n  osf name \"Linux\"\n }\n}\n", 3, 3,
              "unsupported", "OS fingerprints");
  ExpectError("table ip t {\n chain c {\n  ipsec in reqid 1\n }\n}\n", 3, 3, "unsupported",
              "secpath");
  ExpectError("table ip t {\n chain c {\n  rt ipsec exists\n }\n}\n", 3, 6,
              "unsupported expression 'rt ipsec'", "secpath");
}

TEST(NftParserErrors, NestedChainBindingIsLocated) {
  ExpectError("table ip t {\n chain c {\n  jump { jump { accept; }; }\n }\n}\n", 3, 15,
              "a chain binding inside a chain binding");
  ExpectError("table ip t {\n chain c {\n  tcp dport vmap { 1 : jump { accept; } }\n }\n}\n", 3,
              29, "a chain binding is not a map value");
}

TEST(NftParserErrors, UnsupportedStatementIsLocated) {
  ExpectError("table ip t {\n chain c {\n  tproxy to 1.2.3.4\n }\n}\n", 3, 3,
              "tproxy needs a transport protocol match");
}

TEST(NftParserErrors, UndefinedVariableHasHint) {
  ExpectError("define ports = { 22, 80 }\ntable ip t {\n chain c {\n  tcp dport $prots\n }\n}\n",
              4, 13, "undefined variable '$prots'", "ports");
}

TEST(NftParserErrors, UnknownSetIsLocated) {
  ExpectError("table ip t {\n chain c {\n  ip saddr @nope drop\n }\n}\n", 3, 12, "no set 'nope'");
}

TEST(NftParserErrors, JumpToUnknownChain) {
  ExpectError("table ip t {\n chain c {\n  jump nowhere\n }\n}\n", 3, 3,
              "unknown chain 'nowhere'");
}

// A rule is lowered statement by statement as it is parsed: an error in
// lowering one statement comes before a syntax error in the next.
TEST(NftParserErrors, LoweringErrorBeforeLaterSyntaxError) {
  ExpectError("table ip t {\n chain c {\n  tcp dport 22 udp dport 53 acept\n }\n}\n", 3, 16,
              "conflicting transport protocols");
  ExpectError("table ip t {\n chain c {\n  ct helper set \"nope\" acept\n }\n}\n", 3, 17,
              "no ct helper 'nope'");
}

// A nat port needs a transport protocol, checked before the flags parse;
// a nat statement is lowered before the check that nothing follows it.
TEST(NftParserErrors, NatErrorsInTextOrder) {
  ExpectError("table ip t {\n chain c {\n  dnat ip to :80 random,\n }\n}\n", 3, 14,
              "needs a transport protocol");
  ExpectError("table ip t {\n chain c {\n  ip protocol tcp dnat ip to 1.2.3.4:80 counter\n }\n}\n",
              3, 41, "terminal statement");
}

TEST(NftParserErrors, ConflictingFamilies) {
  ExpectError("table ip t {\n chain c {\n  ip6 saddr ::1\n }\n}\n", 3, 3, "IPv6 expression");
}

TEST(NftParserErrors, MissingBrace) {
  auto r = Parse("table ip t {\n chain c {\n  accept\n");
  ASSERT_FALSE(r->rs.ok());
  EXPECT_EQ(r->diags.all().front().loc.line, 4u) << r->diags.Format();
}

TEST(NftParserErrors, FormatShowsCaret) {
  auto r = Parse("table ip t {\n chain c {\n  tcp dprot 22\n }\n}\n");
  ASSERT_FALSE(r->rs.ok());
  std::string f = r->diags.Format();
  EXPECT_THAT(f, HasSubstr("t.nft:3:7: error:"));
  EXPECT_THAT(f, HasSubstr("  tcp dprot 22\n      ^"));
}

// User and group names resolve as nft resolves them, through this
// machine's databases (root is 0 everywhere); an unknown one is located.
TEST(NftParserErrors, UnknownUserOrGroupIsLocated) {
  auto r = Parse("table inet t {\n chain c {\n  meta skuid root meta skgid root accept\n }\n}\n");
  EXPECT_TRUE(r->rs.ok()) << r->diags.Format();
  ExpectError("table inet t {\n chain c {\n  meta skgid no-such-group-rj accept\n }\n}\n", 3, 14,
              "unknown group 'no-such-group-rj'", "group database");
  ExpectError("table inet t {\n chain c {\n  skuid no-such-user-rj accept\n }\n}\n", 3, 9,
              "unknown user 'no-such-user-rj'");
}

// Rulesets are untrusted: an include of a device is refused, not read
// forever.
TEST(NftParserErrors, IncludeOfADeviceIsRefused) {
  ExpectError("include \"/dev/zero\"\n", 1, 1, "is not a regular file");
}

TEST(NftParserErrors, GarbageNeverCrashes) {
  const char* inputs[] = {"", "{", "}", "table", "table ip", "table ip t {", "chain",
                          "add rule ip t c", "define x =", "$x", "@nh,1", "\"",
                          "table ip t { chain c { ip saddr { } } }",
                          "table ip t { chain c { tcp dport 1-",
                          "table ip t { chain c { @nh,0,999999999 1 } }",
                          "table ip t { set s { type ipv4_addr; elements = { 1.2.3.4/99 }; } }",
                          // fuzz: a ct timeout policy left open looped forever
                          "table ip filter {\n\tct timeout cttime {\n\t\tprotocol tcp\n"
                          "\t\tl3proto ip\n\t\tpolicy = { established : ]2"};
  for (const char* in : inputs) {
    auto r = Parse(in);
    if (!r->rs.ok()) {
      EXPECT_TRUE(r->diags.has_errors()) << in;
    }
  }
}

}  // namespace
}  // namespace rulejit

namespace rulejit::frontends {
namespace {

// nft's grammar ends every item of a block with a newline or ';', the
// block itself included. What `nft -c -f` (1.0.6, Linux 6.18) said of each
// text, measured in a namespace: rulejit must load and refuse the same.
TEST(NftParserErrors, BlocksEndAsNftEndsThem) {
  const std::vector<std::string> refused = {
      "table ip t { chain c { type filter hook input priority 0; } }\n",
      "table ip t { chain c { type filter hook input priority 0; tcp dport 22 accept } }\n",
      "table ip t { set s { type ipv4_addr } }\n",
      "table ip t { set s { type ipv4_addr; elements = { 1.1.1.1 } } }\n",
      "table ip t { chain a { } chain b { } }\n",
      "table ip t {\n chain c {\n  tcp dport 22 accept }\n}\n",
      "add table ip t\nadd set ip t s { type ipv4_addr }\n",
      "add table ip t\nadd chain ip t c { type filter hook input priority 0 }\n",
      "table ip t {\n ct helper h { type \"ftp\" protocol tcp }\n}\n",
  };
  const std::vector<std::string> loaded = {
      "table ip t {\n chain c {\n  tcp dport 22 accept\n }\n}\n",
      "add table ip t\nadd counter ip t c { packets 1 bytes 2 }\n",
      "add table ip t\nadd set ip t s { type ipv4_addr; }\n",
      "add table ip t\nadd chain ip t c { type filter hook input priority 0; }\n",
      "table ip t {\n counter c { packets 1 bytes 2 }\n}\n",
      "table ip t {\n set s { type ipv4_addr; }\n}\n",
      "table ip t {\n quota q { 100 bytes }\n}\n",
      "table ip t {\n ct helper h { type \"ftp\" protocol tcp; }\n}\n",
      "table ip t { }\n",
  };
  for (const std::string& text : refused) {
    auto r = nft_test::Parse(text);
    EXPECT_FALSE(r->rs.ok()) << text;
    EXPECT_THAT(r->diags.Format(), ::testing::HasSubstr("expected newline or ';'")) << text;
  }
  for (const std::string& text : loaded) {
    auto r = nft_test::Parse(text);
    EXPECT_TRUE(r->rs.ok()) << text << r->diags.Format();
  }
}

}  // namespace
}  // namespace rulejit::frontends
