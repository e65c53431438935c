// Rulesets whose verdicts depend on earlier packets (recent, dynamic sets),
// each run over one frame sequence in the kernel (a fresh namespace per
// ruleset, frames in order) and in `rulejit eval` on every tier (one run
// state over the pcap): verdict lists compared frame by frame.
#ifndef RULEJIT_TESTS_KERNEL_SEQUENCE_CASES_H_
#define RULEJIT_TESTS_KERNEL_SEQUENCE_CASES_H_

#include <string>
#include <vector>

#include "tests/kernel/kernel_oracle.h"
#include "tests/kernel/rulejit_runner.h"

namespace rulejit::testing {

struct SequenceCase {
  std::string name, text;
};

// An iptables-save dump of the filter table (INPUT, FORWARD, OUTPUT
// accepting) with `rules` ("-A ...\n" lines).
std::string FilterDump(const std::string& rules);

// UDP frames from four sources in a fixed interleaving (10.1.0.1, .2, .3
// and 10.2.0.9), every third to 192.0.2.1 and the others to 192.0.2.2,
// source ports from 2000 up, to `dport` (odd frames to `odd_dport`), with
// `payload` zero bytes: per-address state fills, runs out, and differs.
Frames InterleavedSources(uint16_t dport, uint16_t odd_dport, size_t payload);

// Runs every case (skipping the test when the oracle is unavailable),
// expects each to show both verdicts in the kernel and reports every
// disagreement as a failure; prints a summary line naming `what`.
// `extension`: the ruleset file's, ".ipt" or ".nft". `ipsets`: `ipset
// save` output restored in the kernel and given to rulejit (--ipset).
void ExpectSequencesAgree(const char* what, OracleSyntax syntax, const std::string& extension,
                          const std::vector<SequenceCase>& cases, const Frames& frames,
                          const std::string& ipsets = "");

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_SEQUENCE_CASES_H_
