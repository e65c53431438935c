// Dynamic sets: `add @s { ... }`, `update @s { ... }`, `delete @s { ... }`,
// `set add ... @s` and meters, as nft 1.0.6 sends them (`nft
// --debug=netlink`, recorded here), the reader round trip, what the kernel
// refuses (nft_dynset_init), and the meaning on every backend with the
// caller's clock: elements added by one packet are seen by the next,
// timeouts expire and `update` restarts them, a full set refuses new
// elements, per-element limits and counters, map data.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "tests/support/frames.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using testing::BuildFrame;
using testing::FrameSpec;

constexpr uint64_t kSecond = 1000000000;

std::string Rules(const std::string& text) { return nft_test::PrintedRules(text); }

TEST(NftDynset, LowersAsNftSendsIt) {
  EXPECT_EQ(Rules("table ip t {\n"
                  " set s { type ipv4_addr . inet_service; flags timeout; }\n"
                  " map p { type ipv4_addr . inet_service : ipv4_addr . inet_service; "
                  "flags timeout; }\n"
                  " map dm { type ipv4_addr : mark; flags timeout; }\n"
                  " set v { type ipv4_addr . ipv4_addr . inet_service; }\n"
                  " chain c {\n"
                  "  tcp dport 21 add @s { ip saddr . 22 timeout 1m }\n"
                  "  update @p { ip saddr . tcp dport timeout 1m30s : ip daddr . tcp dport }\n"
                  "  add @dm { 10.2.3.4 timeout 2s : 0x00000002 }\n"
                  "  update @v { ip saddr . 10.180.0.4 . 80 }\n"
                  "  update @dm { ip saddr : meta mark }\n"
                  " }\n}\n"),
            "ip t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00001500 ]\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ immediate reg 9 0x00001600 ]\n"
            "  [ dynset add reg_key 1 set s timeout 60000ms ]\n"
            "ip t c\n"
            "  [ meta load l4proto => reg 1 ]\n"
            "  [ cmp eq reg 1 0x00000006 ]\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 9 ]\n"
            "  [ payload load 4b @ network header + 16 => reg 2 ]\n"
            "  [ payload load 2b @ transport header + 2 => reg 13 ]\n"
            "  [ dynset update reg_key 1 set p sreg_data 2 timeout 90000ms ]\n"
            "ip t c\n"
            "  [ immediate reg 1 0x0403020a ]\n"
            "  [ immediate reg 2 0x00000002 ]\n"
            "  [ dynset add reg_key 1 set dm sreg_data 2 timeout 2000ms ]\n"
            "ip t c\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ immediate reg 9 0x0400b40a ]\n"
            "  [ immediate reg 10 0x00005000 ]\n"
            "  [ dynset update reg_key 1 set v ]\n"
            "ip t c\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ meta load mark => reg 2 ]\n"
            "  [ dynset update reg_key 1 set dm sreg_data 2 ]\n");
  EXPECT_EQ(Rules("table ip t {\n set m { type ipv4_addr; size 16; flags dynamic; }\n"
                  " set s { type ipv4_addr; flags timeout; timeout 1m; }\n chain c {\n"
                  "  add @m { ip saddr limit rate 10/second burst 5 packets counter } accept\n"
                  "  delete @s { ip saddr }\n"
                  "  set update ip saddr timeout 10s @s\n"
                  "  meter foo size 128 { ip daddr timeout 10s limit rate 10/second }\n"
                  " }\n}\n"),
            "ip t c\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ dynset add reg_key 1 set m expr [ limit rate 10/second burst 5 type packets "
            "flags 0x0 ] expr [ counter pkts 0 bytes 0 ] ]\n"
            "  [ immediate reg 0 accept ]\n"
            "ip t c\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ dynset delete reg_key 1 set s ]\n"
            "ip t c\n"
            "  [ payload load 4b @ network header + 12 => reg 1 ]\n"
            "  [ dynset update reg_key 1 set s timeout 10000ms ]\n"
            "ip t c\n"
            "  [ payload load 4b @ network header + 16 => reg 1 ]\n"
            "  [ dynset update reg_key 1 set foo timeout 10000ms expr [ limit rate 10/second "
            "burst 5 type packets flags 0x0 ] ]\n");
}

