// Named objects (counter, quota, limit, ct helper, ct timeout, ct
// expectation, secmark) and the statements that refer to them: the
// bytecode nft 1.0.6 sends (`nft --debug=netlink`, kernel 6.18), the reader
// round trip of [ objref ... ], what the kernel refuses (a helper it does
// not have, an object that does not exist; synproxy objects are in
// nft_synproxy_test.cc), and the meaning: a named quota is one budget shared by every rule
// that names it, on every backend.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/reader.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using nft_test::Parse;
using testing::BuildFrame;
using testing::FrameSpec;

// The printed rules of chain `c` of the first table.
std::string Rules(const std::string& text) { return nft_test::PrintedRules(text); }

const char kObjects[] =
    "table inet x {\n"
    " counter user123 {\n  packets 12 bytes 1433\n }\n"
    " quota user124 {\n  over 2000 bytes\n }\n"
    " map test {\n  type ipv4_addr : quota\n"
    "  elements = { 192.168.2.2 : \"user124\", 192.168.2.3 : \"user124\" }\n }\n"
    " limit lim1 {\n  rate 10/second burst 5 packets\n }\n"
    " ct helper ftp-standard {\n  type \"ftp\" protocol tcp;\n  l3proto inet\n }\n"
    " ct timeout tmo {\n  protocol tcp;\n  l3proto ip;\n"
    "  policy = { established: 100, close: 4 }\n }\n"
    " ct expectation exp1 {\n  protocol tcp\n  dport 2121\n  timeout 10s\n  size 8\n"
    "  l3proto ip\n }\n"
    " chain y {\n  type filter hook input priority filter; policy accept;\n";

TEST(NftObjects, DeclarationsAreRecorded) {
  auto r = Parse(std::string(kObjects) + " }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  ASSERT_EQ(t.objects.size(), 6u);
  const ir::Object* c = t.FindObject(ir::kObjCounter, "user123");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->counter.packets, 12u);
  EXPECT_EQ(c->counter.bytes, 1433u);
  const ir::Object* q = t.FindObject(ir::kObjQuota, "user124");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->quota.bytes, 2000u);
  EXPECT_TRUE(q->quota.over);
  const ir::Object* l = t.FindObject(ir::kObjLimit, "lim1");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->limit.rate, 10u);
  EXPECT_EQ(l->limit.burst, 5u);
  const ir::Object* h = t.FindObject(ir::kObjCtHelper, "ftp-standard");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->text, "ftp");
  EXPECT_EQ(h->l4proto, 6);
  EXPECT_EQ(h->l3proto, 1);
  const ir::Object* e = t.FindObject(ir::kObjCtExpect, "exp1");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->dport, 2121);
  EXPECT_EQ(e->timeout_ms, 10000u);
  EXPECT_EQ(e->size, 8u);
  const ir::Set* m = t.FindSet("test");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->flags, ir::kSetObject);
  EXPECT_EQ(m->elements.at(0).object, "user124");
}

TEST(NftObjects, ReferencesLowerAsNftSendsThem) {
  EXPECT_EQ(Rules(std::string(kObjects) +
                  "  quota name ip saddr map @test drop\n"
                  "  tcp dport 21 ct helper set \"ftp-standard\"\n"
                  "  ct helper set udp dport map { 69 : \"ftp-standard\" }\n"
                  "  counter name \"user123\"\n"
                  "  limit name \"lim1\" accept\n"
                  "  ct timeout set \"tmo\"\n"
                  "  ct expectation set \"exp1\"\n }\n}\n"),
            "inet x y\n"
            "  [ meta load nfproto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000002 ]\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ objref sreg 1 set test ]\n"
            "  [ immediate reg 0 drop ]\n"
            "inet x y\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00001500 ]\n"
            "  [ objref type 3 name ftp-standard ]\n"
            "inet x y\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000011 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ objref sreg 1 set __objmap%d ]\n"
            "inet x y\n"
            "  [ objref type 1 name user123 ]\n"
            "inet x y\n"
            "  [ objref type 4 name lim1 ]\n"
            "  [ immediate reg 0 accept ]\n"
            "inet x y\n"
            "  [ objref type 7 name tmo ]\n"
            "inet x y\n"
            "  [ objref type 9 name exp1 ]\n");
}

TEST(NftObjects, ObjrefReadsBack) {
  nft_test::ExpectReadsBack({"[ objref type 3 name ftp-standard ]",
                             "[ objref sreg 1 set __objmap%d ]"});
}

