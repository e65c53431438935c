// `--random N`, `--symhash N` and `--jhash-seed N` of the subcommands that
// run packets: what the kernel draws at random, given explicitly so that a
// run is reproducible (vary them to see every choice). --random is the
// per-packet draw of `numgen random` and `meta random`
// (PacketMeta::random); --symhash the packet's symmetric flow hash, which
// the kernel keys with a secret drawn at boot (PacketMeta::symhash);
// --jhash-seed the seed of a `jhash` written without one, which the kernel
// draws when it loads the rule (PacketMeta::jhash_seed). `--cpu N` is
// another input a packet's bytes do not carry: the CPU the kernel
// processes it on, which `meta cpu` and iptables' cpu match read
// (PacketMeta::cpu). Never a silent default: a ruleset that reads one
// needs its flag, else a located error. (`rulejit run` draws them itself,
// runtime/draws.h, and reads its workers' CPUs.)
#ifndef RULEJIT_TOOLS_DRAW_OPTION_H_
#define RULEJIT_TOOLS_DRAW_OPTION_H_

#include <cstdint>
#include <optional>
#include <ostream>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "rulejit/packet.h"
#include "tools/args.h"

namespace rulejit::tools {

struct DrawOptions {
  std::optional<uint32_t> random;      // --random
  std::optional<uint32_t> symhash;     // --symhash
  std::optional<uint32_t> jhash_seed;  // --jhash-seed
  std::optional<uint32_t> cpu;         // --cpu
};

// Reads the four flags (0..4294967295, decimal or 0x hex); absent ones
// stay unset.
absl::StatusOr<DrawOptions> ReadDrawOptions(const Args& args);

// A located error on `err` when the ruleset reads a draw or the CPU the
// options do not give; false then.
bool CheckDrawInputs(const ir::Ruleset& ruleset, const DrawOptions& options, std::ostream& err);

// Sets the given draws in `meta`.
void ApplyDraws(const DrawOptions& options, PacketMeta* meta);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_DRAW_OPTION_H_