TEST(NftDynset, ReadsBack) {
  nft_test::ExpectReadsBack(
      {"[ dynset add reg_key 1 set s ]", "[ dynset delete reg_key 1 set s ]",
       "[ dynset update reg_key 1 set p sreg_data 2 timeout 90000ms ]",
       "[ dynset add reg_key 1 set m expr [ limit rate 10/second burst 5 type packets flags 0x0 "
       "] expr [ counter pkts 0 bytes 0 ] ]"});
}

TEST(NftDynset, WhatTheKernelRefuses) {
  ExpectError("table ip t {\n set s { type ipv4_addr; }\n chain c {\n"
              "  update @s { ip saddr timeout 10s }\n }\n}\n",
              4, 3, "a timeout needs a set with timeouts");
  ExpectError("table ip t {\n set s { type ipv4_addr; flags interval; }\n chain c {\n"
              "  add @s { ip saddr }\n }\n}\n",
              4, 3, "an interval or constant set cannot be changed from a rule");
  ExpectError("table ip t {\n set s { type ipv4_addr; flags constant; }\n chain c {\n"
              "  add @s { ip saddr }\n }\n}\n",
              4, 3, "an interval or constant set cannot be changed from a rule");
  ExpectError("table ip t {\n set s { type ipv4_addr; }\n chain c {\n"
              "  add @s { ip saddr : meta mark }\n }\n}\n",
              4, 3, "data given for a set that is not a map");
  ExpectError("table ip t {\n chain c {\n  add @nope { ip saddr }\n }\n}\n", 3, 3,
              "no set 'nope'");
  ExpectError("table ip t {\n chain c {\n  add @later { ip saddr . 22 }\n }\n"
              " set later { type ipv4_addr . inet_service; }\n}\n",
              3, 27, "a constant here needs the set declared");
  ExpectError("table ip t {\n set s { type ipv4_addr; }\n chain c {\n"
              "  add @s { ip saddr ct count 2 }\n }\n}\n",
              4, 21, "unsupported element statement 'ct'");
}

// The verdicts of `frames` at 1 s apart from `start`, on `backend`.
std::vector<Verdict> VerdictsOver(const Program& program, const std::vector<FrameSpec>& frames,
                         RunState& state, uint64_t start_ns, uint64_t step_ns = kSecond) {
  std::vector<Verdict> out;
  uint64_t now = start_ns;
  for (const FrameSpec& spec : frames) {
    state.set_now_ns(now);
    out.push_back(nft_test::VerdictOf(program, Hook::kInput, BuildFrame(spec), PacketMeta{},
                                      &state));
    now += step_ns;
  }
  return out;
}

constexpr Verdict A = Verdict::kAccept;
constexpr Verdict D = Verdict::kDrop;

TEST(NftDynset, PortKnockOpensForAMinuteOnEveryBackend) {
  const char text[] =
      "table ip t {\n set s { type ipv4_addr . inet_service; flags timeout; }\n"
      " chain c {\n  type filter hook input priority 0; policy drop;\n"
      "  tcp dport 21 add @s { ip saddr . 22 timeout 1m }\n"
      "  ip saddr . tcp dport @s accept\n }\n}\n";
  const FrameSpec knock{.dport = 21}, ssh{.dport = 22}, other{.src = "10.0.0.9", .dport = 22};
  for (Backend backend : {Backend::kInterp, Backend::kJit, Backend::kAuto}) {
    auto program = nft_test::CompileFor(text, backend);
    ASSERT_NE(program, nullptr);
    RunState state;
    EXPECT_EQ(VerdictsOver(*program, {ssh, knock, ssh, other, ssh}, state, 100 * kSecond),
              (std::vector<Verdict>{D, D, A, D, A}))
        << BackendName(backend);
    // 60 s after the knock (at 101 s) the element is gone.
    EXPECT_EQ(VerdictsOver(*program, {ssh, ssh}, state, 160 * kSecond),
              (std::vector<Verdict>{A, D}));
    // `add` on a second knock (240 s) does not restart the first's minute.
    EXPECT_EQ(VerdictsOver(*program, {knock, knock}, state, 200 * kSecond, 40 * kSecond),
              (std::vector<Verdict>{D, D}));
    EXPECT_EQ(VerdictsOver(*program, {ssh, ssh}, state, 259 * kSecond, 2 * kSecond),
              (std::vector<Verdict>{A, D}));
  }
}