TEST(NftObjects, WhatTheKernelRefusesIsALocatedError) {
  // OpenWrt's rtsp helper is not a mainline module.
  ExpectError("table inet t {\n ct helper rtsp {\n  type \"rtsp\" protocol tcp;\n }\n}\n", 3, 8,
              "no conntrack helper 'rtsp'");
  ExpectError("table inet t {\n ct helper f {\n  type \"ftp\" protocol udp;\n }\n}\n", 3, 8,
              "no conntrack helper 'ftp'");
  ExpectError("table inet t {\n chain c {\n  ct helper set \"ftp\"\n }\n}\n", 3, 17,
              "no ct helper 'ftp' in table 't'");
  ExpectError("table inet t {\n counter c {\n }\n chain d {\n  quota name \"c\"\n }\n}\n", 5, 14,
              "no quota 'c' in table 't'");
  // nft's grammar: `mss N` must be followed by `wscale N` (nft's error is
  // at the same '}').
  ExpectError("table inet t {\n synproxy s {\n  mss 1460\n }\n}\n", 4, 2,
              "expected 'wscale', got '}'");
}

// Forms of newer nft's listings (its shell tests' dumps): comments in an
// object's block, named maps to ct objects, ct fields as typeof map data,
// tc class ids as map data.
TEST(NftObjects, CommentsCtObjectMapsAndClassids) {
  auto r = Parse(
      "table inet t {\n"
      " counter c {\n  comment \"my comment\"\n  packets 1 bytes 2\n }\n"
      " quota q {\n  comment \"q\"\n  0 bytes\n  comment \"again\"\n }\n"
      " ct helper h {\n  type \"ftp\" protocol tcp\n  comment \"ftp\"\n  l3proto ip\n }\n"
      " map helpers {\n  typeof ip saddr : ct helper\n  elements = { 10.0.0.1 : \"h\" }\n }\n"
      " map zones {\n  typeof iifname : ct zone\n  elements = { \"eth0\" : 1 }\n }\n"
      " map classes {\n  type ipv4_addr : classid\n  elements = { 10.1.26.2 : 1:bbf8 }\n }\n"
      " chain y {\n  type filter hook prerouting priority filter;\n"
      "  ct helper set ip saddr map @helpers\n"
      "  ct zone set iifname map @zones\n"
      "  meta priority set ip saddr map @classes\n }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  const ir::Table& t = r->rs->tables.at(0);
  ASSERT_NE(t.FindObject(ir::kObjCounter, "c"), nullptr);
  EXPECT_EQ(t.FindObject(ir::kObjCounter, "c")->counter.packets, 1u);
  const ir::Set* helpers = t.FindSet("helpers");
  ASSERT_NE(helpers, nullptr);
  EXPECT_EQ(helpers->obj_type, ir::kObjCtHelper);
  const ir::Set* classes = t.FindSet("classes");
  ASSERT_NE(classes, nullptr);
  ASSERT_EQ(classes->elements.size(), 1u);
  // major:minor as one host-order word, 0x0001bbf8.
  EXPECT_EQ(classes->elements[0].data, (ir::Bytes{0xf8, 0xbb, 0x01, 0x00}));
  // The comment takes no `comment` keyword's place in a ct object's body.
  ExpectError("table inet t {\n ct helper h {\n  type \"ftp\" protocol tcp\n  comment 5\n }\n}\n",
              4, 11, "expected comment string");
}

TEST(NftObjects, AddObjectCommands) {
  auto r = Parse("add table ip t\nadd counter ip t c { packets 1 bytes 2 }\n"
                 "add ct helper ip t h { type \"tftp\" protocol udp; }\n"
                 "add chain ip t x\nadd rule ip t x counter name c\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  EXPECT_EQ(r->rs->tables.at(0).objects.size(), 2u);
}

// A named quota is one budget for every rule naming it: the first rule
// counts each packet, the second (same object) too, so the budget runs out
// twice as fast as one rule's would.
TEST(NftObjects, NamedQuotaIsSharedOnEveryBackend) {
  const char text[] =
      "table ip t {\n quota q {\n  until 250 bytes\n }\n"
      " chain c {\n  type filter hook input priority 0; policy drop;\n"
      "  tcp dport 1 quota name \"q\" accept\n"
      "  tcp dport 2 quota name \"q\" accept\n }\n}\n";
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kAuto}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    RunState state;
    std::vector<Verdict> got;
    // 40 bytes of IP each: 40, 80, ..., 240 consumed are within 250 bytes,
    // whichever rule counts them; the 7th packet (280) is over.
    for (uint16_t port : {1, 2, 1, 2, 1, 2, 2}) {
      got.push_back(nft_test::VerdictOf(*program, Hook::kInput, BuildFrame(FrameSpec{.dport = port}),
                                        PacketMeta{}, &state));
    }
    std::vector<Verdict> want(6, Verdict::kAccept);
    want.push_back(Verdict::kDrop);
    EXPECT_EQ(got, want) << BackendName(backend);
  }
}

}  // namespace
}  // namespace rulejit
