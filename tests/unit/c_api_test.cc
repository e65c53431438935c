// The C API (include/rulejit/rulejit_c.h) gives the same answers as the C++
// API, reports errors with locations, and is safe on bad arguments.
#include "rulejit/rulejit_c.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kRules[] =
    "*filter\n"
    ":INPUT DROP [0:0]\n"
    ":FORWARD ACCEPT [0:0]\n"
    ":OUTPUT ACCEPT [0:0]\n"
    "-A INPUT -i lo -j ACCEPT\n"
    "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n"
    "-A INPUT -s 10.9.0.0/16 -j REJECT\n"
    "-A INPUT -m conntrack --ctstate ESTABLISHED -j ACCEPT\n"
    "COMMIT\n";

std::vector<uint8_t> Tcp(const char* src, uint16_t dport) {
  return BuildFrame(FrameSpec{.src = src, .dst = "10.0.0.1", .proto = 6,
                              .sport = 40000, .dport = dport, .tcp_flags = 0x02});
}

class CApiTest : public ::testing::TestWithParam<rulejit_backend> {
 protected:
  void SetUp() override {
    rulejit_compile_options options;
    rulejit_compile_options_init(&options);
    options.backend = GetParam();
    char err[512] = "unset";
    program_ = rulejit_compile(kRules, sizeof(kRules) - 1, "rules.ipt", nullptr, &options, err,
                               sizeof(err));
    ASSERT_NE(program_, nullptr) << err;
    state_ = rulejit_state_new();
    rulejit_meta_init(&meta_);
    rulejit_meta_set_iifname(&meta_, "eth0");
  }
  void TearDown() override {
    rulejit_state_free(state_);
    rulejit_program_free(program_);
  }

  rulejit_result Classify(const std::vector<uint8_t>& frame) {
    rulejit_result r;
    std::memset(&r, 0xff, sizeof(r));
    r.size = sizeof(r);
    rulejit_verdict v = rulejit_classify(program_, RULEJIT_HOOK_INPUT, frame.data(),
                                         frame.size(), &meta_, state_, &r);
    EXPECT_EQ(v, r.verdict);
    return r;
  }

  rulejit_program* program_ = nullptr;
  rulejit_state* state_ = nullptr;
  rulejit_meta meta_;
};

TEST_P(CApiTest, VerdictsAndDecidingLines) {
  rulejit_result ssh = Classify(Tcp("192.0.2.1", 22));
  EXPECT_EQ(ssh.verdict, RULEJIT_ACCEPT);
  EXPECT_EQ(ssh.line, 6u);
  EXPECT_EQ(ssh.rule, 1);

  rulejit_result rejected = Classify(Tcp("10.9.1.1", 80));
  EXPECT_EQ(rejected.verdict, RULEJIT_DROP);
  EXPECT_EQ(rejected.rejected, 1);
  EXPECT_EQ(rejected.line, 7u);

  rulejit_result policy = Classify(Tcp("192.0.2.1", 80));
  EXPECT_EQ(policy.verdict, RULEJIT_DROP);
  EXPECT_EQ(policy.rule, -1);
  EXPECT_EQ(policy.line, 0u);
}

TEST_P(CApiTest, MetaReachesTheRules) {
  rulejit_meta_set_iifname(&meta_, "lo");
  EXPECT_EQ(Classify(Tcp("192.0.2.1", 80)).line, 5u);
  rulejit_meta_set_iifname(&meta_, "eth0");
  meta_.ct_state = RULEJIT_CT_ESTABLISHED;
  EXPECT_EQ(Classify(Tcp("192.0.2.1", 80)).line, 8u);
  meta_.ct_state = RULEJIT_CT_INVALID;
  EXPECT_EQ(Classify(Tcp("192.0.2.1", 80)).rule, -1);
}

