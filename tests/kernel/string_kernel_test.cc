// The string match against the kernel: every dump below runs in the kernel
// (kernel_oracle.h) and in `rulejit eval` on every tier, frame by frame.
// Frames carry text at known offsets (UDP text from byte 32 of the IP
// packet, TCP from byte 44), so --from/--to windows are tested at their
// edges; both algorithms, --icase (with a Latin-1 letter), --hex-string,
// `!`, and patterns with repeats (where a faulty Boyer-Moore shift would
// miss them).
//
// Needs root, `ip netns`, iptables-legacy-restore and the rulejit binary;
// skips with the reason otherwise.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"
#include "tests/kernel/sequence_cases.h"
#include "tests/support/frames.h"

namespace rulejit::testing {
namespace {

// The oracle writes each frame's index over its first 4 payload bytes
// (kernel_oracle_frames.cc): the text follows 4 bytes kept for it.
std::vector<uint8_t> Text(const std::string& s) {
  std::vector<uint8_t> out(4, 'I');
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

Frames StringFrames() {
  std::string tail(297, 'z');
  tail += "abc";
  const std::vector<std::vector<uint8_t>> payloads = {
      Text("GET /index.html HTTP/1.1"), Text("hello WORLD abc"), Text("xxabcxx"),
      Text(std::string("\0\1ABC", 5)),     Text("aaab ababab"),     Text("\xc9t\xc9xx"),
      Text("xxabxcx"),                  Text("nothing here"),    Text(tail),
  };
  Frames frames;
  uint16_t port = 3000;
  for (size_t i = 0; i < payloads.size(); ++i) {
    frames.push_back(BuildFrame(FrameSpec{.src = "10.1.0.1", .dst = "192.0.2.1",
                                          .proto = static_cast<uint8_t>(i == 5 ? 6 : 17),
                                          .sport = port++, .dport = 80, .payload = payloads[i]}));
  }
  return frames;
}

std::string Dump(const std::string& rules) { return FilterDump(rules); }

std::string Drops(const std::string& match) {
  return Dump(absl::StrCat("-A FORWARD ", match, " -j DROP\n"));
}

std::vector<SequenceCase> Cases() {
  return {
      {"bm", Drops("-m string --algo bm --string abc")},
      {"kmp", Drops("-m string --algo kmp --string abc")},
      {"kmp_icase", Drops("-m string --algo kmp --string world --icase")},
      {"bm_icase_latin1", Drops("-m string --algo bm --hex-string \"|e9|\" --icase")},
      {"hex", Drops("-m string --algo bm --hex-string \"|00 01|AB\"")},
      {"from", Drops("-m string --algo kmp --string abc --from 35")},
      {"from_far", Drops("-m string --algo bm --string abc --from 200")},
      {"to_edge",
       Dump("-A FORWARD -m string --algo bm --string abc --from 34 --to 36 -j ACCEPT\n"
            "-A FORWARD -m string --algo bm --string abc --from 34 --to 37 -j DROP\n")},
      {"inverted", Drops("-m string --algo kmp ! --string GET")},
      {"bm_repeats", Drops("-m string --algo bm --string aab")},
      {"bm_periodic", Drops("-m string --algo bm --string abab")},
      {"kmp_periodic", Drops("-m string --algo kmp --string baba")},
      {"tcp_window", Drops("-m string --algo bm --string t --from 44 --to 47")},
  };
}

TEST(StringKernel, EveryTierAgreesWithTheKernel) {
  ExpectSequencesAgree("string", OracleSyntax::kIptablesSave, ".ipt", Cases(), StringFrames());
}

}  // namespace
}  // namespace rulejit::testing