TEST(NftDynset, UpdateRestartsTheTimeout) {
  const char text[] =
      "table ip t {\n set s { type ipv4_addr; flags timeout; timeout 10s; }\n"
      " chain c {\n  type filter hook input priority 0; policy drop;\n"
      "  tcp dport 1 update @s { ip saddr }\n"
      "  tcp dport 2 ip saddr @s accept\n }\n}\n";
  auto program = nft_test::CompileFor(text, Backend::kAuto);
  ASSERT_NE(program, nullptr);
  RunState state;
  const FrameSpec touch{.dport = 1}, test{.dport = 2};
  // Touched at 0, 8 and 16 s: still there at 25 s, gone at 26 s.
  EXPECT_EQ(VerdictsOver(*program, {touch, touch, touch}, state, 0, 8 * kSecond),
            (std::vector<Verdict>{D, D, D}));
  EXPECT_EQ(VerdictsOver(*program, {test, test}, state, 25 * kSecond), (std::vector<Verdict>{A, D}));
}

TEST(NftDynset, AFullSetRefusesNewElementsAndDeleteMakesRoom) {
  const char text[] =
      "table ip t {\n set s { type ipv4_addr; size 2; }\n"
      " chain c {\n  type filter hook input priority 0; policy drop;\n"
      "  tcp dport 1 add @s { ip saddr } accept\n"
      "  tcp dport 2 delete @s { ip saddr } accept\n }\n}\n";
  auto program = nft_test::CompileFor(text, Backend::kAuto);
  ASSERT_NE(program, nullptr);
  RunState state;
  auto from = [](const char* src, uint16_t port) { return FrameSpec{.src = src, .dport = port}; };
  EXPECT_EQ(VerdictsOver(*program,
                {from("10.0.0.1", 1), from("10.0.0.2", 1), from("10.0.0.3", 1),
                 from("10.0.0.1", 1), from("10.0.0.2", 2), from("10.0.0.3", 1)},
                state, kSecond),
            (std::vector<Verdict>{A, A, D, A, A, A}));
}

TEST(NftDynset, MeterLimitsEachAddressOnItsOwn) {
  const char text[] =
      "table ip t {\n chain c {\n  type filter hook input priority 0; policy accept;\n"
      "  tcp dport 80 meter m { ip saddr limit rate over 1/minute burst 2 packets } drop\n"
      " }\n}\n";
  auto program = nft_test::CompileFor(text, Backend::kAuto);
  ASSERT_NE(program, nullptr);
  RunState state;
  const FrameSpec a{.src = "10.0.0.1"}, b{.src = "10.0.0.2"};
  EXPECT_EQ(VerdictsOver(*program, {a, a, a, b, a, b, b}, state, kSecond, 1000000),
            (std::vector<Verdict>{A, A, D, A, D, A, D}));
}

TEST(NftDynset, MapDataGoesWithTheElement) {
  const char text[] =
      "table ip t {\n map m { type ipv4_addr : mark; }\n"
      " chain c {\n  type filter hook input priority 0;\n"
      "  tcp dport 1 update @m { ip saddr : 0x2a }\n"
      "  tcp dport 1 update @m { ip saddr : 0x7 }\n"
      "  meta mark set ip saddr map @m\n }\n}\n";
  auto program = nft_test::CompileFor(text, Backend::kAuto);
  ASSERT_NE(program, nullptr);
  RunState state;
  state.set_now_ns(kSecond);
  auto mark = [&](uint16_t port) {
    std::vector<uint8_t> f = BuildFrame(FrameSpec{.dport = port});
    return program->Classify(Hook::kInput, f.data(), static_cast<uint32_t>(f.size()), PacketMeta{},
                             &state).mark;
  };
  EXPECT_EQ(mark(2), 0u);     // no element: the map lookup fails, no mark
  EXPECT_EQ(mark(1), 0x2au);  // the first update adds; the second finds it (data kept)
  EXPECT_EQ(mark(2), 0x2au);
}

}  // namespace
}  // namespace rulejit
