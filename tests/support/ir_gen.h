// Seeded random IR rulesets and frames for differential tests between
// tiers (interpreter vs JIT vs later tiers). The rulesets use every
// expression kind the tiers compile, with values drawn from small pools so
// that generated frames hit rule boundaries often; regular chains only jump
// forward, so there are no jump loops.
#ifndef RULEJIT_TESTS_SUPPORT_IR_GEN_H_
#define RULEJIT_TESTS_SUPPORT_IR_GEN_H_

#include <cstdint>
#include <random>
#include <vector>

#include "ir/ir.h"
#include "rulejit/packet.h"

namespace rulejit::testing {

struct IrGenOptions {
  int regular_chains = 3;
  int max_rules_per_chain = 12;
  bool two_tables = true;  // a second table with another base chain
};

ir::Ruleset RandomIrRuleset(std::mt19937& rng, const IrGenOptions& options = {});

// An Ethernet frame (sometimes VLAN-tagged, sometimes IPv6, sometimes a
// fragment, sometimes truncated) with fields drawn from the same pools.
std::vector<uint8_t> RandomFrame(std::mt19937& rng);

// Interfaces, mark and ct state drawn from the pools.
PacketMeta RandomMeta(std::mt19937& rng);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_SUPPORT_IR_GEN_H_
