#include "tests/kernel/sequence_cases.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/frames.h"

namespace rulejit::testing {

std::string FilterDump(const std::string& rules) {
  return absl::StrCat("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n",
                      rules, "COMMIT\n");
}

Frames InterleavedSources(uint16_t dport, uint16_t odd_dport, size_t payload) {
  const char* kSources[] = {"10.1.0.1", "10.1.0.2", "10.1.0.3", "10.2.0.9"};
  const int kOrder[] = {0, 0, 1, 0, 2, 0, 1, 1, 0, 3, 1, 2, 0, 1, 3, 3, 2, 0, 1, 2, 3, 0, 0, 1};
  Frames frames;
  uint16_t port = 2000;
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    frames.push_back(BuildFrame(FrameSpec{.src = kSources[kOrder[i]],
                                          .dst = i % 3 == 0 ? "192.0.2.1" : "192.0.2.2",
                                          .proto = 17, .sport = port++,
                                          .dport = static_cast<uint16_t>(i % 2 ? odd_dport : dport),
                                          .payload = std::vector<uint8_t>(payload, 0)}));
  }
  return frames;
}

void ExpectSequencesAgree(const char* what, OracleSyntax syntax, const std::string& extension,
                          const std::vector<SequenceCase>& cases, const Frames& frames,
                          const std::string& ipsets) {
  if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  ScratchDir dir(absl::StrCat("rulejit-", what).c_str());
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  absl::StatusOr<Frames> sent = PrepareOracleFrames(frames);
  ASSERT_TRUE(sent.ok()) << sent.status();
  const std::string pcap = dir.path + "/frames.pcap";
  ASSERT_TRUE(WritePcap(pcap, *sent));
  std::string extra_args;
  if (!ipsets.empty()) {
    extra_args = absl::StrCat("--ipset ", dir.path, "/sets.ipset");
    std::ofstream(dir.path + "/sets.ipset") << ipsets;
  }
  int disagreements = 0;
  bool first = true;
  for (const SequenceCase& c : cases) {
    OracleOptions options{.control_run = first, .ipset_restore = ipsets};
    first = false;
    absl::StatusOr<std::vector<bool>> kernel =
        KernelVerdicts({.syntax = syntax, .text = c.text}, *sent, options);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    ExpectSeparates(c.name, *kernel);
    const std::string file = absl::StrCat(dir.path, "/", c.name, extension);
    std::ofstream(file) << c.text;
    for (const std::string& tier : tiers) {
      absl::StatusOr<std::vector<bool>> ours = RulejitVerdicts(file, pcap, tier, sent->size(), extra_args);
      ASSERT_TRUE(ours.ok()) << c.name << " " << tier << ": " << ours.status();
      disagreements += ReportDisagreements(absl::StrCat(c.name, " tier ", tier), *kernel, *ours);
    }
  }
  std::cout << what << ": " << cases.size() << " rulesets x " << sent->size() << " frames x "
            << tiers.size() << " tiers, " << disagreements << " disagreements with the kernel\n";
}

}  // namespace rulejit::testing
