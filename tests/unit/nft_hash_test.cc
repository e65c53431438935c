// nft's hash expression: `jhash KEY mod M [seed S] [offset O]` and
// `symhash mod M [offset O]`. The kernel's jhash against Bob Jenkins'
// published lookup3 values; the bytecode as nft 1.0.6 sends it (`nft
// --debug=netlink`, registers included); the reader round trip; printing
// back as nft text; and the meaning on every backend: reciprocal_scale of the hash, plus the
// offset, where the seed a rule does not give and symhash's value are
// inputs (PacketMeta::jhash_seed, PacketMeta::symhash). The kernel's
// verdicts are in tests/kernel/kernel_nft_hash_test.cc.
#include <cstring>
#include <string>
#include <vector>

#include "emit/nft_print.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/hash_eval.h"
#include "rulejit/jhash.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using ::testing::HasSubstr;
using nft_test::ExpectError;
using testing::BuildFrame;
using testing::FrameSpec;

std::string Rules(const std::string& text) { return nft_test::PrintedRules(text); }

const uint8_t* Bytes(const char* s) { return reinterpret_cast<const uint8_t*>(s); }

// lookup3.c's own check values for hashlittle, which the kernel's jhash is
// (rulejit/jhash.h).
TEST(Jhash, IsLookup3) {
  EXPECT_EQ(Jhash(Bytes(""), 0, 0), 0xdeadbeefu);
  EXPECT_EQ(Jhash(Bytes(""), 0, 0xdeadbeef), 0xbd5b7ddeu);
  EXPECT_EQ(Jhash(Bytes("Four score and seven years ago"), 30, 0), 0x17770551u);
  EXPECT_EQ(Jhash(Bytes("Four score and seven years ago"), 30, 1), 0xcd628161u);
  // jhash2 over words is jhash over their bytes (lookup3: hashword equals
  // hashlittle on a little-endian machine), for 1 to 5 words.
  const uint32_t words[5] = {0x01020304, 0xdeadbeef, 7, 0xffffffff, 0x80000000};
  for (uint32_t n = 1; n <= 5; ++n) {
    uint8_t bytes[20];
    std::memcpy(bytes, words, 4 * n);
    EXPECT_EQ(Jhash2(words, n, 0x1234), Jhash(bytes, 4 * n, 0x1234)) << n;
  }
}

TEST(NftHash, LowersAsNftSendsIt) {
  EXPECT_EQ(Rules("table ip t {\n chain c {\n"
                  "  ct mark set jhash ip saddr . ip daddr mod 2\n"
                  "  ct mark set jhash ip saddr . tcp dport mod 2 seed 0xdeadbeef offset 100\n"
                  "  meta mark set symhash mod 2 offset 100\n"
                  "  jhash ether saddr mod 4 seed 7 vmap { 0 : accept, 1 : drop }\n"
                  " }\n}\n"),
            "ip t c\n"
            "  [ payload load 4b @ network header + 12 => reg 2 ]\n"
            "  [ payload load 4b @ network header + 16 => reg 13 ]\n"
            "  [ hash reg 1 = jhash(reg 2, 8) % mod 2 ]\n"
            "  [ ct set mark with reg 1 ]\n"
            "ip t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 4b @ network header + 12 => reg 2 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 13 ]\n"
            "  [ hash reg 1 = jhash(reg 2, 8, 0xdeadbeef) % mod 2 offset 100 ]\n"
            "  [ ct set mark with reg 1 ]\n"
            "ip t c\n"
            "  [ hash reg 1 = symhash() % mod 2 offset 100 ]\n"
            "  [ meta set mark with reg 1 ]\n"
            "ip t c\n"
            "  [ meta load iiftype => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000001 ]\n"
            "  [ payload load 6b @ link header + 6 => reg 2 ]\n"
            "  [ hash reg 1 = jhash(reg 2, 6, 0x7) % mod 4 ]\n"
            "  [ lookup reg 1 set __map%d dreg 0 ]\n");
}

TEST(NftHash, ReadsBack) {
  nft_test::ExpectReadsBack({"[ hash reg 1 = jhash(reg 2, 8, 0xdeadbeef) % mod 2 offset 100 ]",
                             "[ hash reg 1 = jhash(reg 2, 4, 0x0) % mod 2 ]",
                             "[ hash reg 1 = jhash(reg 2, 4) % mod 2 ]",
                             "[ hash reg 3 = symhash() % mod 65536 ]"});
}

TEST(NftHash, Mistakes) {
  ExpectError("table ip t {\n chain c {\n  meta mark set jhash ip saddr mod 0\n }\n}\n", 3, 17,
              "jhash modulus must not be 0");
  // nft's grammar has no seed for symhash.
  ExpectError("table ip t {\n chain c {\n  meta mark set symhash mod 2 seed 1\n }\n}\n", 3, 31,
              "unknown statement 'seed'");
  ExpectError("table ip t {\n chain c {\n  meta mark set jhash ip saddr mod 4294967295 offset 2\n"
              " }\n}\n",
              3, 17, "jhash offset + modulus overflows 32 bits");
  ExpectError("table ip t {\n chain c {\n  meta mark set jhash mod 2\n }\n}\n", 3, 23,
              "unknown expression 'mod'");
}

