// What the kernel draws at random for a packet, drawn for `rulejit run`:
// PacketMeta::random (numgen random, meta random, a NAT's random port),
// PacketMeta::symhash (symhash: a flow hash that both directions of a
// connection share, keyed with a secret of this process, as the kernel
// keys its own with one drawn at boot) and PacketMeta::jhash_seed (the
// seed of every jhash written without one, drawn once, as the kernel draws
// one when it loads such a rule). Offline tools take these as explicit
// inputs instead (tools/draw_options.h); the values differ from the
// kernel's, as two kernels' differ, but have its properties. Only the draws
// a program reads (Program::random_inputs) are made: the flow hash costs
// tens of nanoseconds a packet.
#ifndef RULEJIT_RUNTIME_DRAWS_H_
#define RULEJIT_RUNTIME_DRAWS_H_

#include <cstdint>

#include "rulejit/packet.h"

namespace rulejit::runtime {

// The flow hash of a packet, the same for a packet and its reply (the
// address pair and the port pair taken in one order): protocol, addresses
// and, for TCP, UDP, UDP-Lite, SCTP and DCCP, ports; keyed by `key`.
uint32_t SymmetricFlowHash(const PacketView& pkt, uint64_t key);

// A 64-bit value from the system's random source.
uint64_t SystemRandom64();

// One worker's draws (not thread-safe: one per worker). `keys` makes the
// flow hash's key and the jhash seed, which every worker of a run shares
// (a reply may reach another worker, and must hash as its request did);
// `stream` seeds this worker's own per-packet draws.
class PacketDraws {
 public:
  PacketDraws(uint64_t keys, uint64_t stream);

  // Sets meta's draws that `reads` names for `pkt` (random, symhash;
  // jhash_seed, a constant, always).
  void Fill(const PacketView& pkt, const RandomInputs& reads, PacketMeta* meta);

 private:
  uint64_t stream_;  // a splitmix64 sequence: cheap, and random enough for a draw
  uint64_t flow_key_;
  uint32_t jhash_seed_;
};

}  // namespace rulejit::runtime

#endif  // RULEJIT_RUNTIME_DRAWS_H_
