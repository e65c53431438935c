// The hashlimit match against the kernel over packet sequences: each dump
// below runs in the kernel (kernel_oracle.h: fresh namespaces, so the
// hashlimit tables start empty, frames in order, paced 200 us) and in
// `rulejit eval` on every tier, with one run state over the pcap (its
// timestamps 1 us apart). The rates are slow enough (per minute or hour,
// rate-match windows of 5 or 60 s) that no bucket refills within the sequence, in
// the kernel or here; the clock-dependent answers are unit-tested
// (tests/unit/hashlimit_test.cc). Frames come from four sources in a fixed
// interleaving, to two destinations, so buckets per key run out, masks
// merge keys, and a full table drops new keys.
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

Frames HashlimitFrames(size_t payload) { return InterleavedSources(123, 53, payload); }

std::string Dump(const std::string& rules) { return FilterDump(rules); }

// Matching packets accepted, the rest dropped.
std::string Passes(const std::string& match) {
  return Dump(absl::StrCat("-A FORWARD ", match, " -j ACCEPT\n-A FORWARD -j DROP\n"));
}

std::vector<SequenceCase> PacketCases() {
  return {
      {"upto_srcip", Passes("-m hashlimit --hashlimit-upto 1/min --hashlimit-burst 3 "
                            "--hashlimit-mode srcip --hashlimit-name up")},
      {"above_srcip_dstip",
       Dump("-A FORWARD -m hashlimit --hashlimit-above 1/hour --hashlimit-burst 2 "
            "--hashlimit-mode srcip,dstip --hashlimit-name ab -j DROP\n")},
      {"inverted_upto", Passes("-m hashlimit ! --hashlimit-upto 2/min --hashlimit-burst 4 "
                               "--hashlimit-mode srcip --hashlimit-name iu")},
      {"srcmask", Passes("-m hashlimit --hashlimit-upto 1/h --hashlimit-burst 6 "
                         "--hashlimit-mode srcip --hashlimit-srcmask 16 --hashlimit-name m")},
      {"dstip_dstport", Passes("-m hashlimit --hashlimit-upto 1/hour --hashlimit-burst 4 "
                               "--hashlimit-mode dstip,dstport --hashlimit-name dp")},
      {"dstport_dstmask", Passes("-m hashlimit --hashlimit-upto 1/min --hashlimit-burst 5 "
                                 "--hashlimit-mode dstport,dstip --hashlimit-dstmask 0 "
                                 "--hashlimit-name sp")},
      {"one_bucket", Passes("-m hashlimit --hashlimit-upto 3/hour --hashlimit-burst 10 "
                            "--hashlimit-name one")},
      {"htable_max", Dump("-A FORWARD -m hashlimit --hashlimit-upto 1/min --hashlimit-burst 100 "
                          "--hashlimit-mode srcip --hashlimit-htable-size 1 "
                          "--hashlimit-htable-max 2 --hashlimit-name full -j ACCEPT\n")},
      {"rate_match", Passes("-m hashlimit --hashlimit-upto 2/min --hashlimit-burst 1 "
                            "--hashlimit-rate-match --hashlimit-mode srcip --hashlimit-name rm")},
      {"rate_match_interval",
       Passes("-m hashlimit --hashlimit-upto 1/min --hashlimit-burst 2 --hashlimit-rate-match "
              "--hashlimit-rate-interval 5 --hashlimit-mode srcip --hashlimit-name ri")},
      // One name, two rules: the table keeps the settings of the rule the
      // kernel checks first, aa's (user chains in the blob sorted by
      // name), although zz's comes first in the text; each keeps its own
      // direction, and both draw from the same buckets.
      {"shared_name_blob_order",
       Dump(":zz - [0:0]\n:aa - [0:0]\n-A FORWARD -j zz\n-A FORWARD -j aa\n"
            "-A FORWARD -j DROP\n"
            "-A zz -m hashlimit --hashlimit-upto 1/min --hashlimit-burst 5 "
            "--hashlimit-mode dstip --hashlimit-name sh -j ACCEPT\n"
            "-A aa -m hashlimit --hashlimit-upto 1/hour --hashlimit-burst 2 "
            "--hashlimit-mode srcip --hashlimit-name sh -j ACCEPT\n")},
      {"shared_name_directions",
       Dump(":zz - [0:0]\n:aa - [0:0]\n-A FORWARD -j aa\n-A FORWARD -j zz\n"
            "-A FORWARD -j DROP\n"
            "-A zz -m hashlimit --hashlimit-upto 1/min --hashlimit-burst 9 "
            "--hashlimit-mode dstip --hashlimit-name sd -j ACCEPT\n"
            "-A aa -m hashlimit --hashlimit-above 1/hour --hashlimit-burst 3 "
            "--hashlimit-mode srcip --hashlimit-name sd -j DROP\n")},
  };
}

// 1028-byte IP packets: a 1kb/s bucket holds one a second (a refill takes
// 250 jiffies, far longer than the sequence; a 2kb/s bucket would refill
// its second packet within a few jiffies, a race with the kernel's pace).
std::vector<SequenceCase> ByteCases() {
  return {
      {"bytes_burst", Passes("-m hashlimit --hashlimit-upto 1kb/s --hashlimit-burst 2kb "
                             "--hashlimit-mode srcip --hashlimit-name b")},
      {"bytes_above", Dump("-A FORWARD -m hashlimit --hashlimit-above 1kb/s "
                           "--hashlimit-mode srcip,dstip --hashlimit-name ba -j DROP\n")},
      {"bytes_rate_match", Passes("-m hashlimit --hashlimit-upto 4kb/s --hashlimit-rate-match "
                                  "--hashlimit-mode srcip --hashlimit-name br")},
  };
}

TEST(HashlimitKernel, EveryTierAgreesWithTheKernelOverSequences) {
  ExpectSequencesAgree("hashlimit", OracleSyntax::kIptablesSave, ".ipt", PacketCases(),
                       HashlimitFrames(4));
}

TEST(HashlimitKernel, ByteRatesAgreeWithTheKernel) {
  ExpectSequencesAgree("hashlimit-bytes", OracleSyntax::kIptablesSave, ".ipt", ByteCases(),
                       HashlimitFrames(1000));
}

}  // namespace
}  // namespace rulejit::testing