TEST(NftHash, PrintsBackAsNft) {
  auto r = nft_test::Parse(
      "table ip t {\n chain c {\n"
      "  ct mark set jhash ip saddr . tcp dport mod 2 seed 0xdeadbeef offset 100\n"
      "  meta mark set symhash mod 2\n"
      "  jhash ip daddr mod 4 vmap { 0 : accept, 1 : drop }\n"
      " }\n}\n");
  ASSERT_TRUE(r->rs.ok()) << r->diags.Format();
  absl::StatusOr<std::string> printed = emit::PrintNft(*r->rs);
  ASSERT_TRUE(printed.ok()) << printed.status();
  EXPECT_THAT(*printed,
              HasSubstr("ct mark set jhash ip saddr . tcp dport mod 2 seed 0xdeadbeef offset 100"));
  EXPECT_THAT(*printed, HasSubstr("meta mark set symhash mod 2"));
  EXPECT_THAT(*printed, HasSubstr("jhash ip daddr mod 4 vmap { 0 : accept, 1 : drop }"));
  auto again = nft_test::Parse(*printed);
  ASSERT_TRUE(again->rs.ok()) << again->diags.Format() << *printed;
  const ir::Table& a = r->rs->tables.at(0), &b = again->rs->tables.at(0);
  for (size_t i = 0; i < a.chains.at(0).rules.size(); ++i) {
    EXPECT_EQ(ir::PrintRule(a, a.chains[0], a.chains[0].rules[i]),
              ir::PrintRule(b, b.chains[0], b.chains[0].rules.at(i)));
  }
}

// The 8 key bytes of `jhash ip saddr . udp dport`: the address, the port
// and two zero bytes of padding.
uint32_t SaddrDportHash(const FrameSpec& spec, uint32_t seed) {
  std::vector<uint8_t> frame = BuildFrame(spec);
  uint8_t key[8] = {};
  std::memcpy(key, frame.data() + 14 + 12, 4);
  std::memcpy(key + 4, frame.data() + 14 + 20 + 2, 2);
  return Jhash(key, 8, seed);
}

TEST(NftHash, ScalesTheHashOnEveryBackend) {
  const char text[] =
      "table ip t {\n chain c {\n  type filter hook input priority 0; policy accept;\n"
      "  udp sport 1 jhash ip saddr . udp dport mod 4 seed 0x5 offset 10 vmap "
      "{ 10 : drop, 11 : accept, 12 : drop, 13 : accept }\n"
      "  udp sport 2 jhash ip saddr . udp dport mod 2 vmap { 0 : drop, 1 : accept }\n"
      "  udp sport 3 symhash mod 4 vmap { 0 : drop, 2 : drop }\n"
      " }\n}\n";
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kLlvm}) {
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    RunState state;
    for (uint16_t dport = 1; dport <= 40; ++dport) {
      FrameSpec spec{.proto = 17, .sport = 1, .dport = dport};
      const uint32_t seeded = ir::ReciprocalScale(SaddrDportHash(spec, 5), 4);
      EXPECT_EQ(nft_test::VerdictOf(*program, Hook::kInput, BuildFrame(spec), PacketMeta{}, &state),
                seeded % 2 == 0 ? Verdict::kDrop : Verdict::kAccept)
          << BackendName(backend) << " dport " << dport;
      // Without a seed in the rule, the kernel's draw is the input.
      spec.sport = 2;
      PacketMeta meta;
      meta.jhash_seed = 0x12345678;
      const uint32_t drawn = ir::ReciprocalScale(SaddrDportHash(spec, 0x12345678), 2);
      EXPECT_EQ(nft_test::VerdictOf(*program, Hook::kInput, BuildFrame(spec), meta, &state),
                drawn == 0 ? Verdict::kDrop : Verdict::kAccept)
          << BackendName(backend) << " dport " << dport;
    }
    // symhash: the top two bits of the packet's flow hash choose.
    std::vector<Verdict> sym;
    for (uint32_t h : {0x00000000u, 0x40000000u, 0x80000000u, 0xffffffffu}) {
      PacketMeta meta;
      meta.symhash = h;
      sym.push_back(nft_test::VerdictOf(*program, Hook::kInput,
                                        BuildFrame(FrameSpec{.proto = 17, .sport = 3}), meta, &state));
    }
    EXPECT_EQ(sym, (std::vector<Verdict>{Verdict::kDrop, Verdict::kAccept, Verdict::kDrop,
                                         Verdict::kAccept}))
        << BackendName(backend);
  }
}

// What a program reads of the draws, which `run` draws per packet only
// when read (runtime/draws.h).
TEST(NftHash, ProgramsSayWhichDrawsTheyRead) {
  auto reads = [](const std::string& rules, const std::string& chain_type = "filter") {
    const std::string text = "table ip t {\n chain c {\n  type " + chain_type +
                             " hook prerouting priority 0; policy accept;\n  " + rules +
                             "\n }\n}\n";
    std::unique_ptr<const Program> program = nft_test::CompileFor(text, Backend::kInterp);
    return program == nullptr ? RandomInputs{.random = true, .symhash = true, .jhash_seed = true}
                              : program->random_inputs();
  };
  EXPECT_FALSE(reads("tcp dport 22 accept").any());
  EXPECT_FALSE(reads("jhash ip saddr mod 2 seed 0x1 0 accept").any());
  const RandomInputs jhash = reads("jhash ip saddr mod 2 0 accept");
  EXPECT_TRUE(jhash.jhash_seed && !jhash.random && !jhash.symhash);
  const RandomInputs sym = reads("symhash mod 2 0 accept");
  EXPECT_TRUE(sym.symhash && !sym.random && !sym.jhash_seed);
  EXPECT_TRUE(reads("numgen random mod 2 0 accept").random);
  EXPECT_FALSE(reads("numgen inc mod 2 0 accept").any());
  EXPECT_TRUE(reads("meta random 5 accept").random);
  // NAT draws a port when it has to choose one.
  EXPECT_TRUE(reads("tcp dport 80 dnat to 10.0.0.1", "nat").random);
}

}  // namespace
}  // namespace rulejit