TEST_P(CApiTest, BurstAgreesWithSingleAndCounts) {
  std::vector<std::vector<uint8_t>> frames = {Tcp("192.0.2.1", 22), Tcp("192.0.2.1", 80),
                                              Tcp("10.9.1.1", 22), Tcp("10.9.1.1", 23)};
  std::vector<const uint8_t*> ptrs;
  std::vector<uint32_t> lens;
  // More frames than one internal chunk (64).
  for (int i = 0; i < 50; ++i) {
    for (const auto& f : frames) {
      ptrs.push_back(f.data());
      lens.push_back(f.size());
    }
  }
  std::vector<rulejit_verdict> verdicts(ptrs.size());
  rulejit_classify_burst(program_, RULEJIT_HOOK_INPUT, ptrs.data(), lens.data(),
                         ptrs.size(), &meta_, state_, verdicts.data());
  for (size_t i = 0; i < ptrs.size(); ++i) {
    EXPECT_EQ(verdicts[i], (i % 4 == 0 || i % 4 == 2) ? RULEJIT_ACCEPT : RULEJIT_DROP) << i;
  }
  uint64_t packets = 0, bytes = 0;
  ASSERT_EQ(rulejit_counter(program_, state_, 0, 0, 1, &packets, &bytes), 0);
  // iptables rules count every match: 100 SSH frames.
  EXPECT_EQ(packets, 100u);
  EXPECT_EQ(bytes, 100u * (frames[0].size() - 14));
  EXPECT_EQ(rulejit_counter(program_, state_, 0, 0, 99, &packets, &bytes), -1);
  EXPECT_EQ(rulejit_counter(program_, state_, 5, 0, 0, &packets, &bytes), -1);
}

TEST_P(CApiTest, BadArgumentsDropInsteadOfCrashing) {
  std::vector<uint8_t> frame = Tcp("192.0.2.1", 22);
  rulejit_result r;
  rulejit_result_init(&r);
  EXPECT_EQ(rulejit_classify(program_, static_cast<rulejit_hook>(42), frame.data(),
                             frame.size(), &meta_, state_, &r),
            RULEJIT_DROP);
  EXPECT_EQ(rulejit_classify(program_, RULEJIT_HOOK_INPUT, nullptr, 10, &meta_, state_, &r),
            RULEJIT_DROP);
  // A truncated frame and no state or meta are fine: 6 bytes of IPv4
  // header are no IPv4 packet, so no base chain of the ip table sees it.
  EXPECT_EQ(rulejit_classify(program_, RULEJIT_HOOK_INPUT, frame.data(), 20, nullptr,
                             nullptr, nullptr),
            RULEJIT_ACCEPT);
  EXPECT_EQ(rulejit_classify(program_, RULEJIT_HOOK_INPUT, frame.data(), 20, nullptr,
                             nullptr, &r),
            RULEJIT_ACCEPT);
  EXPECT_EQ(r.table, -1);
}

INSTANTIATE_TEST_SUITE_P(Backends, CApiTest,
                         ::testing::Values(RULEJIT_BACKEND_INTERP, RULEJIT_BACKEND_JIT),
                         [](const auto& info) {
                           return info.param == RULEJIT_BACKEND_INTERP ? "interp" : "jit";
                         });

TEST(CApiErrors, ParseErrorIsLocatedAndTruncatedSafely) {
  const char bad[] = "*filter\n:INPUT DROP [0:0]\n-A INPUT -p tcp --dport 22 -j NOPE\nCOMMIT\n";
  char err[512];
  EXPECT_EQ(rulejit_compile(bad, sizeof(bad) - 1, "bad.ipt", nullptr, nullptr, err, sizeof(err)),
            nullptr);
  EXPECT_THAT(err, StartsWith("bad.ipt:3:"));
  EXPECT_THAT(err, HasSubstr("error:"));
  char tiny[8];
  EXPECT_EQ(rulejit_compile(bad, sizeof(bad) - 1, "bad.ipt", nullptr, nullptr, tiny,
                            sizeof(tiny)),
            nullptr);
  EXPECT_EQ(std::strlen(tiny), 7u);
  EXPECT_EQ(rulejit_compile(bad, sizeof(bad) - 1, "bad.ipt", nullptr, nullptr, nullptr, 0),
            nullptr);
}

TEST(CApiErrors, MissingFileAndForcedFormat) {
  char err[512];
  EXPECT_EQ(rulejit_compile_file("/nonexistent/rules.nft", nullptr, nullptr, err, sizeof(err)),
            nullptr);
  EXPECT_THAT(err, HasSubstr("/nonexistent/rules.nft: error: cannot read"));
  rulejit_parse_options options;
  rulejit_parse_options_init(&options);
  options.format = RULEJIT_FORMAT_NFT;
  EXPECT_EQ(rulejit_compile(kRules, sizeof(kRules) - 1, "rules.ipt", &options, nullptr, err,
                            sizeof(err)),
            nullptr);
  EXPECT_THAT(err, StartsWith("rules.ipt:1:"));
}

}  // namespace
}  // namespace rulejit::testing
