// Unit tests for the IR text form: ir/printer.h (exact strings, one test per
// expression kind, sets, rules, rulesets) and its inverse ir/reader.h
// (round trips and located errors).
#include "ir/printer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/reader.h"

namespace rulejit::ir {
namespace {

using ::testing::HasSubstr;

// --- data ---------------------------------------------------------------------

TEST(PrintData, WordsAreLittleEndianAndZeroPadded) {
  EXPECT_EQ(PrintData(Bytes{0x0a, 0x00, 0x00, 0x01}), "0x0100000a");
  EXPECT_EQ(PrintData(Bytes{0x00, 0x16}), "0x00001600");  // tcp dport 22
  EXPECT_EQ(PrintData(Bytes{1, 2, 3, 4, 5}), "0x04030201 0x00000005");
  EXPECT_EQ(PrintData(Bytes{}), "");
}

// --- one test per expression kind ----------------------------------------------

TEST(PrintExpr, PayloadLoadAllBases) {
  EXPECT_EQ(PrintExpr(PayloadLoad{PayloadBase::kNetwork, 12, 4, 1}),
            "[ payload load 4b @ network header + 12 => reg 1 ]");
  EXPECT_EQ(PrintExpr(PayloadLoad{PayloadBase::kLink, 6, 6, 10}),
            "[ payload load 6b @ link header + 6 => reg 10 ]");
  EXPECT_EQ(PrintExpr(PayloadLoad{PayloadBase::kTransport, 2, 2, 9}),
            "[ payload load 2b @ transport header + 2 => reg 9 ]");
  EXPECT_EQ(PrintExpr(PayloadLoad{PayloadBase::kInner, 0, 1, 1}),
            "[ payload load 1b @ inner header + 0 => reg 1 ]");
  EXPECT_EQ(PrintExpr(PayloadLoad{PayloadBase::kIp6tTransport, 2, 2, 1}),
            "[ payload load 2b @ ip6t-transport header + 2 => reg 1 ]");
}

TEST(PrintExpr, MetaLoadAndSet) {
  EXPECT_EQ(PrintExpr(MetaLoad{MetaKey::kIifName, 1}),
            "[ meta load iifname => reg 1 ]");
  EXPECT_EQ(PrintExpr(MetaLoad{MetaKey::kL4Proto, 11}),
            "[ meta load l4proto => reg 11 ]");
  EXPECT_EQ(PrintExpr(MetaLoad{MetaKey::kIp6tL4Proto, 1}),
            "[ meta load ip6t_l4proto => reg 1 ]");
  EXPECT_EQ(PrintExpr(MetaSet{MetaKey::kMark, 1}),
            "[ meta set mark with reg 1 ]");
}

TEST(PrintExpr, CtLoadAndSetWithDirection) {
  EXPECT_EQ(PrintExpr(CtLoad{CtKey::kState, 1, CtDir::kNone}),
            "[ ct load state => reg 1 ]");
  EXPECT_EQ(PrintExpr(CtLoad{CtKey::kBytes, 1, CtDir::kOriginal}),
            "[ ct load bytes => reg 1 , dir original ]");
  EXPECT_EQ(PrintExpr(CtLoad{CtKey::kSrcIp, 1, CtDir::kReply}),
            "[ ct load src_ip => reg 1 , dir reply ]");
  EXPECT_EQ(PrintExpr(CtSet{CtKey::kMark, 1, CtDir::kNone}), "[ ct set mark with reg 1 ]");
  EXPECT_EQ(PrintExpr(CtSet{CtKey::kZone, 1, CtDir::kReply}),
            "[ ct set zone with reg 1 , dir reply ]");
}

TEST(PrintExpr, BitwiseMaskXorAndShifts) {
  Bitwise mask;
  mask.len = 1;
  mask.mask = {0xfc};
  mask.xor_ = {0x00};
  EXPECT_EQ(PrintExpr(mask),
            "[ bitwise reg 1 = ( reg 1 & 0x000000fc ) ^ 0x00000000 ]");
  Bitwise wide;
  wide.sreg = wide.dreg = 2;
  wide.len = 8;
  wide.mask = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0};
  wide.xor_ = Bytes(8, 0);
  EXPECT_EQ(PrintExpr(wide),
            "[ bitwise reg 2 = ( reg 2 & 0xffffffff 0x00ffffff ) ^ "
            "0x00000000 0x00000000 ]");
  Bitwise rshift;
  rshift.op = BitwiseOp::kRshift;
  rshift.shift = 4;
  EXPECT_EQ(PrintExpr(rshift), "[ bitwise reg 1 = ( reg 1 >> 0x00000004 ) ]");
  Bitwise lshift;
  lshift.op = BitwiseOp::kLshift;
  lshift.shift = 16;
  EXPECT_EQ(PrintExpr(lshift), "[ bitwise reg 1 = ( reg 1 << 0x00000010 ) ]");
}

TEST(PrintExpr, Byteorder) {
  EXPECT_EQ(PrintExpr(Byteorder{ByteorderOp::kHton, 1, 1, 2, 2}),
            "[ byteorder reg 1 = hton(reg 1, 2, 2) ]");
  EXPECT_EQ(PrintExpr(Byteorder{ByteorderOp::kNtoh, 9, 2, 8, 8}),
            "[ byteorder reg 2 = ntoh(reg 9, 8, 8) ]");
}

TEST(PrintExpr, CmpEveryOperator) {
  const std::pair<CmpOp, const char*> ops[] = {
      {CmpOp::kEq, "eq"}, {CmpOp::kNeq, "neq"}, {CmpOp::kLt, "lt"},
      {CmpOp::kLte, "lte"}, {CmpOp::kGt, "gt"}, {CmpOp::kGte, "gte"}};
  for (const auto& [op, name] : ops) {
    EXPECT_EQ(PrintExpr(Cmp{op, 1, Bytes{0x0a, 0, 0, 0}}),
              absl::StrCat("[ cmp ", name, " reg 1 0x0000000a ]"));
  }
  EXPECT_EQ(PrintExpr(Cmp{CmpOp::kEq, 1, Bytes{'l', 'o', 0, 0, 0, 0}}),
            "[ cmp eq reg 1 0x00006f6c 0x00000000 ]");
}

TEST(PrintExpr, RangeEqAndNeq) {
  EXPECT_EQ(PrintExpr(Range{false, 1, Bytes{0x00, 0x16}, Bytes{0x00, 0x19}}),
            "[ range eq reg 1 0x00001600 0x00001900 ]");
  EXPECT_EQ(PrintExpr(Range{true, 9, Bytes{1, 0, 0, 0}, Bytes{2, 0, 0, 0}}),
            "[ range neq reg 9 0x00000001 0x00000002 ]");
}

TEST(PrintExpr, LookupSetsMapsAndInversion) {
  EXPECT_EQ(PrintExpr(Lookup{1, "__set7", std::nullopt, false}),
            "[ lookup reg 1 set __set%d ]");
  EXPECT_EQ(PrintExpr(Lookup{1, "__set0", std::nullopt, true}),
            "[ lookup reg 1 set __set%d 0x1 ]");
  EXPECT_EQ(PrintExpr(Lookup{1, "__map3", Reg{0}, false}),
            "[ lookup reg 1 set __map%d dreg 0 ]");
  EXPECT_EQ(PrintExpr(Lookup{2, "map1", Reg{1}, false}),
            "[ lookup reg 2 set map1 dreg 1 ]");
  // Only "__set<digits>" is the anonymous template; other names stay.
  EXPECT_EQ(PrintExpr(Lookup{1, "__setup", std::nullopt, false}),
            "[ lookup reg 1 set __setup ]");
}

TEST(PrintExpr, ImmediateVerdictsAndData) {
  const std::pair<VerdictCode, const char*> simple[] = {
      {VerdictCode::kAccept, "accept"}, {VerdictCode::kDrop, "drop"},
      {VerdictCode::kContinue, "continue"}, {VerdictCode::kReturn, "return"}};
  for (const auto& [code, name] : simple) {
    Immediate imm;
    imm.verdict.code = code;
    EXPECT_EQ(PrintExpr(imm), absl::StrCat("[ immediate reg 0 ", name, " ]"));
  }
  Immediate jump;
  jump.verdict = {VerdictCode::kJump, "tcp_in"};
  EXPECT_EQ(PrintExpr(jump), "[ immediate reg 0 jump -> tcp_in ]");
  Immediate go;
  go.verdict = {VerdictCode::kGoto, "other"};
  EXPECT_EQ(PrintExpr(go), "[ immediate reg 0 goto -> other ]");
  Immediate data;
  data.dreg = 1;
  data.data = {0x2a, 0, 0, 0};
  EXPECT_EQ(PrintExpr(data), "[ immediate reg 1 0x0000002a ]");
}

TEST(PrintExpr, CounterLimitLogRejectNotrack) {
  EXPECT_EQ(PrintExpr(Counter{}), "[ counter pkts 0 bytes 0 ]");
  EXPECT_EQ(PrintExpr(Counter{1, 1024}), "[ counter pkts 1 bytes 1024 ]");
  EXPECT_EQ(PrintExpr(Limit{1023, 1, 10, false, false}),
            "[ limit rate 1023/second burst 10 type packets flags 0x0 ]");
  EXPECT_EQ(PrintExpr(Limit{400, 604800, 5, false, true}),
            "[ limit rate 400/week burst 5 type packets flags 0x1 ]");
  EXPECT_EQ(PrintExpr(Limit{10726932480ull, 1, 0, true, false}),
            "[ limit rate 10726932480/second burst 0 type bytes flags 0x0 ]");
  EXPECT_EQ(PrintExpr(Log{}), "[ log ]");
  Log prefix;
  prefix.prefix = "X";
  EXPECT_EQ(PrintExpr(prefix), "[ log prefix X ]");
  Log level;
  level.level = 0;
  EXPECT_EQ(PrintExpr(level), "[ log level 0 ]");
  Log flags;
  flags.level = 7;
  flags.flags = 0x04 | 0x08;
  EXPECT_EQ(PrintExpr(flags), "[ log level 7 ipopt uid ]");
  Log group;
  group.prefix = "nft-test: ";
  group.group = 2;
  group.level = 3;  // not printed when a group is set, as in libnftnl
  EXPECT_EQ(PrintExpr(group),
            "[ log prefix nft-test:  group 2 snaplen 0 qthreshold 0 ]");
  EXPECT_EQ(PrintExpr(Reject{RejectType::kIcmpUnreach, 1}), "[ reject type 0 code 1 ]");
  EXPECT_EQ(PrintExpr(Notrack{}), "[ notrack ]");
}

// --- rules, sets, rulesets --------------------------------------------------------

SetElement Elem(Bytes key) {
  SetElement e;
  e.key = std::move(key);
  return e;
}

Table TestTable() {
  Table t;
  t.family = Family::kIp;
  t.name = "test-ip4";
  return t;
}

TEST(PrintRule, HeaderThenIndentedExpressions) {
  Table table = TestTable();
  Chain chain;
  chain.name = "input";
  Rule rule;
  rule.exprs.push_back({PayloadLoad{PayloadBase::kNetwork, 12, 4, 1}, {}});
  rule.exprs.push_back({Cmp{CmpOp::kEq, 1, Bytes{10, 0, 0, 1}}, {}});
  EXPECT_EQ(PrintRule(table, chain, rule),
            "ip test-ip4 input\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x0100000a ]\n");
}

TEST(PrintSet, AnonymousPlainSet) {
  Set set;
  set.name = "__set0";
  set.flags = kSetAnonymous | kSetConstant;
  set.key_len = 1;
  set.elements = {Elem(Bytes{0x20}), Elem(Bytes{0x40})};
  EXPECT_EQ(PrintSet(TestTable(), set),
            "__set%d test-ip4 3\n"
            "__set%d test-ip4 0\n"
            "\telement 00000020  : 0 [end]\telement 00000040  : 0 [end]\n");
}

TEST(PrintSet, VerdictMapWithSize) {
  Set set;
  set.name = "__map0";
  set.flags = kSetAnonymous | kSetConstant | kSetMap;
  set.key_len = 1;
  set.verdict_map = true;
  SetElement a = Elem(Bytes{0x20});
  a.verdict = Verdict{VerdictCode::kContinue, ""};
  SetElement b = Elem(Bytes{0x80});
  b.verdict = Verdict{VerdictCode::kJump, "x"};
  set.elements = {a, b};
  EXPECT_EQ(PrintSet(TestTable(), set),
            "__map%d test-ip4 b size 2\n"
            "__map%d test-ip4 0\n"
            "\telement 00000020  : continue 0 [end]"
            "\telement 00000080  : jump -> x 0 [end]\n");
}

TEST(PrintSet, DataMapAndCatchall) {
  Set set;
  set.name = "m";
  set.flags = kSetMap;
  set.key_len = 4;
  set.data_len = 4;
  SetElement a = Elem(Bytes{10, 2, 3, 2});
  a.data = {0x2a, 0, 0, 0};
  SetElement star = Elem(Bytes{});
  star.data = {0x17, 0, 0, 0};
  set.elements = {a, star};
  EXPECT_EQ(PrintSet(TestTable(), set),
            "m test-ip4 8 size 2\n"
            "m test-ip4 0\n"
            "\telement 0203020a  : 0000002a 0 [end]"
            "\telement  : 00000017 2 [end]\n");
}

// Plain interval sets print as the kernel stores them: starts plus end
// markers (flag 1) at end+1, and a leading marker at 0.
TEST(PrintSet, IntervalsSplitIntoKernelElements) {
  Set set;
  set.name = "__map1";
  set.flags = kSetAnonymous | kSetConstant | kSetInterval | kSetMap;
  set.key_len = 4;
  set.data_len = 8;
  SetElement net = Elem(Bytes{10, 141, 11, 0});
  net.key_end = Bytes{10, 141, 11, 255};
  net.data = {192, 168, 2, 0, 192, 168, 2, 255};
  set.elements = {net};
  EXPECT_EQ(PrintSet(TestTable(), set),
            "__map%d test-ip4 f size 3\n"
            "__map%d test-ip4 0\n"
            "\telement 00000000  : 1 [end]"
            "\telement 000b8d0a  : 0002a8c0 ff02a8c0 0 [end]"
            "\telement 000c8d0a  : 1 [end]\n");

  // Adjacent intervals share no marker; one ending at the top needs none.
  Set ports;
  ports.name = "__set2";
  ports.flags = kSetAnonymous | kSetConstant | kSetInterval;
  ports.key_len = 1;
  SetElement low = Elem(Bytes{0});
  low.key_end = Bytes{4};
  SetElement mid = Elem(Bytes{5});
  SetElement top = Elem(Bytes{0xf0});
  top.key_end = Bytes{0xff};
  ports.elements = {top, mid, low};  // printed sorted
  EXPECT_EQ(PrintSet(TestTable(), ports),
            "__set%d test-ip4 7 size 4\n"
            "__set%d test-ip4 0\n"
            "\telement 00000000  : 0 [end]\telement 00000005  : 0 [end]"
            "\telement 00000006  : 1 [end]\telement 000000f0  : 0 [end]\n");
}

TEST(PrintSet, ConcatenatedIntervalsKeepRanges) {
  Set set;
  set.name = "__set0";
  set.flags = kSetAnonymous | kSetConstant | kSetInterval | kSetConcat;
  set.key_len = 8;
  set.field_lens = {4, 4};
  SetElement e = Elem(Bytes{192, 0, 2, 1, 10, 0, 0, 1});
  e.key_end = Bytes{192, 0, 2, 1, 10, 0, 0, 2};
  set.elements = {e};
  EXPECT_EQ(PrintSet(TestTable(), set),
            "__set%d test-ip4 87 size 1\n"
            "__set%d test-ip4 0\n"
            "\telement 010200c0 0100000a  - 010200c0 0200000a  : 0 [end]\n");
}

TEST(PrintRuleset, TablesChainsNamedAndAnonymousSets) {
  Ruleset rs;
  Table t;
  t.family = Family::kInet;
  t.name = "filter";
  Set named;
  named.name = "blocked";
  named.key_len = 4;
  named.elements = {Elem(Bytes{10, 0, 0, 1})};
  Set anon;
  anon.name = "__set0";
  anon.flags = kSetAnonymous | kSetConstant;
  anon.key_len = 2;
  anon.elements = {Elem(Bytes{0, 22})};
  t.sets = {named, anon};
  Chain input;
  input.name = "input";
  input.base = BaseChain{"filter", Hook::kInput, 0, {}, VerdictCode::kDrop};
  Rule r;
  r.exprs.push_back({PayloadLoad{PayloadBase::kTransport, 2, 2, 1}, {}});
  r.exprs.push_back({Lookup{1, "__set0", std::nullopt, false}, {}});
  Immediate jump;
  jump.verdict = {VerdictCode::kJump, "helper"};
  r.exprs.push_back({jump, {}});
  input.rules = {r};
  Chain helper;
  helper.name = "helper";
  t.chains = {input, helper};
  rs.tables = {t};
  EXPECT_EQ(PrintRuleset(rs),
            "# table inet filter\n"
            "blocked filter 0\n"
            "blocked filter 0\n"
            "\telement 0100000a  : 0 [end]\n"
            "\n"
            "# chain input type filter hook input priority 0 policy drop\n"
            "__set%d filter 3\n"
            "__set%d filter 0\n"
            "\telement 00001600  : 0 [end]\n"
            "inet filter input\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ lookup reg 1 set __set%d ]\n"
            "  [ immediate reg 0 jump -> helper ]\n"
            "\n"
            "# chain helper\n");
}

// --- reader ----------------------------------------------------------------------

// Every printer example above reads back to an expression that prints the
// same text.
TEST(Reader, RoundTripsEachKind) {
  const char* lines[] = {
      "[ payload load 4b @ network header + 12 => reg 1 ]",
      "[ meta load iifname => reg 1 ]",
      "[ meta load ip6t_l4proto => reg 1 ]",
      "[ payload load 2b @ ip6t-transport header + 0 => reg 1 ]",
      "[ meta set mark with reg 1 ]",
      "[ ct load state => reg 1 ]",
      "[ ct load bytes => reg 1 , dir original ]",
      "[ ct set zone with reg 1 , dir reply ]",
      "[ bitwise reg 1 = ( reg 1 & 0x000000fc ) ^ 0x00000000 ]",
      "[ bitwise reg 1 = ( reg 1 >> 0x00000004 ) ]",
      "[ byteorder reg 1 = hton(reg 1, 2, 2) ]",
      "[ cmp gte reg 1 0x0000000a 0x00000000 ]",
      "[ range neq reg 1 0x00001600 0x00001900 ]",
      "[ lookup reg 1 set __set%d 0x1 ]",
      "[ lookup reg 1 set __map%d dreg 0 ]",
      "[ immediate reg 0 jump -> my-chain ]",
      "[ immediate reg 0 return ]",
      "[ immediate reg 17 0x01000000 0x00000000 0x00000000 0x00000000 ]",
      "[ counter pkts 2 bytes 1 ]",
      "[ limit rate 400/week burst 5 type packets flags 0x1 ]",
      "[ limit rate 7/90 burst 5 type bytes flags 0x0 ]",
      "[ log ]",
      "[ log prefix nft-test:  group 2 snaplen 0 qthreshold 0 ]",
      "[ log prefix a level 3 b level 4 tcpseq ]",
      "[ log tcpseq tcpopt ipopt uid macdecode ]",
      "[ reject type 2 code 3 ]",
      "[ notrack ]",
      "[ exthdr load ipv6 1b @ 44 + 0 => reg 1 ]",
      "[ exthdr load ipv6 1b @ 0 + 0 present => reg 1 ]",
      "[ exthdr load tcpopt 2b @ 2 + 2 => reg 9 ]",
      "[ exthdr load 4b @ 193 + 4 => reg 1 ]",
      "[ payload write reg 1 => 2b @ network header + 0 csum_type 1 csum_off 10 csum_flags 0x0 ]",
      "[ payload write reg 1 => 16b @ network header + 24 csum_type 0 csum_off 0 csum_flags 0x1 ]",
      "[ queue num 0 ]",
      "[ queue num 4-5 bypass fanout ]",
      "[ queue sreg_qnum 1 bypass ]",
      "[ quota bytes 1072693248000 consumed 0 flags 1 ]",
      "[ nat snat ip addr_min reg 1 ]",
      "[ nat dnat ip6 addr_min reg 1 addr_max reg 2 proto_min reg 3 proto_max reg 4 flags 0x2 ]",
      "[ masq ]",
      "[ masq proto_min reg 1 proto_max reg 2 flags 0x1e ]",
      "[ redir flags 0x1c ]",
      "[ bitwise reg 1 = ( reg 1 | reg 2 ) ]",
      "[ bitwise reg 2 = ( reg 3 & reg 4 ) ]",
      "[ bitwise reg 9 = ( reg 9 ^ reg 10 ) ]",
  };
  for (const char* line : lines) {
    absl::StatusOr<Expr> expr = ParseExprLine(line);
    ASSERT_TRUE(expr.ok()) << line << ": " << expr.status();
    EXPECT_EQ(PrintExpr(*expr), line);
  }
}

TEST(Reader, RefusesNonCanonicalStatementLines) {
  // Each would print back differently (found by ir_line_fuzz).
  for (const char* line : {"[ masq proto_min reg 1 flags 0x0 ]", "[ redir flags 0x01 ]",
                           "[ nat snat ip flags 0xC ]", "[ quota bytes 2048 consumed 0 flags 2 ]",
                           "[ queue num 0-65535 ]", "[ queue num 3-3 ]",
                           "[ queue num 1 fanout bypass ]"}) {
    EXPECT_FALSE(ParseExprLine(line).ok()) << line;
  }
}

TEST(Reader, ReadsFieldValues) {
  absl::StatusOr<Expr> e =
      ParseExprLine("  [ payload load 2b @ transport header + 2 => reg 9 ]  ");
  ASSERT_TRUE(e.ok());
  const auto& load = std::get<PayloadLoad>(*e);
  EXPECT_EQ(load.base, PayloadBase::kTransport);
  EXPECT_EQ(load.offset, 2u);
  EXPECT_EQ(load.len, 2u);
  EXPECT_EQ(load.dreg, 9);

  e = ParseExprLine("[ range eq reg 1 0x00001600 0x00001900 ]");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(std::get<Range>(*e).from, (Bytes{0, 0x16, 0, 0}));
  EXPECT_EQ(std::get<Range>(*e).to, (Bytes{0, 0x19, 0, 0}));

  e = ParseExprLine("[ log prefix a level 3 b level 4 tcpseq ]");
  ASSERT_TRUE(e.ok());
  // The shortest prefix that leaves a valid tail.
  EXPECT_EQ(std::get<Log>(*e).prefix, "a level 3 b");
  EXPECT_EQ(std::get<Log>(*e).level, 4u);
  EXPECT_EQ(std::get<Log>(*e).flags, 1u);
}

TEST(Reader, ErrorsNameTheColumn) {
  struct Case {
    const char* line;
    const char* message;
  };
  const Case cases[] = {
      {"[ cmp eq reg 1 0xa ]", "column 16: expected a data word"},
      {"[ cmp eqq reg 1 0x0000000a ]", "column 7: unknown compare operator 'eqq'"},
      {"[ meta load iifnme => reg 1 ]",
       "column 13: unknown meta key 'iifnme' (did you mean 'iifname'?)"},
      {"[ exthdr write tcpopt reg 1 => 5b @ 2 + 2 ]", "column 32: the write length is out of range"},
      {"[ payload write reg 1 => 2b @ network header + 10 ]",
       "column 50: expected ' csum_type '"},
      {"[ payload store 2b ]", "column 11: unsupported payload operation 'store'"},
      {"[ osf load name => reg 1 ]", "column 3: expression 'osf' is not in the IR"},
      {"[ payload load 4b @ network header + 12 => reg 300 ]",
       "column 48: a register number is out of range"},
      {"[ payload load 04b @ network header + 12 => reg 1 ]",
       "column 16: expected the load length"},
      {"[ counter pkts 0 bytes 0 ] x", "column 27: unexpected text after ']'"},
      {"[ cmp eq reg 1 0x0000000a", "column 26: expected ' ', found end of line"},
      {"[ range eq reg 1 0x00000001 ]", "same number of words"},
      {"[ bitwise reg 1 = ( reg 1 + reg 2 ) ]", "column 27: bitwise operation '+'"},
      {"[ limit rate 1/60 burst 0 type bytes flags 0x0 ]", "write 'minute'"},
      {"cmp eq reg 1 0x0000000a", "column 1: expected '[ '"},
      {"", "column 1: expected '[ '"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Expr> e = ParseExprLine(c.line);
    ASSERT_FALSE(e.ok()) << c.line;
    EXPECT_THAT(std::string(e.status().message()), HasSubstr(c.message)) << c.line;
  }
}

TEST(Reader, RuleBlockWithLocationsAndTrimmedData) {
  absl::StatusOr<RuleBlock> b = ParseRuleBlock(
      "# tcp dport 22\n"
      "inet test-inet input\n"
      "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
      "  [ cmp eq reg 1 0x00001600 ]\n",
      /*file=*/0, /*first_line=*/10);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->family, Family::kInet);
  EXPECT_EQ(b->table, "test-inet");
  EXPECT_EQ(b->chain, "input");
  ASSERT_EQ(b->rule.exprs.size(), 2u);
  EXPECT_EQ(b->rule.exprs[1].loc.line, 13u);
  EXPECT_EQ(b->rule.exprs[1].loc.col, 3u);
  // The compare reads the 2 bytes the load wrote, not the padded word.
  EXPECT_EQ(std::get<Cmp>(b->rule.exprs[1].expr).data, (Bytes{0x00, 0x16}));
}

TEST(Reader, RuleBlockErrorsAreLocated) {
  absl::StatusOr<RuleBlock> b = ParseRuleBlock(
      "ip t c\n"
      "  [ cmp eq reg 1 0x0000000a ]\n"
      "  [ cmp eq reg x 0x0000000a ]\n",
      0, 5);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("7:16: error: expected a register number"));
  b = ParseRuleBlock("ipx t c\n", 0, 1);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("1:1: error: unknown family 'ipx'"));
  b = ParseRuleBlock("\n# only a comment\n", 0, 1);
  EXPECT_FALSE(b.ok());
}

}  // namespace
}  // namespace rulejit::ir
