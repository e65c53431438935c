// The recent match against the kernel over packet sequences: each dump
// below runs in the kernel (kernel_oracle.h: fresh namespaces, so the
// recent tables start empty, frames in order, paced 200 us) and in
// `rulejit eval` on every tier, with one run state over the pcap (its
// timestamps 1 us apart: the whole sequence sits inside every --seconds
// window, as it does in the kernel). Frames come from four sources in a
// fixed interleaving, to two destinations, so the tables fill, hit their
// counts, and answer per address.
//
// Needs root, `ip netns`, iptables-legacy-restore and the rulejit binary;
// skips with the reason otherwise. About ten seconds.
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

Frames RecentFrames() { return InterleavedSources(53, 53, 4); }

std::string Dump(const std::string& rules) { return FilterDump(rules); }

std::vector<SequenceCase> Cases() {
  return {
      {"update_hitcount",
       Dump("-A FORWARD -m recent --update --seconds 60 --hitcount 3 --name t --rsource -j DROP\n"
            "-A FORWARD -m recent --set --name t --rsource\n")},
      {"rcheck_after_set",
       Dump("-A FORWARD -s 10.1.0.1 -m recent --set --name a\n"
            "-A FORWARD -m recent --rcheck --name a -j DROP\n")},
      {"remove",
       Dump("-A FORWARD -m recent --remove --name r -j DROP\n"
            "-A FORWARD -m recent --set --name r\n")},
      {"rdest_mask",
       Dump("-A FORWARD -m recent --update --hitcount 2 --name d --rdest --mask 255.255.255.0 -j DROP\n"
            "-A FORWARD -m recent --set --name d --rdest --mask 255.255.255.0\n")},
      {"inverted_rcheck",
       Dump("-A FORWARD -s 10.1.0.2 -m recent --set --name i\n"
            "-A FORWARD -m recent ! --rcheck --name i -j DROP\n")},
      {"rttl",
       Dump("-A FORWARD -m recent --set --name l\n"
            "-A FORWARD -m recent --rcheck --rttl --hitcount 2 --name l -j DROP\n")},
  };
}

TEST(RecentKernel, EveryTierAgreesWithTheKernelOverSequences) {
  ExpectSequencesAgree("recent", OracleSyntax::kIptablesSave, ".ipt", Cases(), RecentFrames());
}

}  // namespace
}  // namespace rulejit::testing
