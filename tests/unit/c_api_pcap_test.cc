// The C API and the C++ API give the same verdicts, deciding rules, marks
// and counters (per rule and per policy) over examples/firewall.pcap, one
// frame at a time and in bursts, on the interpreter and the jit, with the
// frames' conntrack state varied so that every rule of the example decides
// some frame.
#include <pcap/pcap.h>

#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "rulejit/rulejit.h"
#include "rulejit/rulejit_c.h"
#include "tests/support/files.h"

namespace rulejit::testing {
namespace {

const std::string kExamples = std::string(RULEJIT_SOURCE_DIR) + "/examples";

std::vector<std::vector<uint8_t>> ReadPcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  std::vector<std::vector<uint8_t>> frames;
  pcap_t* in = pcap_open_offline(path.c_str(), err);
  if (in == nullptr) return frames;
  pcap_pkthdr* header;
  const u_char* data;
  while (pcap_next_ex(in, &header, &data) == 1) frames.emplace_back(data, data + header->caplen);
  pcap_close(in);
  return frames;
}

constexpr uint32_t kCtStates[] = {RULEJIT_CT_NEW, RULEJIT_CT_ESTABLISHED, RULEJIT_CT_RELATED,
                                  RULEJIT_CT_INVALID, RULEJIT_CT_UNTRACKED, 0};

class CAndCppAgree : public ::testing::TestWithParam<Backend> {};

TEST_P(CAndCppAgree, OverTheExamplePcap) {
  const std::vector<std::vector<uint8_t>> frames = ReadPcap(kExamples + "/firewall.pcap");
  ASSERT_EQ(frames.size(), 20u);
  const std::string path = kExamples + "/firewall.ipt";
  auto ruleset = ParseRuleset(ReadFile(path), path);
  ASSERT_TRUE(ruleset.ok()) << ruleset.status();
  CompileOptions cpp_options;
  cpp_options.backend = GetParam();
  auto cpp = Program::Compile(*std::move(ruleset), cpp_options);
  ASSERT_TRUE(cpp.ok()) << cpp.status();

  rulejit_compile_options options;
  rulejit_compile_options_init(&options);
  options.backend = GetParam() == Backend::kInterp ? RULEJIT_BACKEND_INTERP : RULEJIT_BACKEND_JIT;
  char err[512] = "";
  rulejit_program* c = rulejit_compile_file(path.c_str(), nullptr, &options, err, sizeof(err));
  ASSERT_NE(c, nullptr) << err;
  EXPECT_STREQ(rulejit_program_backend(c), BackendName((*cpp)->backend()));

  RunState cpp_state;
  rulejit_state* c_state = rulejit_state_new();
  std::set<std::pair<int, int>> decided;  // (chain, rule)
  for (size_t round = 0; round < std::size(kCtStates); ++round) {
    for (size_t i = 0; i < frames.size(); ++i) {
      const uint32_t ct = kCtStates[(i + round) % std::size(kCtStates)];
      rulejit_meta cm;
      rulejit_meta_init(&cm);
      rulejit_meta_set_iif(&cm, 2, "eth0");
      cm.ct_state = ct;
      cm.mark = static_cast<uint32_t>(i);
      PacketMeta m;
      std::strcpy(m.iifname, "eth0");
      m.iif = 2;
      m.has_iif = true;
      m.ct_state = ct;
      m.ct_valid = (ct & (kCtStateNew | kCtStateEstablished | kCtStateRelated)) != 0;
      m.mark = static_cast<uint32_t>(i);

      const Result want = (*cpp)->Classify(Hook::kInput, frames[i].data(), frames[i].size(), m,
                                           &cpp_state);
      rulejit_result got;
      rulejit_result_init(&got);
      const rulejit_verdict v = rulejit_classify(c, RULEJIT_HOOK_INPUT, frames[i].data(),
                                                 frames[i].size(), &cm, c_state, &got);
      SCOPED_TRACE("frame " + std::to_string(i) + " ct " + std::to_string(ct));
      EXPECT_EQ(v, static_cast<int>(want.verdict));
      EXPECT_EQ(got.verdict, v);
      EXPECT_EQ(got.table, want.decided_by.table);
      EXPECT_EQ(got.chain, want.decided_by.chain);
      EXPECT_EQ(got.rule, want.decided_by.rule);
      EXPECT_EQ(got.mark, want.mark);
      EXPECT_EQ(got.rejected, want.rejected ? 1 : 0);
      if (want.decided_by.rule >= 0 && want.decided_by.chain >= 0) {
        decided.insert({want.decided_by.chain, want.decided_by.rule});
      }
    }
  }
  // Every rule that has a verdict of its own decided some frame (all but
  // `-i lo`): lines 13, 14, 17, 19, 20, SSH_IN's accept (24), LOG_DROP's
  // DROP (26).
  EXPECT_EQ(decided.size(), 7u);

  // Bursts, all frames at once with one meta.
  std::vector<const uint8_t*> ptrs;
  std::vector<uint32_t> lens;
  for (const auto& f : frames) {
    ptrs.push_back(f.data());
    lens.push_back(f.size());
  }
  rulejit_meta cm;
  rulejit_meta_init(&cm);
  rulejit_meta_set_iifname(&cm, "eth0");
  cm.ct_state = RULEJIT_CT_NEW;
  PacketMeta m;
  std::strcpy(m.iifname, "eth0");
  m.has_iif = true;
  m.ct_state = kCtStateNew;
  m.ct_valid = true;
  std::vector<Result> want(frames.size());
  (*cpp)->ClassifyBurst(Hook::kInput, ptrs.data(), lens.data(), ptrs.size(), m, want.data(),
                        &cpp_state);
  std::vector<rulejit_verdict> got(frames.size());
  ASSERT_EQ(rulejit_classify_burst(c, RULEJIT_HOOK_INPUT, ptrs.data(), lens.data(), ptrs.size(),
                                   &cm, c_state, got.data()),
            0);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(got[i], static_cast<int>(want[i].verdict)) << i;
  }

  // Counters: every rule's and every base chain's policy.
  const Ruleset& rs = (*cpp)->ruleset();
  uint64_t counted = 0;
  for (int t = 0; t < rs.table_count(); ++t) {
    for (int ch = 0; ch < rs.chain_count(t); ++ch) {
      for (int r = 0; r < rs.rule_count(t, ch); ++r) {
        uint64_t packets = 0, bytes = 0;
        ASSERT_EQ(rulejit_counter(c, c_state, t, ch, r, &packets, &bytes), 0);
        const Counter want_counter = cpp_state.CounterOf({t, ch, r});
        EXPECT_EQ(packets, want_counter.packets) << t << " " << ch << " " << r;
        EXPECT_EQ(bytes, want_counter.bytes) << t << " " << ch << " " << r;
        counted += packets;
      }
      if (!rs.chain_hook(t, ch)) continue;
      uint64_t packets = 0, bytes = 0;
      ASSERT_EQ(rulejit_policy_counter(c, c_state, t, ch, &packets, &bytes), 0);
      EXPECT_EQ(packets, cpp_state.PolicyCounterOf(t, ch).packets);
      EXPECT_EQ(bytes, cpp_state.PolicyCounterOf(t, ch).bytes);
      counted += packets;
    }
  }
  EXPECT_GT(counted, 0u);
  rulejit_state_free(c_state);
  rulejit_program_free(c);
}

INSTANTIATE_TEST_SUITE_P(Backends, CAndCppAgree,
                         ::testing::Values(Backend::kInterp, Backend::kJit),
                         [](const auto& info) { return BackendName(info.param); });

}  // namespace
}  // namespace rulejit::testing
