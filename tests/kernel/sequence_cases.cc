#include "tests/kernel/sequence_cases.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace rulejit::testing {

void ExpectSequencesAgree(const char* what, OracleSyntax syntax, const std::string& extension,
                          const std::vector<SequenceCase>& cases, const Frames& frames) {
  if (absl::Status s = OracleAvailable(syntax); !s.ok()) GTEST_SKIP() << s.message();
  ScratchDir dir(absl::StrCat("rulejit-", what).c_str());
  ASSERT_FALSE(dir.path.empty());
  const std::vector<std::string> tiers = SupportedTiers(dir.path);
  absl::StatusOr<Frames> sent = PrepareOracleFrames(frames);
  ASSERT_TRUE(sent.ok()) << sent.status();
  const std::string pcap = dir.path + "/frames.pcap";
  ASSERT_TRUE(WritePcap(pcap, *sent));
  int disagreements = 0;
  bool first = true;
  for (const SequenceCase& c : cases) {
    OracleOptions options{.control_run = first};
    first = false;
    absl::StatusOr<std::vector<bool>> kernel =
        KernelVerdicts({.syntax = syntax, .text = c.text}, *sent, options);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    ExpectSeparates(c.name, *kernel);
    const std::string file = absl::StrCat(dir.path, "/", c.name, extension);
    std::ofstream(file) << c.text;
    for (const std::string& tier : tiers) {
      absl::StatusOr<std::vector<bool>> ours = RulejitVerdicts(file, pcap, tier, sent->size());
      ASSERT_TRUE(ours.ok()) << c.name << " " << tier << ": " << ours.status();
      disagreements += ReportDisagreements(absl::StrCat(c.name, " tier ", tier), *kernel, *ours);
    }
  }
  std::cout << what << ": " << cases.size() << " rulesets x " << sent->size() << " frames x "
            << tiers.size() << " tiers, " << disagreements << " disagreements with the kernel\n";
}

}  // namespace rulejit::testing
